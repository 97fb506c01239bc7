package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// savingCluster starts nodes a, b and c of the saving demo on one NATS.
func savingCluster(t *testing.T) []*clusterNode {
	t.Helper()
	ns := runNATS(t, t.TempDir(), -1)
	return startClusterOf(t, ns.ClientURL(), savingDemo(1), server.Options{
		SSH:       server.SSHOptions{ResumeGrace: time.Minute},
		Snapshots: server.SnapshotOptions{Every: 50 * time.Millisecond},
	}, "a", "b", "c")
}

// typedAndSaved logs alice in on node n with key, types text into the
// search and waits until that is saved; it returns the session id and
// its token.
func typedAndSaved(t *testing.T, n *clusterNode, c *client, text string) (id, token string) {
	t.Helper()
	id = waitDemo(t, c)
	se, _ := n.Sessions().Get(id)
	c.Key(keyTab)
	c.Type(text)
	c.WaitFor(t, "Search: "+text, waitLong)
	// Saved by the saver's next tick: the stored record holds the model
	// as of the version that shows the text (a save counted before it,
	// encoded earlier, does not).
	shown := se.Dispatcher.Snapshot().Version
	testkit.Eventually(t, 10*time.Second, func() bool {
		v, ok := n.SavedVersion(id)
		return ok && v >= shown
	}, "a save of the typed text")
	return id, se.Token()
}

// adopters returns the nodes among ns holding session id.
func adopters(ns []*clusterNode, id string) []*clusterNode {
	var out []*clusterNode
	for _, n := range ns {
		if _, ok := n.Sessions().Get(id); ok {
			out = append(out, n)
		}
	}
	return out
}

// requireOneAdopter waits until exactly one of ns holds id, checks that
// it stays one and that one adoption was counted, and returns it.
func requireOneAdopter(t *testing.T, ns []*clusterNode, id string) *clusterNode {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, func() bool { return len(adopters(ns, id)) > 0 }, "a node to adopt the session")
	// Stays a sleep (a negative check): every node has handled the loss by
	// now, each on its own clock, and a node whose claim lost counts nothing
	// an Eventually could await; a second adopter would show within it.
	time.Sleep(2 * time.Second)
	got := adopters(ns, id)
	if len(got) != 1 {
		t.Fatalf("%d nodes adopted the session, want exactly 1", len(got))
	}
	total := 0.0
	for _, n := range ns {
		total += scrapeMetric(t, n.http, `raxol_sessions_restored_total{reason="adopted"}`)
	}
	if total != 1 {
		t.Fatalf("%v adoptions counted, want 1", total)
	}
	return got[0]
}

// TestSnapshotClusterNodeLost: the node holding a session dies without a
// word; exactly one other node adopts the saved session, and its owner
// and an agent with the same token reach it through the node that did
// not adopt it.
func TestSnapshotClusterNodeLost(t *testing.T) {
	nodes := savingCluster(t)
	a := nodes[0]
	key := newKey(t)
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: key})
	id, token := typedAndSaved(t, a, owner, "before-the-crash")

	a.KillCluster()
	owner.Close()
	home := requireOneAdopter(t, nodes[1:], id)
	other := nodes[1]
	if home == other {
		other = nodes[2]
	}
	// The owner resumes through the node that did not adopt it (bridged
	// to the adopter).
	back := connectCmd(t, other.ssh, clientOpts{user: "alice", key: key}, "resume "+id)
	if got := waitDemo(t, back); got != id {
		t.Fatalf("resumed %s, want %s", got, id)
	}
	back.WaitFor(t, "Search: before-the-crash", waitLong)
	// Through the node that did not adopt it, with the token it had.
	ag := agentVia(t, other.base()+"/sessions/"+id+"/mcp", token, nil)
	testkit.MustCall(t, ag, "demo.search.type_into", map[string]any{"text": "after-the-crash"})
	back.WaitFor(t, "Search: after-the-crash", waitLong)
}

// TestSnapshotClusterDrainHandsOver: a node that drains leaves its saved
// sessions to its peers; one adopts each, the owner resumes it there.
func TestSnapshotClusterDrainHandsOver(t *testing.T) {
	nodes := savingCluster(t)
	a := nodes[0]
	key := newKey(t)
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: key})
	id, _ := typedAndSaved(t, a, owner, "before-the-deploy")
	owner.Close()

	stopCtx := make(chan error, 1)
	go func() { stopCtx <- stopErr(a.testServer) }()
	home := requireOneAdopter(t, nodes[1:], id)
	if err := <-stopCtx; err != nil && !strings.Contains(err.Error(), "drain") {
		t.Fatalf("drain: %v", err)
	}
	back := connectCmd(t, home.ssh, clientOpts{user: "alice", key: key}, "resume "+id)
	if got := waitDemo(t, back); got != id {
		t.Fatalf("resumed %s, want %s", got, id)
	}
	back.WaitFor(t, "Search: before-the-deploy", waitLong)
}

// stopErr shuts srv down and returns Shutdown's error.
func stopErr(srv *testServer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return srv.Shutdown(ctx)
}

// TestSnapshotClusterExpiredOrphanIsDropped: a lost node's session whose
// snapshot is older than the resume grace is not adopted, and its entry
// leaves the directory rather than lingering there.
func TestSnapshotClusterExpiredOrphanIsDropped(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	bucket := fmt.Sprintf("drop%d", clusterSeq.Add(1))
	nodes := startNodes(t, ns.ClientURL(), savingDemo(1), server.Options{
		SSH:       server.SSHOptions{ResumeGrace: time.Second},
		Snapshots: server.SnapshotOptions{Every: 50 * time.Millisecond},
	}, nil, bucket, "a", "b")
	a, b := nodes[0], nodes[1]
	owner := connect(t, a.ssh, clientOpts{user: "alice"})
	id, _ := typedAndSaved(t, a, owner, "soon-stale")
	a.KillCluster()
	owner.Close()

	kv, err := natstest.JetStream(t, ns.ClientURL()).KeyValue(context.Background(), bucket+"_sessions")
	if err != nil {
		t.Fatal(err)
	}
	// A's entry expires after the 3 s TTL; by then the snapshot (1 s
	// grace) is too old to resume.
	testkit.Eventually(t, 20*time.Second, func() bool {
		_, err := kv.Get(context.Background(), "sess."+id)
		return errors.Is(err, jetstream.ErrKeyNotFound)
	}, "the stale orphan's entry to leave the directory")
	if _, ok := b.Sessions().Get(id); ok {
		t.Fatal("a session older than the resume grace was adopted")
	}
	if got := scrapeMetric(t, b.http, `raxol_snapshot_failures_total{reason="expired"}`); got != 1 {
		t.Fatalf("%v expired snapshots counted, want 1", got)
	}
}
