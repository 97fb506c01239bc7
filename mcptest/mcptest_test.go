package mcptest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/mcptest"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Teardown must leave nothing running: server, session, client and HTTP
// connections all end with the test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counter is the tiny app under test: a button that adds the step (twice
// when "double" is checked), a label input, a step list, a PIN field, a
// reset button enabled only when the count is not zero, and a slow button
// whose Update waits until the test lets it go (slowGate).
type counter struct {
	N      int
	Label  string
	Double bool
	Step   int
	PIN    string
}

var steps = []int{1, 2, 5}

// slowGate holds the slow button's Update (up to 5s): a test receives
// from it to let the Update finish, which also tells it the Update was
// running.
var slowGate = make(chan struct{})

type (
	inc   struct{}
	reset struct{}
	slow  struct{}
)

func (c counter) Init() tea.Cmd { return nil }

func (c counter) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ui.TextInputChanged:
		c.Label = msg.Text
	case ui.CheckboxToggled:
		c.Double = msg.Checked
	case ui.OptionSelected:
		c.Step = msg.Index
	case ui.PasswordFieldChanged:
		c.PIN = msg.Text
	case inc:
		d := steps[c.Step]
		if c.Double {
			d *= 2
		}
		c.N += d
	case reset:
		c.N = 0
	case slow:
		select {
		case slowGate <- struct{}{}:
		case <-time.After(5 * time.Second): // nobody let it go: a call that did not time out
		}
	}
	return c, nil
}

func (c counter) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.Text{Text: fmt.Sprintf("count: %d %s", c.N, c.Label)},
		ui.TextInput{ID: "label", Label: "Label", Value: c.Label},
		ui.Checkbox{ID: "double", Label: "Double", Checked: c.Double},
		ui.SelectList{ID: "step", Label: "Step", Options: []string{"1", "2", "5"}, Selected: c.Step},
		ui.PasswordField{ID: "pin", Label: "PIN", Value: c.PIN},
		ui.Row{Gap: 1, Items: []ui.Node{
			ui.Button{ID: "inc", Label: "+", OnClick: inc{}},
			ui.Button{ID: "reset", Label: "Reset", OnClick: reset{}, Disabled: c.N == 0},
			ui.Button{ID: "slow", Label: "Slow", OnClick: slow{}},
		}},
	}}
}

func app() server.App {
	return server.App{
		Name: "counter",
		New:  func(ui.Identity) ui.Model { return counter{} },
		Projections: map[string]func(ui.Model) any{
			"count": func(m ui.Model) any { return map[string]any{"n": m.(counter).N} },
		},
	}
}

func count(n int) func(ui.Model) bool {
	return func(m ui.Model) bool { return m.(counter).N == n }
}

