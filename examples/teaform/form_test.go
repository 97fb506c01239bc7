package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/mcptest"
	"github.com/raxol-ssh/raxol-ssh/server"
)

const password = "correct horse battery"

// ---- as an agent drives it: over MCP, through a real server ----

// value reads an input's get_value over MCP.
func value(t *testing.T, s *mcptest.Session, input string) any {
	t.Helper()
	res, isErr := s.Call(Name+"."+input+".get_value", nil)
	got, _ := res["result"].(map[string]any)
	if isErr || got == nil {
		t.Fatalf("%s.get_value = %v (isError %v), want a result", input, res, isErr)
	}
	return got["value"]
}

func TestAgentTypesTheEmail(t *testing.T) {
	s := mcptest.Start(t, App())
	s.TypeInto("inputs_1", "ada@example.com").
		AssertScreen("Email     ada@example.com")
	if got := value(t, s, "inputs_1"); got != "ada@example.com" {
		t.Errorf("inputs_1.get_value = %v, want ada@example.com", got)
	}
	// The other inputs are untouched; typing replaces the text.
	if got := value(t, s, "inputs_0"); got != "" {
		t.Errorf("inputs_0.get_value = %v, want empty", got)
	}
	s.TypeInto("inputs_1", "ada@lovelace.dev").
		AssertScreen("Email     ada@lovelace.dev")
	if got := value(t, s, "inputs_1"); got != "ada@lovelace.dev" {
		t.Errorf("inputs_1.get_value after typing again = %v, want ada@lovelace.dev", got)
	}
	s.Clear("inputs_1")
	if got := value(t, s, "inputs_1"); got != "" {
		t.Errorf("inputs_1.get_value after clear = %v, want empty", got)
	}
}

// Under the app's own policy the password input's tools ask the human
// first; a headless session has nobody to ask, so they are refused, and
// not even listed.
func TestPasswordToolsAskTheHuman(t *testing.T) {
	s := mcptest.Start(t, App())
	for _, call := range []struct {
		action string
		args   map[string]any
	}{{"get_value", nil}, {"type_into", map[string]any{"text": password}}, {"clear", nil}} {
		res, isErr := s.Call(Name+".inputs_2."+call.action, call.args)
		if !isErr || res["error"] != "authorization_required" || res["decision"] != "ask" {
			t.Errorf("inputs_2.%s = %v (isError %v), want an authorization_required ask nobody could answer", call.action, res, isErr)
		}
	}
	s.RefuteToolAvailable(Name + ".inputs_2.type_into").
		RefuteToolAvailable(Name + ".inputs_2.get_value").
		AssertToolAvailable(Name + ".inputs_0.type_into").
		AssertToolAvailable(Name + ".inputs_1.get_value")
}

// allowAll is the app under an operator's policy that lets agents use
// every tool, the password's included.
func allowAll() server.App {
	app := App()
	app.ToolPolicy = authz.AllowAll()
	return app
}

// The password input's tools are marked sensitive in tools/list (the
// others are not), so that a client can warn before it calls them.
func TestPasswordToolsAreSensitive(t *testing.T) {
	s := mcptest.Start(t, allowAll(), mcptest.WithServerOptions(func(o *server.Options) { o.MCP.LensMode = "all" }))
	s.AssertToolAvailable(Name + ".inputs_2.type_into") // the tool list has caught up
	ctx, cancel := context.WithTimeout(context.Background(), mcptest.DefaultCallTimeout)
	defer cancel()
	list, err := s.Client().ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var sensitive, plain []string
	for _, tool := range list.Tools {
		if !strings.HasPrefix(tool.Name, Name+".") {
			continue
		}
		if tool.Meta["sensitive"] == true {
			sensitive = append(sensitive, tool.Name)
		} else {
			plain = append(plain, tool.Name)
		}
	}
	for _, action := range []string{"type_into", "clear", "get_value"} {
		if name := Name + ".inputs_2." + action; !slices.Contains(sensitive, name) {
			t.Errorf("%s is not marked sensitive; sensitive tools: %v", name, sensitive)
		}
		if name := Name + ".inputs_0." + action; !slices.Contains(plain, name) {
			t.Errorf("%s is missing or marked sensitive; other tools: %v", name, plain)
		}
	}
}

