package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestFencingNATSRestartKeepsEverySessionAtItsHome: the one NATS server
// holding the buckets is killed and comes back on the same port and store
// after more than the TTL, while the raxol-ssh nodes stay up. While no
// node can renew its lease the nodes keep their sessions but acknowledge
// no agent (503: the session may be moving); once NATS is back every
// session is served again by its own home and by no other node (nobody
// was declared lost, nothing adopted), and the last acknowledged write
// is there.
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
		callOK(t, agent, "demo.search.type_into", map[string]any{"text": h.written})
		owner.WaitFor(t, "Search: "+h.written, waitLong)
		sessions = append(sessions, h)
	}

	ns.Shutdown()
	ns.WaitForShutdown()
	down := time.Now()
	// Degraded: each home keeps its session, and refuses its agents once
	// its lease lapsed (a peer might be adopting it, as far as it knows).
	for _, h := range sessions {
		testkit.Eventually(t, 5*time.Second, func() bool {
			return postStatus(t, h.url, h.token, nil) == http.StatusServiceUnavailable
		}, "node %s refuses its session's agents while it cannot renew its lease", h.home.id)
		if _, ok := h.home.Sessions().Get(h.id); !ok {
			t.Fatalf("node %s dropped its session during the outage", h.home.id)
		}
	}
	t.Logf("agents refused %v after NATS died", time.Since(down).Round(time.Millisecond))
	time.Sleep(time.Until(down.Add(4 * time.Second))) // longer than the 3 s TTL

	ns = runNATS(t, dir, port)
	back := time.Now()
	for _, h := range sessions {
		testkit.Eventually(t, 15*time.Second, func() bool {
			return postStatus(t, h.url, h.token, nil) == http.StatusOK
		}, "node %s serves its session's agents again", h.home.id)
	}
	t.Logf("every session served again %v after NATS came back", time.Since(back).Round(time.Millisecond))
	// Two TTLs later nobody adopted anything: each session has one copy,
	// at its home, holding the last acknowledged write.
	time.Sleep(time.Until(back.Add(7 * time.Second)))
	for _, h := range sessions {
		if got := adopters(nodes, h.id); len(got) != 1 || got[0] != h.home {
			t.Errorf("session of %s is held by %d nodes after the restart, want only its home", h.home.id, len(got))
		}
		h.owner.WaitFor(t, "Search: "+h.written, waitLong) // nothing rolled back
		agent := agentVia(t, h.url, h.token, nil)
		callOK(t, agent, "demo.search.type_into", map[string]any{"text": "after-" + h.written})
		h.owner.WaitFor(t, "Search: after-"+h.written, waitLong)
	}
	for _, n := range nodes {
		if v := scrapeMetric(t, n.http, `raxol_sessions_restored_total{reason="adopted"}`); v != 0 {
			t.Errorf("node %s adopted %v sessions across a NATS restart", n.id, v)
		}
	}
}
