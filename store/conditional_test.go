package store

import (
	"errors"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
)

// TestKVConditional: a write or delete at a revision the record has left
// (someone else wrote or deleted it since) is refused with ErrConflict
// and changes nothing; at the record's revision it goes through; a create
// (revision 0) takes a missing or deleted key but not a live one. On a
// one-server bucket and on a three-copy one (JetStream reports the
// conflict with another code there).
func TestKVConditional(t *testing.T) {
	t.Run("one copy", func(t *testing.T) { checkConditional(t, openTestKV(t, sharedNATS(t), KVOptions{})) })
	t.Run("three copies", func(t *testing.T) {
		c := natstest.RunCluster(t, 3)
		ctx := ctxT(t)
		k, err := OpenKV(ctx, connect(t, c.URLs()), uniqueBucket(), KVOptions{Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Close() })
		checkConditional(t, k)
	})
}

func checkConditional(t *testing.T, k *KV) {
	ctx := ctxT(t)
	const id = "sess-cond"
	r1, err := k.PutRev(ctx, id, []byte("one"), 0)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := k.PutRev(ctx, id, []byte("again"), 0); !errors.Is(err, ErrConflict) {
		t.Fatalf("create over a live record = %v, want ErrConflict", err)
	}
	r2, err := k.PutRev(ctx, id, []byte("two"), r1)
	if err != nil || r2 <= r1 {
		t.Fatalf("update at %d = %d, %v", r1, r2, err)
	}
	// The writer that still has r1 (it lost the record to the one that
	// wrote r2) writes and deletes nothing.
	if _, err := k.PutRev(ctx, id, []byte("stale"), r1); !errors.Is(err, ErrConflict) {
		t.Fatalf("update at the old revision = %v, want ErrConflict", err)
	}
	if err := k.DeleteRev(ctx, id, r1); !errors.Is(err, ErrConflict) {
		t.Fatalf("delete at the old revision = %v, want ErrConflict", err)
	}
	data, rev, err := k.GetRev(ctx, id)
	if err != nil || string(data) != "two" || rev != r2 {
		t.Fatalf("GetRev = %q at %d, %v; want two at %d", data, rev, err, r2)
	}
	if err := k.DeleteRev(ctx, id, r2); err != nil {
		t.Fatalf("delete at the record's revision: %v", err)
	}
	if _, _, err := k.GetRev(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetRev after delete = %v, want ErrNotFound", err)
	}
	// A deleted record is written anew by a create only, not by an
	// update at its last live revision.
	if _, err := k.PutRev(ctx, id, []byte("zombie"), r2); !errors.Is(err, ErrConflict) {
		t.Fatalf("update of a deleted record = %v, want ErrConflict", err)
	}
	if _, err := k.PutRev(ctx, id, []byte("three"), 0); err != nil {
		t.Fatalf("create after delete: %v", err)
	}
	if got, err := k.Get(ctx, id); err != nil || string(got) != "three" {
		t.Fatalf("Get = %q, %v", got, err)
	}
}
