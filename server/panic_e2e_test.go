package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/mcptest"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// bomb is an app-defined widget that panics in the method named by In.
type bomb struct{ ID, In string }

func (b bomb) boom(hook string) {
	if b.In == hook {
		panic("bomb: " + hook)
	}
}

func (b bomb) Children() []ui.Node { b.boom("children"); return nil }
func (b bomb) WidgetID() string    { b.boom("widget_id"); return b.ID }
func (bomb) Focusable() bool       { return true }
func (b bomb) Render(ui.RenderContext) string {
	b.boom("render")
	return "[bomb]"
}
func (b bomb) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg {
	b.boom("handle_event")
	return nil
}
func (b bomb) Tools() []ui.ToolSpec {
	b.boom("tools")
	return []ui.ToolSpec{
		{Action: "peek", Description: "Return the bomb's state.", ReadOnly: true},
		{Action: "poke", Description: "Poke the bomb."},
	}
}
func (b bomb) CallTool(action string, _ map[string]any) (any, []tea.Msg, error) {
	b.boom("call_tool")
	if action == "poke" {
		return map[string]any{"ok": true}, []tea.Msg{poked{}}, nil
	}
	return map[string]any{"ok": true}, nil, nil
}
func (b bomb) State() any { b.boom("state"); return map[string]any{"id": b.ID} }

type poked struct{}

// bombApp arms its bomb with the hook typed into "arm"; "update", "view"
// and "cmd" arm the model itself.
type bombApp struct {
	Name, Armed string
	Pokes       int
	initPanics  bool
}

func (a bombApp) Init() tea.Cmd {
	if a.initPanics {
		panic("bomb: init")
	}
	return nil
}

func (a bombApp) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if a.Armed == "update" {
		panic("bomb: update")
	}
	switch msg := msg.(type) {
	case ui.TextInputChanged:
		switch msg.ID {
		case "name":
			a.Name = msg.Text
		case "arm":
			a.Armed = msg.Text
		}
	case poked:
		a.Pokes++
	}
	if a.Armed == "cmd" {
		return a, func() tea.Msg { panic("bomb: cmd") }
	}
	return a, nil
}

func (a bombApp) View() ui.Node {
	if a.Armed == "view" {
		panic("bomb: view")
	}
	return ui.Column{Items: []ui.Node{
		ui.TextInput{ID: "name", Label: "Name", Value: a.Name},
		ui.TextInput{ID: "arm", Label: "Arm", Value: a.Armed},
		bomb{ID: "bomb", In: a.Armed},
	}}
}

// bombAgent connects an MCP client to a session over Streamable HTTP.
func bombAgent(t *testing.T, srv *server.Server, se *session.Session) *mcp.ClientSession {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	hc := &http.Client{Transport: testkit.Bearer(tr, se.Token())}
	c := mcp.NewClient(&mcp.Implementation{Name: "bomb-agent", Version: "1"}, nil)
	// The client's standalone GET lives as long as this context, which
	// must end before the server drains (as mcptest does).
	ctx, cancel := context.WithCancel(context.Background())
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: "http://" + srv.HTTPAddr() + "/sessions/" + se.ID + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		tr.CloseIdleConnections()
	})
	return cs
}

func readRes(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return res.Contents[0].Text
}

func wantProviderFailed(t *testing.T, out map[string]any, isErr bool, action string) {
	t.Helper()
	msg, _ := out["message"].(string)
	if !isErr || out["error"] != mcpbridge.ErrKindProviderFailed || !strings.Contains(msg, `"bomb"`) || !strings.Contains(msg, `"`+action+`"`) {
		t.Fatalf("%s: %v (isError %v), want provider_failed naming the widget and the action", action, out, isErr)
	}
}

