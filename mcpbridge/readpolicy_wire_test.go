package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// The read policy over the real wire: a real server (SSH and HTTP on
// loopback), a human's SSH terminal with a PTY, go-sdk clients over
// Streamable HTTP and SSE.

// secret is what the human has on the screen and in the model, and no
// client without the right to read it may receive.
const secret = "PRIVATE-NOTE-4711"

// realServer starts app with opts on loopback ports, a human's terminal
// on it, and returns the server, the terminal and the terminal's session.
func realServer(t *testing.T, app server.App, mcpOpts server.MCPOptions, ready string) (*server.Server, *testkit.Term, *session.Session) {
	t.Helper()
	t.Cleanup(func() {
		// After the server's shutdown (cleanups run last first): the
		// terminal programs' pending ticks end when they fire, and the
		// package's leak check must not find them.
		testkit.Eventually(t, 20*time.Second, func() bool { return testkit.Goroutines(t, "charm.land/bubbletea/v2.") == 0 },
			"the terminal programs' goroutines to end")
	})
	mcpOpts.Addr = "127.0.0.1:0"
	mcpOpts.ToolCallsPerSecond, mcpOpts.ToolCallBurst = 1e6, 1e6
	opts := server.Options{DataDir: t.TempDir(), MCP: mcpOpts,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	opts.SSH.Addr = "127.0.0.1:0"
	opts.SSH.ResumeGrace = -1
	srv, err := server.New(app, opts)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	term := testkit.Run(t, srv.SSHAddr(), "")
	term.WaitFor(ready)
	list := srv.LiveSessions()
	if len(list) != 1 {
		t.Fatalf("%d sessions for one terminal", len(list))
	}
	return srv, term, list[0]
}

// wireAgent is a go-sdk client of a session of a real server.
type wireAgent struct {
	t       *testing.T
	cs      *mcp.ClientSession
	mu      sync.Mutex
	updates []string // each resource update's params as JSON
}

func connectAgent(t *testing.T, srv *server.Server, se *session.Session, sse bool) *wireAgent {
	t.Helper()
	a := &wireAgent{t: t}
	c := mcp.NewClient(&mcp.Implementation{Name: "policy-agent", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			b, _ := json.Marshal(r.Params)
			a.mu.Lock()
			a.updates = append(a.updates, string(b))
			a.mu.Unlock()
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
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	a.cs = cs
	return a
}

// call returns a tool's answer as text and decoded (nil when not JSON).
func (a *wireAgent) call(name string, args map[string]any) (string, map[string]any, bool) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("call %s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var out map[string]any
	_ = json.Unmarshal([]byte(text), &out)
	return text, out, res.IsError
}

// read returns a resource's text, or the error.
func (a *wireAgent) read(uri string) (string, error) {
	a.t.Helper()
	res, err := a.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	return res.Contents[0].Text, nil
}

func (a *wireAgent) received() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.updates, "\n")
}

func withheldPart(out map[string]any, part string) bool {
	w, _ := out["withheld"].(map[string]any)
	s, _ := w[part].(string)
	return strings.Contains(s, "read policy")
}

// TestSendKeyAnswersOnlyWhatTheReadPolicyAllows is issue 24's example:
// with raxol_send_key and raxol_screenshot allowed and only tools/list
// readable, the screen is refused as a resource and as a screenshot, and
// raxol_send_key presses the key but its answer does not carry the
// screen. With resources/read allowed it does.
func TestSendKeyAnswersOnlyWhatTheReadPolicyAllows(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reads []string
		see   bool
	}{
		{"tools/list only", []string{"tools/list"}, false},
		{"reads allowed", []string{"tools/list", "resources/read"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := server.App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, Projections: demo.Projections(),
				ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy()}
			srv, term, se := realServer(t, app, server.MCPOptions{
				AllowedTools: []string{"raxol_send_key", "raxol_screenshot"},
				AllowedReads: tc.reads,
			}, "Services (")
			term.Type("\t" + secret) // the search field, as in the issue
			term.WaitFor("Search: " + secret)
			for _, sse := range []bool{false, true} {
				a := connectAgent(t, srv, se, sse)
				text, err := a.read(mcpbridge.URIScreen)
				if tc.see != (err == nil) || (err != nil && !isReadDenied(err)) {
					t.Fatalf("sse=%v: read the screen: %v", sse, err)
				}
				if tc.see && !strings.Contains(text, secret) {
					t.Fatalf("sse=%v: the readable screen lacks the note:\n%s", sse, text)
				}
				text, _, isErr := a.call(mcpbridge.ToolScreenshot, nil)
				if tc.see == isErr || (!tc.see && !strings.Contains(text, "authorization_required")) {
					t.Fatalf("sse=%v: raxol_screenshot: %s", sse, text)
				}
				text, out, isErr := a.call(mcpbridge.ToolSendKey, map[string]any{"keys": []any{"end"}})
				if isErr || out["pressed"] != float64(1) {
					t.Fatalf("sse=%v: raxol_send_key did not press the key: %s", sse, text)
				}
				switch {
				case !tc.see && strings.Contains(text, secret):
					t.Fatalf("sse=%v: raxol_send_key's answer carries the screen the read policy hides: %s", sse, text)
				case !tc.see && (out["screen"] != nil || !withheldPart(out, "screen")):
					t.Fatalf("sse=%v: raxol_send_key's answer does not say the screen was withheld: %s", sse, text)
				case tc.see && !strings.Contains(text, "Search: "+secret):
					t.Fatalf("sse=%v: raxol_send_key's answer lacks the readable screen: %s", sse, text)
				}
			}
		})
	}
}

