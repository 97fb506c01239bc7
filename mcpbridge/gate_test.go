package mcpbridge_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// listen sends a raw subscriptions/listen on the Streamable session of cs
// and returns what its response stream carried within d, while change
// runs (to make the subscribed resources change).
func (e *env) listen(cs *mcp.ClientSession, uris []string, d time.Duration, change func()) string {
	e.t.Helper()
	quoted := make([]string, len(uris))
	for i, u := range uris {
		quoted[i] = `"` + u + `"`
	}
	body := `{"jsonrpc":"2.0","id":77,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":[` + strings.Join(quoted, ",") + `]}}}`
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.http.URL+"/sessions/"+e.session.ID+"/mcp", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+e.session.Token())
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	resp, err := e.http.Client().Do(req)
	if err != nil {
		e.t.Fatalf("listen: %v", err)
	}
	defer resp.Body.Close()
	go func() {
		time.Sleep(100 * time.Millisecond) // the change lands while the refused stream is open: the server sends no event for "open"
		change()
	}()
	b, _ := io.ReadAll(resp.Body) // the deadline ends a stream that hangs
	return string(b)
}

var human = dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "h"}

func readDenials(m *metrics.Metrics) float64 {
	return testutil.ToFloat64(m.AuthzDecisions.WithLabelValues("read", "deny"))
}

// TestNoResourceContentByAnyMethodWithoutTheReadPolicy is the regression
// test of the subscriptions/listen bypass: a client whose read policy
// allows only tools/list gets no resource content by read, subscribe or
// listen (which the go-sdk answers on initialized sessions too).
func TestNoResourceContentByAnyMethodWithoutTheReadPolicy(t *testing.T) {
	reads, err := authz.ReadAllowlist([]string{"tools/list"})
	if err != nil {
		t.Fatal(err)
	}
	e := policyEnv(t, configured(authz.AllowAll(), reads))
	for _, sse := range []bool{false, true} {
		cs, n := e.connect(sse)
		ctx := context.Background()
		for _, uri := range []string{mcpbridge.URITree, mcpbridge.URIScreen, mcpbridge.URIContext, mcpbridge.URIActivity, mcpbridge.StateURI("app", "form")} {
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); !isReadDenied(err) {
				t.Errorf("sse=%v read %s: %v, want -32090", sse, uri, err)
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); !isReadDenied(err) {
				t.Errorf("sse=%v subscribe %s: %v, want -32090", sse, uri, err)
			}
		}
		// raxol_screenshot is the screen resource by another name: not
		// listed, and refused.
		lr, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if lr.CacheScope != "private" {
			t.Errorf("sse=%v: a caller's filtered tools/list has cacheScope %q", sse, lr.CacheScope)
		}
		for _, tl := range lr.Tools {
			if tl.Name == mcpbridge.ToolScreenshot {
				t.Errorf("sse=%v: raxol_screenshot listed to a client that may not read the screen", sse)
			}
		}
		if out, isErr := call(t, cs, mcpbridge.ToolScreenshot, nil); !isErr || out["error"] != "authorization_required" {
			t.Errorf("sse=%v: raxol_screenshot without read rights: %v", sse, out)
		}
		n.mu.Lock()
		got := len(n.updates)
		n.mu.Unlock()
		if got != 0 {
			t.Errorf("sse=%v: %d resource updates reached a client that may not read", sse, got)
		}
	}
	cs, n := e.connect(false)
	before := readDenials(e.metrics)
	stream := e.listen(cs, []string{mcpbridge.URITree, mcpbridge.URIScreen, mcpbridge.StateURI("app", "form")}, 1500*time.Millisecond, func() {
		_ = e.session.Dispatcher.Send(human, ui.TextInputChanged{ID: "name", Text: "leaked-by-listen"})
	})
	if strings.Contains(stream, "resources/updated") || strings.Contains(stream, "leaked-by-listen") || strings.Contains(stream, "acknowledged") {
		t.Fatalf("subscriptions/listen streamed content to a client without read rights:\n%s", stream)
	}
	if !strings.Contains(stream, "-32090") || !strings.Contains(stream, "authorization_required: subscriptions/listen") {
		t.Fatalf("subscriptions/listen was not refused with -32090:\n%s", stream)
	}
	if after := readDenials(e.metrics); after != before+1 {
		t.Errorf("read denials %v -> %v, want one more for the listen", before, after)
	}
	time.Sleep(200 * time.Millisecond) // negative check: an update would have arrived by now; none is an event to await
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.updates) != 0 {
		t.Errorf("the client got %d resource updates after the refused listen", len(n.updates))
	}
}

