package server_test

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// gaugeNode is one server whose gauges are checked against what it
// lists: its registry, and its /metrics address while it serves one.
type gaugeNode struct {
	name string
	srv  *server.Server
	m    *metrics.Metrics
	http string // "" once it no longer serves /metrics
}

// gauges is what one node says: the sessions its registry lists and the
// terminals attached to them, and raxol_sessions_open,
// raxol_terminals_open and raxol_mcp_clients in its Prometheus registry
// and, when served, over /metrics.
type gauges struct {
	listed, terms                         int
	open, terminals, clients              float64
	served                                bool
	scraped, scrapedTerminals, scrapedMCP float64
}

func (n gaugeNode) read(t *testing.T) gauges {
	t.Helper()
	g := gauges{
		open:      testutil.ToFloat64(n.m.SessionsOpen),
		terminals: testutil.ToFloat64(n.m.TerminalsOpen),
		clients:   testutil.ToFloat64(n.m.MCPClients),
	}
	for _, se := range n.srv.Sessions().List() {
		g.listed++
		for _, a := range se.Attached() {
			if a.Kind == session.KindTerminal {
				g.terms++
			}
		}
	}
	if n.http != "" {
		g.served = true
		g.scraped = scrapeMetric(t, n.http, "raxol_sessions_open")
		g.scrapedTerminals = scrapeMetric(t, n.http, "raxol_terminals_open")
		g.scrapedMCP = scrapeMetric(t, n.http, "raxol_mcp_clients")
	}
	return g
}

// addsUp is whether raxol_sessions_open is the number of sessions listed
// and raxol_terminals_open the terminals attached to them, in the
// registry and over /metrics, and /metrics agrees on the clients.
func (g gauges) addsUp() bool {
	if g.open != float64(g.listed) || g.terminals != float64(g.terms) {
		return false
	}
	return !g.served || (g.scraped == g.open && g.scrapedTerminals == g.terminals && g.scrapedMCP == g.clients)
}

// requireAddsUp waits until every node's raxol_sessions_open equals the
// sessions it lists, and that they list want sessions in all; it
// returns what each node says.
func requireAddsUp(t *testing.T, step string, want int, nodes ...gaugeNode) []gauges {
	t.Helper()
	var last []gauges
	ok := func() bool {
		last = last[:0]
		total, good := 0, true
		for _, n := range nodes {
			g := n.read(t)
			last = append(last, g)
			total += g.listed
			good = good && g.addsUp()
		}
		return good && total == want
	}
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			var b strings.Builder
			for i, n := range nodes {
				g := last[i]
				fmt.Fprintf(&b, "\n  %s: %d listed, raxol_sessions_open %v (scraped %v); %d terminals attached, raxol_terminals_open %v (scraped %v); raxol_mcp_clients %v (scraped %v)",
					n.name, g.listed, g.open, g.scraped, g.terms, g.terminals, g.scrapedTerminals, g.clients, g.scrapedMCP)
			}
			t.Fatalf("%s: the gauges do not add up to %d sessions:%s", step, want, b.String())
		}
	}
	return last
}

// requireTerminals waits until n counts want attached terminals.
func requireTerminals(t *testing.T, step string, n gaugeNode, want float64) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, func() bool { return testutil.ToFloat64(n.m.TerminalsOpen) == want },
		"%s: raxol_terminals_open on %s is %v, want %v", step, n.name, testutil.ToFloat64(n.m.TerminalsOpen), want)
}

// requireClients waits until n counts want connected MCP clients.
func requireClients(t *testing.T, step string, n gaugeNode, want float64) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, func() bool { return testutil.ToFloat64(n.m.MCPClients) == want },
		"%s: raxol_mcp_clients on %s is %v, want %v", step, n.name, testutil.ToFloat64(n.m.MCPClients), want)
}

