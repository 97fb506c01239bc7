package mcpbridge_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// stdioPair is a client and a served session joined by two pipes, framed
// exactly as stdio is (newline-delimited JSON-RPC).
type stdioPair struct {
	cs   *mcp.ClientSession
	done chan error // ServeTransport's result
}

func serveStdio(t *testing.T, e *env, ctx context.Context) *stdioPair {
	t.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	p := &stdioPair{done: make(chan error, 1)}
	go func() {
		p.done <- e.bridge.ServeTransport(ctx, e.session.ID, &mcp.IOTransport{Reader: c2sR, Writer: s2cW}, authz.TransportStdio)
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	p.cs = cs
	t.Cleanup(func() {
		_ = cs.Close()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			t.Error("ServeTransport did not return after the client closed")
		}
	})
	return p
}

// recorder is a policy function that records every context it sees.
type recorder struct {
	mu   sync.Mutex
	seen []authz.Context
	f    authz.Func
}

func (r *recorder) decide(name string, args map[string]any, ctx authz.Context) authz.Decision {
	r.mu.Lock()
	r.seen = append(r.seen, ctx)
	r.mu.Unlock()
	return r.f(name, args, ctx)
}

func (r *recorder) contexts() []authz.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// TestStdioIsExemptOnlyFromTheNetworkGate: a policy nobody configured
// (which could never open a network listener) still serves a stdio
// client, and every decision sees transport "stdio" and conn_id
// "default", whatever the client does.
func TestStdioIsExemptOnlyFromTheNetworkGate(t *testing.T) {
	tools := &recorder{f: authz.AllowAll()}
	reads := &recorder{f: authz.AllowAll()}
	p := authz.Policy{Tool: tools.decide, Read: reads.decide} // SourceDefault on both seams
	if err := p.CheckNetworkBoot(); err == nil {
		t.Fatal("precondition: this policy must fail the network boot gate")
	}
	e := policyEnv(t, p, func(o *mcpbridge.Options) { o.TransportOnly = true })
	sp := serveStdio(t, e, context.Background())
	// Nothing is served over HTTP by such a bridge.
	if resp, err := e.http.Client().Post(e.http.URL+"/sessions/"+e.session.ID+"/mcp", "application/json", strings.NewReader("{}")); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("HTTP on a transport-only bridge: %v %v, want 404", resp, err)
	} else {
		resp.Body.Close()
	}

	if names := listNames(t, sp.cs); !slices.Contains(names, "app.name.type_into") {
		t.Fatalf("tools/list = %v", names)
	}
	if out, isErr := call(t, sp.cs, "app.name.type_into", map[string]any{"text": "via stdio"}); isErr {
		t.Fatalf("type_into: %v", out)
	}
	if got := model(e.session).Name; got != "via stdio" {
		t.Fatalf("model name = %q", got)
	}
	if _, err := sp.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "app://state/form"}); err != nil {
		t.Fatalf("resources/read: %v", err)
	}
	want := authz.Context{ConnID: mcpbridge.StdioConnID, Transport: authz.TransportStdio}
	for _, r := range []*recorder{tools, reads} {
		got := r.contexts()
		if len(got) == 0 {
			t.Fatal("policy never consulted")
		}
		for _, c := range got {
			if c != want {
				t.Fatalf("policy saw %+v, want %+v", c, want)
			}
		}
	}
	// Presence, as for an HTTP client: stdio clients speak the
	// initialize-based protocol too.
	testkit.Eventually(t, 5*time.Second, func() bool { ag := e.session.Agents(); return len(ag) == 1 && ag[0].Name == "stdio-agent 1" }, "the stdio agent never attached")
	if v := sp.cs.InitializeResult().ProtocolVersion; v >= "2026-07-28" {
		t.Fatalf("negotiated %s, want an initialize-based version", v)
	}
}

