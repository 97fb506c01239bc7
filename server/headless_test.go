package server

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

const (
	keyA = "key-a-0123456789abcdef0123456789abcdef"
	keyB = "key-b-fedcba9876543210fedcba9876543210"
)

// withControl is the demo's tool policy plus rules for the /mcp tools.
func withControl(start, stop, list authz.Decision) authz.Func {
	app := demo.ToolPolicy()
	return func(name string, args map[string]any, ctx authz.Context) authz.Decision {
		switch name {
		case ToolStart:
			return start
		case ToolStop:
			return stop
		case ToolList:
			return list
		}
		return app(name, args, ctx)
	}
}

func writeKeys(t *testing.T, keys ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "api_keys")
	body := "# operator-issued keys\n\n" + strings.Join(keys, "\n") + "\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startHeadlessServer starts a demo server on loopback ports; opts may set
// anything, the API keys file defaults to keyA and keyB and the tool
// policy to one allowing the /mcp tools.
func startHeadlessServer(t *testing.T, opts Options) *Server {
	t.Helper()
	return startHeadlessApp(t, App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, Projections: demo.Projections(),
		ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy()}, opts)
}

// startHeadlessApp is startHeadlessServer with app; a DataDir opts gives
// is kept.
func startHeadlessApp(t *testing.T, app App, opts Options) *Server {
	t.Helper()
	opts.SSH.Addr = "127.0.0.1:0"
	if opts.MCP.Addr == "" {
		opts.MCP.Addr = "127.0.0.1:0"
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.Headless.APIKeysFile == "" {
		opts.Headless.APIKeysFile = writeKeys(t, keyA, keyB)
	}
	if opts.MCP.ToolAuthorizer == nil {
		opts.MCP.ToolAuthorizer = withControl(authz.Allow(), authz.Allow(), authz.Allow())
	}
	lw := testkit.NewLogWriter(t)
	opts.Logger = slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := New(app, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !srv.isDraining() {
			_ = srv.Shutdown(context.Background())
		}
	})
	return srv
}

func dial(t *testing.T, url, token, name string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: testkit.Bearer(nil, token)}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func control(t *testing.T, srv *Server, key string) *mcp.ClientSession {
	t.Helper()
	return dial(t, "http://"+srv.HTTPAddr()+"/mcp", key, "control-agent")
}

