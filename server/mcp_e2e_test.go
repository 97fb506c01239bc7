package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

type agent struct {
	t        *testing.T
	cs       *mcp.ClientSession
	mu       sync.Mutex
	listChg  int
	updates  []*mcp.ResourceUpdatedNotificationParams
	updateCh chan struct{}
}

// attachAgent connects a go-sdk client to the session's endpoint, as the
// attach panel shows it.
func attachAgent(t *testing.T, srv *testServer, se *session.Session, sse bool) *agent {
	t.Helper()
	a := &agent{t: t, updateCh: make(chan struct{}, 64)}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "0.1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			a.mu.Lock()
			a.listChg++
			a.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			a.mu.Lock()
			a.updates = append(a.updates, r.Params)
			a.mu.Unlock()
			a.updateCh <- struct{}{}
		},
	})
	hc := &http.Client{Transport: testkit.Bearer(nil, se.Token())}
	base := "http://" + srv.HTTPAddr() + "/sessions/" + se.ID
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}
	if sse {
		tr = &mcp.SSEClientTransport{Endpoint: base + "/sse", HTTPClient: hc}
	}
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("agent connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	a.cs = cs
	return a
}

func (a *agent) call(name string, args map[string]any) map[string]any {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
	if res.IsError {
		a.t.Fatalf("%s: error result %v", name, out)
	}
	return out
}

func (a *agent) tools() []string {
	a.t.Helper()
	res, err := a.cs.ListTools(context.Background(), nil)
	if err != nil {
		a.t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestHumanAndAgentShareOneSession: a human over SSH and an agent over MCP
// drive the same model, over both MCP transports.
func TestHumanAndAgentShareOneSession(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := "streamable"
		if sse {
			name = "sse"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, server.Options{MCP: server.MCPOptions{MaxTools: 6}})
			human := connect(t, srv.SSHAddr(), clientOpts{})
			id := waitDemo(t, human)
			se, ok := srv.Sessions().Get(id)
			if !ok {
				t.Fatal("session on screen is not live")
			}
			ag := attachAgent(t, srv, se, sse)

			// Presence: the human's status bar counts the agent.
			human.WaitFor(t, "agent: e2e-agent 0.1", waitLong)

			// The agent's type_into shows on the human's screen within a second.
			ag.call("demo.search.type_into", map[string]any{"text": "from-agent"})
			human.WaitFor(t, "from-agent", time.Second)

			// The human's typing is what the agent's get_value returns next.
			ag.call("demo.search.clear", nil)
			human.WaitFor(t, func(s string) bool { return !strings.Contains(s, "from-agent") }, waitLong)
			human.Key("\t") // focus: tabs -> search
			human.Type("typed-by-human")
			human.WaitFor(t, "typed-by-human", waitLong)
			got := ag.call("demo.search.get_value", nil)
			if v := got["result"].(map[string]any)["value"]; v != "typed-by-human" {
				t.Fatalf("agent's get_value = %v, want the human's text", v)
			}

			// tools/list follows the human's focus (6 tools: the 5 session tools and the
			// focused widget's first).
			testkit.Eventually(t, waitLong, func() bool {
				return slices.Contains(ag.tools(), "demo.search.type_into")
			}, "tools/list to show the focused search input's tools")
			human.Key("\x1b[Z") // shift+tab: back to the tabs
			testkit.Eventually(t, waitLong, func() bool {
				l := ag.tools()
				return slices.Contains(l, "demo.tabs.select_tab") && !slices.Contains(l, "demo.search.type_into")
			}, "tools/list to follow focus back to the tabs")
			ag.mu.Lock()
			changes := ag.listChg
			ag.mu.Unlock()
			if changes == 0 {
				testkit.Eventually(t, waitLong, func() bool { ag.mu.Lock(); defer ag.mu.Unlock(); return ag.listChg > 0 }, "notifications/tools/list_changed")
			}

			// A subscribed resource receives a patch that turns the old state into the new.
			uri := mcpbridge.StateURI("demo", "services")
			ctx := context.Background()
			if err := ag.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
			before, err := ag.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			human.Key("\t")
			human.Key("\t") // search button
			human.Key("\r")
			var upd *mcp.ResourceUpdatedNotificationParams
			deadline := time.After(waitLong)
			for upd == nil {
				select {
				case <-ag.updateCh:
					ag.mu.Lock()
					for _, u := range ag.updates {
						if u.URI == uri {
							upd = u
						}
					}
					ag.mu.Unlock()
				case <-deadline:
					t.Fatal("no resource update after the human pressed Search")
				}
			}
			raw, _ := json.Marshal(upd.Meta["patch"])
			patch, err := jsonpatch.DecodePatch(raw)
			if err != nil {
				t.Fatalf("patch %s: %v", raw, err)
			}
			applied, err := patch.Apply([]byte(before.Contents[0].Text))
			if err != nil {
				t.Fatalf("apply %s: %v", raw, err)
			}
			after, err := ag.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			if !jsonpatch.Equal(applied, []byte(after.Contents[0].Text)) {
				t.Fatalf("patched state\n%s\n!= read state\n%s", applied, after.Contents[0].Text)
			}
			if !strings.Contains(after.Contents[0].Text, `"filter":"typed-by-human"`) {
				t.Fatalf("state after Search: %s", after.Contents[0].Text)
			}

			// The screenshot tool sees what the human sees.
			shot, err := ag.cs.CallTool(ctx, &mcp.CallToolParams{Name: "raxol_screenshot"})
			if err != nil || !strings.Contains(shot.Content[0].(*mcp.TextContent).Text, "session "+id) {
				t.Fatalf("screenshot: %v %v", err, shot)
			}

			// When the human leaves, the agent's client is closed cleanly.
			human.Key("\x03")
			done := make(chan struct{})
			go func() { _ = ag.cs.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(waitLong):
				t.Fatal("agent not disconnected after the session ended")
			}
		})
	}
}