func isReadDenied(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == authz.ReadDeniedCode
}

// TestReadDecisionIsPerURIOnEveryPath: a read policy that lets a client
// read the tree but not the screen holds for resources/read, subscribe,
// listen, and the updates that follow a subscription: when the policy
// stops allowing the tree, its updates stop reaching the client.
func TestReadDecisionIsPerURIOnEveryPath(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var treeReadable atomic.Bool
		treeReadable.Store(true)
		policy := func(method string, args map[string]any, _ authz.Context) authz.Decision {
			if method == "resources/read" {
				if args["uri"] == mcpbridge.URITree && treeReadable.Load() {
					return authz.Allow()
				}
				return authz.Deny("not this resource")
			}
			return authz.Allow()
		}
		e := policyEnv(t, configured(authz.AllowAll(), policy))
		cs, n := e.connect(false)
		ctx := context.Background()
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpbridge.URIScreen}); !isReadDenied(err) {
			t.Fatalf("read screen: %v, want -32090", err)
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: mcpbridge.URIScreen}); !isReadDenied(err) {
			t.Fatalf("subscribe screen: %v, want -32090", err)
		}
		stream := e.listen(cs, []string{mcpbridge.URITree, mcpbridge.URIScreen}, time.Second, func() {
			_ = e.session.Dispatcher.Send(human, ui.TextInputChanged{ID: "name", Text: "via-listen"})
		})
		if !strings.Contains(stream, "-32090") || strings.Contains(stream, "via-listen") {
			t.Fatalf("listen naming an unreadable resource was not refused:\n%s", stream)
		}

		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: mcpbridge.URITree}); err != nil {
			t.Fatalf("subscribe tree: %v", err)
		}
		type1 := func(text string) {
			if err := e.session.Dispatcher.Call(ctx, human, ui.TextInputChanged{ID: "name", Text: text}); err != nil {
				t.Fatal(err)
			}
		}
		type1("one")
		select {
		case <-n.updateCh:
		case <-time.After(3 * time.Second):
			t.Fatal("no update for the readable tree")
		}
		treeReadable.Store(false)
		type1("two")
		select {
		case <-n.updateCh:
			t.Fatal("an update of the tree reached the client after the policy stopped allowing it")
		case <-time.After(500 * time.Millisecond):
		}
		treeReadable.Store(true)
		type1("three")
		select {
		case <-n.updateCh:
		case <-time.After(3 * time.Second):
			t.Fatal("no update once the tree was readable again")
		}
	})
}

// TestGateRefusesWhatItDoesNotClassify: every method the go-sdk v1.8.0
// serves is classified; any other (a method a later SDK may answer) is
// refused without reaching the handler, and counted.
func TestGateRefusesWhatItDoesNotClassify(t *testing.T) {
	classes := map[string]mcpbridge.MethodClass{
		"initialize": mcpbridge.MethodOpen, "ping": mcpbridge.MethodOpen, "logging/setLevel": mcpbridge.MethodOpen,
		"notifications/initialized": mcpbridge.MethodOpen, "notifications/cancelled": mcpbridge.MethodOpen,
		"notifications/progress": mcpbridge.MethodOpen, "notifications/roots/list_changed": mcpbridge.MethodOpen,
		"tools/call": mcpbridge.MethodTool,
		"tools/list": mcpbridge.MethodRead, "resources/list": mcpbridge.MethodRead, "resources/templates/list": mcpbridge.MethodRead,
		"resources/read": mcpbridge.MethodRead, "resources/subscribe": mcpbridge.MethodRead, "resources/unsubscribe": mcpbridge.MethodRead,
		"prompts/list": mcpbridge.MethodRead, "prompts/get": mcpbridge.MethodRead, "completion/complete": mcpbridge.MethodRead,
		"subscriptions/listen": mcpbridge.MethodRead,
		"server/discover":      mcpbridge.MethodRefused, "tasks/get": mcpbridge.MethodRefused, "": mcpbridge.MethodRefused,
		"Tools/List": mcpbridge.MethodRefused, "tools/list ": mcpbridge.MethodRefused, "notifications/message": mcpbridge.MethodRefused,
		"resources/read\x00": mcpbridge.MethodRefused,
	}
	for m, want := range classes {
		if got := mcpbridge.ClassifyMethod(m); got != want {
			t.Errorf("ClassifyMethod(%q) = %v, want %v", m, got, want)
		}
	}
	m := metrics.New()
	g := &mcpbridge.Gate{Policy: configured(authz.AllowAll(), authz.AllowAll()), Metrics: m,
		Context:  func(mcp.Request) authz.Context { return authz.Context{} },
		Listable: func(mcp.Request, string, authz.Context) bool { return true }}
	reached := 0
	h := g.Receiving(func(context.Context, string, mcp.Request) (mcp.Result, error) { reached++; return nil, nil })
	for _, method := range []string{"tasks/get", "sampling/createMessage", "elicitation/create", "x"} {
		_, err := h(context.Background(), method, &mcp.ListToolsRequest{})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: %v, want method not found", method, err)
		}
	}
	if reached != 0 {
		t.Errorf("unclassified methods reached the handler %d times", reached)
	}
	if got := testutil.ToFloat64(m.AuthzDecisions.WithLabelValues("method", "deny")); got != 4 {
		t.Errorf("method refusals counted %v, want 4", got)
	}
}

