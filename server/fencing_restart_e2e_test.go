package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestFencingNATSRestartKeepsEverySessionAtItsHome: the one NATS server
// holding the buckets is killed and comes back on the same port and store
// after more than the TTL, while the raxol-ssh nodes stay up. While NATS
// is down the nodes keep serving their sessions, degraded: agents read,
// and their changes are applied but answered not_saved (nothing is
// acknowledged that the bucket does not hold), also once no node can
// renew its lease; once NATS is back every session is served by its own
// home and by no other node (nobody was declared lost, nothing adopted),
// holding the last acknowledged write and the changes made during the
// outage, and changes are acknowledged again.
func TestFencingNATSRestartKeepsEverySessionAtItsHome(t *testing.T) {
	dir := t.TempDir()
	ns := runNATS(t, dir, -1)
	port := natstest.Port(ns)
	nodes := startClusterOf(t, ns.ClientURL(), savingDemo(1), server.Options{
		SSH:       server.SSHOptions{ResumeGrace: time.Minute},
		Snapshots: server.SnapshotOptions{Every: 50 * time.Millisecond},
	}, "a", "b")
	type held struct {
		home         *clusterNode
		owner        *client
		id, token    string
		url, written string
	}
	var sessions []*held
	for _, n := range nodes {
		owner := connect(t, n.ssh, clientOpts{user: "alice", key: newKey(t)})
		id, token := typedAndSaved(t, n, owner, "saved-on-"+n.id)
		h := &held{home: n, owner: owner, id: id, token: token, url: n.base() + "/sessions/" + id + "/mcp"}
		agent := agentVia(t, h.url, token, nil)
		h.written = "acked-on-" + n.id
		testkit.MustCall(t, agent, "demo.search.type_into", map[string]any{"text": h.written})
		owner.WaitFor(t, "Search: "+h.written, waitLong)
		sessions = append(sessions, h)
	}

	agents := map[*held]*mcp.ClientSession{}
	for _, h := range sessions {
		agents[h] = agentVia(t, h.url, h.token, nil)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	down := time.Now()
	// Degraded, before and after the lease lapsed (a lease is the TTL
	// less a heartbeat: 2 s here).
	for _, at := range []time.Duration{0, 3 * time.Second} {
		time.Sleep(time.Until(down.Add(at))) // the scenario's clock: at, into the outage
		for _, h := range sessions {
			if _, ok := h.home.Sessions().Get(h.id); !ok {
				t.Fatalf("node %s dropped its session during the outage", h.home.id)
			}
			if got := postStatus(t, h.url, h.token, nil); got != http.StatusOK {
				t.Fatalf("%v into the outage: a new agent of node %s's session gets %d, want 200", at, h.home.id, got)
			}
			testkit.MustCall(t, agents[h], "raxol_screenshot", nil) // reads are answered
			h.written = fmt.Sprintf("outage-%v-on-%s", at.Seconds(), h.home.id)
			text := callText(t, agents[h], "demo.search.type_into", map[string]any{"text": h.written})
			if !strings.Contains(text, "not_saved") {
				t.Fatalf("%v into the outage: a change answered %s, want not_saved", at, text)
			}
			h.owner.WaitFor(t, "Search: "+h.written, waitLong) // applied all the same
		}
	}
	time.Sleep(time.Until(down.Add(4 * time.Second))) // longer than the 3 s TTL

	ns = runNATS(t, dir, port)
	back := time.Now()
	for _, h := range sessions {
		testkit.Eventually(t, 15*time.Second, func() bool {
			return !strings.Contains(callText(t, agents[h], "demo.search.type_into", map[string]any{"text": h.written}), "not_saved")
		}, "node %s acknowledges its agent's changes again", h.home.id)
	}
	t.Logf("every session served again %v after NATS came back", time.Since(back).Round(time.Millisecond))
	// Two TTLs later nobody adopted anything: each session has one copy,
	// at its home, holding the last acknowledged write.
	time.Sleep(time.Until(back.Add(7 * time.Second))) // negative check: an adoption would have happened by now
	for _, h := range sessions {
		if got := adopters(nodes, h.id); len(got) != 1 || got[0] != h.home {
			t.Errorf("session of %s is held by %d nodes after the restart, want only its home", h.home.id, len(got))
		}
		h.owner.WaitFor(t, "Search: "+h.written, waitLong) // nothing rolled back
		agent := agentVia(t, h.url, h.token, nil)
		testkit.MustCall(t, agent, "demo.search.type_into", map[string]any{"text": "after-" + h.written})
		h.owner.WaitFor(t, "Search: after-"+h.written, waitLong)
	}
	for _, n := range nodes {
		if v := scrapeMetric(t, n.http, `raxol_sessions_restored_total{reason="adopted"}`); v != 0 {
			t.Errorf("node %s adopted %v sessions across a NATS restart", n.id, v)
		}
	}
}

// callText calls name and returns its answer's text, error results too
// (the text of an error names its kind).
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "call failed: " + err.Error()
	}
	return res.Content[0].(*mcp.TextContent).Text
}