func TestDriveBothTransports(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []mcptest.Option
		suffix string
	}{
		{"streamable", nil, "/mcp"},
		{"sse", []mcptest.Option{mcptest.WithSSE()}, "/sse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mcptest.Start(t, app(), append(tc.opts, mcptest.WithClientName("counter-agent"))...)
			if s.ID() == "" || s.Server() == nil || s.Client() == nil {
				t.Fatalf("ID %q, Server %v, Client %v", s.ID(), s.Server(), s.Client())
			}
			if !strings.HasSuffix(s.Endpoint(), "/sessions/"+s.ID()+tc.suffix) {
				t.Fatalf("endpoint %s", s.Endpoint())
			}
			se, ok := s.Server().Session(s.ID())
			if !ok {
				t.Fatal("the session is not registered with the server")
			}
			if ag := se.Agents(); len(ag) != 1 || ag[0].Name != "counter-agent test" {
				t.Fatalf("agents %+v", ag)
			}

			s.AssertToolAvailable(mcpbridge.ToolScreenshot).
				AssertToolAvailable(mcpbridge.ToolDiscover).
				AssertToolAvailable("counter.inc.click").
				RefuteToolAvailable("counter.reset.click"). // disabled at 0
				RefuteToolAvailable("counter.ghost.click").
				TypeInto("label", "apples").
				AssertComponent("label", func(st map[string]any) bool { return st["value"] == "apples" }).
				AssertModel(func(m ui.Model) bool { return m.(counter).Label == "apples" })

			// Result is the last call's {"result", "state"}.
			res := s.Result()
			if res["result"].(map[string]any)["ok"] != true || res["state"].(map[string]any)["value"] != "apples" {
				t.Fatalf("Result() = %v", res)
			}
			// The change came from this agent, through the dispatcher.
			if o := se.Dispatcher.Snapshot().Origin; o != (dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "counter-agent test"}) {
				t.Fatalf("origin %v", o)
			}

			s.Clear("label").
				AssertComponent("label", func(st map[string]any) bool { return st["value"] == "" }).
				Click("inc").
				AssertModel(count(1)).
				AssertScreen("count: 1").
				Toggle("double").
				AssertComponent("double", func(st map[string]any) bool { return st["checked"] == true }).
				Select("step", 2).
				AssertComponent("step", func(st map[string]any) bool { return st["selected"] == float64(2) }).
				Click("inc").
				AssertModel(count(11)).
				AssertToolAvailable("counter.reset.click").
				CallTool("counter.label.get_value", nil)
			if v := s.Result()["result"].(map[string]any)["value"]; v != "" {
				t.Fatalf("get_value = %v", v)
			}

			// Raw calls do not fail the test.
			out, isErr := s.Call("counter.ghost.click", nil)
			if !isErr || out["error"] != mcpbridge.ErrKindWidgetGone {
				t.Fatalf("Call(ghost) = %v, %v", out, isErr)
			}
			if s.Result()["error"] != mcpbridge.ErrKindWidgetGone {
				t.Fatalf("Result() after a raw call = %v", s.Result())
			}
			out, isErr = s.Call(mcpbridge.ToolScreenshot, nil)
			if isErr || !strings.Contains(out["text"].(string), "count: 11") || s.Screen() != out["text"] {
				t.Fatalf("screenshot %v, %v", out, isErr)
			}
			out, isErr = s.Call("counter.inc.click", map[string]any{"extra": 1})
			if !isErr || out["error"] != mcpbridge.ErrKindInvalidArgs {
				t.Fatalf("extra argument: %v, %v", out, isErr)
			}

			// The local views agree with what MCP reports.
			if _, ok := ui.Find(s.Tree(), "inc"); !ok {
				t.Fatal("Tree() has no inc button")
			}
			if opts := s.Component("step")["options"].([]any); len(opts) != 3 {
				t.Fatalf("options %v", opts)
			}
			if got := s.ReadResource("counter://state/count"); got != `{"n":11}` {
				t.Fatalf("counter://state/count = %s", got)
			}
			tools := s.Tools()
			for _, want := range []string{mcpbridge.ToolScreenshot, mcpbridge.ToolSendKey, "counter.label.type_into", "counter.step.get_options", "counter.pin.type_into"} {
				if !contains(tools, want) {
					t.Errorf("Tools() lacks %s: %v", want, tools)
				}
			}

			s.CallTool("counter.reset.click", nil).
				AssertModel(count(0)).
				RefuteToolAvailable("counter.reset.click")

			s.Stop()
			s.Stop() // idempotent
			if _, ok := s.Server().Session(s.ID()); ok {
				t.Fatal("the session outlived Stop")
			}
			if s.Model().(counter).N != 0 {
				t.Fatal("Model() after Stop")
			}
		})
	}
}

