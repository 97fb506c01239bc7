package mcpbridge_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// askAll is a tool policy that asks about every app tool.
func askAll(name string, _ map[string]any, _ authz.Context) authz.Decision {
	if strings.HasPrefix(name, "app.") {
		return authz.Ask("may it?")
	}
	return authz.Allow()
}

// TestGrantsAreScopedToTheClientAndTheToken: "allow for the session"
// covers the client that asked, not a second agent, and not past a token
// rotation (checked on a stdio client, which a rotation does not
// disconnect).
func TestGrantsAreScopedToTheClientAndTheToken(t *testing.T) {
	var asked atomic.Int32
	e := policyEnv(t, configured(askAll, authz.AllowAll()))
	e.session.SetApprovalSink(func(context.Context, session.ApprovalRequest) (session.Approval, error) {
		asked.Add(1)
		return session.ApprovedForSession, nil
	})
	a, _ := e.connect(false)
	for i := 0; i < 3; i++ {
		if out, isErr := call(t, a, "app.go.click", nil); isErr {
			t.Fatalf("A's call %d: %v", i, out)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("A was asked about %d times, want once", n)
	}
	for _, sse := range []bool{false, true} {
		b, _ := e.connect(sse)
		before := asked.Load()
		call(t, b, "app.go.click", nil)
		if asked.Load() != before+1 {
			t.Fatalf("sse=%v: a second agent used the first agent's grant without being asked", sse)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := serveStdio(t, e, ctx)
	call(t, p.cs, "app.go.click", nil)
	before := asked.Load()
	call(t, p.cs, "app.go.click", nil)
	if asked.Load() != before {
		t.Fatal("the stdio client's grant did not hold")
	}
	if _, err := e.session.RotateToken(); err != nil {
		t.Fatal(err)
	}
	// The rotation is applied by the session's watcher; once it has
	// disconnected A, the grants are gone too.
	testkit.Eventually(t, 5*time.Second, func() bool { _, err := a.ListTools(context.Background(), nil); return err != nil }, "the old token's client was not disconnected by the rotation")
	call(t, p.cs, "app.go.click", nil)
	if asked.Load() != before+1 {
		t.Fatal("a grant survived the token rotation")
	}
}

// TestPromptsAreWithdrawnWhenTheirRequestGoesAway: an approval prompt ends
// when nobody waits for its answer any more: the Streamable POST dropped
// without notifications/cancelled, or the SSE client closing its stream.
// An answer given as the prompt is withdrawn grants nothing.
func TestPromptsAreWithdrawnWhenTheirRequestGoesAway(t *testing.T) {
	var mu sync.Mutex
	withdrawn := map[string]chan struct{}{}
	var asked atomic.Int32
	e := policyEnv(t, configured(askAll, authz.AllowAll()), func(o *mcpbridge.Options) { o.ApprovalTimeout = time.Minute })
	e.session.SetApprovalSink(func(ctx context.Context, req session.ApprovalRequest) (session.Approval, error) {
		asked.Add(1)
		<-ctx.Done()
		mu.Lock()
		if ch, ok := withdrawn[req.Tool]; ok {
			close(ch)
			delete(withdrawn, req.Tool)
		}
		mu.Unlock()
		// The human pressed "s" just as it went away.
		return session.ApprovedForSession, nil
	})
	expect := func(tool string) chan struct{} {
		ch := make(chan struct{})
		mu.Lock()
		withdrawn[tool] = ch
		mu.Unlock()
		return ch
	}
	waitWithdrawn := func(what string, ch chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the prompt was not withdrawn", what)
		}
	}

	// Streamable: a raw POST dropped by the client mid-prompt.
	cs, _ := e.connect(false)
	ch := expect("app.go.click")
	rctx, drop := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(rctx, http.MethodPost, e.http.URL+"/sessions/"+e.session.ID+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"app.go.click","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+e.session.Token())
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	req.Header.Set("X-Raxol-Request", "forged") // a client cannot choose its request's tag
	go func() {
		resp, err := e.http.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}()
	testkit.Eventually(t, 5*time.Second, func() bool { return asked.Load() == 1 }, "the human was not asked about the raw POST's call")
	drop()
	waitWithdrawn("streamable POST dropped", ch)
	time.Sleep(100 * time.Millisecond) // negative check: a withdrawn call that ran anyway would have folded by now
	if model(e.session).Presses != 0 {
		t.Fatal("a withdrawn call ran")
	}
	// The late answer granted nothing: the same client is asked again.
	ch = expect("app.go.click")
	callCtx, cancelCall := context.WithCancel(context.Background())
	go func() {
		_, _ = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "app.go.click", Arguments: map[string]any{}})
	}()
	testkit.Eventually(t, 5*time.Second, func() bool { return asked.Load() == 2 }, "the human was not asked again after the withdrawn prompt")
	cancelCall() // the Go client sends notifications/cancelled
	waitWithdrawn("cancelled", ch)

	// Streamable: the client ends its session (DELETE) mid-prompt; the
	// SDK's Close waits for in-flight calls, so the prompt must give up
	// first or the DELETE hangs for the whole approval timeout.
	dc, _ := e.connect(false)
	ch = expect("app.name.clear")
	go func() {
		_, _ = dc.CallTool(context.Background(), &mcp.CallToolParams{Name: "app.name.clear", Arguments: map[string]any{}})
	}()
	testkit.Eventually(t, 5*time.Second, func() bool { return asked.Load() == 3 }, "the human was not asked about the call before the DELETE")
	del, _ := http.NewRequest(http.MethodDelete, e.http.URL+"/sessions/"+e.session.ID+"/mcp", nil)
	del.Header.Set("Authorization", "Bearer "+e.session.Token())
	del.Header.Set("Mcp-Session-Id", dc.ID())
	del.Header.Set("Mcp-Protocol-Version", dc.InitializeResult().ProtocolVersion)
	start := time.Now()
	if resp, err := e.http.Client().Do(del); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	waitWithdrawn("DELETE", ch)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("DELETE took %s", d)
	}

	// Token rotation mid-prompt: the clients that used the token are
	// closed, and their prompts withdrawn.
	rc, _ := e.connect(false)
	ch = expect("app.open.click")
	go func() {
		_, _ = rc.CallTool(context.Background(), &mcp.CallToolParams{Name: "app.open.click", Arguments: map[string]any{}})
	}()
	testkit.Eventually(t, 5*time.Second, func() bool { return asked.Load() == 4 }, "the human was not asked about the call before the rotation")
	if _, err := e.session.RotateToken(); err != nil {
		t.Fatal(err)
	}
	waitWithdrawn("token rotated", ch)

	// SSE: the client's stream ends mid-prompt (its process died: the
	// SSE client's stream lives as long as its Connect context).
	sctx, kill := context.WithCancel(context.Background())
	c := mcp.NewClient(&mcp.Implementation{Name: "sse-agent", Version: "1"}, nil)
	sc, err := c.Connect(sctx, &mcp.SSEClientTransport{Endpoint: e.http.URL + "/sessions/" + e.session.ID + "/sse",
		HTTPClient: &http.Client{Transport: e.http.bearer(e.session.Token())}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	ch = expect("app.agree.toggle")
	go func() {
		_, _ = sc.CallTool(context.Background(), &mcp.CallToolParams{Name: "app.agree.toggle", Arguments: map[string]any{}})
	}()
	testkit.Eventually(t, 5*time.Second, func() bool { return asked.Load() == 5 }, "the human was not asked about the SSE client's call")
	kill()
	waitWithdrawn("SSE stream ended", ch)
	time.Sleep(100 * time.Millisecond) // negative check: a withdrawn call that ran anyway would have folded by now
	if m := model(e.session); m.Agree || m.Presses != 0 || m.Open {
		t.Fatalf("a withdrawn call ran: %+v", model(e.session))
	}
	// Each withdrawal is counted as one (POST dropped, cancelled, DELETE,
	// rotation, SSE stream), and none as an approval.
	withdrawals := e.metrics.AuthzDecisions.WithLabelValues("tool", "withdrawn")
	testkit.Eventually(t, 5*time.Second, func() bool { return testutil.ToFloat64(withdrawals) == 5 },
		"raxol_authz_decisions_total{seam=\"tool\",decision=\"withdrawn\"} = %v, want 5", testutil.ToFloat64(withdrawals))
	if n := testutil.ToFloat64(e.metrics.AuthzDecisions.WithLabelValues("tool", "approved")); n != 0 {
		t.Fatalf("withdrawn prompts counted %v approvals", n)
	}
}

// TestARotationVoidsGrantsAtOnce: a grant is tied to the token it was
// given under, so the first call after a rotation is asked again even
// while the session's watcher, which forgets the grants, has not yet
// seen the rotation (held up here in an app projection it is pushing to
// a subscriber).
func TestARotationVoidsGrantsAtOnce(t *testing.T) {
	var asked atomic.Int32
	var hold atomic.Bool
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var releaseOnce sync.Once
	e := policyEnv(t, configured(askAll, authz.AllowAll()), func(o *mcpbridge.Options) {
		o.Projections = map[string]func(ui.Model) any{"form": func(m ui.Model) any {
			if hold.Load() {
				select {
				case entered <- struct{}{}:
				default:
				}
				<-release
			}
			return m
		}}
	})
	e.session.SetApprovalSink(func(context.Context, session.ApprovalRequest) (session.Approval, error) {
		asked.Add(1)
		return session.ApprovedForSession, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := serveStdio(t, e, ctx) // a rotation does not disconnect it
	// Registered last, so run first: a failed test lets the watcher go
	// before the client and the bridge close.
	t.Cleanup(func() { hold.Store(false); releaseOnce.Do(func() { close(release) }) })
	call(t, p.cs, "app.go.click", nil)
	call(t, p.cs, "app.go.click", nil)
	if n := asked.Load(); n != 1 {
		t.Fatalf("asked %d times before the rotation, want once (the grant holds)", n)
	}
	// The watcher pushes the projection to this subscriber after every
	// fold: hold it there.
	if err := p.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: mcpbridge.StateURI("app", "form")}); err != nil {
		t.Fatal(err)
	}
	hold.Store(true)
	if err := e.session.Dispatcher.Send(human, ui.TextInputChanged{ID: "name", Text: "held"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher never ran the projection")
	}
	if _, err := e.session.RotateToken(); err != nil {
		t.Fatal(err)
	}
	call(t, p.cs, "app.go.click", nil)
	if n := asked.Load(); n != 2 {
		t.Fatalf("asked %d times after the rotation, want 2: the grant outlived the token it was given under", n)
	}
	hold.Store(false)
	releaseOnce.Do(func() { close(release) })
}

// TestSSEClientsHaveTheirOwnConnID: every client is its own connection to
// a policy, SSE ones included (the SDK gives SSE sessions no id).
func TestSSEClientsHaveTheirOwnConnID(t *testing.T) {
	rec := &recorder{f: authz.AllowAll()}
	e := policyEnv(t, configured(rec.decide, authz.AllowAll()))
	ids := map[string]string{}
	for i, sse := range []bool{true, true, false, false} {
		cs, _ := e.connect(sse)
		n := len(rec.contexts())
		call(t, cs, "app.go.click", nil)
		call(t, cs, "app.go.click", nil)
		got := rec.contexts()[n:]
		if len(got) != 2 || got[0] != got[1] {
			t.Fatalf("client %d: contexts %+v, want one context for both calls", i, got)
		}
		c := got[0]
		want := authz.TransportHTTP
		if sse {
			want = authz.TransportSSE
		}
		if c.Transport != want || c.ConnID == "" || c.ConnID == "unknown" {
			t.Fatalf("client %d: context %+v", i, c)
		}
		if prev, dup := ids[c.ConnID]; dup {
			t.Fatalf("client %d has the conn_id of client %s: %q", i, prev, c.ConnID)
		}
		ids[c.ConnID] = string(rune('0' + i))
	}
}
