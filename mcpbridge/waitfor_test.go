package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// refreshAfter is when the later app's timer draws its status line.
const refreshAfter = 2500 * time.Millisecond

// later is an app whose status line a timer started by Init draws
// later, as an app that loads its data does.
type later struct {
	Status string
	Name   string
}

type refreshed struct{}

func (l later) Init() tea.Cmd {
	return tea.Tick(refreshAfter, func(time.Time) tea.Msg { return refreshed{} })
}

func (l later) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case refreshed:
		l.Status = "data refreshed at 42"
	case ui.TextInputChanged:
		l.Name = msg.Text
	}
	return l, nil
}

func (l later) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.Text{Text: "status: " + l.Status},
		ui.TextInput{ID: "name", Label: "Name", Value: l.Name},
	}}
}

// appEnv is newEnv serving app m with policy p (nil: everything
// allowed).
func appEnv(t *testing.T, m ui.Model, p *authz.Policy) *env {
	t.Helper()
	if _, in := bubbles.Load(t); in {
		// Last: a timer the app's Init started runs out, on the bubble's
		// clock, so that the bubble ends with no goroutine blocked.
		t.Cleanup(func() { time.Sleep(refreshAfter) })
	}
	e := &env{t: t, metrics: metrics.New()}
	e.mgr = session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
	o := mcpbridge.Options{Namespace: "app", Metrics: e.metrics, ToolCallsPerSecond: 1e9, ToolCallBurst: 1e9}
	if p != nil {
		o.Policy = *p
	}
	e.bridge = newTestBridge(t, e.mgr, o)
	e.http = serveHTTP(t, e.bridge)
	t.Cleanup(func() { e.bridge.Close(); e.http.Close(); e.mgr.Close() })
	s, ok, err := e.mgr.Start("app", session.Owner{User: "u"}, m, 0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	e.session = s
	return e
}

// callWait calls raxol_wait_for with ctx, which, unlike testkit.CallTool's
// 10 s, outlasts the longest wait.
func callWait(t *testing.T, ctx context.Context, cs *mcp.ClientSession, args map[string]any) (map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolWaitFor, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", mcpbridge.ToolWaitFor, err)
	}
	var out map[string]any
	text := res.Content[0].(*mcp.TextContent).Text
	if json.Unmarshal([]byte(text), &out) != nil {
		out = map[string]any{"text": text}
	}
	return out, res.IsError
}

// TestWaitForWakesWhenTheTextIsDrawn: raxol_wait_for answers the moment a
// timer of the app draws the text, not at the next fallback look: on the
// bubble's clock no time passes between the timer and the answer.
func TestWaitForWakesWhenTheTextIsDrawn(t *testing.T) {
	for _, args := range []map[string]any{
		{"text": "data refreshed", "timeout_ms": 10000},
		{"regex": `(?m)^status: data refreshed at \d+$`, "timeout_ms": 10000},
	} {
		t.Run(fmt.Sprint(args), func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				start := time.Now()
				e := appEnv(t, later{}, nil)
				cs, _ := e.connect(false)
				if out, _ := call(t, cs, mcpbridge.ToolScreenshot, nil); strings.Contains(out["text"].(string), "refreshed") {
					t.Fatalf("the status is drawn before its timer: %v", out)
				}
				out, isErr := callWait(t, context.Background(), cs, args)
				if isErr || out["matched"] != true || !strings.Contains(out["screen"].(string), "status: data refreshed at 42") {
					t.Fatalf("wait_for = %v", out)
				}
				if took := time.Since(start); took != refreshAfter {
					t.Fatalf("answered %v after the start, want %v: the moment the timer drew the text", took, refreshAfter)
				}
				if ms := out["waited_ms"].(float64); ms <= 0 || ms > float64(refreshAfter.Milliseconds()) {
					t.Fatalf("waited_ms = %v", ms)
				}
			})
		})
	}
}

// TestWaitForAnswersAtOnceWhenTheScreenMatches: the screen is checked
// before any wait, also with a timeout of 0.
func TestWaitForAnswersAtOnceWhenTheScreenMatches(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := appEnv(t, later{}, nil)
		cs, _ := e.connect(false)
		for _, args := range []map[string]any{{"text": "Name"}, {"regex": "stat.s:", "timeout_ms": 0}} {
			start := time.Now()
			out, isErr := callWait(t, context.Background(), cs, args)
			if isErr || out["matched"] != true || out["waited_ms"] != float64(0) || time.Since(start) != 0 {
				t.Fatalf("wait_for %v = %v after %v", args, out, time.Since(start))
			}
		}
	})
}