// The harness goes through the server's bearer authentication: the
// endpoint it uses refuses a request without the token, and a client with
// a wrong token cannot connect.
func TestGoesThroughAuthorization(t *testing.T) {
	s := mcptest.Start(t, app())
	req, err := http.NewRequest(http.MethodPost, s.Endpoint(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", resp.StatusCode)
	}

	hc := &http.Client{Transport: testkit.Bearer(&http.Transport{}, "wrong")}
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "intruder", Version: "0"}, nil)
	if cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.Endpoint(), HTTPClient: hc, MaxRetries: -1}, nil); err == nil {
		cs.Close()
		t.Fatal("a client with a wrong token connected")
	}
	// The harness's own client still works.
	s.Click("inc").AssertModel(count(1))
}

func TestWithServerOptions(t *testing.T) {
	m := metrics.New()
	var applied []string
	s := mcptest.Start(t, app(),
		mcptest.WithServerOptions(func(o *server.Options) {
			if o.DataDir == "" || o.SSH.Addr != "127.0.0.1:0" || o.Logger == nil {
				t.Errorf("mcptest defaults not filled in before the option: %+v", o)
			}
			o.Metrics = m
			applied = append(applied, "first")
		}),
		mcptest.WithServerOptions(func(*server.Options) { applied = append(applied, "second") }),
	)
	if strings.Join(applied, ",") != "first,second" {
		t.Fatalf("options applied %v", applied)
	}
	if v := gauge(t, m, "raxol_sessions_open"); v != 1 {
		t.Fatalf("sessions_open %v with the harness's session", v)
	}
	s.Stop()
	if v := gauge(t, m, "raxol_sessions_open"); v != 0 {
		t.Fatalf("sessions_open %v after Stop", v)
	}
}

