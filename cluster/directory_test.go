package cluster

import (
	"errors"
	"strings"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

func TestASessionAnnouncedOnOneNodeIsFoundFromTheOthers(t *testing.T) {
	_, _, nodes := cluster(t, "a", "b", "c")
	a, b, c := nodes[0], nodes[1], nodes[2]
	ctx := ctxT(t)

	if err := a.Announce(ctx, SessionEntry{ID: "s1", Owner: "SHA256:owner", Agents: 2, Node: "ignored"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*Node{a, b, c} {
		e, home, err := n.Lookup(ctx, "s1")
		if err != nil {
			t.Fatalf("%s.Lookup(s1): %v", n.ID(), err)
		}
		if e.ID != "s1" || e.Node != "a" || e.Owner != "SHA256:owner" || e.Agents != 2 || e.Revision == 0 || e.Updated.IsZero() {
			t.Errorf("%s.Lookup(s1) entry = %+v", n.ID(), e)
		}
		if home.ID != "a" || home.HTTPURL != "http://a.test:8080" || home.SSHAddr != "a.test:2222" {
			t.Errorf("%s.Lookup(s1) home = %+v", n.ID(), home)
		}
	}

	if err := b.Announce(ctx, SessionEntry{ID: "s2", Owner: "SHA256:other", Detached: true, Headless: true}); err != nil {
		t.Fatal(err)
	}
	// A change of state is a second announce of the same id.
	if err := a.Announce(ctx, SessionEntry{ID: "s1", Owner: "SHA256:owner", Detached: true}); err != nil {
		t.Fatal(err)
	}
	all, err := c.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != "s1" || all[0].Node != "a" || !all[0].Detached || all[0].Agents != 0 ||
		all[1].ID != "s2" || all[1].Node != "b" || !all[1].Headless {
		t.Fatalf("c.Sessions() = %+v, want s1 on a (detached) and s2 on b", all)
	}

	if err := a.Forget(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Lookup(ctx, "s1"); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("b.Lookup(s1) after Forget: %v, want ErrUnknownSession", err)
	}
	if all, err := a.Sessions(ctx); err != nil || len(all) != 1 || all[0].ID != "s2" {
		t.Fatalf("a.Sessions() after Forget = %+v, %v; want only s2", all, err)
	}

	_, _, err = c.Lookup(ctx, "never-announced")
	if !errors.Is(err, ErrUnknownSession) || !strings.Contains(err.Error(), "never-announced") {
		t.Fatalf("Lookup(unknown) = %v, want ErrUnknownSession naming the id", err)
	}
	if _, _, err := c.Lookup(ctx, "bad id"); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("Lookup(invalid id) = %v, want ErrUnknownSession", err)
	}
	if err := a.Announce(ctx, SessionEntry{ID: "a..b"}); err == nil || !strings.Contains(err.Error(), "session id") {
		t.Fatalf("Announce(invalid id) = %v, want an error naming the session id", err)
	}
	// Forgetting what is not there is not an error.
	if err := b.Forget(ctx, "never-announced"); err != nil {
		t.Fatalf("Forget(unknown) = %v", err)
	}
}

func TestAnEmptyDirectoryListsNoSessions(t *testing.T) {
	_, _, nodes := cluster(t, "a")
	all, err := nodes[0].Sessions(ctxT(t))
	if err != nil || all == nil || len(all) != 0 {
		t.Fatalf("Sessions() on an empty bucket = %#v, %v; want an empty slice", all, err)
	}
}

func TestLoadReachesPeersAndLeastLoadedPicksTheEmptiest(t *testing.T) {
	_, _, nodes := cluster(t, "a", "b", "c")
	a, b, c := nodes[0], nodes[1], nodes[2]
	a.SetLoad(5, 1)
	b.SetLoad(2, 7)
	c.SetLoad(2, 3)
	testkit.Eventually(t, 3*testHeartbeat, func() bool {
		for _, ni := range a.Nodes() {
			if ni.ID == "b" && ni.Sessions == 2 && ni.Agents == 7 {
				return true
			}
		}
		return false
	}, "a sees b's load (2 sessions, 7 agents) after a heartbeat: %+v", a.Nodes())
	testkit.Eventually(t, 3*testHeartbeat, func() bool {
		return a.LeastLoaded().ID == "c" && b.LeastLoaded().ID == "c" && c.LeastLoaded().ID == "c"
	}, "every node picks c (fewest sessions, then fewest agents): %s %s %s",
		a.LeastLoaded().ID, b.LeastLoaded().ID, c.LeastLoaded().ID)
	for _, ni := range b.Nodes() {
		if ni.ID == "a" && (ni.HTTPURL != "http://a.test:8080" || ni.SSHAddr != "a.test:2222" || ni.Seen.IsZero()) {
			t.Errorf("b's view of a = %+v", ni)
		}
	}
	// A tie on sessions and agents goes to the smaller id.
	c.SetLoad(2, 7)
	testkit.Eventually(t, 3*testHeartbeat, func() bool { return a.LeastLoaded().ID == "b" },
		"a picks b over c on a full tie: %s", a.LeastLoaded().ID)
}

func TestDescribeNamesTheNodeTheServerAndTheBuckets(t *testing.T) {
	s, bucket, nodes := cluster(t, "a")
	d := nodes[0].Describe()
	for _, want := range []string{"a", s.ClientURL(), bucket + "_nodes", bucket + "_sessions"} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe() = %q, want it to contain %q", d, want)
		}
	}
	if !nodes[0].Connected() {
		t.Error("Connected() = false on a joined node")
	}
	nodes[0].Close()
	if d := nodes[0].Describe(); !strings.Contains(d, "closed") {
		t.Errorf("Describe() after Close = %q", d)
	}
	if err := nodes[0].Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := nodes[0].Lookup(ctxT(t), "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("Lookup after Close = %v, want ErrClosed", err)
	}
}