// TestMetricsAddUpAfterRestart: sessions restored from the bbolt file
// at start count in raxol_sessions_open, an agent attached to one counts
// in raxol_mcp_clients and its owner's terminal resuming another in
// raxol_terminals_open, and as they end (the owner quits one, one is
// ended, the last when the resume grace runs out) the gauges come back
// to zero, never below.
func TestMetricsAddUpAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const grace = 10 * time.Second // long enough for the steps before the last one expires
	opts := server.Options{DataDir: dir, SSH: server.SSHOptions{ResumeGrace: grace}}
	first := opts
	first.Metrics = metrics.New()
	srv := startApp(t, savingDemo(1), first)
	var ids, tokens []string
	bobKey := newKey(t)
	for _, user := range []string{"alice", "bob", "carol"} {
		key := newKey(t)
		if user == "bob" {
			key = bobKey
		}
		c := connect(t, srv.SSHAddr(), clientOpts{user: user, key: key})
		id := waitDemo(t, c)
		se, _ := srv.Sessions().Get(id)
		ids, tokens = append(ids, id), append(tokens, se.Token())
	}
	before := gaugeNode{"first", srv.Server, first.Metrics, srv.HTTPAddr()}
	requireTerminals(t, "before the restart", before, 3)
	requireAddsUp(t, "before the restart", 3, before)
	stop(t, srv)

	second := opts
	second.Metrics = metrics.New()
	srv2 := startApp(t, savingDemo(1), second)
	n := gaugeNode{"second", srv2.Server, second.Metrics, srv2.HTTPAddr()}
	if got := scrapeMetric(t, srv2.HTTPAddr(), `raxol_sessions_restored_total{reason="restart"}`); got != 3 {
		t.Fatalf("restored %v sessions, want 3", got)
	}
	requireAddsUp(t, "restored", 3, n)

	// Bob resumes his restored session, then quits it.
	bob := connectCmd(t, srv2.SSHAddr(), clientOpts{user: "bob", key: bobKey}, "resume "+ids[1])
	if got := waitDemo(t, bob); got != ids[1] {
		t.Fatalf("resumed %s, want %s", got, ids[1])
	}
	requireTerminals(t, "a restored session resumed", n, 1)
	requireAddsUp(t, "a restored session resumed", 3, n)
	bob.Key("\x03")
	requireTerminals(t, "its owner quit", n, 0)
	requireAddsUp(t, "its owner quit", 2, n)

	ag, err := agentAt(t, srv2.HTTPAddr(), ids[0], tokens[0])
	if err != nil {
		t.Fatal(err)
	}
	testkit.MustCall(t, ag, "demo.services.select_row", map[string]any{"index": 1})
	requireClients(t, "an agent on a restored session", n, 1)
	requireAddsUp(t, "an agent on a restored session", 2, n)

	srv2.Sessions().End(ids[0])
	requireClients(t, "its session ended", n, 0)
	requireAddsUp(t, "one restored session ended", 1, n)

	// The last, detached, ends when the resume grace runs out.
	testkit.Eventually(t, 2*grace, func() bool { return srv2.Sessions().Count() == 0 }, "the restored sessions to expire")
	if g := requireAddsUp(t, "the restored sessions expired", 0, n); g[0].open != 0 || g[0].terminals != 0 || g[0].clients != 0 {
		t.Fatalf("after every session ended: %+v", g[0])
	}
}

// addupCluster starts nodes a, b and c of the saving demo on one NATS,
// each with its own Prometheus registry.
func addupCluster(t *testing.T) ([]*clusterNode, []gaugeNode) {
	t.Helper()
	ns := runNATS(t, t.TempDir(), -1)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	bucket := fmt.Sprintf("addup%d", clusterSeq.Add(1))
	var nodes []*clusterNode
	var gs []gaugeNode
	for _, id := range []string{"a", "b", "c"} {
		m := metrics.New()
		n := startNodes(t, ns.ClientURL(), savingDemo(1), server.Options{
			SSH:       server.SSHOptions{ResumeGrace: time.Minute},
			Snapshots: server.SnapshotOptions{Every: 50 * time.Millisecond},
			Metrics:   m,
		}, secret, bucket, id)[0]
		nodes = append(nodes, n)
		gs = append(gs, gaugeNode{id, n.Server, m, n.http})
	}
	return nodes, gs
}

// adoptedBy waits until exactly one of nodes holds session id and returns
// its index.
func adoptedBy(t *testing.T, nodes []*clusterNode, id string) int {
	t.Helper()
	home := -1
	testkit.Eventually(t, 20*time.Second, func() bool {
		home = -1
		for i, n := range nodes {
			if _, ok := n.Sessions().Get(id); ok {
				if home >= 0 {
					return false
				}
				home = i
			}
		}
		return home >= 0
	}, "one node to adopt session %s", id)
	return home
}

