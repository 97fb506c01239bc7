package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// TestByLoadOrdersTheNodesThatTakeSessions: least loaded first (fewest
// sessions, then agents, then id), draining nodes left out; LeastLoaded
// is its first.
func TestByLoadOrdersTheNodesThatTakeSessions(t *testing.T) {
	_, _, nodes := cluster(t, "a", "b", "c", "d")
	a, b, c, d := nodes[0], nodes[1], nodes[2], nodes[3]
	a.SetLoad(3, 0)
	b.SetLoad(1, 5)
	c.SetLoad(1, 2)
	d.SetLoad(0, 0)
	ids := func(n *Node) []string {
		var out []string
		for _, ni := range n.ByLoad() {
			out = append(out, ni.ID)
		}
		return out
	}
	testkit.Eventually(t, 3*testHeartbeat, func() bool { return len(ids(a)) == 4 && ids(a)[0] == "d" && ids(a)[1] == "c" && ids(a)[2] == "b" },
		"a.ByLoad() = %v, want d c b a", ids(a))
	if got := a.LeastLoaded().ID; got != "d" {
		t.Errorf("a.LeastLoaded() = %s, want d (the first of ByLoad)", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(d); len(got) != 3 || got[0] != "c" {
		t.Errorf("the draining node's own ByLoad() = %v, want c b a", got)
	}
	testkit.Eventually(t, 3*testHeartbeat, func() bool { got := ids(a); return len(got) == 3 && got[0] == "c" },
		"a.ByLoad() after d drained = %v, want c b a", ids(a))
}

// TestAnEntryCarriesWhoStartedItAndWhen: StartedBy and Created are
// stored and read back, and entries without them stay as they were.
func TestAnEntryCarriesWhoStartedItAndWhen(t *testing.T) {
	_, _, nodes := cluster(t, "a", "b")
	a, b := nodes[0], nodes[1]
	ctx := ctxT(t)
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := a.Announce(ctx, SessionEntry{ID: "s1", Owner: "api-key:0123", Headless: true, StartedBy: "key\x00api-key:0123", Created: created}); err != nil {
		t.Fatal(err)
	}
	if err := a.Announce(ctx, SessionEntry{ID: "s2", Owner: "SHA256:x"}); err != nil {
		t.Fatal(err)
	}
	e, _, err := b.Lookup(ctx, "s1")
	if err != nil || e.StartedBy != "key\x00api-key:0123" || !e.Created.Equal(created) {
		t.Fatalf("b.Lookup(s1) = %+v, %v", e, err)
	}
	e, _, err = b.Lookup(ctx, "s2")
	if err != nil || e.StartedBy != "" || !e.Created.IsZero() {
		t.Fatalf("b.Lookup(s2) = %+v, %v", e, err)
	}
}