// TestWaitForTimesOutCleanly: text that never comes ends the wait at its
// timeout with a result that is not an error, matched false and the
// screen as it is then.
func TestWaitForTimesOutCleanly(t *testing.T) {
	for _, tc := range []struct {
		args map[string]any
		want time.Duration
	}{
		{map[string]any{"text": "never drawn", "timeout_ms": 30000}, 30 * time.Second},
		{map[string]any{"regex": `refreshed at 43`}, 5 * time.Second}, // the default
		{map[string]any{"text": "never drawn", "timeout_ms": 0}, 0},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				e := appEnv(t, later{}, nil)
				cs, _ := e.connect(false)
				start := time.Now()
				out, isErr := callWait(t, context.Background(), cs, tc.args)
				if isErr || out["matched"] != false || !strings.Contains(out["screen"].(string), "status:") {
					t.Fatalf("wait_for = %v, %v", out, isErr)
				}
				if took := time.Since(start); took != tc.want || out["waited_ms"] != float64(tc.want.Milliseconds()) {
					t.Fatalf("answered after %v (waited_ms %v), want %v", took, out["waited_ms"], tc.want)
				}
				if tc.want > refreshAfter && !strings.Contains(out["screen"].(string), "refreshed at 42") {
					t.Fatalf("the screen answered is not the one at the timeout: %v", out["screen"])
				}
			})
		})
	}
}

// TestWaitForEndsWhenTheCallDoes: a wait whose call is cancelled, or
// whose HTTP request breaks, ends at once (not at its timeout), gives its slot
// back and leaves no goroutine behind.
func TestWaitForEndsWhenTheCallDoes(t *testing.T) {
	for _, how := range []string{"cancel", "disconnect"} {
		t.Run(how, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				e := appEnv(t, later{}, nil)
				cs, _ := e.connect(false)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				type answer struct {
					res *mcp.CallToolResult
					err error
				}
				done := make(chan answer, 1)
				go func() {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolWaitFor,
						Arguments: map[string]any{"text": "never drawn", "timeout_ms": 30000}})
					done <- answer{res, err}
				}()
				synctest.Wait()
				if n := mcpbridge.Waiting(e.bridge, e.session.ID); n != 1 {
					t.Fatalf("%d waits in progress, want 1", n)
				}
				start := time.Now()
				if how == "cancel" {
					cancel()
				} else {
					e.http.CloseClientConnections() // the POST it came in on breaks
				}
				// A cancelled call gets no answer; a client that leaves may
				// still read the one its wait gave as it ended.
				if a := <-done; a.err == nil && (how == "cancel" || !a.res.IsError || !strings.Contains(a.res.Content[0].(*mcp.TextContent).Text, "cancelled")) {
					t.Fatalf("the call went away, yet it was answered %+v", a.res)
				}
				testkit.Eventually(t, time.Second, func() bool { return mcpbridge.Waiting(e.bridge, e.session.ID) == 0 },
					"the wait to end after its call went away")
				if took := time.Since(start); took >= time.Second {
					t.Fatalf("the wait ended %v after its call went away", took)
				}
				synctest.Wait()
				if n := testkit.Goroutines(t, "mcpbridge.(*sessionServer).waitScreen"); n != 0 {
					t.Fatalf("%d waits still running", n)
				}
			})
		})
	}
}

// TestWaitForIsBoundedPerClient: a client has at most MaxWaitsPerClient
// waits at once; one more is refused, another client's is not.
func TestWaitForIsBoundedPerClient(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := appEnv(t, later{}, nil)
		cs, _ := e.connect(false)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{}, mcpbridge.MaxWaitsPerClient)
		for range mcpbridge.MaxWaitsPerClient {
			go func() {
				_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolWaitFor,
					Arguments: map[string]any{"text": "never drawn", "timeout_ms": 30000}})
				done <- struct{}{}
			}()
		}
		synctest.Wait()
		out, isErr := callWait(t, context.Background(), cs, map[string]any{"text": "never drawn", "timeout_ms": 0})
		if !isErr || out["error"] != mcpbridge.ErrKindRateLimited {
			t.Fatalf("one wait too many: %v", out)
		}
		other, _ := e.connect(false)
		if out, isErr := callWait(t, context.Background(), other, map[string]any{"text": "Name", "timeout_ms": 0}); isErr || out["matched"] != true {
			t.Fatalf("another client's wait: %v", out)
		}
		cancel()
		for range mcpbridge.MaxWaitsPerClient {
			<-done
		}
		testkit.Eventually(t, time.Second, func() bool { return mcpbridge.Waiting(e.bridge, e.session.ID) == 0 }, "the waits to end")
		if out, isErr := callWait(t, context.Background(), cs, map[string]any{"text": "Name", "timeout_ms": 0}); isErr || out["matched"] != true {
			t.Fatalf("a wait after the others ended: %v", out)
		}
	})
}

