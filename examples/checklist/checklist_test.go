package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/mcptest"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// The seeded items, as agents read them.
var seeded = []Item{
	{ID: "item_1", Text: "Read docs/EMBEDDING.md"},
	{ID: "item_2", Text: "Attach an agent (ctrl+o)"},
}

// ---- as an agent drives it: over MCP, through a real server ----

// items reads the checklist://state/items projection over MCP.
func items(t *testing.T, s *mcptest.Session) []Item {
	t.Helper()
	var got []Item
	if err := json.Unmarshal([]byte(s.ReadResource("checklist://state/items")), &got); err != nil {
		t.Fatalf("decode checklist://state/items: %v", err)
	}
	return got
}

func checked(st map[string]any) bool   { return st["checked"] == true }
func unchecked(st map[string]any) bool { return st["checked"] == false }

func TestAgentAddsTicksAndClears(t *testing.T) {
	s := mcptest.Start(t, App())
	// mcptest's headless sessions belong to the user "mcptest".
	s.AssertScreen("checklist for mcptest").
		AssertScreen("0 of 2 done").
		AssertComponent("item_1", unchecked).
		RefuteToolAvailable("checklist.add.click").        // disabled: the field is empty
		RefuteToolAvailable("checklist.clear_done.click"). // disabled: nothing is done
		TypeInto(IDNew, "Write the postmortem").
		AssertComponent(IDNew, func(st map[string]any) bool { return st["value"] == "Write the postmortem" }).
		AssertToolAvailable("checklist.add.click").
		Click(IDAdd).
		AssertComponent(IDNew, func(st map[string]any) bool { return st["value"] == "" }).
		AssertComponent("item_3", func(st map[string]any) bool {
			return st["label"] == "Write the postmortem" && st["checked"] == false
		}).
		Toggle("item_3").
		AssertComponent("item_3", checked).
		AssertComponent("item_1", unchecked).
		AssertComponent(IDClearDone, func(st map[string]any) bool {
			return st["label"] == "Clear done (1)" && st["disabled"] == false
		}).
		AssertScreen("1 of 3 done")
	want := append(slices.Clone(seeded), Item{ID: "item_3", Text: "Write the postmortem", Done: true})
	if got := items(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("checklist://state/items after adding and ticking = %+v, want %+v", got, want)
	}

	// Blank text adds nothing (and the button is disabled for it).
	s.TypeInto(IDNew, "   ").RefuteToolAvailable("checklist.add.click")

	s.Click(IDClearDone).
		RefuteToolAvailable("checklist.item_3.toggle").
		AssertScreen("0 of 2 done")
	if got := items(t, s); !reflect.DeepEqual(got, seeded) {
		t.Fatalf("checklist://state/items after clearing = %+v, want %+v", got, seeded)
	}
}

// The shortcut keys reach the app only from a terminal: an agent's
// raxol_send_key is asked of the human under the app's policy, and a
// headless session has nobody to ask, so it is refused and changes
// nothing.
func TestAgentKeysChangeNothing(t *testing.T) {
	s := mcptest.Start(t, App())
	before := s.Model()
	res, isErr := s.Call("raxol_send_key", map[string]any{"keys": []string{"?"}})
	if !isErr || res["error"] != "authorization_required" || res["decision"] != "ask" {
		t.Fatalf("raxol_send_key ? = %v (isError %v), want an authorization_required ask nobody could answer", res, isErr)
	}
	res, isErr = s.Call("raxol_send_key", map[string]any{"keys": []string{"enter"}})
	if !isErr || res["decision"] != "ask" {
		t.Fatalf("raxol_send_key enter = %v (isError %v), want refused", res, isErr)
	}
	s.AssertModel(func(m ui.Model) bool { return reflect.DeepEqual(m, before) && !m.(Model).help }).
		RefuteToolAvailable("raxol_send_key")
	if got := items(t, s); !reflect.DeepEqual(got, seeded) {
		t.Fatalf("checklist://state/items = %+v, want the seeded %+v", got, seeded)
	}
}

func TestToolList(t *testing.T) {
	s := mcptest.Start(t, App())
	var own []string
	tools := s.Tools()
	for _, name := range tools {
		if strings.HasPrefix(name, Name+".") {
			own = append(own, name)
		}
	}
	slices.Sort(own)
	want := []string{
		"checklist.item_1.get_checked", "checklist.item_1.toggle",
		"checklist.item_2.get_checked", "checklist.item_2.toggle",
		"checklist.new_item.clear", "checklist.new_item.get_value", "checklist.new_item.type_into",
	}
	if !slices.Equal(own, want) {
		t.Errorf("the app's tools = %v, want %v", own, want)
	}
	for _, name := range []string{"raxol_screenshot", "discover_tools"} {
		if !slices.Contains(tools, name) {
			t.Errorf("tools %v lack %s, which the policy allows", tools, name)
		}
	}
}

