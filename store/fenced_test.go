package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// lostAnswer is a Conditional whose next PutRev writes but answers as if
// NATS went away before the acknowledgement came back.
type lostAnswer struct {
	Conditional
	lose bool
}

func (l *lostAnswer) PutRev(ctx context.Context, id string, data []byte, rev uint64) (uint64, error) {
	next, err := l.Conditional.PutRev(ctx, id, data, rev)
	if err == nil && l.lose {
		l.lose = false
		return 0, fmt.Errorf("put %s: %w (the answer was lost)", id, ErrUnavailable)
	}
	return next, err
}

// TestFencedTwoWriters: node a saves a session; node b adopts it (reads
// the record) and saves it; a, cut off all the while, then writes nothing
// over b's record and deletes nothing of it; b goes on writing. A record
// a writer never saw is not deleted by it.
func TestFencedTwoWriters(t *testing.T) {
	s := sharedNATS(t)
	k := openTestKV(t, s, KVOptions{})
	ctx := ctxT(t)
	a, b := NewFenced(k), NewFenced(k)
	const id = "sess-adopted"
	if err := a.Put(ctx, id, []byte("a1")); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, id, []byte("a2")); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(ctx, id); err != nil || string(got) != "a2" {
		t.Fatalf("b reads %q, %v", got, err)
	}
	if err := b.Put(ctx, id, []byte("b1")); err != nil {
		t.Fatalf("b's write after reading: %v", err)
	}
	if err := a.Put(ctx, id, []byte("a3-stale")); !errors.Is(err, ErrConflict) {
		t.Fatalf("a's write after b's = %v, want ErrConflict", err)
	}
	if err := a.Delete(ctx, id); !errors.Is(err, ErrConflict) {
		t.Fatalf("a's delete after b's write = %v, want ErrConflict", err)
	}
	if err := b.Put(ctx, id, []byte("b2")); err != nil {
		t.Fatalf("b's next write: %v", err)
	}
	if got, _ := k.Get(ctx, id); string(got) != "b2" {
		t.Fatalf("record = %q, want b's b2", got)
	}
	// A record a has never seen is b's: a's delete leaves it.
	if err := b.Put(ctx, "sess-b-only", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, "sess-b-only"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Get(ctx, "sess-b-only"); err != nil {
		t.Fatalf("a deleted a record it never saw: %v", err)
	}
	a.Forget(id)
	if n := a.Remembered(); n != 0 {
		t.Fatalf("a remembers %d records after forgetting its one", n)
	}
	// Deleting at the revision last seen works, and forgets it.
	if err := b.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "sess-b-only"); err != nil {
		t.Fatal(err)
	}
	if n := b.Remembered(); n != 0 {
		t.Fatalf("b remembers %d records after deleting both", n)
	}
}

// TestFencedLostAnswer: a write that landed though its answer was lost
// does not make the writer's next write a conflict (the record holds
// exactly what it tried to write); one that someone else wrote over
// does.
func TestFencedLostAnswer(t *testing.T) {
	s := sharedNATS(t)
	k := openTestKV(t, s, KVOptions{})
	ctx := ctxT(t)
	la := &lostAnswer{Conditional: k}
	f := NewFenced(la)
	const id = "sess-lost"
	if err := f.Put(ctx, id, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	la.lose = true
	if err := f.Put(ctx, id, []byte("v2")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("put with a lost answer = %v", err)
	}
	if err := f.Put(ctx, id, []byte("v3")); err != nil {
		t.Fatalf("the write after a lost answer: %v", err)
	}
	la.lose = true
	if err := f.Put(ctx, id, []byte("v4")); !errors.Is(err, ErrUnavailable) {
		t.Fatal(err)
	}
	if err := f.Delete(ctx, id); err != nil {
		t.Fatalf("delete after a lost answer: %v", err)
	}
	if _, err := k.Get(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	// Lost answer, then someone else writes: a conflict.
	if err := f.Put(ctx, id, []byte("w1")); err != nil {
		t.Fatal(err)
	}
	la.lose = true
	_ = f.Put(ctx, id, []byte("w2"))
	other := NewFenced(k)
	if _, err := other.Get(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := other.Put(ctx, id, []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := f.Put(ctx, id, []byte("w3")); !errors.Is(err, ErrConflict) {
		t.Fatalf("write over someone else's = %v, want ErrConflict", err)
	}
	if err := f.Delete(ctx, id); !errors.Is(err, ErrConflict) {
		t.Fatalf("delete of someone else's = %v, want ErrConflict", err)
	}
	if got, _ := k.Get(ctx, id); string(got) != "other" {
		t.Fatalf("record = %q, want other", got)
	}
}
