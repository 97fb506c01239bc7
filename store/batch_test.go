package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestBoltPutMany: a batch is saved whole; one bad record fails it all
// and nothing of it is written.
func TestBoltPutMany(t *testing.T) {
	b, err := OpenBolt(filepath.Join(t.TempDir(), "sessions.db"), BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	var recs []Record
	for i := range 50 {
		recs = append(recs, Record{ID: fmt.Sprintf("id%02d", i), Data: []byte(fmt.Sprint("v", i))})
	}
	if err := b.PutMany(ctx, recs); err != nil {
		t.Fatal(err)
	}
	ids, err := b.List(ctx)
	if err != nil || len(ids) != 50 {
		t.Fatalf("list: %d ids, %v", len(ids), err)
	}
	if got, err := b.Get(ctx, "id07"); err != nil || string(got) != "v7" {
		t.Fatalf("get: %q %v", got, err)
	}
	bad := []Record{{ID: "fresh", Data: []byte("x")}, {ID: "bad id", Data: []byte("y")}}
	if err := b.PutMany(ctx, bad); !errors.Is(err, ErrBadID) {
		t.Fatalf("a bad id in a batch: %v", err)
	}
	if _, err := b.Get(ctx, "fresh"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("part of a refused batch was written: %v", err)
	}
	if err := b.PutMany(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_ = b.Close()
	if err := b.PutMany(ctx, recs[:1]); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
