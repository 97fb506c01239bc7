package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// backends opens a fresh store of each kind, for tests that hold for all.
func backends(t *testing.T) map[string]func(t *testing.T) Store {
	s := sharedNATS(t)
	return map[string]func(t *testing.T) Store{
		"bolt": func(t *testing.T) Store { return openTestBolt(t) },
		"kv":   func(t *testing.T) Store { return openTestKV(t, s, KVOptions{}) },
	}
}

// TestConformance runs the same behaviour against both backends.
func TestConformance(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) { testConformance(t, open) })
	}
}

func testConformance(t *testing.T, open func(t *testing.T) Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		st, ctx := open(t), ctxT(t)
		data := []byte("snapshot\x00\xff bytes")
		if err := st.Put(ctx, "AbC-_09", data); err != nil {
			t.Fatal(err)
		}
		data[0] = 'X' // the store kept its own copy
		got, err := st.Get(ctx, "AbC-_09")
		if err != nil || string(got) != "snapshot\x00\xff bytes" {
			t.Fatalf("Get = %q, %v; want what was put", got, err)
		}
		got[0] = 'Y' // and gave us ours
		if again, _ := st.Get(ctx, "AbC-_09"); again[0] != 's' {
			t.Fatalf("changing a Get's result changed the store: %q", again)
		}
		if err := st.Put(ctx, "empty", nil); err != nil {
			t.Fatal(err)
		}
		if got, err := st.Get(ctx, "empty"); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("Get(empty) = %#v, %v; want an empty, non-nil slice", got, err)
		}
	})
	t.Run("Overwrite", func(t *testing.T) {
		st, ctx := open(t), ctxT(t)
		for _, v := range []string{"first, a longer value", "second"} {
			if err := st.Put(ctx, "id", []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := st.Get(ctx, "id"); err != nil || string(got) != "second" {
			t.Fatalf("Get = %q, %v; want the second value", got, err)
		}
		if ids, err := st.List(ctx); err != nil || !slices.Equal(ids, []string{"id"}) {
			t.Fatalf("List = %q, %v; want [id] once", ids, err)
		}
	})
	t.Run("NotFoundAndDelete", func(t *testing.T) {
		st, ctx := open(t), ctxT(t)
		if _, err := st.Get(ctx, "missing"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "missing") {
			t.Fatalf("Get(missing) = %v; want ErrNotFound naming the id", err)
		}
		if err := st.Delete(ctx, "missing"); err != nil {
			t.Fatalf("Delete(missing) = %v; want nil", err)
		}
		st.Put(ctx, "a", []byte("1"))
		if err := st.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after Delete = %v; want ErrNotFound", err)
		}
		if err := st.Delete(ctx, "a"); err != nil {
			t.Fatalf("second Delete = %v; want nil", err)
		}
		st.Put(ctx, "a", []byte("again"))
		if got, err := st.Get(ctx, "a"); err != nil || string(got) != "again" {
			t.Fatalf("Get after Put after Delete = %q, %v", got, err)
		}
	})
	t.Run("ListSorted", func(t *testing.T) {
		st, ctx := open(t), ctxT(t)
		ids, err := st.List(ctx)
		if err != nil || ids == nil || len(ids) != 0 {
			t.Fatalf("List of an empty store = %#v, %v; want an empty, non-nil slice", ids, err)
		}
		in := []string{"zeta", "Alpha", "_x", "-y", "m9", "m10", "alpha", "0"}
		for _, id := range in {
			if err := st.Put(ctx, id, []byte(id)); err != nil {
				t.Fatal(err)
			}
		}
		st.Delete(ctx, "m9")
		want := slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(in), func(s string) bool { return s == "m9" })))
		if ids, err := st.List(ctx); err != nil || !slices.Equal(ids, want) {
			t.Fatalf("List = %q, %v; want %q", ids, err, want)
		}
	})
	t.Run("BadIDs", func(t *testing.T) {
		st, ctx := open(t), ctxT(t)
		long := strings.Repeat("a", MaxIDLen)
		if err := st.Put(ctx, long, []byte("x")); err != nil {
			t.Fatalf("Put of a %d-byte id: %v", MaxIDLen, err)
		}
		for _, id := range []string{"", long + "a", "a b", "a.b", "a/b", "snap.x", "*", ">", "a:b", "ä", "a\x00", "a=b", "a+b"} {
			if err := st.Put(ctx, id, []byte("x")); !errors.Is(err, ErrBadID) {
				t.Errorf("Put(%q) = %v; want ErrBadID", id, err)
			}
			if _, err := st.Get(ctx, id); !errors.Is(err, ErrBadID) {
				t.Errorf("Get(%q) = %v; want ErrBadID", id, err)
			}
			if err := st.Delete(ctx, id); !errors.Is(err, ErrBadID) {
				t.Errorf("Delete(%q) = %v; want ErrBadID", id, err)
			}
		}
		if ids, err := st.List(ctx); err != nil || !slices.Equal(ids, []string{long}) {
			t.Fatalf("List = %q, %v; want only the valid id", ids, err)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		st, ctx := open(t), ctxT(t)
		const workers, rounds = 16, 20
		var wg sync.WaitGroup
		errs := make(chan error, workers*rounds)
		for w := range workers {
			wg.Go(func() {
				for r := range rounds {
					own := fmt.Sprintf("w%d", w)
					val := fmt.Appendf(nil, "%d-%d", w, r)
					if err := st.Put(ctx, own, val); err != nil {
						errs <- err
						return
					}
					if got, err := st.Get(ctx, own); err != nil || !bytes.Equal(got, val) {
						errs <- fmt.Errorf("worker %d: Get(own) = %q, %v; want %q", w, got, err, val)
						return
					}
					// One id every worker writes: whatever is read is one
					// worker's whole value.
					if err := st.Put(ctx, "shared", val); err != nil {
						errs <- err
						return
					}
					got, err := st.Get(ctx, "shared")
					var gw, gr int
					if _, serr := fmt.Sscanf(string(got), "%d-%d", &gw, &gr); err != nil || serr != nil {
						errs <- fmt.Errorf("worker %d: Get(shared) = %q, %v", w, got, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		ids, err := st.List(ctx)
		if err != nil || len(ids) != workers+1 {
			t.Fatalf("List = %q, %v; want %d ids", ids, err, workers+1)
		}
		for w := range workers {
			if got, err := st.Get(ctx, fmt.Sprintf("w%d", w)); err != nil || string(got) != fmt.Sprintf("%d-%d", w, rounds-1) {
				t.Errorf("worker %d's last value = %q, %v", w, got, err)
			}
		}
	})
	t.Run("Closed", func(t *testing.T) {
		st, ctx := open(t), ctxT(t)
		st.Put(ctx, "a", []byte("1"))
		desc := st.Describe()
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, "a", []byte("2")); !errors.Is(err, ErrClosed) {
			t.Errorf("Put after Close = %v; want ErrClosed", err)
		}
		if _, err := st.Get(ctx, "a"); !errors.Is(err, ErrClosed) {
			t.Errorf("Get after Close = %v; want ErrClosed", err)
		}
		if err := st.Delete(ctx, "a"); !errors.Is(err, ErrClosed) {
			t.Errorf("Delete after Close = %v; want ErrClosed", err)
		}
		if _, err := st.List(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("List after Close = %v; want ErrClosed", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("second Close = %v; want nil", err)
		}
		if st.Describe() != desc {
			t.Errorf("Describe after Close = %q; want %q", st.Describe(), desc)
		}
	})
}