func TestAnnounceDoesNotOverwriteAClaimByAnotherNode(t *testing.T) {
	_, _, nodes := cluster(t, "a", "b")
	a, b := nodes[0], nodes[1]
	ctx := ctxT(t)
	if err := a.Announce(ctx, SessionEntry{ID: "s1", Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	e, _, err := b.Lookup(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := b.Claim(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	if claimed.Node != "b" || claimed.Revision <= e.Revision {
		t.Fatalf("Claim = %+v", claimed)
	}
	// A stale revision loses.
	if _, err := a.Claim(ctx, e); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("Claim with a stale revision = %v, want ErrClaimLost", err)
	}
	err = a.Announce(ctx, SessionEntry{ID: "s1", Owner: "o", Detached: true})
	if !errors.Is(err, ErrClaimLost) || !strings.Contains(err.Error(), "node b") {
		t.Fatalf("a.Announce after b's claim = %v, want ErrClaimLost naming b", err)
	}
	// a forgot it: its Forget leaves b's entry alone.
	if err := a.Forget(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	got, home, err := a.Lookup(ctx, "s1")
	if err != nil || got.Node != "b" || home.ID != "b" {
		t.Fatalf("a.Lookup(s1) = %+v, %+v, %v; want it on b", got, home, err)
	}
	if _, err := b.Claim(ctx, SessionEntry{ID: "s1"}); err == nil || !strings.Contains(err.Error(), "Revision") {
		t.Fatalf("Claim without a revision = %v", err)
	}
}

func TestANodeRestartedWithinTheTTLDropsWhatItsPreviousRunAnnounced(t *testing.T) {
	s, bucket, nodes := cluster(t, "a", "b")
	a, b := nodes[0], nodes[1]
	ctx := ctxT(t)
	if err := a.Announce(ctx, SessionEntry{ID: "old"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Announce(ctx, SessionEntry{ID: "kept"}); err != nil {
		t.Fatal(err)
	}
	a.Close() // crash, and a restart well within the TTL
	join(t, s.ClientURL(), bucket, "a")
	if _, _, err := b.Lookup(ctx, "old"); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("b.Lookup(old) after a's restart = %v, want ErrUnknownSession", err)
	}
	if _, _, err := b.Lookup(ctx, "kept"); err != nil {
		t.Fatalf("b's own session after a's restart: %v", err)
	}
}
