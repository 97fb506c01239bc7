package mcpbridge_test

import (
	"context"
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// lockForm is a screen whose checkbox disables a button: the button's
// tool comes and goes while every widget stays where it is.
type lockForm struct{ Locked bool }

func (f lockForm) Init() tea.Cmd { return nil }

func (f lockForm) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if m, ok := msg.(ui.CheckboxToggled); ok {
		f.Locked = m.Checked
	}
	return f, nil
}

func (f lockForm) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.TextInput{ID: "name", Label: "Name"},
		ui.Checkbox{ID: "lock", Label: "Lock", Checked: f.Locked},
		ui.Button{ID: "go", Label: "Go", OnClick: press{}, Disabled: f.Locked},
	}}
}

// TestToolsFollowAWidgetsToolsInAnUnchangedTree: with the same widgets in
// the same places, the same attention and the same recent actions, a
// widget that stops or starts offering a tool still changes tools/list
// (the watcher keeps its last selection only while nothing it selects
// from changed).
func TestToolsFollowAWidgetsToolsInAnUnchangedTree(t *testing.T) {
	e := newEnv(t)
	s, ok, err := e.mgr.Start("app", session.Owner{User: "u"}, lockForm{}, 0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	e.session = s
	cs, _ := e.connect(false)
	has := func(name string) bool {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}
	if !has("app.go.click") {
		t.Fatal("the enabled button's tool is not listed")
	}
	for i, want := range []bool{false, true, false, true} {
		call(t, cs, "app.lock.toggle", nil) // the same recent action each time after the first
		testkit.Eventually(t, 5*time.Second, func() bool { return has("app.go.click") == want },
			"after toggle %d the button's tool is listed: %v, want %v", i+1, !want, want)
	}
}

// TestFocusMovesBackSelectAgain: with room for the focused widget's tool
// and one more, tools/list follows the focus away from a widget and back,
// and a focus move back after an agent's action picks what the lens picks
// now (the recently used widget next), not what it picked for that focus
// before the action.
func TestFocusMovesBackSelectAgain(t *testing.T) {
	e := newEnv(t)
	e.bridge.Close() // the env's own bridge: replaced by one with few tools
	e.bridge = newTestBridge(t, e.mgr, mcpbridge.Options{Namespace: "app", MaxTools: len(sessionToolNames) + 2, ToolCallsPerSecond: 1e9, ToolCallBurst: 1e9})
	e.http.Close()
	e.http = serveHTTP(t, e.bridge)
	t.Cleanup(func() { e.bridge.Close(); e.http.Close() })
	cs, _ := e.connect(false)
	expect := func(focus string, want ...string) {
		t.Helper()
		e.session.SetAttention(session.Attention{Focus: focus})
		want = append(slices.Clone(sessionToolNames), want...)
		var got []string
		testkit.Eventually(t, 5*time.Second, func() bool {
			got = toolNames(listTools(t, cs))
			return slices.Equal(got, want)
		}, "focus on %s: tools/list %q, want %q", focus, &got, want)
	}
	expect("go", "app.go.click", "app.crash.click") // then its next neighbour
	expect("crash", "app.crash.click", "app.open.click")
	expect("go", "app.go.click", "app.crash.click")
	call(t, cs, "app.agree.toggle", nil) // agree is now the most recent
	expect("crash", "app.crash.click", "app.agree.toggle")
	expect("go", "app.go.click", "app.agree.toggle")
}
