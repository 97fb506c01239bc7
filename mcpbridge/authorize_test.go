package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// policyEnv is a bridge with the given policy over one session of form.
func policyEnv(t *testing.T, p authz.Policy, opts ...func(*mcpbridge.Options)) *env {
	t.Helper()
	return policyEnvWith(t, func(m *session.Manager, o mcpbridge.Options) *mcpbridge.Bridge { return newTestBridge(t, m, o) }, p, opts...)
}

// uncheckedEnv is policyEnv past the boot gates, to test the checks
// behind them.
func uncheckedEnv(t *testing.T, p authz.Policy, opts ...func(*mcpbridge.Options)) *env {
	t.Helper()
	return policyEnvWith(t, mcpbridge.NewUnchecked, p, opts...)
}

func policyEnvWith(t *testing.T, newBridge func(*session.Manager, mcpbridge.Options) *mcpbridge.Bridge, p authz.Policy, opts ...func(*mcpbridge.Options)) *env {
	t.Helper()
	e := &env{t: t, metrics: metrics.New()}
	e.mgr = session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
	o := mcpbridge.Options{Namespace: "app", Metrics: e.metrics, Policy: p,
		Projections: map[string]func(ui.Model) any{"form": func(m ui.Model) any { return m }}}
	for _, f := range opts {
		f(&o)
	}
	e.bridge = newBridge(e.mgr, o)
	e.http = serveHTTP(t, e.bridge)
	t.Cleanup(func() { e.bridge.Close(); e.http.Close(); e.mgr.Close() })
	e.session, _, _ = e.mgr.Start("app", session.Owner{User: "u"}, form{}, 0)
	return e
}

func configured(tool, read authz.Func) authz.Policy {
	return authz.Policy{Tool: tool, Read: read, ToolSource: authz.SourceConfigured, ReadSource: authz.SourceConfigured}
}

func listNames(t *testing.T, cs *mcp.ClientSession) []string {
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

func TestReadSeamDeniesWithMinus32090(t *testing.T) {
	reads, err := authz.ReadAllowlist([]string{"tools/list"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	var mu sync.Mutex
	spy := func(method string, args map[string]any, ctx authz.Context) authz.Decision {
		mu.Lock()
		seen = append(seen, method+" "+ctx.Transport)
		mu.Unlock()
		return reads(method, args, ctx)
	}
	e := policyEnv(t, configured(authz.AllowAll(), spy))
	cs, _ := e.connect(false)
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("allowed tools/list: %v", err)
	}
	for name, do := range map[string]func() error{
		"resources/list": func() error { _, err := cs.ListResources(ctx, nil); return err },
		"resources/read": func() error {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpbridge.URITree})
			return err
		},
		"resources/subscribe": func() error { return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: mcpbridge.URITree}) },
		"resources/templates/list": func() error {
			_, err := cs.ListResourceTemplates(ctx, nil)
			return err
		},
	} {
		err := do()
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != authz.ReadDeniedCode || we.Message != "authorization_required: "+name {
			t.Errorf("%s: %v, want JSON-RPC %d authorization_required: %s", name, err, authz.ReadDeniedCode, name)
			continue
		}
		var data map[string]any
		_ = json.Unmarshal(we.Data, &data)
		if data["method"] != name || data["error"] != "authorization_required" {
			t.Errorf("%s: data %s", name, we.Data)
		}
	}
	// ping and initialize are never gated; the seam saw only server facts.
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(seen, func(s string) bool { return strings.HasPrefix(s, "initialize") || strings.HasPrefix(s, "ping") }) {
		t.Fatalf("initialize or ping was gated: %v", seen)
	}
	if !slices.Contains(seen, "tools/list http") {
		t.Fatalf("the read seam did not see transport http: %v", seen)
	}
}

func TestToolListingIsFilteredPerEntry(t *testing.T) {
	policy := func(name string, _ map[string]any, _ authz.Context) authz.Decision {
		switch name {
		case "app.name.type_into":
			return authz.Deny("no typing")
		case "app.go.click":
			return authz.Ask("press go?")
		case "app.agree.toggle":
			panic("policy bug")
		}
		return authz.Allow()
	}
	e := policyEnv(t, configured(policy, authz.AllowAll()))
	cs, _ := e.connect(false)
	names := listNames(t, cs)
	if slices.Contains(names, "app.name.type_into") || slices.Contains(names, "app.agree.toggle") {
		t.Fatalf("denied or panicking tools listed: %v", names)
	}
	if !slices.Contains(names, "app.name.get_value") || !slices.Contains(names, "raxol_screenshot") {
		t.Fatalf("allowed tools missing (a panic must cost one tool, not the listing): %v", names)
	}
	if slices.Contains(names, "app.go.click") {
		t.Fatalf("an ask tool is listed with no human to approve: %v", names)
	}
	// With a human who can approve, ask tools are listed.
	e.session.SetApprovalSink(func(context.Context, session.ApprovalRequest) (session.Approval, error) { return session.Refused, nil })
	if names := listNames(t, cs); !slices.Contains(names, "app.go.click") {
		t.Fatalf("ask tool not listed with a human attached: %v", names)
	}
	// discover_tools obeys the same filter.
	out, _ := call(t, cs, "discover_tools", map[string]any{"query": "type"})
	if b, _ := json.Marshal(out); strings.Contains(string(b), "app.name.type_into") {
		t.Fatalf("discover_tools shows a denied tool: %s", b)
	}
	// A denied call is an error result with the payload, and counted.
	denials := func() float64 { return testutil.ToFloat64(e.metrics.AuthzDecisions.WithLabelValues("tool", "deny")) }
	before := denials()
	out, isErr := call(t, cs, "app.name.type_into", map[string]any{"text": "x"})
	if !isErr || out["error"] != "authorization_required" || out["decision"] != "deny" || out["tool"] != "app.name.type_into" || out["detail"] != "no typing" {
		t.Fatalf("denial %v", out)
	}
	if got := denials() - before; got != 1 {
		t.Fatalf("a denied call counted %v tool denials, want 1", got)
	}
	if model(e.session).Name != "" {
		t.Fatal("a denied call changed the model")
	}
	out, isErr = call(t, cs, "app.agree.toggle", nil)
	if !isErr || out["error"] != "authorization_required" {
		t.Fatalf("panicking policy: %v", out)
	}
}

