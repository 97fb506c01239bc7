package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestFencingARecordAnotherNodeWroteIsNeverWrittenOver: the snapshot of a
// session node a holds is written by someone else (an adopter's write,
// seen by a before the directory tells it the session moved: the case of
// a node whose lease lapsed with a save in flight). a's next save of it
// is refused by the bucket (a compare-and-set on the revision a last
// wrote), its agent's change is answered not_saved, a gives its copy up
// (its terminal told the session moved), and the other writer's record
// is left as it was: a writes over it neither then nor later, and does
// not delete it.
func TestFencingARecordAnotherNodeWroteIsNeverWrittenOver(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startClusterOf(t, ns.ClientURL(), savingDemo(1), server.Options{
		SSH:       server.SSHOptions{ResumeGrace: time.Minute},
		Snapshots: server.SnapshotOptions{Every: 50 * time.Millisecond},
	}, "a")
	a := nodes[0]
	js := natstest.JetStream(t, ns.ClientURL())
	snaps := bucketOf(t, js, "_snapshots")
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: newKey(t)})
	id, token := typedAndSaved(t, a, owner, "before")
	agent := agentVia(t, a.base()+"/sessions/"+id+"/mcp", token, nil)
	testkit.MustCall(t, agent, "demo.search.type_into", map[string]any{"text": "acknowledged"})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := snaps.Get(ctx, "snap."+id)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := snaps.Put(ctx, "snap."+id, snap.Value()) // the other writer
	if err != nil {
		t.Fatal(err)
	}

	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	res, err := agent.CallTool(cctx, &mcp.CallToolParams{Name: "demo.search.type_into", Arguments: map[string]any{"text": "after-the-foreign-write"}})
	ccancel()
	if err == nil && !res.IsError {
		t.Fatalf("a change a could not save over the other writer's record was acknowledged: %+v", res)
	}
	if err == nil {
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "not_saved") {
			t.Fatalf("answer %s, want not_saved", text)
		}
	}
	testkit.Eventually(t, 5*time.Second, func() bool { _, held := a.Sessions().Get(id); return !held },
		"node a gives its copy up")
	testkit.Eventually(t, 5*time.Second, func() bool {
		return strings.Contains(owner.Screen()+owner.Stderr(), "moved to another node")
	}, "the owner's terminal is told the session moved")
	time.Sleep(time.Second) // many save intervals: a negative check, an overwrite would have landed by now
	if got, err := snaps.Get(ctx, "snap."+id); err != nil || got.Revision() != foreign {
		t.Fatalf("the other writer's record after a gave up: %v, %v; want revision %d untouched", got, err, foreign)
	}
}
