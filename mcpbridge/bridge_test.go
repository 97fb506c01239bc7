package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// form is a small app: an input, a checkbox, a button that panics in
// Update, and a modal that a button opens.
type form struct {
	Name    string
	Agree   bool
	Open    bool
	Presses int
}

type press struct{}
type boom struct{}
type openModal struct{}

func (f form) Init() tea.Cmd { return nil }

func (f form) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ui.TextInputChanged:
		f.Name = msg.Text
	case ui.CheckboxToggled:
		f.Agree = msg.Checked
	case press:
		f.Presses++
	case boom:
		panic("boom")
	case openModal:
		f.Open = true
	case ui.ModalConfirmed, ui.ModalDismissed:
		f.Open = false
	}
	return f, nil
}

func (f form) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.TextInput{ID: "name", Label: "Name", Value: f.Name},
		ui.Checkbox{ID: "agree", Label: "I agree", Checked: f.Agree},
		ui.Button{ID: "go", Label: "Go", OnClick: press{}},
		ui.Button{ID: "crash", Label: "Crash", OnClick: boom{}},
		ui.Button{ID: "open", Label: "Open", OnClick: openModal{}},
		ui.Modal{ID: "dlg", Title: "Sure?", Visible: f.Open, Body: ui.Text{Text: "really?"}},
		ui.PasswordField{ID: "pw", Label: "Secret"},
	}}
}

// newTestBridge is mcpbridge.New for tests: a bridge with no policy gets
// one that allows everything, configured (the boot gates refuse none).
func newTestBridge(t testing.TB, m *session.Manager, o mcpbridge.Options) *mcpbridge.Bridge {
	t.Helper()
	if o.Policy.Tool == nil && o.Policy.Read == nil {
		o.Policy = configured(authz.AllowAll(), authz.AllowAll())
	}
	b, err := mcpbridge.New(m, o)
	if err != nil {
		t.Fatalf("mcpbridge.New: %v", err)
	}
	return b
}

type env struct {
	t       testing.TB
	metrics *metrics.Metrics
	mgr     *session.Manager
	bridge  *mcpbridge.Bridge
	http    *testServer
	session *session.Session
}

func newEnv(t *testing.T) *env { return newBenchEnv(t) }

func newBenchEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, metrics: metrics.New()}
	e.mgr = session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
	e.bridge = newTestBridge(t, e.mgr, mcpbridge.Options{
		Namespace:   "app",
		Projections: map[string]func(ui.Model) any{"form": func(m ui.Model) any { return m }},
		Metrics:     e.metrics,
		// Calls back to back: the per-client rate limit is not measured.
		ToolCallsPerSecond: 1e9, ToolCallBurst: 1e9,
	})
	e.http = serveHTTP(t, e.bridge)
	s, ok, err := e.mgr.Start("app", session.Owner{User: "u"}, form{}, 0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	e.session = s
	t.Cleanup(func() {
		e.bridge.Close()
		e.http.Close()
		e.mgr.Close()
	})
	return e
}

type notes struct {
	mu       sync.Mutex
	listChg  int
	updates  []*mcp.ResourceUpdatedNotificationParams
	updateCh chan struct{}
}

func (e *env) connect(sse bool, opts ...func(*mcp.ClientOptions)) (*mcp.ClientSession, *notes) {
	e.t.Helper()
	n := &notes{updateCh: make(chan struct{}, 64)}
	co := &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			n.mu.Lock()
			n.listChg++
			n.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			n.mu.Lock()
			n.updates = append(n.updates, r.Params)
			n.mu.Unlock()
			n.updateCh <- struct{}{}
		},
	}
	for _, o := range opts {
		o(co)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1.0"}, co)
	hc := &http.Client{Transport: e.http.bearer(e.session.Token())}
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: e.http.URL + "/sessions/" + e.session.ID + "/mcp", HTTPClient: hc}
	if sse {
		tr = &mcp.SSEClientTransport{Endpoint: e.http.URL + "/sessions/" + e.session.ID + "/sse", HTTPClient: hc}
	}
	// The SSE transport's stream lives as long as the Connect context.
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	return cs, n
}

// call is testkit.CallTool without the text.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	out, _, isErr := testkit.CallTool(t, cs, name, args)
	return out, isErr
}

