package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// bucketOf returns the KV bucket of the one cluster on js whose name ends
// with suffix ("_sessions", "_snapshots").
func bucketOf(t *testing.T, js jetstream.JetStream, suffix string) jetstream.KeyValue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var names []string // read to the end: the lister's goroutine ends then
	for name := range js.KeyValueStoreNames(ctx).Name() {
		names = append(names, name)
	}
	for _, name := range names {
		if strings.HasSuffix(name, suffix) {
			kv, err := js.KeyValue(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			return kv
		}
	}
	t.Fatalf("no bucket *%s", suffix)
	return nil
}

// TestFencingClaimLostEndsTheCopyWithoutSavingOverTheWinner: another node
// wins the compare-and-set on the directory entry of a session node a
// holds (as an adopter does). a stops serving it at once: its agent's
// calls are refused, its terminal is told the session moved, and its
// copy ends without saving over the winner's snapshot, deleting it, or
// writing the directory entry again, and leaves no goroutine behind. Not
// parallel: goleak looks at the whole process.
func TestFencingClaimLostEndsTheCopyWithoutSavingOverTheWinner(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startClusterOf(t, ns.ClientURL(), savingDemo(1), server.Options{
		SSH:       server.SSHOptions{ResumeGrace: time.Minute},
		Snapshots: server.SnapshotOptions{Every: 50 * time.Millisecond},
	}, "a", "b")
	a := nodes[0]
	js := natstest.JetStream(t, ns.ClientURL())
	dir, snaps := bucketOf(t, js, "_sessions"), bucketOf(t, js, "_snapshots")
	ignore := goleak.IgnoreCurrent()
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: newKey(t)})
	id, token := typedAndSaved(t, a, owner, "before")
	agent := agentVia(t, a.base()+"/sessions/"+id+"/mcp", token, nil)
	testkit.MustCall(t, agent, "demo.search.type_into", map[string]any{"text": "acknowledged"})
	owner.WaitFor(t, "Search: acknowledged", waitLong)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The winner: b's claim on the entry's revision, then b's own save of
	// the snapshot it restored.
	cur, err := dir.Get(ctx, "sess."+id)
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	if err := json.Unmarshal(cur.Value(), &e); err != nil {
		t.Fatal(err)
	}
	e["node"] = "b"
	claimed, _ := json.Marshal(e)
	snap, err := snaps.Get(ctx, "snap."+id)
	if err != nil {
		t.Fatal(err)
	}
	claimRev, err := dir.Update(ctx, "sess."+id, claimed, cur.Revision())
	if err != nil {
		t.Fatal(err)
	}
	winnerSnap, err := snaps.Put(ctx, "snap."+id, snap.Value())
	if err != nil {
		t.Fatal(err)
	}
	claimedAt := time.Now()

	// a gives its copy up at once (the directory's change reaches it).
	testkit.Eventually(t, 3*time.Second, func() bool { _, held := a.Sessions().Get(id); return !held },
		"node a ends its copy of the session b claimed")
	t.Logf("a ended its copy %v after the claim", time.Since(claimedAt).Round(time.Millisecond))
	testkit.Eventually(t, 5*time.Second, func() bool {
		return strings.Contains(owner.Screen()+owner.Stderr(), "moved to another node")
	}, "the owner's terminal is told the session moved")

	// Its agent's calls are not acknowledged (the session is b's now;
	// b is not serving it in this test, so nothing can answer it).
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	res, err := agent.CallTool(cctx, &mcp.CallToolParams{Name: "demo.search.type_into", Arguments: map[string]any{"text": "after-the-claim"}})
	ccancel()
	if err == nil && !res.IsError {
		t.Fatalf("a call through a after b's claim was acknowledged: %+v", res)
	}

	// Several save intervals and directory syncs later, the winner's
	// snapshot and entry are as b wrote them. A negative check: a write
	// over the winner's would have landed by now, and none is an event.
	time.Sleep(2 * time.Second)
	if got, err := snaps.Get(ctx, "snap."+id); err != nil || got.Revision() != winnerSnap {
		t.Fatalf("the winner's snapshot after a gave up: %v, %v; want revision %d untouched", got, err, winnerSnap)
	}
	if got, err := dir.Get(ctx, "sess."+id); err != nil || got.Revision() != claimRev {
		t.Fatalf("the winner's directory entry after a gave up: %v, %v; want revision %d untouched", got, err, claimRev)
	}
	if n := len(a.Sessions().List()); n != 0 {
		t.Fatalf("a still holds %d sessions", n)
	}
	// Nothing of a's copy is left: with the test's own clients gone, no
	// goroutine made since before the session started remains.
	owner.Close()
	_ = agent.Close()
	// A terminal program's tea.Tick command waits for its timer and then
	// ends: bounded, not a leak. Idle keep-alive HTTP connections (the
	// client's, a's pool toward b, which the refused call was passed to,
	// and the servers' ends waiting for a next request) belong to their
	// transports and servers, not to the session.
	opts := []goleak.Option{ignore, goleak.IgnoreAnyFunction("charm.land/bubbletea/v2.Tick.func1"),
		goleak.IgnoreAnyFunction("charm.land/bubbletea/v2.(*Program).execBatchMsg"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("bufio.(*Reader).Peek")}
	var leaked error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		if leaked = goleak.Find(opts...); leaked == nil {
			break
		}
	}
	if leaked != nil {
		t.Fatal(leaked)
	}
}