// TestAgentKeysGoThroughTheTerminal: raxol_send_key (which the demo's
// policy asks the human about) presses keys in the human's terminal, with
// the agent as their origin, once the human approves.
func TestAgentKeysGoThroughTheTerminal(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	human := connect(t, srv.SSHAddr(), clientOpts{})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)
	done := make(chan map[string]any, 1)
	go func() { done <- ag.call("raxol_send_key", map[string]any{"keys": []any{"tab", "h", "i"}}) }()
	human.WaitFor(t, armedPrompt("e2e-agent 0.1 wants to run raxol_send_key"), waitLong)
	human.Type("a") // allow once
	var out map[string]any
	select {
	case out = <-done:
	case <-time.After(waitLong):
		t.Fatal("the approved call did not finish")
	}
	if !strings.Contains(out["screen"].(string), "Search: hi") {
		t.Fatalf("screen after keys: %v", out["screen"])
	}
	human.WaitFor(t, "Search: hi", waitLong)
	if o := se.Dispatcher.Snapshot().Origin.String(); o != "agent:e2e-agent 0.1" {
		t.Fatalf("origin of the agent's keys = %q", o)
	}
	// Even approved, ctrl+c is the human's alone.
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan result, 1)
	go func() {
		res, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "raxol_send_key", Arguments: map[string]any{"keys": []any{"ctrl+c"}}})
		got <- result{res, err}
	}()
	human.WaitFor(t, armedPrompt("wants to run raxol_send_key"), waitLong)
	human.Type("a")
	r := <-got
	if r.err != nil || !r.res.IsError || !strings.Contains(r.res.Content[0].(*mcp.TextContent).Text, "reserved to the human") {
		t.Fatalf("ctrl+c from an agent: %v %v", r.res, r.err)
	}
	if human.Exited() {
		t.Fatal("an agent's ctrl+c ended the human's session")
	}
}
