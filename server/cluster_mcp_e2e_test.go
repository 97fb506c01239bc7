package server_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// Two operator-issued API keys of the cluster tests' /mcp.
const (
	clusterKeyA = "cluster-key-a-0123456789abcdef0123456789"
	clusterKeyB = "cluster-key-b-fedcba9876543210fedcba9876"
)

// mcpCluster is what a test may choose of startMCPCluster's cluster;
// zero fields are chosen for it.
type mcpCluster struct {
	secret []byte
	bucket string
}

// startMCPCluster is startCluster with /mcp on every node: the two API
// keys, a tool policy allowing the /mcp tools and the counter's, and a
// 10 s drain.
func startMCPCluster(t *testing.T, natsURL string, cfg mcpCluster, ids ...string) []*clusterNode {
	t.Helper()
	keys := filepath.Join(t.TempDir(), "api_keys")
	if err := os.WriteFile(keys, []byte(clusterKeyA+"\n"+clusterKeyB+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tools, err := authz.Allowlist([]string{"counter.*.*", "raxol_screenshot", "discover_tools",
		server.ToolStart, server.ToolList, server.ToolStop})
	if err != nil {
		t.Fatal(err)
	}
	return startNodes(t, natsURL, counterApp(), server.Options{
		DrainTimeout: 10 * time.Second,
		Headless:     server.HeadlessOptions{APIKeysFile: keys},
		MCP:          server.MCPOptions{ToolAuthorizer: tools},
	}, cfg.secret, cfg.bucket, ids...)
}

// controlOn is an MCP client of node n's /mcp with API key key.
func controlOn(t *testing.T, n *clusterNode, key string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitShort)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "cluster-control", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: n.base() + "/mcp",
		HTTPClient: &http.Client{Transport: testkit.Bearer(nil, key)}}, nil)
	if err != nil {
		t.Fatalf("connect to node %s's /mcp: %v", n.id, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// control calls a /mcp tool and returns its decoded answer and whether
// it is an error result.
func control(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out, res.IsError
}

func mustControl(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr := control(t, cs, name, args)
	if isErr {
		t.Fatalf("%s: error result %v", name, out)
	}
	return out
}

// listed is raxol_list's entries by id.
func listed(t *testing.T, cs *mcp.ClientSession) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, e := range mustControl(t, cs, server.ToolList, nil)["sessions"].([]any) {
		m := e.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// homeOf is session id's home node as n reads the directory ("" when it
// is not there).
func homeOf(t *testing.T, n *clusterNode, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitShort)
	defer cancel()
	all, err := n.ClusterSessions(ctx)
	if err != nil {
		t.Fatalf("node %s reads the directory: %v", n.id, err)
	}
	for _, e := range all {
		if e.ID == id {
			return e.Node
		}
	}
	return ""
}

// load starts count headless sessions on n, which count as its load.
func load(t *testing.T, n *clusterNode, count int) (end func()) {
	t.Helper()
	var ends []func()
	for range count {
		_, e, err := n.StartHeadless(session.Owner{User: "load"})
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, e)
	}
	return func() {
		for _, e := range ends {
			e()
		}
	}
}

// waitLoads waits until n sees the nodes with the given session counts,
// and no other node.
func waitLoads(t *testing.T, n *clusterNode, want map[string]int) {
	t.Helper()
	testkit.Eventually(t, waitLong, func() bool {
		got := map[string]int{}
		for _, ni := range n.ClusterNodes() {
			got[ni.ID] = ni.Sessions
		}
		return fmt.Sprint(got) == fmt.Sprint(want)
	}, "node %s does not see the loads %v: %+v", n.id, want, n.ClusterNodes())
}

// TestClusterMCPStartListStopAcrossNodes: raxol_start on C places the
// session on the least-loaded node (A), whose directory entry says so;
// an agent drives it through C's URL and a human joins it on A with its
// code; raxol_list on A and on B lists it with its node. raxol_stop on B
// of a session C holds stops it there: gone from the directory, and its
// URL answers as for an unknown session. Another key sees none of it
// and stops nothing, with the answer an unknown id gets.
func TestClusterMCPStartListStopAcrossNodes(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startMCPCluster(t, ns.ClientURL(), mcpCluster{}, "a", "b", "c")
	a, b, c := nodes[0], nodes[1], nodes[2]

	endC := load(t, c, 2)
	load(t, b, 1)
	waitLoads(t, c, map[string]int{"a": 0, "b": 1, "c": 2})

	ctlC := controlOn(t, c, clusterKeyA)
	started := mustControl(t, ctlC, server.ToolStart, nil)
	id, _ := started["id"].(string)
	if started["node"] != "a" {
		t.Fatalf("raxol_start on C placed the session on %v, want a (the least loaded): %v", started["node"], started)
	}
	if home := homeOf(t, c, id); home != "a" {
		t.Fatalf("the directory says session %s is on %q, want a", id, home)
	}
	if _, ok := a.Sessions().Get(id); !ok {
		t.Fatal("A does not hold the session raxol_start placed on it")
	}
	if _, ok := c.Sessions().Get(id); ok {
		t.Fatal("C holds the session too")
	}
	mcpURL, _ := started["mcp_url"].(string)
	if mcpURL != c.base()+"/sessions/"+id+"/mcp" || started["sse_url"] != c.base()+"/sessions/"+id+"/sse" {
		t.Fatalf("raxol_start on C returned URLs %v, %v; want C's", started["mcp_url"], started["sse_url"])
	}
	_, port, _ := net.SplitHostPort(a.ssh)
	if want := "ssh -p " + port + " 127.0.0.1 -t join " + id; started["join_command"] != want {
		t.Fatalf("join_command = %v, want the home's %q", started["join_command"], want)
	}

	// An agent drives it through C's URL; a human joins it on A with the
	// code the home issued and sees what the agent did.
	ag := agentVia(t, mcpURL, started["token"].(string), nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if res, err := ag.CallTool(ctx, &mcp.CallToolParams{Name: "counter.inc.click"}); err != nil || res.IsError {
		t.Fatalf("click through C: %v %+v", err, res)
	}
	human := testkit.Run(t, a.ssh, "join "+id+" "+started["join_code"].(string))
	human.WaitFor("'s count: 1")

	// raxol_list on A (which holds it) and on B (which does not).
	for _, n := range []*clusterNode{a, b} {
		e, ok := listed(t, controlOn(t, n, clusterKeyA))[id]
		if !ok || e["node"] != "a" || e["mcp_url"] != n.base()+"/sessions/"+id+"/mcp" || e["created"] == "" {
			t.Fatalf("raxol_list on %s: entry %v, want session %s on node a with %s's URL", n.id, e, id, n.id)
		}
	}
	testkit.Eventually(t, waitShort, func() bool {
		e := listed(t, controlOn(t, b, clusterKeyA))[id]
		return e["agents"] == float64(1)
	}, "raxol_list on B does not count the agent of A's session")

	// Another key: lists nothing on any node, and its raxol_stop of the
	// session (through B, and through A which holds it) answers as for an
	// id that never existed.
	for _, n := range nodes {
		if got := listed(t, controlOn(t, n, clusterKeyB)); len(got) != 0 {
			t.Fatalf("key B lists %v on node %s", got, n.id)
		}
	}
	for _, n := range []*clusterNode{b, a} {
		ctl := controlOn(t, n, clusterKeyB)
		other, isErr := control(t, ctl, server.ToolStop, map[string]any{"id": id})
		unknown, isErr2 := control(t, ctl, server.ToolStop, map[string]any{"id": "nosuchsession0000000000"})
		if !isErr || !isErr2 || fmt.Sprint(other) != fmt.Sprint(unknown) || other["error"] != "unknown_session" {
			t.Fatalf("on %s: key B's stop of key A's session = %v, of an unknown one = %v", n.id, other, unknown)
		}
	}
	if _, live := a.Sessions().Get(id); !live {
		t.Fatal("key B's raxol_stop ended key A's session")
	}

	// Now C is the least loaded: raxol_start on B puts the session there,
	// and raxol_stop on B stops it there.
	endC()
	waitLoads(t, b, map[string]int{"a": 1, "b": 1, "c": 0})
	ctlB := controlOn(t, b, clusterKeyA)
	onC := mustControl(t, ctlB, server.ToolStart, nil)
	id2, _ := onC["id"].(string)
	if onC["node"] != "c" || homeOf(t, b, id2) != "c" {
		t.Fatalf("raxol_start on B: %v (directory: %q), want it on c", onC, homeOf(t, b, id2))
	}
	url2, token2 := onC["mcp_url"].(string), onC["token"].(string)
	agentVia(t, url2, token2, nil)
	unknownStatus := postStatus(t, b.base()+"/sessions/nosuchsession0000000000/mcp", token2, nil)

	if out := mustControl(t, ctlB, server.ToolStop, map[string]any{"id": id2}); out["stopped"] != id2 {
		t.Fatalf("raxol_stop on B of C's session = %v", out)
	}
	if _, live := c.Sessions().Get(id2); live {
		t.Fatal("C still holds the session raxol_stop on B stopped")
	}
	if home := homeOf(t, b, id2); home != "" {
		t.Fatalf("the stopped session is still in the directory, on %s", home)
	}
	if got := postStatus(t, url2, token2, nil); got != unknownStatus {
		t.Fatalf("the stopped session's URL on B answers %d, want %d as for an unknown session", got, unknownStatus)
	}
	if _, listedStill := listed(t, ctlB)[id2]; listedStill {
		t.Fatal("raxol_list on B still lists the stopped session")
	}
	if out, isErr := control(t, ctlB, server.ToolStop, map[string]any{"id": id2}); !isErr || out["error"] != "unknown_session" {
		t.Fatalf("a second raxol_stop = %v, want unknown_session", out)
	}

	// The first session, stopped through C: its human on A is told.
	if out := mustControl(t, ctlC, server.ToolStop, map[string]any{"id": id}); out["stopped"] != id {
		t.Fatalf("raxol_stop on C of A's session = %v", out)
	}
	human.WaitExit()
}

// TestClusterMCPDrainedNodeGetsNoNewSessions: node A, the least loaded,
// drains while a connection holds its drain open: /readyz on A is 503,
// A's directory entries are gone, /mcp on A is closed (404; its clients
// are disconnected), and sessions started through /mcp on B and on C
// all land on B or C.
func TestClusterMCPDrainedNodeGetsNoNewSessions(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startMCPCluster(t, ns.ClientURL(), mcpCluster{}, "a", "b", "c")
	a, b, c := nodes[0], nodes[1], nodes[2]

	load(t, b, 2)
	load(t, c, 2)
	waitLoads(t, a, map[string]int{"a": 0, "b": 2, "c": 2})
	ctlA := controlOn(t, a, clusterKeyA)
	first := mustControl(t, ctlA, server.ToolStart, nil)
	firstID, _ := first["id"].(string)
	if first["node"] != "a" || homeOf(t, b, firstID) != "a" {
		t.Fatalf("raxol_start on A, the least loaded: %v, want it on a", first)
	}
	// Everyone sees A as the least loaded: only its drain keeps new
	// sessions off it.
	for _, n := range []*clusterNode{b, c} {
		waitLoads(t, n, map[string]int{"a": 1, "b": 2, "c": 2})
	}
	ctlB, ctlC := controlOn(t, b, clusterKeyA), controlOn(t, c, clusterKeyA)

	holder, err := dialSSH(t, a.ssh, clientOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- a.Shutdown(ctx)
	}()
	testkit.Eventually(t, waitShort, func() bool {
		code, body := httpGet(t, a.http, "/readyz")
		return code == http.StatusServiceUnavailable && strings.TrimSpace(body) == "draining"
	}, "/readyz on A is not 503 draining")
	testkit.Eventually(t, waitShort, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), waitShort)
		defer cancel()
		all, err := b.ClusterSessions(ctx)
		if err != nil {
			return false
		}
		return !slices.ContainsFunc(all, func(e cluster.SessionEntry) bool { return e.Node == "a" })
	}, "A's entries are still in the directory")
	for _, n := range []*clusterNode{b, c} {
		testkit.Eventually(t, waitShort, func() bool {
			return !slices.ContainsFunc(n.ClusterNodes(), func(ni cluster.NodeInfo) bool { return ni.ID == "a" && !ni.Draining })
		}, "node %s still sees A as a node taking sessions: %+v", n.id, n.ClusterNodes())
	}

	for range 2 {
		for _, ctl := range []*mcp.ClientSession{ctlB, ctlC} {
			out := mustControl(t, ctl, server.ToolStart, nil)
			id, _ := out["id"].(string)
			home := homeOf(t, b, id)
			if (out["node"] != "b" && out["node"] != "c") || home != out["node"] {
				t.Fatalf("raxol_start during A's drain: %v (directory: %q), want it on b or c", out, home)
			}
		}
	}
	// A's /mcp is closed while it drains: its client is disconnected and a
	// new one is not served.
	ctx, cancel := context.WithTimeout(context.Background(), waitShort)
	defer cancel()
	if res, err := ctlA.CallTool(ctx, &mcp.CallToolParams{Name: server.ToolStart}); err == nil && !res.IsError {
		t.Fatalf("raxol_start through A's /mcp during its drain answered %+v", res)
	}
	if got := postStatus(t, a.base()+"/mcp", clusterKeyA, nil); got != http.StatusNotFound {
		t.Fatalf("POST /mcp on A during its drain = %d, want 404", got)
	}
	select {
	case err := <-done:
		t.Fatalf("A's drain ended (%v) before the checks: they did not run during it", err)
	default:
	}
	holder.Close()
	select {
	case err := <-done:
		if err != nil && !strings.Contains(err.Error(), "ssh drain") {
			t.Errorf("A's Shutdown: %v", err)
		}
	case <-time.After(waitLong):
		t.Fatal("A's Shutdown did not return")
	}
}