func model(s *session.Session) form { return s.Dispatcher.Snapshot().Model.(form) }

func TestAgentDrivesTheSessionModel(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := "streamable"
		if sse {
			name = "sse"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			cs, _ := e.connect(sse)
			out, isErr := call(t, cs, "app.name.type_into", map[string]any{"text": "hello"})
			if isErr {
				t.Fatalf("type_into failed: %v", out)
			}
			// The tool answers after the fold: the model already has it.
			if got := model(e.session).Name; got != "hello" {
				t.Fatalf("model name %q right after the call", got)
			}
			if st := out["state"].(map[string]any); st["value"] != "hello" {
				t.Fatalf("returned state %v", st)
			}
			if snap := e.session.Dispatcher.Snapshot(); snap.Origin != (dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "test-agent 1.0"}) {
				t.Fatalf("origin %v", snap.Origin)
			}
			out, _ = call(t, cs, "app.name.get_value", nil)
			if out["result"].(map[string]any)["value"] != "hello" {
				t.Fatalf("get_value %v", out)
			}
			// The client is on a protocol with initialize (the SDK's
			// client asks for the stateless 2026-07-28 first), and its
			// presence was recorded when initialize was answered, before
			// Connect returned.
			if v := cs.InitializeResult().ProtocolVersion; v >= "2026-07-28" {
				t.Fatalf("negotiated protocol %s: the session's server speaks only versions with initialize", v)
			}
			if agents := e.session.Agents(); len(agents) != 1 || agents[0].Name != "test-agent 1.0" {
				t.Fatalf("agents %+v", agents)
			}
		})
	}
}

