package store

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// A random sequence of Put, Delete, Get and List gives the same results
// on both backends as on a map.
func TestPropertyMatchesModel(t *testing.T) {
	s := sharedNATS(t)
	k := openTestKV(t, s, KVOptions{MaxValueSize: 4 << 10})
	dir := t.TempDir()
	ctx := context.Background()
	// A few ids, so that operations meet; some of them bad.
	ids := []string{"a", "b", "c", "Z-9_", "a.b", ""}
	rapid.Check(t, func(rt *rapid.T) {
		// A fresh bbolt file and an emptied bucket for each case.
		bdir, err := os.MkdirTemp(dir, "case")
		if err != nil {
			rt.Fatal(err)
		}
		b, err := OpenBolt(filepath.Join(bdir, "sessions.db"), BoltOptions{})
		if err != nil {
			rt.Fatal(err)
		}
		defer b.Close()
		left, err := k.List(ctx)
		if err != nil {
			rt.Fatal(err)
		}
		for _, id := range left {
			if err := k.Delete(ctx, id); err != nil {
				rt.Fatal(err)
			}
		}
		stores := map[string]Store{"bolt": b, "kv": k}
		model := map[string][]byte{}

		rt.Repeat(map[string]func(*rapid.T){
			"put": func(rt *rapid.T) {
				id := rapid.SampledFrom(ids).Draw(rt, "id")
				// Random bytes, padded now and then to a size near or over
				// the KV limit.
				v := rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(rt, "value")
				if pad := rapid.IntRange(-4<<10, 5<<10).Draw(rt, "pad"); pad > 0 {
					v = append(v, bytes.Repeat([]byte{byte(pad)}, pad)...)
				}
				want := errWant(ValidID(id))
				if want == nil && len(v) > 4<<10 {
					want = ErrTooLarge
				}
				for name, st := range stores {
					err := st.Put(ctx, id, v)
					if name == "bolt" && errors.Is(want, ErrTooLarge) {
						// bbolt's limit is 2 GiB: it takes what NATS does not.
						if err != nil {
							rt.Fatalf("bolt: Put(%q, %d bytes) = %v", id, len(v), err)
						}
						continue
					}
					if !sameErr(err, want) {
						rt.Fatalf("%s: Put(%q, %d bytes) = %v; want %v", name, id, len(v), err, want)
					}
				}
				if want == nil {
					model[id] = bytes.Clone(v)
				} else if errors.Is(want, ErrTooLarge) {
					// The backends now differ on id: forget it in both.
					for _, st := range stores {
						st.Delete(ctx, id)
					}
					delete(model, id)
				}
			},
			"delete": func(rt *rapid.T) {
				id := rapid.SampledFrom(ids).Draw(rt, "id")
				want := errWant(ValidID(id))
				for name, st := range stores {
					if err := st.Delete(ctx, id); !sameErr(err, want) {
						rt.Fatalf("%s: Delete(%q) = %v; want %v", name, id, err, want)
					}
				}
				delete(model, id)
			},
			"get": func(rt *rapid.T) {
				id := rapid.SampledFrom(ids).Draw(rt, "id")
				v, ok := model[id]
				want := errWant(ValidID(id))
				if want == nil && !ok {
					want = ErrNotFound
				}
				for name, st := range stores {
					got, err := st.Get(ctx, id)
					if !sameErr(err, want) || err == nil && !bytes.Equal(got, v) {
						rt.Fatalf("%s: Get(%q) = %d bytes, %v; want %d bytes, %v", name, id, len(got), err, len(v), want)
					}
				}
			},
			"": func(rt *rapid.T) { // after every step
				want := slices.Sorted(maps.Keys(model))
				for name, st := range stores {
					got, err := st.List(ctx)
					if err != nil || !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
						rt.Fatalf("%s: List = %q, %v; want %q", name, got, err, want)
					}
				}
			},
		})
	})
}

// errWant turns a ValidID result into the sentinel expected.
func errWant(err error) error {
	if err != nil {
		return ErrBadID
	}
	return nil
}

func sameErr(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}
