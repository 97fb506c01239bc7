package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/mcptest"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// ---- as an agent drives it: over MCP, through a real server ----

// marked returns the lines of screen that carry the delegate's "> "
// marker, trimmed.
func marked(screen string) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "> ") {
			out = append(out, t)
		}
	}
	return out
}

// selected reads picker.list.get_selected's result over MCP.
func selected(t *testing.T, s *mcptest.Session) map[string]any {
	t.Helper()
	res, isErr := s.Call(Name+".list.get_selected", nil)
	if isErr {
		t.Fatalf("get_selected = %v, want a result", res)
	}
	sel, ok := res["result"].(map[string]any)
	if !ok {
		t.Fatalf("get_selected's result = %#v, want an object", res["result"])
	}
	return sel
}

func TestAgentSelectsTheThirdTeaByLabel(t *testing.T) {
	s := mcptest.Start(t, App())
	s.AssertScreen("Which tea would you like?")
	if got := marked(s.Screen()); len(got) != 1 || got[0] != "> Sencha" {
		t.Fatalf("marked lines at start = %q, want only the first tea", got)
	}

	s.CallTool(Name+".list.select", map[string]any{"label": "Oolong"})

	if sel := selected(t, s); sel["label"] != "Oolong" || sel["index"] != float64(2) {
		t.Errorf("get_selected after select{label: Oolong} = %v, want Oolong at index 2", sel)
	}
	screen := s.Screen()
	if got := marked(screen); len(got) != 1 || got[0] != "> Oolong" {
		t.Errorf("marked lines = %q, want only \"> Oolong\"; screen:\n%s", got, screen)
	}
	for _, other := range []string{"Sencha", "Earl Grey", "Rooibos"} {
		if !strings.Contains(screen, other) {
			t.Errorf("screen lost %q, which is still on the menu:\n%s", other, screen)
		}
	}

	// A label the delegate never draws is an error, and changes nothing.
	if res, isErr := s.Call(Name+".list.select", map[string]any{"label": "Coffee"}); !isErr {
		t.Errorf("select{label: Coffee} = %v, want an error", res)
	}
	if sel := selected(t, s); sel["label"] != "Oolong" {
		t.Errorf("get_selected after a failed select = %v, want Oolong still", sel)
	}
}

// activate presses Enter as a human would: the program orders, draws its
// goodbye and quits, and with it the session ends, as the program's own
// terminal would close.
func TestAgentOrdersAndTheProgramQuits(t *testing.T) {
	s := mcptest.Start(t, App())
	sess, ok := s.Server().Session(s.ID())
	if !ok {
		t.Fatalf("no live session %s", s.ID())
	}
	s.CallTool(Name+".list.select", map[string]any{"label": "Genmaicha"})
	// The session ends after the call that made the program quit is
	// answered: the agent learns it succeeded.
	if res, isErr := s.Call(Name+".list.activate", nil); isErr {
		t.Fatalf("activate answered %v, want a result before the session ends", res)
	}
	select {
	case <-sess.Context().Done():
	case <-time.After(mcptest.DefaultCallTimeout):
		t.Fatal("the session is still live after activate, want it ended by the program's tea.Quit")
	}
	if reason := session.EndReason(sess); reason != "the app ended the session" {
		t.Errorf("the session ended with %q, want the app's own end", reason)
	}
	last := ansi.Strip(ui.Render(s.Tree(), ui.RenderOptions{Width: 80, Height: 24}).Content)
	if !strings.Contains(last, "Okay, Genmaicha? Sounds good to me.") || strings.Contains(last, "Which tea") {
		t.Errorf("the last frame is not the program's goodbye:\n%s", last)
	}
}

func TestAgentReadsTheOptionsAsDrawn(t *testing.T) {
	s := mcptest.Start(t, App())
	res, isErr := s.Call(Name+".list.get_options", nil)
	if isErr {
		t.Fatalf("get_options = %v", res)
	}
	// The items' FilterValue is "": their labels are what the delegate draws.
	raw, _ := json.Marshal(res["result"])
	for _, label := range []string{"Sencha", "Oolong", "Peppermint"} {
		if !strings.Contains(string(raw), `"`+label+`"`) {
			t.Errorf("get_options = %s, want the label %q", raw, label)
		}
	}
	if strings.Contains(string(raw), "> ") {
		t.Errorf("get_options = %s, want labels without the delegate's marker", raw)
	}
}

// ---- the program alone: messages folded by hand, as Bubble Tea does ----

func fold(m tea.Model, msgs ...tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	for _, msg := range msgs {
		m, cmd = m.Update(msg)
	}
	return m, cmd
}

func view(m tea.Model) string { return ansi.Strip(m.View().Content) }

var (
	down  = tea.KeyPressMsg{Code: tea.KeyDown}
	enter = tea.KeyPressMsg{Code: tea.KeyEnter}
)

func TestEnterOrdersAndSaysGoodbye(t *testing.T) {
	m, cmd := fold(initialModel(), tea.WindowSizeMsg{Width: 80, Height: 24}, down, down, enter)
	if cmd == nil {
		t.Fatal("Enter returned no command, want tea.Quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Errorf("Enter's command returned %T, want tea.QuitMsg", cmd())
	}
	if got, want := strings.TrimSpace(view(m)), "Okay, Oolong? Sounds good to me."; got != want {
		t.Errorf("view after Enter = %q, want %q", got, want)
	}
}

func TestQuitWithoutOrdering(t *testing.T) {
	m, cmd := fold(initialModel(), tea.KeyPressMsg{Code: 'q', Text: "q"})
	if cmd == nil {
		t.Fatal("q returned no command, want tea.Quit")
	}
	if got := view(m); !strings.Contains(got, "No tea today?") || strings.Contains(got, "Sounds good") {
		t.Errorf("view after q = %q, want the goodbye without an order", got)
	}
}