// Even where the policy lets an agent type a password, nothing it can
// read returns it: not get_value, the call's answer, the tree or the
// screen.
func TestPasswordIsNeverReadBack(t *testing.T) {
	s := mcptest.Start(t, allowAll())

	s.TypeInto("inputs_2", password)
	leaks := func(what string, v any) {
		t.Helper()
		raw, _ := json.Marshal(v)
		if strings.Contains(string(raw), password) || strings.Contains(string(raw), "battery") {
			t.Errorf("%s holds the password: %s", what, raw)
		}
	}
	leaks("type_into's answer", s.Result())
	res, isErr := s.Call(Name+".inputs_2.get_value", nil)
	if isErr {
		t.Fatalf("inputs_2.get_value = %v, want an answer without the value", res)
	}
	leaks("get_value's answer", res)
	tree := s.ReadResource("raxol://session/tree")
	leaks("raxol://session/tree", tree)
	if !strings.Contains(tree, `"password":true`) {
		t.Errorf("raxol://session/tree does not show the password input: %s", tree)
	}
	screen := s.Screen()
	leaks("the screen", screen)
	if stars := strings.Repeat("*", len(password)); !strings.Contains(screen, "Password  "+stars) {
		t.Errorf("screen does not show the password as %d stars:\n%s", len(password), screen)
	}
}

// The program's own keys sign up: Tab twice to the password, Enter. What
// it prints shows above the form, without the password.
func TestSignUpPrintsNoPassword(t *testing.T) {
	s := mcptest.Start(t, allowAll())
	s.TypeInto("inputs_0", "Ada Lovelace").
		TypeInto("inputs_1", "ada@example.com").
		TypeInto("inputs_2", password).
		CallTool("raxol_send_key", map[string]any{"keys": []string{"tab", "tab", "enter"}})
	// The line is printed by a command the program returned: wait for it,
	// as an agent does.
	res, isErr := s.Call("raxol_wait_for", map[string]any{"text": "Signed up Ada Lovelace <ada@example.com>.", "timeout_ms": 5000})
	if isErr || res["matched"] != true {
		t.Fatalf("raxol_wait_for the summary = %v (isError %v)", res, isErr)
	}
	s.AssertScreen("1 signed up so far.")
	if screen := s.Screen(); strings.Contains(screen, password) {
		t.Errorf("the screen shows the password:\n%s", screen)
	}
}

// ---- the program alone: messages folded by hand, as Bubble Tea does ----

func key(name string) tea.KeyPressMsg {
	switch name {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	}
	r := []rune(name)[0]
	return tea.KeyPressMsg{Code: r, Text: name}
}

// typed folds each rune of text as a key press.
func typed(m tea.Model, text string) tea.Model {
	for _, r := range text {
		m, _ = m.Update(key(string(r)))
	}
	return m
}

func focusedInput(m tea.Model) int {
	for i, in := range m.(model).inputs {
		if in.Focused() {
			return i
		}
	}
	return -1
}

func TestTabAndShiftTabCycle(t *testing.T) {
	var m tea.Model = initialModel()
	for i, step := range []struct {
		key  string
		want int
	}{{"tab", 1}, {"tab", 2}, {"tab", 0}, {"shift+tab", 2}, {"shift+tab", 1}, {"enter", 2}} {
		m, _ = m.Update(key(step.key))
		if got := focusedInput(m); got != step.want {
			t.Fatalf("step %d (%s): focused input %d, want %d", i, step.key, got, step.want)
		}
	}
}

func TestEnterOnThePasswordPrintsTheSummary(t *testing.T) {
	var m tea.Model = initialModel()
	m = typed(m, "Ada")
	m, _ = m.Update(key("tab"))
	m = typed(m, "ada@example.com")
	m, _ = m.Update(key("tab"))
	m = typed(m, "s3cret!")
	m, cmd := m.Update(key("enter"))
	if cmd == nil {
		t.Fatal("Enter on the password returned no command")
	}
	msg := cmd()
	if _, quit := msg.(tea.QuitMsg); quit {
		t.Fatal("Enter on the password quit, want the form to stay")
	}
	// tea.Println's message keeps its text in an unexported field: %v
	// shows it.
	printed := fmt.Sprintf("%v", msg)
	if !strings.Contains(printed, "Signed up Ada <ada@example.com>.") || strings.Contains(printed, "s3cret") {
		t.Errorf("printed %q, want the summary without the password", printed)
	}
	if v := ansi.Strip(m.View().Content); !strings.Contains(v, "1 signed up so far.") || strings.Contains(v, "s3cret") {
		t.Errorf("view after signing up:\n%s", v)
	}
}