// TestWaitForRefusesBadArguments: each malformed call is an
// invalid_arguments tool error, answered at once.
func TestWaitForRefusesBadArguments(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := appEnv(t, later{}, nil)
		cs, _ := e.connect(false)
		for _, args := range []map[string]any{
			nil,
			{"timeout_ms": 100},
			{"text": "a", "regex": "a"},
			{"text": ""},
			{"regex": ""},
			{"text": 5},
			{"regex": "("},
			{"regex": `\p{Nonsense}`},
			{"text": strings.Repeat("x", 1025)},
			{"regex": strings.Repeat("x", 1025)},
			{"text": "a", "timeout_ms": -1},
			{"text": "a", "timeout_ms": 30001},
			{"text": "a", "timeout_ms": 1.5},
			{"text": "a", "timeout_ms": "100"},
			{"text": "a", "timeout": 100},
		} {
			out, isErr := call(t, cs, mcpbridge.ToolWaitFor, args)
			if !isErr || out["error"] != mcpbridge.ErrKindInvalidArgs || out["message"] == "" {
				t.Errorf("wait_for %v = %v, want invalid_arguments", args, out)
			}
		}
	})
}

// TestWaitForIsReadLikeTheScreenshot: a client that may not read the
// screen is not offered raxol_wait_for and gets the same denial as for
// raxol_screenshot, with nothing of the screen in it, and without waiting;
// the tool is annotated read-only.
func TestWaitForIsReadLikeTheScreenshot(t *testing.T) {
	bubble(t, func(t *testing.T) {
		noScreen := func(method string, args map[string]any, _ authz.Context) authz.Decision {
			if method == "resources/read" && args["uri"] == mcpbridge.URIScreen {
				return authz.Deny("not the screen")
			}
			return authz.Allow()
		}
		p := configured(authz.AllowAll(), noScreen)
		e := appEnv(t, later{Name: "secret-name"}, &p)
		cs, _ := e.connect(false)
		for _, n := range listNames(t, cs) {
			if n == mcpbridge.ToolWaitFor || n == mcpbridge.ToolScreenshot {
				t.Fatalf("%s listed to a client that may not read the screen", n)
			}
		}
		shot, _, shotErr := testkit.CallTool(t, cs, mcpbridge.ToolScreenshot, nil)
		start := time.Now()
		out, text, isErr := testkit.CallTool(t, cs, mcpbridge.ToolWaitFor, map[string]any{"text": "never drawn", "timeout_ms": 30000})
		if !isErr || !shotErr || out["error"] != shot["error"] || out["error"] != "authorization_required" || out["reason"] != shot["reason"] {
			t.Fatalf("wait_for = %s, screenshot = %v: want the same denial", text, shot)
		}
		if strings.Contains(text, "secret-name") || time.Since(start) > 5*time.Second {
			t.Fatalf("the denial waited or carries the screen: %s", text)
		}

		open := appEnv(t, later{}, nil)
		ocs, _ := open.connect(false)
		res, err := ocs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == mcpbridge.ToolWaitFor {
				if a := tl.Annotations; a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
					t.Fatalf("annotations %+v", a)
				}
				return
			}
		}
		t.Fatal("raxol_wait_for is not listed")
	})
}

// typed is a hosted program's whole screen: the keys it got, drawn as
// one line. It implements ui.Hosted, as package teaapp's root does.
type typed struct{ Keys []string }

func (typed) Children() []ui.Node { return nil }
func (typed) WidgetID() string    { return "program" }
func (typed) Focusable() bool     { return false }
func (typed) Focused() string     { return "" }
func (t typed) Render(ui.RenderContext) string {
	return "typed: " + strings.Join(t.Keys, " ")
}
func (typed) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg { return nil }

var _ ui.Hosted = typed{}