// TestStdioSensitiveToolsStillNeedAnAuthorizer: over stdio, a sensitive
// tool is hidden and refused without a tool authorizer, and an "ask" with
// no human attached is denied.
func TestStdioSensitiveToolsStillNeedAnAuthorizer(t *testing.T) {
	t.Run("no authorizer", func(t *testing.T) {
		// New refuses it, stdio or not; the call path refuses it too.
		if _, err := mcpbridge.New(session.NewManager(nil), mcpbridge.Options{TransportOnly: true}); !errors.Is(err, authz.ErrBootRefused) {
			t.Fatalf("New without a tool authorizer: %v, want ErrBootRefused", err)
		}
		e := uncheckedEnv(t, authz.Policy{})
		sp := serveStdio(t, e, context.Background())
		if names := listNames(t, sp.cs); slices.Contains(names, mcpbridge.ToolSendKey) {
			t.Fatalf("sensitive tool listed without an authorizer: %v", names)
		}
		out, isErr := call(t, sp.cs, mcpbridge.ToolSendKey, map[string]any{"keys": []string{"a"}})
		if !isErr || out["error"] != "authorization_required" || out["decision"] != "deny" {
			t.Fatalf("send_key without authorizer: %v (error %v)", out, isErr)
		}
	})
	t.Run("ask without a terminal", func(t *testing.T) {
		rules, err := authz.Rules([]authz.Rule{
			{Match: mcpbridge.ToolSendKey, Decision: authz.KindAsk, Prompt: "Press keys?"},
			{Match: "**", Decision: authz.KindAllow},
		})
		if err != nil {
			t.Fatal(err)
		}
		e := policyEnv(t, configured(rules, authz.AllowAll()))
		sp := serveStdio(t, e, context.Background())
		out, isErr := call(t, sp.cs, mcpbridge.ToolSendKey, map[string]any{"keys": []string{"a"}})
		if !isErr || out["error"] != "authorization_required" || out["decision"] != "ask" || out["detail"] != "Press keys?" {
			t.Fatalf("ask with no human: %v (error %v)", out, isErr)
		}
	})
}

func TestServeTransportEnds(t *testing.T) {
	t.Run("session ends", func(t *testing.T) {
		e := newEnv(t)
		sp := serveStdio(t, e, context.Background())
		e.mgr.End(e.session.ID)
		select {
		case err := <-sp.done:
			sp.done <- err // for the cleanup
			if err != nil {
				t.Fatalf("ServeTransport = %v, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("ServeTransport still serving an ended session")
		}
		waitDone(t, sp.cs)
	})
	t.Run("context done", func(t *testing.T) {
		e := newEnv(t)
		ctx, cancel := context.WithCancel(context.Background())
		sp := serveStdio(t, e, ctx)
		cancel()
		select {
		case err := <-sp.done:
			sp.done <- err
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("ServeTransport = %v, want context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("ServeTransport ignored its context")
		}
		waitDone(t, sp.cs)
	})
	t.Run("client leaves", func(t *testing.T) {
		e := newEnv(t)
		sp := serveStdio(t, e, context.Background())
		_ = sp.cs.Close()
		select {
		case err := <-sp.done:
			sp.done <- err
			if err != nil {
				t.Fatalf("ServeTransport = %v, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("ServeTransport did not notice the client leaving")
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		e := newEnv(t)
		err := e.bridge.ServeTransport(context.Background(), "nope", &mcp.IOTransport{}, authz.TransportStdio)
		if !errors.Is(err, mcpbridge.ErrNoSession) {
			t.Fatalf("err = %v", err)
		}
	})
}

func waitDone(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = cs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("client not closed")
	}
}

// TestRotationDisconnectsOnlyTokenClients: a new token disconnects the
// HTTP clients of the old one; a stdio client, which used no token, stays.
func TestRotationDisconnectsOnlyTokenClients(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := newEnv(t)
		httpClient, _ := e.connect(false)
		e.waitStream(1)
		p := serveStdio(t, e, context.Background())
		if _, err := e.session.RotateToken(); err != nil {
			t.Fatal(err)
		}
		waitDone(t, httpClient)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "app.go.click", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("stdio client after rotation: %v %v", res, err)
		}
		// The new token opens a session on the same server.
		cs, _ := e.connect(false)
		if out, isErr := call(t, cs, "app.go.click", nil); isErr {
			t.Fatalf("new token: %v", out)
		}
	})
}