// TestMetricsAddUpAfterAdoption: node a is killed holding two saved
// sessions; the nodes that adopt them count them in raxol_sessions_open,
// an agent and the owner's terminal reaching an adopted session through
// another node count on the adopter only, and ending the adopted
// sessions brings every gauge back to what is listed.
func TestMetricsAddUpAfterAdoption(t *testing.T) {
	nodes, gs := addupCluster(t)
	a, b := nodes[0], nodes[1]
	aliceKey := newKey(t)
	alice := connect(t, a.ssh, clientOpts{user: "alice", key: aliceKey})
	aliceID, aliceToken := typedAndSaved(t, a, alice, "alice-before")
	bob := connect(t, a.ssh, clientOpts{user: "bob", key: newKey(t)})
	bobID, _ := typedAndSaved(t, a, bob, "bob-before")
	carol := connect(t, b.ssh, clientOpts{user: "carol", key: newKey(t)})
	carolID := waitDemo(t, carol)
	requireTerminals(t, "before the kill", gs[0], 2)
	requireAddsUp(t, "before the kill", 3, gs...)

	a.KillCluster()
	alice.Close()
	bob.Close()
	live, liveGauges := nodes[1:], gs[1:]
	aliceHome, bobHome := adoptedBy(t, live, aliceID), adoptedBy(t, live, bobID)
	requireAddsUp(t, "adopted", 3, liveGauges...)
	if got := scrapeMetric(t, b.http, `raxol_sessions_restored_total{reason="adopted"}`) +
		scrapeMetric(t, nodes[2].http, `raxol_sessions_restored_total{reason="adopted"}`); got != 2 {
		t.Fatalf("%v adoptions counted, want 2", got)
	}

	// An agent through the node that did not adopt alice's session.
	via := 1 - aliceHome
	ag := agentVia(t, live[via].base()+"/sessions/"+aliceID+"/mcp", aliceToken, nil)
	testkit.MustCall(t, ag, "demo.search.type_into", map[string]any{"text": "alice-after"})
	requireClients(t, "an agent on an adopted session", liveGauges[aliceHome], 1)
	requireClients(t, "an agent passed on to the adopter", liveGauges[via], 0)

	// Alice resumes through that node too: bridged, her terminal is the
	// adopter's. Carol's is b's (live[0]).
	back := connectCmd(t, live[via].ssh, clientOpts{user: "alice", key: aliceKey}, "resume "+aliceID)
	if got := waitDemo(t, back); got != aliceID {
		t.Fatalf("resumed %s, want %s", got, aliceID)
	}
	for i := range live {
		want := 0.0
		if i == 0 {
			want++ // carol
		}
		if i == aliceHome {
			want++
		}
		requireTerminals(t, "an adopted session resumed through another node", liveGauges[i], want)
	}
	requireAddsUp(t, "an adopted session resumed", 3, liveGauges...)

	live[aliceHome].Sessions().End(aliceID)
	requireClients(t, "the adopted session ended", liveGauges[aliceHome], 0)
	requireAddsUp(t, "one adopted session ended", 2, liveGauges...)
	live[bobHome].Sessions().End(bobID)
	b.Sessions().End(carolID)
	for _, g := range requireAddsUp(t, "every session ended", 0, liveGauges...) {
		if g.open != 0 || g.terminals != 0 || g.clients != 0 {
			t.Fatalf("after every session ended: %+v", g)
		}
	}
}

// TestMetricsAddUpAfterDrain: node a drains with two sessions (one with
// an agent attached); it counts them down to zero, the nodes that adopt
// them count them up, the owner resuming one counts on its new home, and
// ending them brings every gauge back to zero.
func TestMetricsAddUpAfterDrain(t *testing.T) {
	nodes, gs := addupCluster(t)
	a := nodes[0]
	alice := connect(t, a.ssh, clientOpts{user: "alice", key: newKey(t)})
	aliceID, aliceToken := typedAndSaved(t, a, alice, "alice-before")
	bobKey := newKey(t)
	bob := connect(t, a.ssh, clientOpts{user: "bob", key: bobKey})
	bobID, _ := typedAndSaved(t, a, bob, "bob-before")
	alice.Close()
	bob.Close()
	ag, err := agentAt(t, a.http, aliceID, aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	testkit.MustCall(t, ag, "demo.services.select_row", map[string]any{"index": 1})
	requireClients(t, "an agent on a", gs[0], 1)
	requireAddsUp(t, "before the drain", 2, gs...)

	drained := make(chan error, 1)
	go func() { drained <- stopErr(a.testServer) }()
	live, liveGauges := nodes[1:], gs[1:]
	aliceHome, bobHome := adoptedBy(t, live, aliceID), adoptedBy(t, live, bobID)
	if err := <-drained; err != nil && !strings.Contains(err.Error(), "drain") {
		t.Fatalf("drain: %v", err)
	}
	drainedNode := gs[0]
	drainedNode.http = "" // no /metrics after Shutdown
	requireClients(t, "drained", drainedNode, 0)
	requireAddsUp(t, "drained and adopted", 2, append([]gaugeNode{drainedNode}, liveGauges...)...)

	back := connectCmd(t, live[bobHome].ssh, clientOpts{user: "bob", key: bobKey}, "resume "+bobID)
	if got := waitDemo(t, back); got != bobID {
		t.Fatalf("resumed %s, want %s", got, bobID)
	}
	requireTerminals(t, "a drained node's session resumed", liveGauges[bobHome], 1)
	requireAddsUp(t, "a drained node's session resumed", 2, append([]gaugeNode{drainedNode}, liveGauges...)...)

	live[aliceHome].Sessions().End(aliceID)
	live[bobHome].Sessions().End(bobID)
	for _, g := range requireAddsUp(t, "every session ended", 0, append([]gaugeNode{drainedNode}, liveGauges...)...) {
		if g.open != 0 || g.terminals != 0 || g.clients != 0 {
			t.Fatalf("after every session ended: %+v", g)
		}
	}
}
