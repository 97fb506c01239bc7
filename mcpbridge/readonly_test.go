package mcpbridge_test

import (
	"context"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// modelEnv is a bridge over one session of m, policy as in newEnv.
func modelEnv(t *testing.T, m ui.Model) *env {
	t.Helper()
	e := &env{t: t, metrics: metrics.New()}
	e.mgr = session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
	e.bridge = newTestBridge(t, e.mgr, mcpbridge.Options{Namespace: "app", Metrics: e.metrics})
	e.http = serveHTTP(t, e.bridge)
	t.Cleanup(func() { e.bridge.Close(); e.http.Close(); e.mgr.Close() })
	s, ok, err := e.mgr.Start("app", session.Owner{User: "u"}, m, 0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	e.session = s
	return e
}

// vault is an app-defined widget whose action names say nothing of what
// they do: get_secret and get_value open the vault (writes), peek only
// reads and says so.
type vault struct {
	ID     string
	Opened int
}

type vaultOpened struct{}

func (vault) Children() []ui.Node                            { return nil }
func (v vault) WidgetID() string                             { return v.ID }
func (vault) Focusable() bool                                { return true }
func (vault) Render(ui.RenderContext) string                 { return "[vault]" }
func (vault) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg { return nil }
func (v vault) State() any                                   { return map[string]any{"id": v.ID, "opened": v.Opened} }

func (vault) Tools() []ui.ToolSpec {
	return []ui.ToolSpec{
		{Action: "get_secret", Description: "Open the vault and return its secret.", InputSchema: ui.ObjectSchema(nil)},
		{Action: "get_value", Description: "Open the vault and return its value.", InputSchema: ui.ObjectSchema(nil)},
		{Action: "peek", Description: "Return how often the vault was opened.", InputSchema: ui.ObjectSchema(nil), ReadOnly: true},
	}
}

func (v vault) CallTool(action string, _ map[string]any) (any, []tea.Msg, error) {
	if action == "peek" {
		return map[string]any{"opened": v.Opened}, nil, nil
	}
	return map[string]any{"secret": "s3cret"}, []tea.Msg{vaultOpened{}}, nil
}

type vaultApp struct{ Opened int }

func (a vaultApp) Init() tea.Cmd { return nil }
func (a vaultApp) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if _, ok := msg.(vaultOpened); ok {
		a.Opened++
	}
	return a, nil
}
func (a vaultApp) View() ui.Node {
	return ui.Column{Items: []ui.Node{vault{ID: "v", Opened: a.Opened}}}
}

func TestReadActionsAreDeclaredNotNamed(t *testing.T) {
	e := modelEnv(t, vaultApp{})
	cs, _ := e.connect(false)
	opened := func() int { return e.session.Dispatcher.Snapshot().Model.(vaultApp).Opened }

	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hints := map[string]bool{}
	for _, tl := range res.Tools {
		hints[tl.Name] = tl.Annotations != nil && tl.Annotations.ReadOnlyHint
	}
	want := map[string]bool{"app.v.get_secret": false, "app.v.get_value": false, "app.v.peek": true}
	for name, ro := range want {
		got, listed := hints[name]
		if !listed || got != ro {
			t.Errorf("%s: listed %v, readOnlyHint %v; want readOnlyHint %v", name, listed, got, ro)
		}
	}

	// Writes go through the dispatcher: their messages are folded and
	// they are in the activity log. A read is neither.
	for i, name := range []string{"app.v.get_secret", "app.v.get_value"} {
		if out, isErr := call(t, cs, name, nil); isErr {
			t.Fatalf("%s: %v", name, out)
		}
		if got := opened(); got != i+1 {
			t.Fatalf("after %s the model was opened %d times, want %d (its message was not folded)", name, got, i+1)
		}
	}
	if out, isErr := call(t, cs, "app.v.peek", nil); isErr || out["result"].(map[string]any)["opened"] != float64(2) {
		t.Fatalf("peek: %v", out)
	}
	recorded := map[string]bool{}
	for _, a := range e.session.Activity() {
		recorded[a.Action] = true
	}
	if !recorded["get_secret"] || !recorded["get_value"] || recorded["peek"] {
		t.Fatalf("activity records %v: want the writes get_secret and get_value, not the read peek", recorded)
	}

	// Paused: the human lets agents read only.
	e.session.SetControl(session.Control{Paused: true})
	for _, name := range []string{"app.v.get_secret", "app.v.get_value"} {
		if out, isErr := call(t, cs, name, nil); !isErr || out["error"] != mcpbridge.ErrKindPaused {
			t.Errorf("%s while paused: %v, want a paused error", name, out)
		}
	}
	if out, isErr := call(t, cs, "app.v.peek", nil); isErr {
		t.Errorf("peek while paused: %v, want it answered", out)
	}
	if got := opened(); got != 2 {
		t.Fatalf("the vault was opened while paused: %d", got)
	}
}
