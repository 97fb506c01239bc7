package cluster

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// streamsCluster starts a three-server JetStream cluster whose one-replica
// buckets of prefix bucket are held by one or two of the servers, and
// returns it with the index of a server that holds neither: nodes
// connected to that one only stay connected while the others restart,
// and see only the streams go (the failure: every raxol-ssh node
// stayed connected to another NATS server while the one holding the KV
// streams restarted).
func streamsCluster(t *testing.T, bucket string) (c *natstest.Cluster, spare int, holders []int) {
	t.Helper()
	c = natstest.RunCluster(t, 3)
	// A node that creates the buckets and leaves at once.
	o := testOptions(t, c.URLs(), bucket, "creator")
	o.Replicas = 1
	x := joinOpts(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := x.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	x.Close()
	for _, s := range []string{"KV_" + bucket + "_nodes", "KV_" + bucket + "_sessions"} {
		if i := c.WaitStreamLeader(s); !slices.Contains(holders, i) {
			holders = append(holders, i)
		}
	}
	for i := range c.Len() {
		if !slices.Contains(holders, i) {
			return c, i, holders
		}
	}
	t.Fatal("no server holds neither stream")
	return nil, 0, nil
}

// The failure (a): the nodes stayed connected while the streams
// were gone for longer than the TTL; when they came back every peer's
// entry expired at once, and the nodes declared each other lost and
// adopted each other's running sessions. An expiry seen after an outage
// of the stream is no evidence: no node is lost, each session keeps its
// home, and the nodes hold their leases again.
func TestFencingAStreamOutageLongerThanTheTTLLosesNoNode(t *testing.T) {
	t.Parallel()
	bucket := uniqueBucket()
	c, spare, holders := streamsCluster(t, bucket)
	ids := []string{"a", "b", "c"}
	var nodes []*Node
	lost := map[string]*lostLog{}
	for _, id := range ids {
		o := testOptions(t, c.URL(spare), bucket, id)
		o.Replicas = 1
		n := joinOpts(t, o)
		nodes = append(nodes, n)
		lost[id] = recordLost(n)
	}
	ctx := ctxT(t)
	for _, n := range nodes {
		waitNodes(t, n, ids...)
		if err := n.Announce(ctx, SessionEntry{ID: "s" + n.ID(), Owner: "o"}); err != nil {
			t.Fatalf("announce on %s: %v", n.ID(), err)
		}
	}

	for _, i := range holders {
		c.Kill(i) // as kill -9: no step-down reaches the others
	}
	testkit.Eventually(t, 2*testTTL, func() bool {
		for _, n := range nodes {
			if n.HoldsLease() {
				return false
			}
		}
		return true
	}, "every node's lease lapses while the streams are gone")
	time.Sleep(testTTL) // longer than the TTL in all: the outage itself, then a negative check
	for _, n := range nodes {
		if !n.Connected() {
			t.Fatalf("%s lost its connection: the outage must be of the streams only", n.ID())
		}
	}
	for _, i := range holders {
		c.Restart(i)
	}
	back := time.Now()
	testkit.Eventually(t, 15*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, n := range nodes {
			for _, id := range ids {
				e, home, err := n.Lookup(ctx, "s"+id)
				if err != nil || e.Node != id || home.ID != id {
					return false
				}
			}
		}
		return true
	}, "every node finds every session at its own home after the streams came back")
	t.Logf("sessions found at their homes %v after the streams' servers restarted", time.Since(back).Round(time.Millisecond))
	// Two TTLs after the return: a node that would declare a peer lost on
	// the expiries has done so by then.
	for time.Since(back) < 2*testTTL+time.Second {
		time.Sleep(100 * time.Millisecond) // negative check: no loss declared, as the comment above says
	}
	for name, l := range lost {
		for _, peer := range ids {
			if _, _, ok := l.get(peer); ok {
				t.Errorf("%s declared %s lost after an outage of the streams", name, peer)
			}
		}
	}
	for _, n := range nodes {
		if got := nodeIDs(n); !slices.Equal(got, ids) {
			t.Errorf("%s sees nodes %v, want %v", n.ID(), got, ids)
		}
		if !n.HoldsLease() {
			t.Errorf("%s does not hold its lease again after the outage", n.ID())
		}
		for _, id := range ids {
			if err := n.Fenced("s" + n.ID()); err != nil {
				t.Errorf("%s fences its own session after the outage: %v", id, err)
			}
		}
	}
}

// A node killed during a stream outage is still declared lost, no sooner
// than a TTL after the streams are writable again, and its sessions go to
// the callbacks.
func TestFencingANodeKilledDuringAStreamOutageIsLostOnceTheStreamsAreBack(t *testing.T) {
	t.Parallel()
	bucket := uniqueBucket()
	c, spare, holders := streamsCluster(t, bucket)
	var nodes []*Node
	for _, id := range []string{"a", "b"} {
		o := testOptions(t, c.URL(spare), bucket, id)
		o.Replicas = 1
		nodes = append(nodes, joinOpts(t, o))
	}
	a, b := nodes[0], nodes[1]
	waitNodes(t, b, "a", "b")
	lostB := recordLost(b)
	if err := a.Announce(ctxT(t), SessionEntry{ID: "s1", Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	for _, i := range holders {
		c.Kill(i) // as kill -9: no step-down reaches the others
	}
	a.Close()
	time.Sleep(testTTL + time.Second) // the outage outlasts the TTL: the scenario itself
	for _, i := range holders {
		c.Restart(i)
	}
	back := time.Now()
	testkit.Eventually(t, 4*testTTL, func() bool { _, _, ok := lostB.get("a"); return ok },
		"b declares a lost once the streams are back")
	orphans, at, _ := lostB.get("a")
	t.Logf("a declared lost %v after the streams' servers restarted", at.Sub(back).Round(time.Millisecond))
	// A TTL of silence counted from when b could write again (which may
	// be a little before Restart returned: it waits for the meta leader).
	if took := at.Sub(back); took < testTTL-time.Second {
		t.Errorf("b declared a lost %v after the streams came back, before a TTL (%v) of silence while it could write", took, testTTL)
	}
	if got := orphanIDs(orphans); !slices.Equal(got, []string{"s1"}) {
		t.Errorf("orphans of a = %v, want [s1]", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, _, err := b.Lookup(ctx, "s1"); !errors.Is(err, ErrUnknownSession) {
		t.Errorf("b.Lookup(s1) after a was lost = %v, want ErrUnknownSession", err)
	}
}