// TestAppPanicsAreContained arms a widget (or the model, or the factory)
// to panic in one hook of app code, in session A, which has a human's SSH
// terminal and an agent, and checks that the call gets a clear error, the
// terminal keeps drawing, another session B keeps working, and the panic
// is counted in the server's registry and logged once, with its stack.
func TestAppPanicsAreContained(t *testing.T) {
	type env struct {
		srv  *server.Server
		a    *session.Session
		csA  *mcp.ClientSession
		term *testkit.Term
		mode *atomic.Value
	}
	for _, tc := range []struct {
		hook    string
		trigger func(t *testing.T, e env)
	}{
		{metrics.HookCallTool, func(t *testing.T, e env) {
			out, _, isErr := testkit.CallTool(t, e.csA, "bomb.bomb.peek", nil)
			wantProviderFailed(t, out, isErr, "peek")
			out, _, isErr = testkit.CallTool(t, e.csA, "bomb.bomb.poke", nil)
			wantProviderFailed(t, out, isErr, "poke")
			if n := e.a.Dispatcher.Snapshot().Model.(bombApp).Pokes; n != 0 {
				t.Fatalf("a failed poke was folded: %d", n)
			}
		}},
		{metrics.HookTools, func(t *testing.T, e env) {
			out, _, isErr := testkit.CallTool(t, e.csA, "bomb.bomb.peek", nil)
			wantProviderFailed(t, out, isErr, "peek")
			res, err := e.csA.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
				if strings.HasPrefix(tl.Name, "bomb.bomb.") {
					t.Errorf("%s is listed though its Tools panics", tl.Name)
				}
			}
			// The rest of the tree still derives: discover_tools runs it
			// at once.
			found, _, isErr := testkit.CallTool(t, e.csA, mcpbridge.ToolDiscover, nil)
			if isErr {
				t.Fatalf("discover_tools: %v", found)
			}
			for _, d := range found["tools"].([]any) {
				names = append(names, d.(map[string]any)["name"].(string))
			}
			all := strings.Join(names, " ")
			if !strings.Contains(all, "bomb.name.type_into") || strings.Contains(all, "bomb.bomb.") {
				t.Errorf("offered %v: want the other widgets' tools and none of the bomb's", names)
			}
		}},
		{metrics.HookState, func(t *testing.T, e env) {
			out, _, isErr := testkit.CallTool(t, e.csA, "bomb.bomb.peek", nil)
			wantProviderFailed(t, out, isErr, "peek")
			if tree := readRes(t, e.csA, mcpbridge.URITree); !strings.Contains(tree, mcpbridge.ErrKindProviderFailed) || !strings.Contains(tree, `"name"`) {
				t.Fatalf("tree resource: %s", tree)
			}
		}},
		{metrics.HookRender, func(t *testing.T, e env) {
			e.term.WaitFor("⚠ widget bomb failed")
			if out, _, _ := testkit.CallTool(t, e.csA, mcpbridge.ToolScreenshot, nil); !strings.Contains(out["text"].(string), "⚠ widget bomb failed") {
				t.Fatalf("screenshot: %v", out)
			}
		}},
		{metrics.HookChildren, func(t *testing.T, e env) {
			if tree := readRes(t, e.csA, mcpbridge.URITree); !strings.Contains(tree, `"name"`) {
				t.Fatalf("tree resource: %s", tree)
			}
			if out, _, isErr := testkit.CallTool(t, e.csA, "bomb.bomb.peek", nil); isErr {
				t.Fatalf("peek (Children panics, Tools does not): %v", out)
			}
		}},
		{metrics.HookWidgetID, func(t *testing.T, e env) {
			e.term.WaitFor("⚠ widget failed")
			out, _, isErr := testkit.CallTool(t, e.csA, "bomb.bomb.peek", nil)
			if !isErr || out["error"] != mcpbridge.ErrKindWidgetGone {
				t.Fatalf("peek on a widget without an id: %v", out)
			}
		}},
		{metrics.HookHandleEvent, func(t *testing.T, e env) {
			keys := []any{"tab", "tab", "x"} // from name past arm to the bomb
			if out, _, isErr := testkit.CallTool(t, e.csA, mcpbridge.ToolSendKey, map[string]any{"keys": keys}); isErr {
				t.Fatalf("send keys: %v", out)
			}
		}},
		{metrics.HookView, func(*testing.T, env) {}}, // arming panics View
		{metrics.HookCmd, func(*testing.T, env) {}},  // arming returns a panicking command
		{metrics.HookUpdate, func(t *testing.T, e env) { // armed, every Update panics
			if out, _, isErr := testkit.CallTool(t, e.csA, "bomb.name.type_into", map[string]any{"text": "x"}); !isErr || out["error"] != mcpbridge.ErrKindUpdateFailed {
				t.Fatalf("type_into with a panicking Update: %v", out)
			}
		}},
		{metrics.HookProjection, func(t *testing.T, e env) {
			if st := readRes(t, e.csA, mcpbridge.StateURI("bomb", "bomb")); !strings.Contains(st, "projection failed") {
				t.Fatalf("projection: %s", st)
			}
			if ctx := readRes(t, e.csA, mcpbridge.URIContext); !strings.Contains(ctx, "projection failed") {
				t.Fatalf("context: %s", ctx)
			}
		}},
		{metrics.HookInit, func(t *testing.T, e env) {
			e.mode.Store("init")
			se, end, err := e.srv.StartHeadless(session.Owner{User: "third"})
			if err != nil {
				t.Fatalf("a session whose Init panics did not start: %v", err)
			}
			defer end()
			if se.Dispatcher.Snapshot().Tree == nil {
				t.Fatal("no tree")
			}
		}},
		{metrics.HookFactory, func(t *testing.T, e env) {
			e.mode.Store("factory")
			for range 2 {
				if _, _, err := e.srv.StartHeadless(session.Owner{User: "third"}); err == nil || !strings.Contains(err.Error(), "factory") {
					t.Fatalf("StartHeadless with a panicking factory: %v", err)
				}
			}
		}},
	} {
		t.Run(tc.hook, func(t *testing.T) {
			mode := &atomic.Value{}
			mode.Store("")
			m := metrics.New()
			var logs testkit.SyncBuffer
			app := server.App{Name: "bomb",
				New: func(ui.Identity) ui.Model {
					switch mode.Load() {
					case "factory":
						panic("bomb: factory")
					case "init":
						return bombApp{initPanics: true}
					}
					return bombApp{}
				},
				Projections: map[string]func(ui.Model) any{"bomb": func(m ui.Model) any {
					if m.(bombApp).Armed == "projection" {
						panic("bomb: projection")
					}
					return m
				}},
			}
			b := mcptest.Start(t, app, mcptest.WithServerOptions(func(o *server.Options) {
				o.Metrics = m
				o.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testkit.NewLogWriter(t)), nil))
			}))
			srv := b.Server()

			// Session A: a human's terminal and an agent.
			term := testkit.Run(t, srv.SSHAddr(), "")
			term.WaitFor("Arm")
			var a *session.Session
			for _, se := range srv.Sessions().List() {
				if se.ID != b.ID() {
					a = se
				}
			}
			if a == nil {
				t.Fatal("no session for the terminal")
			}
			e := env{srv: srv, a: a, csA: bombAgent(t, srv, a), term: term, mode: mode}
			if tc.hook != metrics.HookInit && tc.hook != metrics.HookFactory {
				// Arm session A (View panics right away for "view").
				if out, _, isErr := testkit.CallTool(t, e.csA, "bomb.arm.type_into", map[string]any{"text": tc.hook}); isErr {
					t.Fatalf("arm: %v", out)
				}
			}
			tc.trigger(t, e)
			if tc.hook != metrics.HookInit { // (each try would be a new session)
				tc.trigger(t, e) // a second time: counted again, logged once
			}

			counter := m.AppPanics.WithLabelValues(tc.hook)
			testkit.Eventually(t, 5*time.Second, func() bool { return testutil.ToFloat64(counter) >= 1 },
				"raxol_app_panics_total{hook=%q} still 0", tc.hook)
			lines := 0
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "app code panicked") && strings.Contains(l, " hook="+tc.hook+" ") {
					lines++
					if !strings.Contains(l, "panic_e2e_test.go") {
						t.Errorf("logged without the stack of the panic: %s", l)
					}
				}
			}
			if lines != 1 {
				t.Errorf("the panic was logged %d times, want once:\n%s", lines, logs.String())
			}

			// Session A lives on: its agent still reads, its terminal draws.
			if _, ok := srv.Sessions().Get(a.ID); !ok {
				t.Fatal("session A ended")
			}
			if _, _, isErr := testkit.CallTool(t, e.csA, mcpbridge.ToolScreenshot, nil); isErr {
				t.Fatal("screenshot of A failed")
			}
			if !strings.Contains(term.Screen(), "Name") {
				t.Fatalf("A's terminal:\n%s", term.Screen())
			}
			// Session B works as before.
			b.TypeInto("name", "still-"+tc.hook).AssertScreen("still-" + tc.hook)
		})
	}
}