// ---- the model alone: messages folded by hand ----

func fold(m ui.Model, msgs ...tea.Msg) ui.Model {
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m
}

// press hands ev to the widget id of m's view, as a terminal does with
// the focused widget, and folds the messages it sends.
func press(t *testing.T, m ui.Model, id string, ev ui.Event) ui.Model {
	t.Helper()
	w, ok := ui.Find(m.View(), id)
	if !ok {
		t.Fatalf("no widget %q in the view", id)
	}
	return fold(m, w.HandleEvent(ev, &ui.LocalState{})...)
}

// screen renders m's view as plain text.
func screen(m ui.Model) string {
	return ansi.Strip(ui.Render(m.View(), ui.RenderOptions{Width: 100, Height: 30}).Content)
}

var (
	enter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	question = tea.KeyPressMsg{Code: '?', Text: "?"}
)

func TestGreetsTheUser(t *testing.T) {
	if got := screen(New(ui.Identity{User: "alice"})); !strings.Contains(got, "checklist for alice") {
		t.Errorf("screen does not greet alice:\n%s", got)
	}
	// The name is outside text: what a terminal would act on is dropped.
	m := New(ui.Identity{User: "mal\x1b]0;owned\x07lory\r\n"})
	title := m.View().Children()[0].(ui.Text).Text
	if title != "checklist for mal]0;ownedlory" {
		t.Errorf("title = %q, want the name without its control characters", title)
	}
}

func TestHelpShortcut(t *testing.T) {
	m := New(ui.Identity{User: "alice"})
	if strings.Contains(screen(m), "? hides this") {
		t.Fatal("help shown before ? was pressed")
	}
	// "?" reaches Update as the key itself when no widget takes it.
	m = fold(m, question)
	if !strings.Contains(screen(m), "? hides this") {
		t.Fatalf("help not shown after ?:\n%s", screen(m))
	}
	m = fold(m, question)
	if strings.Contains(screen(m), "? hides this") {
		t.Fatalf("help still shown after a second ?:\n%s", screen(m))
	}
	// Other keys that reach the app change nothing.
	before := m
	if m = fold(m, tea.KeyPressMsg{Code: 'x', Text: "x"}, tea.KeyPressMsg{Code: tea.KeyEscape}); !reflect.DeepEqual(m, before) {
		t.Errorf("x and esc changed the model: %+v, was %+v", m, before)
	}
}

func TestAddTickClear(t *testing.T) {
	m0 := New(ui.Identity{User: "alice"})
	// Typed into the field, then added with the button.
	m := press(t, m0, IDNew, tea.KeyPressMsg{Code: 'm', Text: "m"})
	m = press(t, m, IDNew, tea.PasteMsg{Content: "i"}) // at the cursor of a fresh LocalState: the start
	m = press(t, m, IDAdd, enter)
	// Typed, then added with Enter, which the field does not take.
	m = fold(m, ui.TextInputChanged{ID: IDNew, Text: "  ship it "}, enter)
	// Enter on an empty field adds nothing.
	m = fold(m, enter)
	m = press(t, m, "item_3", tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	m = press(t, m, "item_1", enter)

	want := append(slices.Clone(seeded), Item{ID: "item_3", Text: "im"}, Item{ID: "item_4", Text: "ship it"})
	want[0].Done, want[2].Done = true, true
	if got := m.(Model).items; !reflect.DeepEqual(got, want) {
		t.Fatalf("items = %+v, want %+v", got, want)
	}
	if s := screen(m); !strings.Contains(s, "[x] im") || !strings.Contains(s, "2 of 4 done") || !strings.Contains(s, "Clear done (2)") {
		t.Errorf("screen:\n%s", s)
	}

	beforeClear := m
	m = press(t, m, IDClearDone, enter)
	if got, want := m.(Model).items, []Item{seeded[1], {ID: "item_4", Text: "ship it"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("items after clearing = %+v, want %+v", got, want)
	}
	if got := beforeClear.(Model).items; !reflect.DeepEqual(got, want) {
		t.Fatalf("clearing changed the model it was folded into: %+v, was %+v", got, want)
	}
	// Ids are never reused: the next item is item_5.
	if got := fold(m, ui.TextInputChanged{ID: IDNew, Text: "next"}, enter).(Model).items; got[len(got)-1].ID != "item_5" {
		t.Errorf("next item = %+v, want id item_5", got[len(got)-1])
	}
	// Folding never changed the first model, not even when it was m0 itself
	// that folded.
	fold(m0, ui.CheckboxToggled{ID: "item_2", Checked: true})
	if got := m0.(Model).items; !reflect.DeepEqual(got, seeded) {
		t.Errorf("the first model's items changed to %+v", got)
	}
}
