package cluster

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestClaimAbsent: of eight nodes claiming a saved session nobody holds
// exactly one wins, whether it has no entry or one left by a node that is
// gone; a session a live node holds is never taken.
func TestClaimAbsent(t *testing.T) {
	t.Parallel()
	ids := []string{"a", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"}
	_, _, nodes := cluster(t, ids...)
	a, claimers := nodes[0], nodes[1:]
	ctx := ctxT(t)
	lost := make(chan string, len(claimers))
	for _, n := range claimers {
		// A callback that adopts nothing: the lost node's entries stay,
		// as they do when no node saw it go.
		n.OnNodeLost(func(node string, _ []SessionEntry) error { lost <- node; return nil })
	}
	race := func(id string) *Node {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(claimers))
		for i, n := range claimers {
			wg.Go(func() { _, errs[i] = n.ClaimAbsent(ctx, SessionEntry{ID: id, Owner: "o", Detached: true}) })
		}
		wg.Wait()
		var winner *Node
		for i, err := range errs {
			switch {
			case err == nil:
				if winner != nil {
					t.Fatalf("%s: two winners, %s and %s", id, winner.ID(), claimers[i].ID())
				}
				winner = claimers[i]
			case !errors.Is(err, ErrClaimLost):
				t.Fatalf("%s: %s.ClaimAbsent: %v, want ErrClaimLost", id, claimers[i].ID(), err)
			}
		}
		if winner == nil {
			t.Fatalf("%s: no winner", id)
		}
		e, home, err := a.Lookup(ctx, id)
		if err != nil || e.Node != winner.ID() || home.ID != winner.ID() || e.Owner != "o" {
			t.Fatalf("%s: Lookup = %+v, %+v, %v; want home %s", id, e, home, err, winner.ID())
		}
		return winner
	}
	// No entry at all.
	race("fresh")
	// A live node's session is not taken.
	if err := a.Announce(ctx, SessionEntry{ID: "held", Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if _, err := claimers[0].ClaimAbsent(ctx, SessionEntry{ID: "held"}); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("claiming a live node's session: %v", err)
	}
	// An entry whose home is gone (left when every node stopped): its
	// heartbeat stops, and nobody has reaped it yet (a keep-on-drain
	// leaves it; here a drain with everything kept).
	a.KeepOnDrain(func(string) bool { return true })
	if err := a.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	for range claimers {
		select {
		case <-lost:
		case <-time.After(testTTL + 3*time.Second):
			t.Fatal("the drained node was not seen to go")
		}
	}
	race("held")
}