// noteApp holds the secret in every kind of place an agent can be
// answered from: a text input's value, a select list's options, a custom
// widget whose error describes its state, a model projection, the screen.
type noteApp struct {
	Note    string
	Scratch string
	Pick    int
	Agree   bool
	Presses int
}

type notePressed struct{}

func (a noteApp) Init() tea.Cmd { return nil }

func (a noteApp) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ui.TextInputChanged:
		if msg.ID == "note" {
			a.Note = msg.Text
		} else {
			a.Scratch = msg.Text
		}
	case ui.OptionSelected:
		a.Pick = msg.Index
	case ui.CheckboxToggled:
		a.Agree = msg.Checked
	case notePressed:
		a.Presses++
	}
	return a, nil
}

func (a noteApp) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.TextInput{ID: "note", Label: "Note", Value: a.Note},
		ui.TextInput{ID: "scratch", Label: "Scratch", Value: a.Scratch},
		ui.SelectList{ID: "pick", Label: "Pick", Options: []string{"plain", a.Note + "-option"}, Selected: a.Pick},
		ui.Checkbox{ID: "agree", Label: "Agree", Checked: a.Agree},
		ui.Button{ID: "go", Label: "Go", OnClick: notePressed{}},
		safe{ID: "safe", Note: a.Note},
	}}
}

// safe is an app's widget whose error describes its state, as a widget's
// validation errors may ("unknown item: the items are ...").
type safe struct {
	ID   string
	Note string
}

func (safe) Children() []ui.Node                            { return nil }
func (s safe) WidgetID() string                             { return s.ID }
func (safe) Focusable() bool                                { return false }
func (safe) Render(ui.RenderContext) string                 { return "[safe]" }
func (safe) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg { return nil }
func (s safe) State() any                                   { return map[string]any{"id": s.ID, "locked": true} }
func (safe) Tools() []ui.ToolSpec {
	return []ui.ToolSpec{{Action: "open", Description: "Open the safe with a code.", InputSchema: ui.ObjectSchema(map[string]any{
		"code": ui.Prop("string", "The code."),
	}, "code")}}
}
func (s safe) CallTool(_ string, args map[string]any) (any, []tea.Msg, error) {
	return nil, nil, errors.New("wrong code " + args["code"].(string) + ": the safe holds " + s.Note)
}

func noteServerApp() server.App {
	return server.App{
		Name: "notes",
		New:  func(ui.Identity) ui.Model { return noteApp{Note: secret} },
		Projections: map[string]func(ui.Model) any{
			"notes": func(m ui.Model) any { return map[string]any{"note": m.(noteApp).Note} },
		},
	}
}

// noteCalls are the tool calls TestNoAnswerCarriesWhatTheReadPolicyHides
// makes, each with the read that governs its answer: every session tool,
// and widget reads, writes and a refused call.
var noteCalls = []struct {
	tool string
	args map[string]any
	read string // the URI or read method whose content the answer carries
	part string // the part of the answer withheld without it ("" for an error's text)
}{
	{mcpbridge.ToolSendKey, map[string]any{"keys": []any{"end"}}, mcpbridge.URIScreen, "screen"},
	{mcpbridge.ToolDiscover, map[string]any{"query": "notes"}, "tools/list", "tools"},
	{"notes.note.get_value", nil, mcpbridge.URITree, "result"},
	{"notes.pick.get_options", nil, mcpbridge.URITree, "result"},
	{"notes.pick.select", map[string]any{"index": 1}, mcpbridge.URITree, "state"},
	{"notes.scratch.type_into", map[string]any{"text": "typed by the agent"}, mcpbridge.URITree, "state"},
	{"notes.agree.toggle", nil, mcpbridge.URITree, "state"},
	{"notes.go.click", nil, mcpbridge.URITree, "result"},
	{"notes.safe.open", map[string]any{"code": "1234"}, mcpbridge.URITree, ""},
}