// peerRequest POSTs body to node n's /_raxol/peer/<op>, with the digest
// sum in the URI (bodySum of body when ""), signed by signer when not
// nil, after edit (when not nil); it returns the status and the body.
func peerRequest(t *testing.T, n *clusterNode, op, body, sum string, signer *cluster.Node, edit func(*http.Request)) (int, string) {
	t.Helper()
	if sum == "" {
		s := sha256.Sum256([]byte(body))
		sum = hex.EncodeToString(s[:])
	}
	req, err := http.NewRequest(http.MethodPost, n.base()+"/_raxol/peer/"+op+"?sum="+sum, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if signer != nil {
		signer.SignRequest(req)
	}
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestClusterMCPForgedPeerRequestIsRefused: /_raxol/peer/* without the
// cluster's MAC, with another cluster's, with a stale time, with a body
// the signed digest does not match, or passed on by a node's proxy is
// refused with 403 and counted as forged_peer. A request signed with the
// secret starts a session as raxol_start would, and the home checks the
// owner of a stop as a local raxol_stop does.
func TestClusterMCPForgedPeerRequestIsRefused(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	nodes := startMCPCluster(t, ns.ClientURL(), mcpCluster{secret: secret}, "a", "b")
	b := nodes[1]

	// A holder of the secret that is no member (its own bucket), and a
	// node of another cluster.
	join := func(id string, secret []byte) *cluster.Node {
		n, err := cluster.Join(context.Background(), cluster.Options{NATSURL: ns.ClientURL(), NodeID: id,
			HTTPURL: "http://127.0.0.1:1", SSHAddr: "127.0.0.1:1", Secret: secret, Bucket: "outside" + id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Close() })
		return n
	}
	insider := join("insider", secret)
	rogue := join("rogue", []byte(strings.Repeat("s", 32)))

	body := `{"user":"api:0123abcd","key_fingerprint":"api-key:0123abcd00000000"}`
	other := `{"user":"api:ffffffff","key_fingerprint":"api-key:ffffffff00000000"}`
	otherSum := sha256.Sum256([]byte(other))
	forged := []struct {
		name   string
		signer *cluster.Node
		sum    string
		edit   func(*http.Request)
	}{
		{"no peer headers", nil, "", nil},
		{"another cluster's MAC", rogue, "", nil},
		{"a stale time", insider, "", func(r *http.Request) {
			r.Header.Set(cluster.HeaderPeerTime, strconv.FormatInt(time.Now().Add(-2*cluster.MaxPeerSkew).Unix(), 10))
		}},
		{"a body the digest does not match", insider, hex.EncodeToString(otherSum[:]), nil},
		{"passed on by a proxy", insider, "", func(r *http.Request) { r.Header.Set("X-Forwarded-For", "192.0.2.1") }},
	}
	for _, f := range forged {
		if code, msg := peerRequest(t, b, "start", body, f.sum, f.signer, f.edit); code != http.StatusForbidden {
			t.Errorf("peer start with %s: %d %q, want 403", f.name, code, msg)
		}
	}
	if n := b.Sessions().Count(); n != 0 {
		t.Fatalf("refused peer requests started %d sessions", n)
	}
	if code, msg := peerRequest(t, b, "start", `{"user":"alice","key_fingerprint":"SHA256:x"}`, "", insider, nil); code != http.StatusBadRequest || !strings.Contains(msg, "not an API key owner") {
		t.Errorf("peer start for a non-API-key owner: %d %q, want 400 saying so", code, msg)
	}
	if code, _ := peerRequest(t, b, "nosuchop", body, "", insider, nil); code != http.StatusNotFound {
		t.Errorf("an unknown peer endpoint: %d, want 404", code)
	}

	// Signed with the secret: served.
	code, msg := peerRequest(t, b, "start", body, "", insider, nil)
	var reply struct {
		Start struct {
			ID, Token string
		}
	}
	if err := json.Unmarshal([]byte(msg), &reply); code != http.StatusOK || err != nil || reply.Start.ID == "" {
		t.Fatalf("a signed peer start: %d %q", code, msg)
	}
	se, ok := b.Sessions().Get(reply.Start.ID)
	if !ok || se.Owner.User != "api:0123abcd" || se.Token() != reply.Start.Token {
		t.Fatalf("the signed peer start's session: %v %+v", ok, se)
	}
	stop := func(owner string) string {
		t.Helper()
		var in map[string]any
		_ = json.Unmarshal([]byte(owner), &in)
		in["id"] = reply.Start.ID
		data, _ := json.Marshal(in)
		code, msg := peerRequest(t, b, "stop", string(data), "", insider, nil)
		if code != http.StatusOK {
			t.Fatalf("a signed peer stop: %d %q", code, msg)
		}
		return msg
	}
	if msg := stop(other); !strings.Contains(msg, `"error":"unknown_session"`) {
		t.Fatalf("another owner's peer stop: %q, want unknown_session", msg)
	}
	if _, live := b.Sessions().Get(reply.Start.ID); !live {
		t.Fatal("another owner's peer stop ended the session")
	}
	if msg := stop(body); !strings.Contains(msg, `"stopped":"`+reply.Start.ID+`"`) {
		t.Fatalf("the owner's peer stop: %q", msg)
	}

	resp, err := http.Get(b.base() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	if want := fmt.Sprintf(`raxol_mcp_rejections_total{reason="forged_peer"} %d`, len(forged)); !strings.Contains(string(metrics), want) {
		t.Errorf("want %s:\n%s", want, grepLines(string(metrics), "raxol_mcp_rejections_total"))
	}
}

// TestClusterMCPWithoutNATS: with NATS unreachable, /mcp on a node goes
// on: raxol_start starts the session on it (though another node is less
// loaded), raxol_list lists its sessions with a note that the cluster
// view is unavailable, and raxol_stop of a session it does not hold says
// the directory cannot be reached.
func TestClusterMCPWithoutNATS(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startMCPCluster(t, ns.ClientURL(), mcpCluster{}, "a", "b")
	a, b := nodes[0], nodes[1]
	load(t, b, 2)
	waitLoads(t, b, map[string]int{"a": 0, "b": 2})
	ctlB := controlOn(t, b, clusterKeyA)
	onA := mustControl(t, ctlB, server.ToolStart, nil)
	if onA["node"] != "a" {
		t.Fatalf("raxol_start on B with NATS up: %v, want it on a", onA)
	}
	if _, ok := listed(t, ctlB)[onA["id"].(string)]; !ok {
		t.Fatal("raxol_list on B does not list the session on A")
	}

	ns.Shutdown()
	ns.WaitForShutdown()
	var res map[string]any
	testkit.Eventually(t, waitShort, func() bool {
		res = mustControl(t, ctlB, server.ToolList, nil)
		return res["partial"] == true
	}, "raxol_list on B with NATS down is not marked partial: %v", res)
	if note, _ := res["note"].(string); !strings.Contains(note, "cluster directory cannot be reached") || !strings.Contains(note, "node b") {
		t.Fatalf("raxol_list's note = %q", note)
	}
	if len(res["sessions"].([]any)) != 0 {
		t.Fatalf("raxol_list on B with NATS down lists %v, want none (the one on A is out of view)", res["sessions"])
	}

	here := mustControl(t, ctlB, server.ToolStart, nil)
	hereID, _ := here["id"].(string)
	if here["node"] != "b" {
		t.Fatalf("raxol_start on B with NATS down: %v, want it on b", here)
	}
	if _, ok := b.Sessions().Get(hereID); !ok {
		t.Fatal("B does not hold the session it started")
	}
	if _, ok := listed(t, ctlB)[hereID]; !ok {
		t.Fatal("raxol_list on B with NATS down does not list B's own session")
	}

	start := time.Now()
	out, isErr := control(t, ctlB, server.ToolStop, map[string]any{"id": onA["id"]})
	if !isErr || out["error"] != "cluster_unavailable" || !strings.Contains(out["message"].(string), "cannot be stopped now") {
		t.Fatalf("raxol_stop on B of A's session with NATS down = %v, want cluster_unavailable", out)
	}
	if d := time.Since(start); d > waitShort {
		t.Errorf("raxol_stop with NATS down took %s", d)
	}
	if _, live := a.Sessions().Get(onA["id"].(string)); !live {
		t.Fatal("A's session ended")
	}
	if out := mustControl(t, ctlB, server.ToolStop, map[string]any{"id": hereID}); out["stopped"] != hereID {
		t.Fatalf("raxol_stop of B's own session with NATS down = %v", out)
	}
}

// TestClusterMCPStartPassesOverFailingPeers: the least-loaded nodes are
// members that cannot take the session (one answers 503, one cannot be
// reached): raxol_start tries them in order, then places the session on
// the next node, and says so in the log.
func TestClusterMCPStartPassesOverFailingPeers(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	cfg := mcpCluster{secret: secret, bucket: fmt.Sprintf("mcp%d", clusterSeq.Add(1))}
	nodes := startMCPCluster(t, ns.ClientURL(), cfg, "a", "b")
	a, b := nodes[0], nodes[1]

	busyHits := make(chan string, 4)
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		busyHits <- r.URL.Path
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String()
	dead.Close() // nothing listens there now
	// Members of the cluster (its bucket and secret) with no load, whose
	// ids sort first: the least loaded of all.
	for id, url := range map[string]string{"0busy": busy.URL, "0dead": deadURL} {
		n, err := cluster.Join(context.Background(), cluster.Options{NATSURL: ns.ClientURL(), NodeID: id,
			HTTPURL: url, SSHAddr: "127.0.0.1:1", Secret: secret, Bucket: cfg.bucket, Heartbeat: time.Second, TTL: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Close() })
	}
	waitLoads(t, b, map[string]int{"0busy": 0, "0dead": 0, "a": 0, "b": 0})

	start := time.Now()
	out := mustControl(t, controlOn(t, b, clusterKeyA), server.ToolStart, nil)
	id, _ := out["id"].(string)
	if out["node"] != "a" || homeOf(t, b, id) != "a" {
		t.Fatalf("raxol_start on B past two failing peers: %v, want it on a", out)
	}
	if _, ok := a.Sessions().Get(id); !ok {
		t.Fatal("A does not hold the session")
	}
	select {
	case path := <-busyHits:
		if path != "/_raxol/peer/start" {
			t.Fatalf("the busy peer was asked %s", path)
		}
	default:
		t.Fatal("the least-loaded peer was never asked")
	}
	if d := time.Since(start); d > waitShort {
		t.Errorf("placing past two failing peers took %s", d)
	}
}