func listedIDs(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var ids []string
	for _, e := range testkit.MustCall(t, cs, ToolList, nil)["sessions"].([]any) {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	return ids
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func waitClosed(t *testing.T, cs *mcp.ClientSession, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = cs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: client not closed", what)
	}
}

// TestHeadlessEndToEnd: raxol_start over /mcp, drive the new session
// through the URL and token it returned, list it, claim its join code,
// and stop it (its client is closed). Another key sees none of it.
func TestHeadlessEndToEnd(t *testing.T) {
	srv := startHeadlessServer(t, Options{})
	a := control(t, srv, keyA)

	names := toolNames(t, a)
	for _, n := range []string{ToolStart, ToolStop, ToolList} {
		if !slices.Contains(names, n) {
			t.Fatalf("tools/list = %v, lacks %s", names, n)
		}
	}
	res, _ := a.ListTools(context.Background(), nil)
	for _, tl := range res.Tools {
		sensitive := tl.Name == ToolStart || tl.Name == ToolStop
		if got := tl.Annotations.DestructiveHint != nil && *tl.Annotations.DestructiveHint && tl.Meta["sensitive"] == true; got != sensitive {
			t.Errorf("%s: annotated sensitive %v, want %v", tl.Name, got, sensitive)
		}
	}

	started := testkit.MustCall(t, a, ToolStart, nil)
	id, _ := started["id"].(string)
	se, ok := srv.Sessions().Get(id)
	if !ok {
		t.Fatalf("raxol_start returned %v: no such live session", started)
	}
	base := "http://" + srv.HTTPAddr() + "/sessions/" + id
	if started["mcp_url"] != base+"/mcp" || started["sse_url"] != base+"/sse" || started["token"] != se.Token() {
		t.Fatalf("raxol_start = %v", started)
	}
	_, port, _ := strings.Cut(srv.SSHAddr(), ":")
	if want := fmt.Sprintf("ssh -p %s 127.0.0.1 -t join %s", port, id); started["join_command"] != want {
		t.Fatalf("join_command = %q, want %q", started["join_command"], want)
	}
	code, _ := started["join_code"].(string)
	if !regexp.MustCompile(`^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{10}$`).MatchString(code) {
		t.Fatalf("join_code %q", code)
	}
	if se.Owner.User != apiKeyOwner(keySum(keyA)).User || !strings.HasPrefix(se.Owner.User, "api:") || len(se.Owner.User) != 12 {
		t.Fatalf("owner %+v", se.Owner)
	}

	// Drive the demo through the session's own endpoint.
	ag := dial(t, started["mcp_url"].(string), started["token"].(string), "headless-agent")
	testkit.MustCall(t, ag, "demo.search.type_into", map[string]any{"text": "from-headless"})
	got := testkit.MustCall(t, ag, "demo.search.get_value", nil)
	if v := got["result"].(map[string]any)["value"]; v != "from-headless" {
		t.Fatalf("get_value = %v", got)
	}

	// raxol_list: the caller's sessions, with who is attached.
	testkit.Eventually(t, 5*time.Second, func() bool { return len(se.Agents()) == 1 }, "the agent's presence")
	list := testkit.MustCall(t, a, ToolList, nil)["sessions"].([]any)
	if len(list) != 1 {
		t.Fatalf("raxol_list = %v", list)
	}
	entry := list[0].(map[string]any)
	att := entry["attached"].([]any)
	if entry["id"] != id || entry["created"] == "" || len(att) != 1 || att[0].(map[string]any)["name"] != "headless-agent 1" {
		t.Fatalf("raxol_list entry = %v", entry)
	}

	// Another key: sees nothing, cannot stop it, and gets the same answer
	// as for an id that never existed.
	b := control(t, srv, keyB)
	if ids := listedIDs(t, b); len(ids) != 0 {
		t.Fatalf("key B lists %v", ids)
	}
	other, _, isErr := testkit.CallTool(t, b, ToolStop, map[string]any{"id": id})
	unknown, _, isErr2 := testkit.CallTool(t, b, ToolStop, map[string]any{"id": "no-such-session"})
	if !isErr || !isErr2 || fmt.Sprint(other) != fmt.Sprint(unknown) || other["error"] != "unknown_session" {
		t.Fatalf("stop of another key's session = %v, of an unknown one = %v", other, unknown)
	}
	if _, live := srv.Sessions().Get(id); !live {
		t.Fatal("another key's raxol_stop ended the session")
	}

	// A human joins with the code and sees what the agent did; then sees
	// the agent's next change live. The code works once.
	human := testkit.Run(t, srv.SSHAddr(), "join "+id+" "+strings.ToLower(code))
	human.WaitFor("from-headless")
	testkit.MustCall(t, ag, "demo.search.type_into", map[string]any{"text": "after-join"})
	human.WaitFor("after-join")
	testkit.Eventually(t, 5*time.Second, func() bool {
		for _, a := range se.Attached() {
			if a.Kind == "terminal" {
				return true
			}
		}
		return false
	}, "the human's terminal in the session")
	if srv.claimJoinCode(id, code) {
		t.Fatal("the join code worked twice")
	}

	// raxol_stop ends it and closes its client.
	if out := testkit.MustCall(t, a, ToolStop, map[string]any{"id": id}); out["stopped"] != id {
		t.Fatalf("raxol_stop = %v", out)
	}
	waitClosed(t, ag, "the stopped session's agent")
	human.WaitExit()
	if _, live := srv.Sessions().Get(id); live {
		t.Fatal("session still live after raxol_stop")
	}
	if ids := listedIDs(t, a); len(ids) != 0 {
		t.Fatalf("raxol_list after stop = %v", ids)
	}
	if out, _, isErr := testkit.CallTool(t, a, ToolStop, map[string]any{"id": id}); !isErr || fmt.Sprint(out) != fmt.Sprint(unknown) {
		t.Fatalf("second raxol_stop = %v", out)
	}
}

func keySum(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// TestHeadlessEndpointNeedsAnAPIKey: no, a wrong or a malformed key gets
// 401; a foreign Origin 403; without --api-keys there is no endpoint.
// initBody is an initialize request, for posts made by hand.
const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

func TestHeadlessEndpointNeedsAnAPIKey(t *testing.T) {
	srv := startHeadlessServer(t, Options{})
	post := func(addr string, hdr map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(initBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for name, hdr := range map[string]map[string]string{
		"missing":    nil,
		"wrong":      {"Authorization": "Bearer " + keyA + "x"},
		"prefix":     {"Authorization": "Bearer " + keyA[:16]},
		"not bearer": {"Authorization": "Basic " + keyA},
		"session token": {"Authorization": "Bearer " + func() string {
			se, end, err := srv.StartHeadless(apiKeyOwner(keySum(keyB)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(end)
			return se.Token()
		}()},
	} {
		if code := post(srv.HTTPAddr(), hdr); code != http.StatusUnauthorized {
			t.Errorf("%s key: status %d, want 401", name, code)
		}
	}
	if code := post(srv.HTTPAddr(), map[string]string{"Authorization": "Bearer " + keyA}); code != http.StatusOK {
		t.Errorf("right key: status %d, want 200", code)
	}
	if code := post(srv.HTTPAddr(), map[string]string{"Authorization": "Bearer " + keyA, "Origin": "http://evil.example"}); code != http.StatusForbidden {
		t.Errorf("foreign origin: status %d, want 403", code)
	}

	// Without --api-keys: not served at all, and the posture says so.
	var logs bytes.Buffer
	var mu sync.Mutex
	off, err := New(App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy()},
		Options{SSH: SSHOptions{Addr: "127.0.0.1:0"}, MCP: MCPOptions{Addr: "127.0.0.1:0"}, DataDir: t.TempDir(),
			Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := off.Start(); err != nil {
		t.Fatal(err)
	}
	defer off.Shutdown(context.Background())
	if code := post(off.HTTPAddr(), map[string]string{"Authorization": "Bearer " + keyA}); code != http.StatusNotFound {
		t.Errorf("without --api-keys: status %d, want 404", code)
	}
	mu.Lock()
	posture := logs.String()
	mu.Unlock()
	if !strings.Contains(posture, `headless_mcp="off (no Options.Headless.APIKeysFile)"`) {
		t.Errorf("posture line does not say /mcp is off: %s", posture)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestHeadlessToolsGoThroughThePolicy: the tool seam decides raxol_start
// and raxol_stop by name (deny and ask both refuse: nobody can approve
// here), the listing hides what is not allowed, the read seam gates
// tools/list, and sensitive tools never run without a tool authorizer.
func TestHeadlessToolsGoThroughThePolicy(t *testing.T) {
	t.Run("denied start", func(t *testing.T) {
		srv := startHeadlessServer(t, Options{MCP: MCPOptions{ToolAuthorizer: withControl(authz.Deny("no headless here"), authz.Ask("Stop it?"), authz.Allow())}})
		a := control(t, srv, keyA)
		if names := toolNames(t, a); slices.Contains(names, ToolStart) || slices.Contains(names, ToolStop) || !slices.Contains(names, ToolList) {
			t.Fatalf("tools/list = %v, want raxol_list only", names)
		}
		out, _, isErr := testkit.CallTool(t, a, ToolStart, nil)
		if !isErr || out["error"] != "authorization_required" || out["tool"] != ToolStart || out["decision"] != "deny" || out["detail"] != "no headless here" {
			t.Fatalf("denied raxol_start = %v", out)
		}
		if n := srv.Sessions().Count(); n != 0 {
			t.Fatalf("%d sessions after a denied raxol_start", n)
		}
		out, _, isErr = testkit.CallTool(t, a, ToolStop, map[string]any{"id": "x"})
		if !isErr || out["error"] != "authorization_required" || out["decision"] != "ask" || out["detail"] != "Stop it?" {
			t.Fatalf("ask raxol_stop = %v", out)
		}
	})
	t.Run("read seam", func(t *testing.T) {
		reads, err := authz.ReadAllowlist([]string{"resources/list"})
		if err != nil {
			t.Fatal(err)
		}
		srv := startHeadlessServer(t, Options{MCP: MCPOptions{ReadAuthorizer: reads}})
		a := control(t, srv, keyA)
		_, err = a.ListTools(context.Background(), nil)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != authz.ReadDeniedCode || rpcErr.Message != "authorization_required: tools/list" {
			t.Fatalf("tools/list with reads denied: %v", err)
		}
		// The tool seam is separate: calls still work.
		testkit.MustCall(t, a, ToolList, nil)
	})
	t.Run("policy sees the connection", func(t *testing.T) {
		var mu sync.Mutex
		var seen []authz.Context
		srv := startHeadlessServer(t, Options{MCP: MCPOptions{ToolAuthorizer: func(name string, args map[string]any, ctx authz.Context) authz.Decision {
			mu.Lock()
			seen = append(seen, ctx)
			mu.Unlock()
			return authz.Allow()
		}}})
		a := control(t, srv, keyA)
		testkit.MustCall(t, a, ToolList, nil)
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 || seen[len(seen)-1].Transport != authz.TransportHTTP || seen[len(seen)-1].ConnID != a.ID() {
			t.Fatalf("policy saw %+v, want transport http and conn %q", seen, a.ID())
		}
	})
	t.Run("no tool authorizer", func(t *testing.T) {
		srv := startHeadlessServer(t, Options{})
		// New refuses this policy; test the call path (the control
		// endpoint holds its own copy of the policy).
		srv.policy = authz.Policy{Read: authz.AllowAll(), ReadSource: authz.SourceConfigured}
		srv.control.policy = srv.policy
		a := control(t, srv, keyA)
		if names := toolNames(t, a); slices.Contains(names, ToolStart) || slices.Contains(names, ToolStop) {
			t.Fatalf("sensitive tools listed without an authorizer: %v", names)
		}
		out, _, isErr := testkit.CallTool(t, a, ToolStart, nil)
		if !isErr || out["error"] != "authorization_required" || !strings.Contains(fmt.Sprint(out["detail"]), "sensitive_tool_unguarded") {
			t.Fatalf("raxol_start without authorizer = %v", out)
		}
		testkit.MustCall(t, a, ToolList, nil) // not sensitive
	})
}

// TestHeadlessLimitsAndLifetime: the per-key cap, the idle reaper, and
// shutdown.
func TestHeadlessLimitsAndLifetime(t *testing.T) {
	t.Run("per-key cap", func(t *testing.T) {
		srv := startHeadlessServer(t, Options{Limits: Limits{MaxSessionsPerUser: 2}})
		a, b := control(t, srv, keyA), control(t, srv, keyB)
		testkit.MustCall(t, a, ToolStart, nil)
		testkit.MustCall(t, a, ToolStart, nil)
		out, _, isErr := testkit.CallTool(t, a, ToolStart, nil)
		if !isErr || out["error"] != "limit" {
			t.Fatalf("third raxol_start = %v", out)
		}
		testkit.MustCall(t, b, ToolStart, nil) // another key has its own budget
		if ids := listedIDs(t, a); len(ids) != 2 {
			t.Fatalf("key A lists %v", ids)
		}
	})
	t.Run("client cap", func(t *testing.T) {
		srv := startHeadlessServer(t, Options{Headless: HeadlessOptions{MaxClients: 2}})
		a := control(t, srv, keyA)
		b := control(t, srv, keyB)
		c := mcp.NewClient(&mcp.Implementation{Name: "third", Version: "1"}, nil)
		_, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + srv.HTTPAddr() + "/mcp", HTTPClient: &http.Client{Transport: testkit.Bearer(nil, keyA)}}, nil)
		if err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
			t.Fatalf("third client: %v, want refused as too many clients", err)
		}
		// Without a valid key the answer is still 401, cap or not.
		req, _ := http.NewRequest(http.MethodPost, "http://"+srv.HTTPAddr()+"/mcp", strings.NewReader(initBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer wrong")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong key at the cap: %d, want 401", resp.StatusCode)
		}
		// The attached clients work, and a closed one frees its place.
		testkit.MustCall(t, b, ToolList, nil)
		_ = a.Close()
		testkit.Eventually(t, 5*time.Second, func() bool { return srv.control.clientCount() < 2 }, "the closed client to leave")
		control(t, srv, keyA)
	})
	t.Run("idle", func(t *testing.T) {
		srv := startHeadlessServer(t, Options{Headless: HeadlessOptions{IdleTimeout: 300 * time.Millisecond}})
		a := control(t, srv, keyA)
		idle := testkit.MustCall(t, a, ToolStart, nil)["id"].(string)
		busy := testkit.MustCall(t, a, ToolStart, nil)
		ag := dial(t, busy["mcp_url"].(string), busy["token"].(string), "busy-agent")
		testkit.Eventually(t, 5*time.Second, func() bool { _, live := srv.Sessions().Get(idle); return !live }, "the idle session to end")
		time.Sleep(600 * time.Millisecond) // negative check: two idle timeouts; an ending that does not come has no event
		if _, live := srv.Sessions().Get(busy["id"].(string)); !live {
			t.Fatal("a session with an agent attached ended as idle")
		}
		if ids := listedIDs(t, a); !slices.Equal(ids, []string{busy["id"].(string)}) {
			t.Fatalf("raxol_list = %v", ids)
		}
		_ = ag.Close()
		testkit.Eventually(t, 5*time.Second, func() bool { _, live := srv.Sessions().Get(busy["id"].(string)); return !live }, "the session to end once its agent left")
	})
	t.Run("shutdown", func(t *testing.T) {
		srv := startHeadlessServer(t, Options{})
		a := control(t, srv, keyA)
		started := testkit.MustCall(t, a, ToolStart, nil)
		ag := dial(t, started["mcp_url"].(string), started["token"].(string), "agent")
		done := make(chan error, 1)
		go func() { done <- srv.Shutdown(context.Background()) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("shutdown hung with /mcp clients connected")
		}
		if n := srv.Sessions().Count(); n != 0 {
			t.Fatalf("%d sessions after shutdown", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := ag.CallTool(ctx, &mcp.CallToolParams{Name: "demo.search.get_value"}); err == nil {
			t.Fatal("the session's agent can still call after shutdown")
		}
		if _, err := a.CallTool(ctx, &mcp.CallToolParams{Name: ToolList}); err == nil {
			t.Fatal("the /mcp client can still call after shutdown")
		}
	})
}

// TestHeadlessURLsUseTheCallersHost: without --public-url, the URLs
// raxol_start and raxol_list return use the host the caller reached /mcp
// by, so they work from where the caller is even when the listener is on
// every interface.
func TestHeadlessURLsUseTheCallersHost(t *testing.T) {
	srv := startHeadlessServer(t, Options{MCP: MCPOptions{Addr: "0.0.0.0:0"}})
	_, port, err := net.SplitHostPort(srv.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	// 127.0.0.1, not the listener's fallback name (localhost).
	base := "http://127.0.0.1:" + port
	a := dial(t, base+"/mcp", keyA, "control-agent")
	started := testkit.MustCall(t, a, ToolStart, nil)
	id := started["id"].(string)
	if want := base + "/sessions/" + id + "/mcp"; started["mcp_url"] != want {
		t.Fatalf("mcp_url %v, want %s", started["mcp_url"], want)
	}
	listed := testkit.MustCall(t, a, ToolList, nil)["sessions"].([]any)
	if len(listed) != 1 || listed[0].(map[string]any)["mcp_url"] != base+"/sessions/"+id+"/mcp" {
		t.Fatalf("raxol_list %v", listed)
	}
	// The header that carries the host inside is the server's own: one a
	// client sends is replaced.
	c := mcp.NewClient(&mcp.Implementation{Name: "spoofer", Version: "1"}, nil)
	spoof, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: testkit.Header(testkit.Bearer(nil, keyA), hostHeader, "evil.example")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer spoof.Close()
	if got := testkit.MustCall(t, spoof, ToolStart, nil)["mcp_url"].(string); !strings.HasPrefix(got, base+"/") {
		t.Fatalf("a client-sent %s header made the URL %s", hostHeader, got)
	}
	// And the URL works.
	ag := dial(t, started["mcp_url"].(string), started["token"].(string), "agent")
	if _, err := ag.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestClaimJoinCode: a right code works once; wrong codes fail and burn
// the code after 5; unknown and ended sessions never match.
func TestClaimJoinCode(t *testing.T) {
	srv := startHeadlessServer(t, Options{})
	newCode := func() (string, string, func()) {
		se, end, err := srv.StartHeadless(apiKeyOwner(keySum(keyA)))
		if err != nil {
			t.Fatal(err)
		}
		code, err := srv.issueCode(se.ID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(end)
		return se.ID, code, end
	}

	id, code, _ := newCode()
	if srv.claimJoinCode(id, "") || srv.claimJoinCode(id, "WRONGCODE2") {
		t.Fatal("a wrong code was accepted")
	}
	if !srv.claimJoinCode(id, code[:5]+"-"+strings.ToLower(code[5:])) {
		t.Fatal("the right code (typed with a dash, in lower case) was refused")
	}
	if srv.claimJoinCode(id, code) {
		t.Fatal("a used code was accepted again")
	}

	id, code, _ = newCode()
	for range joinCodeTries - 1 {
		if srv.claimJoinCode(id, "22222222222") {
			t.Fatal("wrong code accepted")
		}
	}
	if !srv.claimJoinCode(id, code) {
		t.Fatal("the right code was refused after 4 wrong tries")
	}

	id, code, _ = newCode()
	for range joinCodeTries {
		srv.claimJoinCode(id, "22222222222")
	}
	if srv.claimJoinCode(id, code) {
		t.Fatal("the code still works after 5 wrong tries")
	}

	if srv.claimJoinCode("no-such-session", code) {
		t.Fatal("unknown session accepted")
	}
	id, code, end := newCode()
	other, otherCode, _ := newCode()
	if srv.claimJoinCode(other, code) {
		t.Fatal("one session's code opened another")
	}
	end()
	if srv.claimJoinCode(id, code) {
		t.Fatal("an ended session's code was accepted")
	}
	if !srv.claimJoinCode(other, otherCode) {
		t.Fatal("a wrong try on one session cost another its code")
	}
}

func TestAPIKeysFile(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		body string
		want string
	}{
		"short":   {"# c\nshort\n", "api_keys:2: an API key is one word of at least 16"},
		"spaces":  {"abcdefghijklmnop qrstuvwxyz\n", "api_keys:1:"},
		"empty":   {"# only comments\n\n", "no API keys"},
		"missing": {"", "no such file"},
	} {
		p := filepath.Join(dir, name, "api_keys")
		_ = os.MkdirAll(filepath.Dir(p), 0o700)
		if name != "missing" {
			_ = os.WriteFile(p, []byte(tc.body), 0o600)
		}
		_, err := New(App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy()},
			Options{DataDir: t.TempDir(), Headless: HeadlessOptions{APIKeysFile: p}, Logger: slog.New(slog.DiscardHandler)})
		if err == nil || !strings.Contains(err.Error(), "Options.Headless.APIKeysFile") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want mention of Options.Headless.APIKeysFile and %q", name, err, tc.want)
		}
	}
	keys, err := loadAPIKeys(writeKeys(t, "  "+keyA+"  ", "# "+keyB))
	if err != nil || len(keys) != 1 || keys[0] != keySum(keyA) {
		t.Fatalf("keys %v, err %v", keys, err)
	}
}

// TestWrongAPIKeysAreRateLimitedPerAddress: wrong keys spend a budget of
// their own per address; over it a wrong key is refused with 429 until
// it refills, while a right key from the same address is always served,
// and SSH from that address is not refused (nor do failed SSH logins
// throttle /mcp).
func TestWrongAPIKeysAreRateLimitedPerAddress(t *testing.T) {
	srv := startHeadlessServer(t, Options{Limits: Limits{MaxAuthFailures: 2, AuthFailureWindow: time.Hour}})
	post := func(srv *Server, auth string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+srv.HTTPAddr()+"/mcp", strings.NewReader(initBody))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	sshLogin := func() error {
		t.Helper()
		cfg := &gossh.ClientConfig{User: "tester", Auth: []gossh.AuthMethod{gossh.PublicKeys(testSigner(t))},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second}
		c, err := gossh.Dial("tcp", srv.SSHAddr(), cfg)
		if err == nil {
			c.Close()
		}
		return err
	}
	if code := post(srv, "Bearer "+keyA); code != http.StatusOK {
		t.Fatalf("right key: %d", code)
	}
	for i := range 2 {
		if code := post(srv, "Bearer wrong-key-wrong-key-wrong"); code != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: %d, want 401", i, code)
		}
	}
	// SSH from the same address is not refused, and the SSH budget is
	// untouched by the wrong keys.
	if err := sshLogin(); err != nil {
		t.Fatalf("SSH login from an address with wrong API keys: %v", err)
	}
	if srv.admit.authBlocked("127.0.0.1") {
		t.Fatal("wrong API keys spent the SSH failed-login budget")
	}
	for i := range 3 {
		if code := post(srv, "Bearer wrong-key-wrong-key-wrong"); code != http.StatusTooManyRequests {
			t.Fatalf("wrong key %d over the budget: %d, want 429", i, code)
		}
		// The right keys are never held back by the guesses.
		for _, k := range []string{keyA, keyB} {
			if code := post(srv, "Bearer "+k); code != http.StatusOK {
				t.Fatalf("right key after %d wrong ones over the budget: %d, want 200", i+1, code)
			}
		}
		if code := post(srv, "bearer "+keyA); code != http.StatusOK {
			t.Fatalf("right key, lower-case scheme: %d, want 200", code)
		}
	}
	// No key at all guesses nothing: 401, not 429.
	if code := post(srv, ""); code != http.StatusUnauthorized {
		t.Fatalf("no key: %d, want 401", code)
	}
	if body := scrape(t, srv); !strings.Contains(body, "\n"+`raxol_mcp_rejections_total{reason="rate_limited"} 3`+"\n") {
		t.Errorf(`raxol_mcp_rejections_total{reason="rate_limited"} is not 3:\n%s`, body)
	}
	// Nor do failed SSH logins spend /mcp's: a fresh address budget for
	// /mcp on a server whose SSH budget is used up.
	srv2 := startHeadlessServer(t, Options{Limits: Limits{MaxAuthFailures: 2, AuthFailureWindow: time.Hour}})
	for range 3 {
		srv2.admit.authFailed("127.0.0.1")
	}
	if code := post(srv2, "Bearer wrong-key-wrong-key-wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong key after failed SSH logins: %d, want 401", code)
	}
	if code := post(srv2, "Bearer "+keyA); code != http.StatusOK {
		t.Fatalf("right key after failed SSH logins: %d, want 200", code)
	}
}

// testSigner returns a fresh ed25519 SSH key.
func testSigner(t *testing.T) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// scrape returns srv's /metrics body.
func scrape(t *testing.T, srv *Server) string {
	t.Helper()
	resp, err := http.Get("http://" + srv.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
