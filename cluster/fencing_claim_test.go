package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// A node whose session another node claimed (it won the compare-and-set
// on the directory entry) learns it from the directory at once, without
// writing: Fenced says the claim is lost, OnClaimLost is told, and the
// node never writes the entry again (Announce, the heartbeat's retries
// and Forget leave the winner's entry as it is).
func TestFencingAClaimTakenByAnotherNodeIsGivenUp(t *testing.T) {
	t.Parallel()
	s, bucket, nodes := cluster(t, "a", "b")
	a := nodes[0]
	ctx := ctxT(t)
	told := make(chan string, 4)
	a.OnClaimLost(func(id string) { told <- id })
	if err := a.Announce(ctx, SessionEntry{ID: "s1", Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Fenced("s1"); err != nil {
		t.Fatalf("Fenced(s1) while a holds it: %v", err)
	}

	// b wins the compare-and-set on a's entry.
	kv := rawKV(t, s.ClientURL(), bucket+"_sessions")
	cur, err := kv.Get(ctx, sessKey("s1"))
	if err != nil {
		t.Fatal(err)
	}
	var e SessionEntry
	if err := json.Unmarshal(cur.Value(), &e); err != nil {
		t.Fatal(err)
	}
	e.Node = "b"
	data, _ := json.Marshal(e)
	won, err := kv.Update(ctx, sessKey("s1"), data, cur.Revision())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-told:
		if id != "s1" {
			t.Fatalf("OnClaimLost(%q), want s1", id)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a was not told its claim of s1 was lost")
	}
	if err := a.Fenced("s1"); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("Fenced(s1) after b's claim = %v, want ErrClaimLost", err)
	}
	if !a.ClaimLost("s1") {
		t.Fatal("ClaimLost(s1) = false after b's claim")
	}
	// Another session of a's is not fenced.
	if err := a.Announce(ctx, SessionEntry{ID: "s2"}); err != nil || a.Fenced("s2") != nil {
		t.Fatalf("a's other session: announce %v, fenced %v", err, a.Fenced("s2"))
	}
	// a writes nothing over b's entry: not an announce of a change, not
	// the heartbeat's retries, not its forget.
	if err := a.Announce(ctx, SessionEntry{ID: "s1", Owner: "o", Detached: true}); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("Announce(s1) after b's claim = %v, want ErrClaimLost", err)
	}
	time.Sleep(2 * testHeartbeat) // negative check: the heartbeat's retries would have written over b's entry by now
	if err := a.Forget(ctx, "s1"); err != nil {
		t.Fatalf("Forget(s1): %v", err)
	}
	got, err := kv.Get(context.Background(), sessKey("s1"))
	if err != nil || got.Revision() != won {
		t.Fatalf("b's entry after a gave up: %v (revision %v), want b's revision %d untouched", err, got, won)
	}
	testkit.Eventually(t, 2*time.Second, func() bool {
		e, home, err := a.Lookup(ctx, "s1")
		return err == nil && e.Node == "b" && home.ID == "b"
	}, "a finds s1 at b")
}