func TestCallErrorsAreDistinctAndLeaveTheModel(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(false)
	before := model(e.session)
	for _, tc := range []struct {
		tool string
		args map[string]any
		kind string
	}{
		{"app.crash.click", nil, mcpbridge.ErrKindUpdateFailed},
		{"app.nope.click", nil, mcpbridge.ErrKindWidgetGone},
		{"app.dlg.confirm", nil, mcpbridge.ErrKindWidgetGone}, // hidden modal
		{"other.name.type_into", map[string]any{"text": "x"}, mcpbridge.ErrKindUnknownTool},
		{"app.name.type_into", map[string]any{"text": 5}, mcpbridge.ErrKindInvalidArgs},
		{"app.name.type_into", map[string]any{}, mcpbridge.ErrKindInvalidArgs},
		{"app.name.type_into", map[string]any{"text": "x", "extra": 1}, mcpbridge.ErrKindInvalidArgs},
	} {
		out, isErr := call(t, cs, tc.tool, tc.args)
		if !isErr || out["error"] != tc.kind {
			t.Errorf("%s %v: got %v (isError %v), want error kind %s", tc.tool, tc.args, out, isErr, tc.kind)
		}
	}
	if model(e.session) != before {
		t.Fatalf("failed calls changed the model: %+v", model(e.session))
	}
	// The session still works after an update_failed.
	if out, isErr := call(t, cs, "app.go.click", nil); isErr || model(e.session).Presses != 1 {
		t.Fatalf("click after failures: %v", out)
	}
	for outcome, want := range map[string]float64{"ok": 1, "update_failed": 1, "widget_gone": 2, "unknown_tool": 1, "invalid_arguments": 3} {
		if got := testutil.ToFloat64(e.metrics.MCPToolCalls.WithLabelValues(outcome)); got != want {
			t.Errorf("raxol_mcp_tool_calls_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	if got := testutil.ToFloat64(e.metrics.MCPClients); got != 1 {
		t.Errorf("raxol_mcp_clients = %v, want 1", got)
	}
}

func TestToolsFollowFocusAndListChanged(t *testing.T) {
	e := newEnv(t)
	cs, n := e.connect(false)
	names := func() []string {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	all := names()
	if !contains(all, "raxol_screenshot") || !contains(all, "app.name.type_into") {
		t.Fatalf("tools %v", all)
	}
	if contains(all, "app.dlg.confirm") {
		t.Fatal("a hidden modal's tools are listed")
	}
	// Opening the modal shadows everything else.
	call(t, cs, "app.open.click", nil)
	testkit.Eventually(t, 5*time.Second, func() bool { l := names(); return contains(l, "app.dlg.confirm") && !contains(l, "app.name.type_into") }, "opening the modal: tools/list shows its tools and hides the rest")
	n.mu.Lock()
	changed := n.listChg
	n.mu.Unlock()
	if changed == 0 {
		testkit.Eventually(t, 5*time.Second, func() bool { n.mu.Lock(); defer n.mu.Unlock(); return n.listChg > 0 }, "no notifications/tools/list_changed after the modal opened")
	}
	// A derived tool the lens did not list still works.
	if out, isErr := call(t, cs, "app.dlg.dismiss", nil); isErr {
		t.Fatalf("dismiss: %v", out)
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return contains(names(), "app.name.type_into") }, "the modal dismissed: tools/list shows the input again")
}

func TestResourceUpdatesCarryAJSONPatch(t *testing.T) {
	e := newEnv(t)
	cs, n := e.connect(false)
	ctx := context.Background()
	uri := mcpbridge.StateURI("app", "form")
	read := func() ([]byte, any) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		return []byte(res.Contents[0].Text), res.Meta["version"]
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	old, _ := read()
	call(t, cs, "app.name.type_into", map[string]any{"text": "patched"})
	select {
	case <-n.updateCh:
	case <-time.After(5 * time.Second):
		t.Fatal("no resource update")
	}
	n.mu.Lock()
	upd := n.updates[0]
	n.mu.Unlock()
	if upd.URI != uri || upd.Meta["baseVersion"] == nil || upd.Meta["version"] == nil {
		t.Fatalf("update %+v", upd)
	}
	raw, _ := json.Marshal(upd.Meta["patch"])
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		t.Fatalf("patch %s: %v", raw, err)
	}
	applied, err := patch.Apply(old)
	if err != nil {
		t.Fatal(err)
	}
	now, version := read()
	if !jsonpatch.Equal(applied, now) {
		t.Fatalf("patched %s != read %s", applied, now)
	}
	if version != upd.Meta["version"] {
		t.Fatalf("read version %v, update version %v", version, upd.Meta["version"])
	}
}

func TestTokensAndSessionsAreIsolated(t *testing.T) {
	e := newEnv(t)
	other, _, _ := e.mgr.Start("app", session.Owner{User: "v"}, form{}, 0)
	cs, _ := e.connect(false)
	sid := cs.ID()
	post := func(path, token, mcpSession string) int {
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if mcpSession != "" {
			req.Header.Set("Mcp-Session-Id", mcpSession)
		}
		resp, err := e.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("/sessions/"+other.ID+"/mcp", e.session.Token(), ""); code != http.StatusUnauthorized {
		t.Errorf("A's token on B's URL: %d", code)
	}
	if code := post("/sessions/"+other.ID+"/mcp", other.Token(), sid); code == http.StatusOK {
		t.Errorf("A's Mcp-Session-Id on B's path with B's token: %d", code)
	}
	if code := post("/sessions/nope/mcp", e.session.Token(), ""); code != http.StatusUnauthorized {
		t.Errorf("unknown session: %d", code)
	}
	if code := post("/sessions/"+e.session.ID+"/mcp", "", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	big := strings.Repeat("x", 2<<20)
	req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/sessions/"+e.session.ID+"/mcp", strings.NewReader(big))
	req.Header.Set("Authorization", "Bearer "+e.session.Token())
	resp, err := e.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d", resp.StatusCode)
	}
}

func TestSessionEndClosesClients(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := newEnv(t)
		cs, _ := e.connect(false)
		e.waitStream(1)
		e.mgr.End(e.session.ID)
		done := make(chan error, 1)
		go func() { done <- cs.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("client not closed after the session ended")
		}
	})
}