func gauge(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) > 0 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// recorder is a testing.TB that records Fatalf and Errorf instead of
// failing, while record is set; everything else is the real test's.
type recorder struct {
	testing.TB
	record bool
	fatals []string
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	if !r.record {
		r.TB.Fatalf(format, args...)
	}
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

func (r *recorder) Errorf(format string, args ...any) {
	if !r.record {
		r.TB.Errorf(format, args...)
		return
	}
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) FailNow()          { r.Fatalf("FailNow") }

// take returns and clears what was recorded.
func (r *recorder) take() (fatals, errors []string) {
	fatals, errors = r.fatals, r.errors
	r.fatals, r.errors = nil, nil
	return fatals, errors
}

func TestFailuresFailTheTest(t *testing.T) {
	// The assertions below fail on purpose: their grace period changes
	// nothing but how long they take.
	mcptest.SetToolSettle(t, 20*time.Millisecond)
	rec := &recorder{TB: t}
	s := mcptest.Start(rec, app(), mcptest.WithCallTimeout(300*time.Millisecond))
	rec.record = true
	defer func() { rec.record = false }()

	// expect runs step and checks it recorded exactly one fatal (or one
	// error) containing every want and none of the refuse.
	expect := func(name string, fatal bool, step func(), want []string, refuse ...string) {
		t.Helper()
		step()
		fatals, errs := rec.take()
		got, other, kind := fatals, errs, "Fatalf"
		if !fatal {
			got, other, kind = errs, fatals, "Errorf"
		}
		if len(got) != 1 || len(other) != 0 {
			t.Errorf("%s: want one %s, got fatals %q errors %q", name, kind, fatals, errs)
			return
		}
		t.Logf("%s: %s recorded:\n%s", name, kind, got[0])
		for _, w := range want {
			if !strings.Contains(got[0], w) {
				t.Errorf("%s: message lacks %q:\n%s", name, w, got[0])
			}
		}
		for _, r := range refuse {
			if strings.Contains(got[0], r) {
				t.Errorf("%s: message contains %q:\n%s", name, r, got[0])
			}
		}
	}
	tools := []string{"available tools", "tools/list", "discover_tools", "counter.inc.click", "counter.label.type_into", mcpbridge.ToolScreenshot}

	expect("unknown widget", true, func() { s.Click("ghost") },
		append([]string{"counter.ghost.click", mcpbridge.ErrKindWidgetGone, `no widget "ghost"`}, tools...))
	expect("disabled button", true, func() { s.Click("reset") },
		append([]string{"counter.reset.click", mcpbridge.ErrKindWidgetGone, "disabled or hidden"}, tools...))
	expect("tool error", true, func() { s.TypeInto("label", "two\nlines") },
		append([]string{"counter.label.type_into", `{"text":"two\nlines"}`, mcpbridge.ErrKindToolError, "line break"}, tools...))
	expect("secret arguments are redacted", true, func() { s.TypeInto("pin", "12\n34") },
		[]string{"counter.pin.type_into", `{"text":"\u003credacted\u003e"}`, mcpbridge.ErrKindToolError}, "12", "34")
	expect("invalid arguments", true, func() { s.CallTool("counter.step.select", map[string]any{"index": "two"}) },
		append([]string{"counter.step.select", `{"index":"two"}`, mcpbridge.ErrKindInvalidArgs}, tools...))
	expect("no select action", true, func() { s.Select("inc", 0) },
		append([]string{`Select("inc", 0)`, "select_row, select_tab, select"}, tools...))
	expect("select out of range", true, func() { s.Select("step", 9) },
		[]string{"counter.step.select", `{"index":9}`, mcpbridge.ErrKindToolError})
	expect("press key on a headless session", true, func() { s.PressKey("enter") },
		append([]string{mcpbridge.ToolSendKey, `{"keys":["enter"]}`, mcpbridge.ErrKindNoTerminal, "headless", "no terminal"}, tools...))
	expect("timeout", true, func() { s.Click("slow") },
		append([]string{"counter.slow.click", "protocol error", "deadline exceeded"}, tools...))
	if s.Result()["error"] != mcptest.KindProtocolError {
		t.Errorf("Result() after a timeout: %v", s.Result())
	}
	// Let the slow Update finish: the timed-out call was still applied.
	select {
	case <-slowGate:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow button's Update never ran")
	}

	// Nothing failed: nothing recorded, and the chain went on.
	if s.Click("inc").Toggle("double").AssertModel(count(1)).AssertComponent("double", nil) != s {
		t.Error("a chain did not return the session")
	}
	if f, e := rec.take(); len(f)+len(e) != 0 {
		t.Fatalf("passing steps recorded fatals %q errors %q", f, e)
	}

	expect("component predicate", false, func() {
		s.AssertComponent("label", func(st map[string]any) bool { return st["value"] == "pears" })
	}, []string{`AssertComponent("label")`, "predicate is false", `"type":"text_input"`})
	expect("component predicate panics", false, func() {
		s.AssertComponent("label", func(st map[string]any) bool { return st["rows"].([]any) != nil })
	}, []string{`AssertComponent("label")`, "panicked"})
	expect("missing component", false, func() { s.AssertComponent("ghost", nil) },
		[]string{`no widget "ghost"`, "label, double, step, pin, inc, reset, slow"})
	expect("model predicate", false, func() { s.AssertModel(count(7)) },
		[]string{"AssertModel", "predicate is false", "N:1"})
	expect("screen", false, func() { s.AssertScreen("zebra") },
		[]string{`AssertScreen("zebra")`, "count: 1"})
	expect("tool not available", false, func() { s.AssertToolAvailable("counter.ghost.click") },
		append([]string{`AssertToolAvailable("counter.ghost.click")`, "does not offer"}, tools...))
	expect("tool available", false, func() { s.RefuteToolAvailable("counter.inc.click") },
		append([]string{`RefuteToolAvailable("counter.inc.click")`, "offers it"}, tools...))

	s.Stop()
	expect("action after Stop", true, func() { s.Click("inc") }, []string{"counter.inc.click", "stopped"})
	expect("raw call after Stop", true, func() { s.Call("counter.inc.click", nil) }, []string{"stopped"})
	expect("assertion after Stop", true, func() { s.AssertScreen("x") }, []string{"stopped"})
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