func TestAskWithoutAHumanIsDenied(t *testing.T) {
	e := policyEnv(t, configured(func(string, map[string]any, authz.Context) authz.Decision { return authz.Ask("really?") }, authz.AllowAll()))
	cs, _ := e.connect(false)
	asks := func() float64 { return testutil.ToFloat64(e.metrics.AuthzDecisions.WithLabelValues("tool", "ask")) }
	before := asks()
	out, isErr := call(t, cs, "app.go.click", nil)
	if !isErr || out["decision"] != "ask" || out["detail"] != "really?" {
		t.Fatalf("ask without a human: %v", out)
	}
	if got := asks() - before; got != 1 {
		t.Fatalf("an ask refused for want of a human counted %v, want 1", got)
	}
	if model(e.session).Presses != 0 {
		t.Fatal("the call ran")
	}
}

func TestAskIsAnsweredByTheHuman(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var asked atomic.Int32
		var answer atomic.Int32 // session.Approval, or -1 to never answer
		var lastReq atomic.Value
		e := policyEnv(t, configured(func(name string, _ map[string]any, _ authz.Context) authz.Decision {
			if strings.HasPrefix(name, "app.") && !strings.HasSuffix(name, ".get_value") {
				return authz.Ask("may it?")
			}
			return authz.Allow()
		}, authz.AllowAll()), func(o *mcpbridge.Options) {
			o.ApprovalTimeout = 600 * time.Millisecond
			o.ProgressInterval = 100 * time.Millisecond
		})
		e.session.SetApprovalSink(func(ctx context.Context, req session.ApprovalRequest) (session.Approval, error) {
			asked.Add(1)
			lastReq.Store(req)
			if a := answer.Load(); a >= 0 {
				return session.Approval(a), nil
			}
			<-ctx.Done()
			return session.Refused, ctx.Err()
		})
		var progress atomic.Int32
		cs, _ := e.connect(false, func(o *mcp.ClientOptions) {
			o.ProgressNotificationHandler = func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) }
		})

		answer.Store(int32(session.Refused))
		if out, isErr := call(t, cs, "app.go.click", nil); !isErr || out["decision"] != "deny" || !strings.Contains(out["detail"].(string), "refused") {
			t.Fatalf("refused: %v", out)
		}
		answer.Store(int32(session.ApprovedOnce))
		if out, isErr := call(t, cs, "app.go.click", nil); isErr || model(e.session).Presses != 1 {
			t.Fatalf("approved once: %v", out)
		}
		req := lastReq.Load().(session.ApprovalRequest)
		if req.Agent != "test-agent 1.0" || req.Tool != "app.go.click" || req.Widget != "Go" || req.Prompt != "may it?" {
			t.Fatalf("approval request %+v", req)
		}
		// Timeout: denied after exactly the approval timeout (the clock is
		// the bubble's), with a progress notification every interval
		// while waiting.
		answer.Store(-1)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		params := &mcp.CallToolParams{Name: "app.go.click", Arguments: map[string]any{}}
		params.SetProgressToken("p1")
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "no answer") {
			t.Fatalf("timeout: %v %v", res, err)
		}
		if waited := time.Since(start); waited != 600*time.Millisecond {
			t.Fatalf("the unanswered call was denied after %v, want the approval timeout 600ms", waited)
		}
		synctest.Wait() // the last notification has been handled
		if n := progress.Load(); n < 5 || n > 6 {
			t.Fatalf("%d progress notifications in 600ms at one per 100ms, want 5 or 6", n)
		}
		if model(e.session).Presses != 1 {
			t.Fatal("a timed-out call ran")
		}
		// Allow for the session: no further prompts for that tool.
		answer.Store(int32(session.ApprovedForSession))
		call(t, cs, "app.go.click", nil)
		before := asked.Load()
		answer.Store(int32(session.Refused))
		if out, isErr := call(t, cs, "app.go.click", nil); isErr || model(e.session).Presses != 3 {
			t.Fatalf("granted tool: %v", out)
		}
		if asked.Load() != before {
			t.Fatal("a tool allowed for the session was asked about again")
		}
		// Other tools are still asked about.
		if _, isErr := call(t, cs, "app.agree.toggle", nil); !isErr {
			t.Fatal("the grant leaked to another tool")
		}
		// Password text is masked in the prompt.
		answer.Store(int32(session.Refused))
		call(t, cs, "app.pw.type_into", map[string]any{"text": "hunter2"})
		if req := lastReq.Load().(session.ApprovalRequest); req.Tool != "app.pw.type_into" || strings.Contains(req.Args, "hunter2") || !strings.Contains(req.Args, "text") {
			t.Fatalf("password arguments shown to the human as %q", req.Args)
		}
	})
}