// TestNewHoldsTheBootGates: a bridge used on its own, without the server,
// refuses to serve HTTP without a tool and a read policy someone chose,
// and anything without a tool authorizer (raxol_send_key is sensitive).
func TestNewHoldsTheBootGates(t *testing.T) {
	mgr := session.NewManager(nil)
	defer mgr.Close()
	for name, tc := range map[string]struct {
		o  mcpbridge.Options
		ok bool
	}{
		"zero options":             {mcpbridge.Options{}, false},
		"transport only, no tool":  {mcpbridge.Options{TransportOnly: true, Policy: authz.Policy{Read: authz.AllowAll()}}, false},
		"defaults over HTTP":       {mcpbridge.Options{Policy: authz.Policy{Tool: authz.AllowAll(), Read: authz.AllowAll()}}, false},
		"reads unconfigured":       {mcpbridge.Options{Policy: authz.Policy{Tool: authz.AllowAll(), ToolSource: authz.SourceConfigured, Read: authz.AllowAll()}}, false},
		"defaults, transport only": {mcpbridge.Options{TransportOnly: true, Policy: authz.Policy{Tool: authz.AllowAll(), Read: authz.AllowAll()}}, true},
		"configured over HTTP":     {mcpbridge.Options{Policy: configured(authz.AllowAll(), authz.DenyAll("no"))}, true},
	} {
		b, err := mcpbridge.New(mgr, tc.o)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", name, err)
		case !tc.ok && !errors.Is(err, authz.ErrBootRefused):
			t.Errorf("%s: %v, want ErrBootRefused", name, err)
		}
		if b != nil {
			b.Close()
		}
	}
}

// TestAGateWithoutHooksDecidesByItsPolicy: a Gate with only a Policy (no
// Context, Call or Listable) decides calls and listings by the tool
// policy instead of failing.
func TestAGateWithoutHooksDecidesByItsPolicy(t *testing.T) {
	allowlist, err := authz.Allowlist([]string{"ok_tool"})
	if err != nil {
		t.Fatal(err)
	}
	g := &mcpbridge.Gate{Policy: configured(allowlist, authz.AllowAll())}
	next := func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "ok_tool"}, {Name: "other"}}}, nil
		}
		return &mcp.CallToolResult{}, nil
	}
	h := g.Receiving(next)
	for name, wantErr := range map[string]bool{"ok_tool": false, "other": true} {
		res, err := h(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name}})
		if err != nil || res.(*mcp.CallToolResult).IsError != wantErr {
			t.Errorf("call %s: %v %v, want refused %v", name, res, err, wantErr)
		}
	}
	res, err := h(context.Background(), "tools/list", &mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if tl := res.(*mcp.ListToolsResult).Tools; len(tl) != 1 || tl[0].Name != "ok_tool" {
		t.Errorf("tools/list %v, want only ok_tool", tl)
	}
}