// program is an app whose tree is a hosted program: its Update gets
// every key, as a Bubble Tea program does.
type program struct{ Keys []string }

func (p program) Init() tea.Cmd { return nil }

func (p program) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		p.Keys = append(append([]string(nil), p.Keys...), k.String())
	}
	return p, nil
}

func (p program) View() ui.Node { return typed(p) }

// TestSendKeyReachesAHostedProgramWithoutATerminal: with no terminal
// attached, raxol_send_key gives a hosted program its keys (text first,
// then keys) in one fold with the agent as their origin, and answers
// with the screen they made; ctrl+c stays the human's. An app that is
// not a hosted program still has no terminal to press keys in.
func TestSendKeyReachesAHostedProgramWithoutATerminal(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := appEnv(t, program{}, nil)
		cs, _ := e.connect(false)
		before := e.session.Dispatcher.Snapshot().Version
		out, isErr := call(t, cs, mcpbridge.ToolSendKey, map[string]any{"text": "hé y", "keys": []any{"enter", "tab", "ctrl+o"}})
		if isErr || out["pressed"] != float64(7) {
			t.Fatalf("send_key = %v", out)
		}
		snap := e.session.Dispatcher.Snapshot()
		want := []string{"h", "é", "space", "y", "enter", "tab", "ctrl+o"}
		if got := snap.Model.(program).Keys; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("the program got %q, want %q", got, want)
		}
		if snap.Version != before+1 || snap.Origin.Kind != "agent" || snap.Origin.Name != "test-agent 1.0" {
			t.Fatalf("snapshot %d (from %d) by %v: want one fold by the agent", snap.Version, before, snap.Origin)
		}
		if !strings.Contains(out["screen"].(string), "typed: h é space y enter tab ctrl+o") {
			t.Fatalf("the answer's screen %q", out["screen"])
		}
		if a, _, ok := e.session.LastAgentAction(); !ok || a.Action != "keys" || a.Outcome != "ok" || a.Origin != "agent:test-agent 1.0" {
			t.Fatalf("the activity log's last agent action is %+v, want the keys", a)
		}
		out, isErr = call(t, cs, mcpbridge.ToolSendKey, map[string]any{"keys": []any{"a", "ctrl+c"}})
		if !isErr || out["error"] != mcpbridge.ErrKindInvalidArgs || !strings.Contains(out["message"].(string), "reserved") {
			t.Fatalf("ctrl+c: %v", out)
		}
		if got := e.session.Dispatcher.Snapshot().Model.(program).Keys; len(got) != len(want) {
			t.Fatalf("a refused call delivered keys: %q", got)
		}

		plain := appEnv(t, later{}, nil)
		pcs, _ := plain.connect(false)
		if out, isErr := call(t, pcs, mcpbridge.ToolSendKey, map[string]any{"text": "x"}); !isErr || out["error"] != mcpbridge.ErrKindNoTerminal {
			t.Fatalf("send_key with neither terminal nor hosted program: %v", out)
		}
	})
}

// TestSendKeyRefusesBadText: text and keys are checked before anything
// is pressed: control characters (newline, tab, ESC and the rest), an
// empty call, too much text, unknown keys.
func TestSendKeyRefusesBadText(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := appEnv(t, program{}, nil)
		cs, _ := e.connect(false)
		for _, args := range []map[string]any{
			nil,
			{"text": ""},
			{"keys": []any{}},
			{"text": "a\nb"},
			{"text": "tab\there"},
			{"text": "\x1b[31mred"},
			{"text": "del\x7f"},
			{"text": "c1\u009b"},
			{"text": strings.Repeat("x", 4097)},
			{"text": 7},
			{"keys": []any{"enter", "hyper+x"}},
			{"keys": make([]any, 65)},
			{"text": "a", "key": []any{"enter"}},
		} {
			out, isErr := call(t, cs, mcpbridge.ToolSendKey, args)
			if !isErr || out["error"] != mcpbridge.ErrKindInvalidArgs {
				t.Errorf("send_key %q = %v, want invalid_arguments", args, out)
			}
		}
		if got := e.session.Dispatcher.Snapshot().Model.(program).Keys; len(got) != 0 {
			t.Fatalf("refused calls delivered keys: %q", got)
		}
		if out, isErr := call(t, cs, mcpbridge.ToolSendKey, map[string]any{"text": strings.Repeat("é", 4096)}); isErr || out["pressed"] != float64(4096) {
			t.Fatalf("the longest text: %v", out)
		}
	})
}