var noteResources = []string{mcpbridge.URITree, mcpbridge.URIScreen, mcpbridge.URIContext, mcpbridge.URIActivity, mcpbridge.StateURI("notes", "notes")}

// TestNoAnswerCarriesWhatTheReadPolicyHides: under a read policy that
// allows only tools/list, no tool answer, resource, subscription or
// update carries the note (on the screen, in the tree and in the model);
// under one that allows every read, each of them does.
func TestNoAnswerCarriesWhatTheReadPolicyHides(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reads []string
	}{
		{"tools/list only", []string{"tools/list"}},
		{"every read", authz.ReadMethods()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			see := len(tc.reads) > 1
			allowed := func(read string) bool {
				if strings.Contains(read, "://") {
					read = "resources/read"
				}
				return slices.Contains(tc.reads, read)
			}
			srv, term, se := realServer(t, noteServerApp(), server.MCPOptions{AllowedTools: []string{"**"}, AllowedReads: tc.reads}, secret)
			for _, sse := range []bool{false, true} {
				a := connectAgent(t, srv, se, sse)
				for _, c := range noteCalls {
					text, out, isErr := a.call(c.tool, c.args)
					if c.part == "" {
						if !isErr || out["error"] != mcpbridge.ErrKindToolError {
							t.Fatalf("sse=%v %s: %s, want a tool error", sse, c.tool, text)
						}
					} else if isErr {
						t.Fatalf("sse=%v %s: %s", sse, c.tool, text)
					}
					if !see && strings.Contains(text, secret) {
						t.Errorf("sse=%v %s: the answer carries the note: %s", sse, c.tool, text)
					}
					if allowed(c.read) {
						if c.part != "" && (out[c.part] == nil || out["withheld"] != nil) {
							t.Errorf("sse=%v %s: the answer lacks its readable %q: %s", sse, c.tool, c.part, text)
						}
						continue
					}
					if c.part != "" && (out[c.part] != nil || !withheldPart(out, c.part)) {
						t.Errorf("sse=%v %s: the answer does not say %q was withheld: %s", sse, c.tool, c.part, text)
					}
				}
				if see {
					// What the answers carry when readable: the screen, the
					// list's options, the safe's error.
					for _, c := range []struct {
						tool string
						args map[string]any
					}{{mcpbridge.ToolSendKey, map[string]any{"keys": []any{"end"}}}, {"notes.pick.get_options", nil}, {"notes.safe.open", map[string]any{"code": "1"}}} {
						if text, _, _ := a.call(c.tool, c.args); !strings.Contains(text, secret) {
							t.Errorf("sse=%v %s: a client that may read lacks the note: %s", sse, c.tool, text)
						}
					}
				}

				for _, uri := range noteResources {
					text, err := a.read(uri)
					switch {
					case see && err != nil:
						t.Errorf("sse=%v read %s: %v", sse, uri, err)
					case see && uri != mcpbridge.URIActivity && !strings.Contains(text, secret):
						t.Errorf("sse=%v read %s lacks the note: %s", sse, uri, text)
					case !see && !isReadDenied(err):
						t.Errorf("sse=%v read %s: %v, want -32090", sse, uri, err)
					}
					err = a.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri})
					if see != (err == nil) || (err != nil && !isReadDenied(err)) {
						t.Errorf("sse=%v subscribe %s: %v", sse, uri, err)
					}
				}
			}
			// The human changes the note: subscribers that may read get
			// patches carrying it, the others nothing.
			readers := connectAgent(t, srv, se, false)
			for _, uri := range noteResources {
				_ = readers.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri})
			}
			term.Type("-" + strings.ToLower(secret))
			term.WaitFor(secret + "-" + strings.ToLower(secret))
			if see {
				testkit.Eventually(t, 10*time.Second, func() bool {
					got := readers.received()
					return strings.Contains(got, mcpbridge.URITree) && strings.Contains(got, mcpbridge.URIScreen) &&
						strings.Contains(got, mcpbridge.URIContext) && strings.Contains(got, "notes://state/notes") &&
						strings.Contains(got, strings.ToLower(secret))
				}, "no patches carrying the note reached a client that may read: %s", readers.received())
				return
			}
			// A client that may read would have had its patches by now.
			// Stays a sleep: a negative check, and no client on this
			// server may read, so none can show the patches went out.
			time.Sleep(time.Second)
			if got := readers.received(); got != "" {
				t.Fatalf("resource updates reached a client that may not read: %s", got)
			}
		})
	}
}