// waitStream waits until n clients of the session hold a stream open. A
// test that ends a client from the server side must wait for its
// standalone GET first: the go-sdk client takes a refused GET (401 once
// the token was rotated or the session ended) for a server without the
// stream, and then does not notice that it was closed until it calls.
func (e *env) waitStream(n int) {
	e.t.Helper()
	testkit.Eventually(e.t, 5*time.Second, func() bool { return mcpbridge.OpenStreams(e.bridge, e.session.ID) == n },
		"%d clients with a stream open", n)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestMalformedRequestsGetClearErrors(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(false)
	url := e.http.URL + "/sessions/" + e.session.ID + "/mcp"
	post := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.session.Token())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
		resp, err := e.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sb strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			sb.Write(buf[:n])
			if err != nil || strings.Contains(sb.String(), "\n\n") {
				break
			}
		}
		return resp.StatusCode, sb.String()
	}
	if code, body := post("{not json"); code != http.StatusBadRequest {
		t.Errorf("garbage body: %d %q", code, body)
	}
	if code, body := post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"app.name.type_into","arguments":"nope"}}`); code != http.StatusOK || !strings.Contains(body, "arguments must be a JSON object") {
		t.Errorf("arguments not an object: %d %q", code, body)
	}
	// The SDK refuses methods it does not know before parsing them as a
	// call: a 400 that names the method.
	if code, body := post(`{"jsonrpc":"2.0","id":8,"method":"no/such/method"}`); code != http.StatusBadRequest || !strings.Contains(body, `"no/such/method" unsupported`) {
		t.Errorf("unknown method: %d %q", code, body)
	}
	// The session is unharmed.
	if out, isErr := call(t, cs, "app.name.type_into", map[string]any{"text": "still works"}); isErr {
		t.Fatalf("call after bad input: %v", out)
	}
}

func TestCallsAfterTheSessionEnded(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(false)
	e.mgr.End(e.session.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "app.name.type_into", Arguments: map[string]any{"text": "x"}}); err == nil {
		t.Fatal("a call after the session ended succeeded")
	}
	req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/sessions/"+e.session.ID+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+e.session.Token())
	resp, err := e.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("ended session's URL answered %d, want 401 like any unknown session", resp.StatusCode)
	}
}

func TestOtherSessionsToolsAreNotReachable(t *testing.T) {
	e := newEnv(t)
	other, _, _ := e.mgr.Start("app", session.Owner{User: "v"}, form{}, 0)
	cs, _ := e.connect(false)
	// Same app, same widget ids: a name reaches this session's widget only.
	call(t, cs, "app.name.type_into", map[string]any{"text": "mine"})
	if got := other.Dispatcher.Snapshot().Model.(form).Name; got != "" {
		t.Fatalf("another session's model changed to %q", got)
	}
	if out, isErr := call(t, cs, "other.name.type_into", map[string]any{"text": "x"}); !isErr || out["error"] != mcpbridge.ErrKindUnknownTool {
		t.Fatalf("foreign namespace: %v", out)
	}
}

func TestTokenRotationDisconnectsOldClients(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := newEnv(t)
		cs, _ := e.connect(false)
		e.waitStream(1)
		old := e.session.Token()
		if _, err := e.session.RotateToken(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cs.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("client of the old token still connected")
		}
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/sessions/"+e.session.ID+"/mcp", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+old)
		resp, err := e.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("old token answered %d", resp.StatusCode)
		}
		// The new token works.
		cs2, _ := e.connect(false)
		if out, isErr := call(t, cs2, "app.go.click", nil); isErr {
			t.Fatalf("new token: %v", out)
		}
	})
}

func TestOriginAndHostChecks(t *testing.T) {
	e := newEnv(t)
	do := func(host, origin string) int {
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/sessions/"+e.session.ID+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+e.session.Token())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := e.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	self := strings.TrimPrefix(e.http.URL, "http://")
	if code := do("", "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("cross-origin: %d", code)
	}
	if code := do("evil.example", ""); code != http.StatusForbidden {
		t.Errorf("rebound Host on a loopback listener: %d", code)
	}
	if code := do("", "http://"+self); code == http.StatusForbidden {
		t.Errorf("same origin refused")
	}
	if code := do("localhost:1234", ""); code == http.StatusForbidden {
		t.Errorf("localhost Host refused")
	}
	if got := testutil.ToFloat64(e.metrics.MCPRejections.WithLabelValues("origin")); got != 1 {
		t.Errorf("origin rejections counted %v", got)
	}
}

func TestClientCapAndRateLimit(t *testing.T) {
	e := &env{t: t, metrics: metrics.New()}
	e.mgr = session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
	e.bridge = newTestBridge(t, e.mgr, mcpbridge.Options{Namespace: "app", Metrics: e.metrics, MaxClients: 2, ToolCallsPerSecond: 1, ToolCallBurst: 3})
	mcpbridge.SetProbeIdle(e.bridge, time.Minute) // the two clients only opened: they keep their places
	e.http = serveHTTP(t, e.bridge)
	t.Cleanup(func() { e.bridge.Close(); e.http.Close(); e.mgr.Close() })
	e.session, _, _ = e.mgr.Start("app", session.Owner{User: "u"}, form{}, 0)

	cs, _ := e.connect(false)
	e.connect(true)
	c := mcp.NewClient(&mcp.Implementation{Name: "third"}, nil)
	hc := &http.Client{Transport: e.http.bearer(e.session.Token())}
	if _, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.http.URL + "/sessions/" + e.session.ID + "/mcp", HTTPClient: hc}, nil); err == nil {
		t.Fatal("a third client connected over a cap of 2")
	}
	limited := 0
	for range 6 {
		if out, isErr := call(t, cs, "app.name.get_value", nil); isErr {
			if out["error"] != mcpbridge.ErrKindRateLimited {
				t.Fatalf("unexpected error %v", out)
			}
			limited++
		}
	}
	if limited < 2 {
		t.Fatalf("%d of 6 rapid calls were rate limited with a burst of 3", limited)
	}
	// The client is still connected and works once the bucket refills.
	// Stays a wall-clock wait: this test is the loopback-socket one, and the
	// next token (1 call/s) is time, not an event; TestRateLimitRefillsOnTime
	// checks the refill exactly on the bubble's clock.
	time.Sleep(1100 * time.Millisecond)
	if out, isErr := call(t, cs, "app.name.get_value", nil); isErr {
		t.Fatalf("after waiting: %v", out)
	}
}

// TestRateLimitRefillsOnTime: on the bubble's virtual clock, a client's
// tool calls are limited exactly as its bucket says: a burst of 3 at
// once, then one call a second, on both transports; another client's
// bucket is its own. TestClientCapAndRateLimit checks the limit over a
// loopback socket.
func TestRateLimitRefillsOnTime(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := &env{t: t, metrics: metrics.New()}
		e.mgr = session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
		e.bridge = newTestBridge(t, e.mgr, mcpbridge.Options{Namespace: "app", Metrics: e.metrics, ToolCallsPerSecond: 1, ToolCallBurst: 3})
		e.http = serveHTTP(t, e.bridge)
		t.Cleanup(func() { e.bridge.Close(); e.http.Close(); e.mgr.Close() })
		e.session, _, _ = e.mgr.Start("app", session.Owner{User: "u"}, form{}, 0)
		limited := func(cs *mcp.ClientSession) bool {
			t.Helper()
			out, isErr := call(t, cs, "app.name.get_value", nil)
			if isErr && out["error"] != mcpbridge.ErrKindRateLimited {
				t.Fatalf("unexpected error %v", out)
			}
			return isErr
		}
		for _, sse := range []bool{false, true} {
			cs, _ := e.connect(sse)
			for i := range 3 {
				if limited(cs) {
					t.Fatalf("sse=%v: call %d of a burst of 3 was limited", sse, i+1)
				}
			}
			if !limited(cs) {
				t.Fatalf("sse=%v: a 4th call at once was not limited", sse)
			}
			time.Sleep(999 * time.Millisecond)
			if !limited(cs) {
				t.Fatalf("sse=%v: a call 999ms later was not limited at 1 call/s", sse)
			}
			time.Sleep(time.Millisecond)
			if limited(cs) {
				t.Fatalf("sse=%v: a call a second later was limited", sse)
			}
			if !limited(cs) {
				t.Fatalf("sse=%v: a second call in that second was not limited", sse)
			}
			time.Sleep(3 * time.Second) // the bucket refills to its burst, no more
			for i := range 3 {
				if limited(cs) {
					t.Fatalf("sse=%v: call %d after a refill was limited", sse, i+1)
				}
			}
			if !limited(cs) {
				t.Fatalf("sse=%v: the bucket held more than its burst", sse)
			}
		}
	})
}

// TestBareSSEStreamsCountAgainstTheCap: SSE streams that never
// initialize are client sessions too; they cannot be opened without bound.
func TestBareSSEStreamsCountAgainstTheCap(t *testing.T) {
	e := &env{t: t, metrics: metrics.New()}
	e.mgr = session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
	e.bridge = newTestBridge(t, e.mgr, mcpbridge.Options{Namespace: "app", Metrics: e.metrics, MaxClients: 2})
	mcpbridge.SetProbeIdle(e.bridge, time.Minute) // bare streams keep their places however slow the machine
	e.http = serveHTTP(t, e.bridge)
	t.Cleanup(func() { e.bridge.Close(); e.http.Close(); e.mgr.Close() })
	e.session, _, _ = e.mgr.Start("app", session.Owner{User: "u"}, form{}, 0)
	hc := &http.Client{Transport: e.http.bearer(e.session.Token())}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sseGet := func() int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.http.URL+"/sessions/"+e.session.ID+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
		} else {
			t.Cleanup(func() { resp.Body.Close() })
		}
		return resp.StatusCode
	}
	for i := range 2 {
		if code := sseGet(); code != http.StatusOK {
			t.Fatalf("bare SSE stream %d within the cap: %d", i+1, code)
		}
	}
	if code := sseGet(); code != http.StatusTooManyRequests {
		t.Fatalf("a bare SSE stream over the cap: %d, want 429", code)
	}
	// A closed stream frees its place.
	cancel()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	testkit.Eventually(t, 5*time.Second, func() bool { return sseGet() == http.StatusOK }, "a closed SSE stream did not free its place under the cap")
}

// TestListChangedOnlyWhenTheAdvertisedSetChanges: folds that leave the
// advertised tools as they were send no notifications/tools/list_changed.
func TestListChangedOnlyWhenTheAdvertisedSetChanges(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := newEnv(t)
		cs, n := e.connect(false)
		count := func() int { n.mu.Lock(); defer n.mu.Unlock(); return n.listChg }
		// Let registration after connect settle, then start counting.
		time.Sleep(200 * time.Millisecond)
		before := count()
		for _, text := range []string{"a", "ab", "abc"} {
			call(t, cs, "app.name.type_into", map[string]any{"text": text})
		}
		call(t, cs, "app.agree.toggle", nil)
		time.Sleep(300 * time.Millisecond) // longer than the SDK's 10ms debounce
		if got := count(); got != before {
			t.Fatalf("%d list_changed notifications for folds that changed no tool", got-before)
		}
		// Opening the modal changes the set: now one arrives.
		call(t, cs, "app.open.click", nil)
		testkit.Eventually(t, 5*time.Second, func() bool { return count() > before }, "no notifications/tools/list_changed after the modal opened")
	})
}

// dying is a RoundTripper that fails every request once killed, like an
// agent process that went away.
type dying struct {
	base http.RoundTripper
	dead atomic.Bool
}

func (d *dying) RoundTrip(r *http.Request) (*http.Response, error) {
	if d.dead.Load() {
		return nil, errors.New("agent gone")
	}
	return d.base.RoundTrip(r)
}

// TestVanishedAgentsLeavePresence: an agent that disappears without
// closing its MCP session is pinged out of the session.
func TestVanishedAgentsLeavePresence(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := &env{t: t, metrics: metrics.New()}
		e.mgr = session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
		e.bridge = newTestBridge(t, e.mgr, mcpbridge.Options{Namespace: "app", KeepAlive: 100 * time.Millisecond})
		e.http = serveHTTP(t, e.bridge)
		t.Cleanup(func() { e.bridge.Close(); e.http.Close(); e.mgr.Close() })
		e.session, _, _ = e.mgr.Start("app", session.Owner{User: "u"}, form{}, 0)

		rt := &dying{base: e.http.bearer(e.session.Token())}
		c := mcp.NewClient(&mcp.Implementation{Name: "ghost", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: e.http.URL + "/sessions/" + e.session.ID + "/mcp", HTTPClient: &http.Client{Transport: rt}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		testkit.Eventually(t, 5*time.Second, func() bool { return len(e.session.Agents()) == 1 }, "the agent never attached")
		// A healthy agent stays through several pings.
		time.Sleep(350 * time.Millisecond)
		if len(e.session.Agents()) != 1 {
			t.Fatal("a live agent was pinged out")
		}
		rt.dead.Store(true)
		e.http.CloseClientConnections()
		testkit.Eventually(t, 5*time.Second, func() bool { return len(e.session.Agents()) == 0 }, "a vanished agent is still in presence")
	})
}
