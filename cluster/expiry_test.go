package cluster

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// lostLog records a node's OnNodeLost calls.
type lostLog struct {
	mu    sync.Mutex
	calls map[string][]SessionEntry
	at    map[string]time.Time
}

func recordLost(n *Node) *lostLog {
	l := &lostLog{calls: map[string][]SessionEntry{}, at: map[string]time.Time{}}
	n.OnNodeLost(func(node string, orphans []SessionEntry) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.calls[node] = orphans
		l.at[node] = time.Now()
		return nil
	})
	return l
}

func (l *lostLog) get(node string) ([]SessionEntry, time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.calls[node]
	return o, l.at[node], ok
}

func orphanIDs(es []SessionEntry) []string {
	var ids []string
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestAKilledNodeIsGoneWithinTheTTLAndItsOrphansGoToTheCallbacks(t *testing.T) {
	t.Parallel()
	_, _, nodes := cluster(t, "a", "b", "c")
	a, b, c := nodes[0], nodes[1], nodes[2]
	ctx := ctxT(t)
	lostB, lostC := recordLost(b), recordLost(c)
	for _, id := range []string{"s1", "s2"} {
		if err := a.Announce(ctx, SessionEntry{ID: id, Owner: "o"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Announce(ctx, SessionEntry{ID: "s3", Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Lookup(ctx, "s1"); err != nil {
		t.Fatal(err)
	}

	a.Close() // a crash, as far as the peers can tell
	killed := time.Now()
	testkit.Eventually(t, testTTL+3*time.Second, func() bool {
		_, _, err := b.Lookup(ctx, "s1")
		return errors.Is(err, ErrUnknownSession)
	}, "b.Lookup(s1) reports ErrUnknownSession once a's entry expired")
	t.Logf("expiry detected by b.Lookup %v after a was killed (TTL %v, heartbeat %v)",
		time.Since(killed).Round(time.Millisecond), testTTL, testHeartbeat)

	for name, l := range map[string]*lostLog{"b": lostB, "c": lostC} {
		testkit.Eventually(t, 2*time.Second, func() bool { _, _, ok := l.get("a"); return ok },
			"OnNodeLost(a) fired on %s", name)
		orphans, at, _ := l.get("a")
		t.Logf("OnNodeLost(a) on %s %v after the kill", name, at.Sub(killed).Round(time.Millisecond))
		if got := orphanIDs(orphans); !slices.Equal(got, []string{"s1", "s2"}) {
			t.Errorf("%s's OnNodeLost(a) orphans = %v, want [s1 s2]", name, got)
		}
		for _, o := range orphans {
			if o.Node != "a" || o.Revision == 0 {
				t.Errorf("%s: orphan %+v, want home a and a revision", name, o)
			}
		}
	}
	if _, _, ok := lostB.get("c"); ok {
		t.Error("OnNodeLost fired for c, which is alive")
	}
	// With callbacks registered, the entries stay for them to claim; the
	// directory hides them.
	all, err := b.Sessions(ctx)
	if err != nil || len(all) != 1 || all[0].ID != "s3" {
		t.Fatalf("b.Sessions() = %+v, %v; want only s3", all, err)
	}
	waitNodes(t, b, "b", "c")
	if _, _, err := c.Lookup(ctx, "s3"); err != nil {
		t.Fatalf("b's session s3 after a's death: %v", err)
	}
}

func TestAKilledNodesOrphansAreDeletedWhenNoCallbackIsRegistered(t *testing.T) {
	t.Parallel()
	s, bucket, nodes := cluster(t, "a", "b", "c")
	a, b := nodes[0], nodes[1]
	ctx := ctxT(t)
	var ids []string
	for i := range 20 {
		id := fmt.Sprintf("s%02d", i)
		ids = append(ids, id)
		if err := a.Announce(ctx, SessionEntry{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Announce(ctx, SessionEntry{ID: "b1"}); err != nil {
		t.Fatal(err)
	}
	kv := rawKV(t, s.ClientURL(), bucket+"_sessions")
	a.Close()
	killed := time.Now()
	testkit.Eventually(t, testTTL+3*time.Second, func() bool {
		for _, id := range ids {
			if stored(t, kv, sessKey(id)) {
				return false
			}
		}
		return true
	}, "a's 20 session entries deleted from the bucket")
	t.Logf("a's entries deleted %v after a was killed", time.Since(killed).Round(time.Millisecond))
	if !stored(t, kv, sessKey("b1")) {
		t.Error("b's own session entry was deleted too")
	}
}

func TestADrainedNodeIsGoneAtOnce(t *testing.T) {
	t.Parallel()
	s, bucket, nodes := cluster(t, "a", "b", "c")
	a, b, c := nodes[0], nodes[1], nodes[2]
	ctx := ctxT(t)
	lostB := recordLost(b)
	if err := a.Announce(ctx, SessionEntry{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	b.SetLoad(3, 0)
	c.SetLoad(4, 0)
	testkit.Eventually(t, 3*testHeartbeat, func() bool { return b.LeastLoaded().ID == "a" },
		"b picks a, the emptiest, before the drain")

	start := time.Now()
	if err := a.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	drained := time.Now()
	t.Logf("Drain took %v", drained.Sub(start).Round(time.Millisecond))
	testkit.Eventually(t, time.Second, func() bool {
		_, _, err := b.Lookup(ctx, "s1")
		return errors.Is(err, ErrUnknownSession) && b.LeastLoaded().ID != "a" && !slices.Contains(nodeIDs(b), "a")
	}, "b forgets a and its session within a second of the drain")
	t.Logf("b sees a gone %v after Drain returned", time.Since(drained).Round(time.Millisecond))

	if stored(t, rawKV(t, s.ClientURL(), bucket+"_nodes"), nodeKey("a")) {
		t.Error("a's node entry is still stored after Drain")
	}
	self := a.Nodes()
	if i := slices.IndexFunc(self, func(ni NodeInfo) bool { return ni.ID == "a" }); i < 0 || !self[i].Draining {
		t.Errorf("a.Nodes() after Drain = %+v, want a marked draining", self)
	}
	if a.LeastLoaded().ID == "a" {
		t.Error("a.LeastLoaded() picks a, which is draining")
	}
	if err := a.Announce(ctx, SessionEntry{ID: "s2"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Announce after Drain = %v, want ErrClosed", err)
	}
	// The heartbeat stopped: a stays gone, and b never picks it.
	until := time.Now().Add(2*testHeartbeat + 500*time.Millisecond)
	for time.Now().Before(until) {
		if b.LeastLoaded().ID == "a" {
			t.Fatal("b.LeastLoaded() returned the drained node a")
		}
		time.Sleep(20 * time.Millisecond) // poll interval of a negative check over two heartbeats
	}
	if slices.Contains(nodeIDs(b), "a") {
		t.Error("a is back in b's view after its drain")
	}
	if orphans, _, ok := lostB.get("a"); !ok || len(orphans) != 0 {
		t.Errorf("b's OnNodeLost(a) = %v, %v; want a call with no orphans", orphans, ok)
	}
	if err := a.Close(); err != nil {
		t.Error(err)
	}
}

func TestOfEightNodesClaimingAnOrphanExactlyOneWins(t *testing.T) {
	t.Parallel()
	ids := []string{"a", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"}
	_, _, nodes := cluster(t, ids...)
	a, claimers := nodes[0], nodes[1:]
	ctx := ctxT(t)
	orphans := make(chan SessionEntry, len(claimers))
	for _, n := range claimers {
		n.OnNodeLost(func(node string, es []SessionEntry) error {
			for _, e := range es {
				orphans <- e
			}
			return nil
		})
	}
	if err := a.Announce(ctx, SessionEntry{ID: "s1", Owner: "o", Detached: true}); err != nil {
		t.Fatal(err)
	}
	a.Close()

	got := make([]SessionEntry, len(claimers))
	for i := range got {
		select {
		case got[i] = <-orphans:
		case <-time.After(testTTL + 3*time.Second):
			t.Fatalf("only %d of %d nodes were handed the orphan", i, len(claimers))
		}
	}
	var wg sync.WaitGroup
	results := make([]SessionEntry, len(claimers))
	errs := make([]error, len(claimers))
	for i, n := range claimers {
		wg.Go(func() { results[i], errs[i] = n.Claim(ctx, got[i]) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Fatalf("two winners: %s and %s", claimers[winner].ID(), claimers[i].ID())
			}
			winner = i
		case !errors.Is(err, ErrClaimLost):
			t.Errorf("%s.Claim: %v, want ErrClaimLost", claimers[i].ID(), err)
		}
	}
	if winner < 0 {
		t.Fatal("no claimer won")
	}
	w := claimers[winner]
	if results[winner].Node != w.ID() || !results[winner].Detached || results[winner].Owner != "o" {
		t.Errorf("winner's entry = %+v", results[winner])
	}
	for _, n := range []*Node{w, claimers[(winner+1)%len(claimers)]} {
		e, home, err := n.Lookup(ctx, "s1")
		if err != nil || e.Node != w.ID() || home.ID != w.ID() {
			t.Errorf("%s.Lookup(s1) = %+v, %+v, %v; want home %s", n.ID(), e, home, err, w.ID())
		}
	}
	t.Logf("%s won the claim", w.ID())
}

// TestAPeerWhoseExpiryIsNeverShownIsLostByThisNodesClock: node a dies and
// its entry leaves the nodes bucket without the watcher showing an expiry
// (purged from the stream: as a marker is lost when the stream changes
// leader, or the watcher is made again after the message went). b
// declares a lost once it heard no heartbeat of a for a TTL and a
// heartbeat by its own clock, reading the entry from the stream's leader
// first; a live peer c, whose entry is read back, is not declared lost.
func TestAPeerWhoseExpiryIsNeverShownIsLostByThisNodesClock(t *testing.T) {
	t.Parallel()
	s, bucket, nodes := cluster(t, "a", "b", "c")
	a, b := nodes[0], nodes[1]
	lost := recordLost(b)
	ctx := ctxT(t)
	if err := a.Announce(ctx, SessionEntry{ID: "s1", Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	a.Close() // a crash, as far as the peers can tell
	js := natstest.JetStream(t, s.ClientURL())
	st, err := js.Stream(ctx, "KV_"+bucket+"_nodes")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject("$KV."+bucket+"_nodes.node.a")); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	testkit.Eventually(t, testTTL+testHeartbeat+3*time.Second, func() bool { _, _, ok := lost.get("a"); return ok },
		"b declares a lost though no expiry of it was shown")
	_, at, _ := lost.get("a")
	if took := at.Sub(killed); took < testTTL {
		t.Fatalf("a declared lost %v after it went, before a TTL (%v)", took, testTTL)
	}
	t.Logf("a declared lost %v after it went", at.Sub(killed).Round(time.Millisecond))
	time.Sleep(testTTL) // c keeps beating: never lost (negative check: a loss would be declared within a TTL)
	if _, _, ok := lost.get("c"); ok {
		t.Fatal("b declared c lost, which is alive")
	}
	waitNodes(t, b, "b", "c")
}

// TestOnNodeLostIsCalledAgainUntilItSucceeds: a callback that could not
// finish (it returns an error, as when a claim got no answer while a
// stream elected a leader) is called again a heartbeat later, with the
// lost node's entries read again: an entry it claimed meanwhile is no
// longer passed, one it left is, with its revision. Once it returns nil
// it is not called again. Without the retry, an entry the callback could
// not claim stayed unadopted, or was dropped.
func TestOnNodeLostIsCalledAgainUntilItSucceeds(t *testing.T) {
	t.Parallel()
	_, _, nodes := cluster(t, "a", "b")
	a, b := nodes[0], nodes[1]
	ctx := ctxT(t)
	for _, id := range []string{"s1", "s2"} {
		if err := a.Announce(ctx, SessionEntry{ID: id, Owner: "o", Detached: true}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var calls [][]string
	var at []time.Time
	b.OnNodeLost(func(node string, orphans []SessionEntry) error {
		mu.Lock()
		n := len(calls)
		calls = append(calls, orphanIDs(orphans))
		at = append(at, time.Now())
		mu.Unlock()
		switch n {
		case 0: // claims s1; s2's claim "gets no answer"
			for _, e := range orphans {
				if e.ID == "s1" {
					if _, err := b.Claim(ctx, e); err != nil {
						return err
					}
				}
			}
			return fmt.Errorf("claim s2: %w", ErrUnavailable)
		default: // claims what is left
			for _, e := range orphans {
				if e.Revision == 0 {
					return fmt.Errorf("orphan %s without a revision", e.ID)
				}
				if _, err := b.Claim(ctx, e); err != nil {
					return err
				}
			}
			return nil
		}
	})
	a.Close()
	testkit.Eventually(t, testTTL+5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(calls) >= 2
	}, "OnNodeLost(a) called again after it failed")
	time.Sleep(3 * testHeartbeat) // no third call once it succeeded
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("OnNodeLost(a) called %d times (%v), want 2", len(calls), calls)
	}
	if !slices.Equal(calls[0], []string{"s1", "s2"}) || !slices.Equal(calls[1], []string{"s2"}) {
		t.Errorf("orphans per call = %v, want [[s1 s2] [s2]]: the second call reads them again", calls)
	}
	if d := at[1].Sub(at[0]); d < testHeartbeat/2 {
		t.Errorf("called again %v after the failure, want about a heartbeat (%v)", d, testHeartbeat)
	}
	for _, id := range []string{"s1", "s2"} {
		e, home, err := b.Lookup(ctx, id)
		if err != nil || home.ID != "b" || e.Node != "b" {
			t.Errorf("b.Lookup(%s) = %+v, %+v, %v; want it claimed by b", id, e, home, err)
		}
	}
}
