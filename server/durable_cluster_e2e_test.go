package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestDurableClusterRotationThenNodeLost: in a cluster the snapshots are
// in JetStream KV and the same saver writes them. The saver's tick is an
// hour away; the owner rotates the token with ctrl+r on node a, which
// dies without a word as soon as the new token is on the owner's screen.
// A peer adopts the session from the KV, with the new token: it opens
// the session through the other peer, and the old one does not.
func TestDurableClusterRotationThenNodeLost(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startClusterOf(t, ns.ClientURL(), savingDemo(1), server.Options{
		SSH:       server.SSHOptions{ResumeGrace: time.Minute},
		Snapshots: server.SnapshotOptions{Every: time.Hour},
	}, "a", "b", "c")
	a := nodes[0]
	owner := connect(t, a.ssh, clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	owner.Key(keyCtrlO)
	m := panelTokenRe.FindStringSubmatch(owner.WaitFor(t, "Bearer token (", waitLong))
	if m == nil {
		t.Fatalf("no token in the attach panel:\n%s", owner.Screen())
	}
	old := m[1]
	owner.Key("\x12") // ctrl+r
	var fresh string
	owner.WaitFor(t, func(s string) bool {
		if m := panelTokenRe.FindStringSubmatch(s); m != nil && m[1] != old {
			fresh = m[1]
			return true
		}
		return false
	}, waitLong)
	a.KillCluster()
	owner.Close()

	home := requireOneAdopter(t, nodes[1:], id)
	other := nodes[1]
	if home == other {
		other = nodes[2]
	}
	url := other.base() + "/sessions/" + id + "/mcp"
	ag := agentVia(t, url, fresh, nil)
	testkit.MustCall(t, ag, "raxol_screenshot", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "old-token", Version: "1"}, nil)
	if cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: testkit.Bearer(nil, old)}}, nil); err == nil {
		_ = cs.Close()
		t.Fatal("the rotated-away token opens the adopted session")
	}
}

// TestDurableClusterKillKeepsEveryAcknowledgedWrite: an agent writes
// through node a continuously (every 50 ms) while the saver's interval is
// an hour; a is killed without a word. The node that adopts the session
// holds the last write a acknowledged (or the one after it, in flight at
// the kill): an agent's change is answered once it is in the bucket, not
// at the saver's next round.
func TestDurableClusterKillKeepsEveryAcknowledgedWrite(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startClusterOf(t, ns.ClientURL(), savingDemo(1), server.Options{
		SSH:       server.SSHOptions{ResumeGrace: time.Minute},
		Snapshots: server.SnapshotOptions{Every: time.Hour},
	}, "a", "b")
	a, b := nodes[0], nodes[1]
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: newKey(t)})
	id := waitDemo(t, owner)
	owner.Key(keyCtrlO) // the token is shown once the session is saved
	m := panelTokenRe.FindStringSubmatch(owner.WaitFor(t, "Bearer token (", waitLong))
	if m == nil {
		t.Fatalf("no token in the attach panel:\n%s", owner.Screen())
	}
	w := &writer{url: a.base() + "/sessions/" + id + "/mcp", token: m[1]}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.run(ctx) }()
	defer func() { stop(); <-done }()
	testkit.Eventually(t, 10*time.Second, func() bool { return w.acked.Load() > 20 }, "the agent writes through a")
	a.KillCluster()
	stop()
	<-done
	owner.Close()
	testkit.Eventually(t, 20*time.Second, func() bool { _, ok := b.Sessions().Get(id); return ok }, "b adopts the session")
	acked := w.acked.Load()
	tree := readVia(t, b.base()+"/sessions/"+id+"/mcp", m[1], mcpbridge.URITree)
	if !strings.Contains(tree, fmt.Sprintf("%q", fmt.Sprintf("w%d", acked))) &&
		!strings.Contains(tree, fmt.Sprintf("%q", fmt.Sprintf("w%d", acked+1))) {
		t.Fatalf("the adopted copy lost acknowledged writes: %d acknowledged, its tree:\n%s", acked, tree)
	}
	t.Logf("%d writes acknowledged before the kill; the adopted copy holds the last", acked)
}
