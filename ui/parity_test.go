package ui

import (
	"reflect"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The tests in this file check, widget by widget, that what a person does
// with the keyboard and what an agent does with the widget's MCP tool for
// the same change tell the app the same thing: HandleEvent and CallTool
// emit equal []tea.Msg.
//
// A case presses its keys one after another on one terminal (one
// LocalState), and folds each message the widget sends back into it, as
// the app's Update and View would, so that a key sequence (typing a word,
// moving the highlight and choosing) works as in a session. Every message
// a widget sends states the whole new value (the whole text, the chosen
// index...), so the messages of the last key press are what the sequence
// told the app; the tool is called on the widget as it was before the
// first key, and must send exactly those.

// parityCase is one human action and the tool call that does the same.
type parityCase struct {
	name   string
	w      ToolProvider // the widget before the first key press
	st     LocalState   // the terminal's local state before the first key press
	keys   []tea.KeyPressMsg
	action string
	args   map[string]any
}

// parityOther is the OnClick of the decoy button in checkParity.
type parityOther struct{ of tea.Msg }

// parityMsg is the OnClick of the buttons below.
type parityMsg struct{ name string }

// runParity runs the cases; see the comment at the top of the file.
func runParity(t *testing.T, cases []parityCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			byKeys := pressAll(t, tc.w, tc.st, tc.keys)
			_, byTool, err := tc.w.CallTool(tc.action, tc.args)
			if err != nil {
				t.Fatalf("CallTool(%q, %v): %v", tc.action, tc.args, err)
			}
			if !reflect.DeepEqual(byTool, byKeys) {
				t.Errorf("CallTool(%q, %v) sent %#v,\nthe keys sent %#v", tc.action, tc.args, byTool, byKeys)
			}
			// The comparison tells widgets apart: the same call on the same
			// widget under another id (a button with another OnClick)
			// sends something else.
			other := otherWidget(t, tc.w)
			if _, decoy, err := other.CallTool(tc.action, tc.args); err != nil || len(decoy) == 0 || reflect.DeepEqual(decoy, byKeys) {
				t.Errorf("the decoy %T sent %#v (err %v), which should differ from %#v", other, decoy, err, byKeys)
			}
		})
	}
}

// pressAll presses ks on w one after another with the local state st,
// folding every message into the widget, and returns the messages of the
// last key. It fails the test when that key sent nothing: a case whose
// keys change nothing checks nothing.
func pressAll(t *testing.T, w ToolProvider, st LocalState, ks []tea.KeyPressMsg) []tea.Msg {
	t.Helper()
	if len(ks) == 0 {
		t.Fatal("the case presses no key")
	}
	var cur Widget = w
	var last []tea.Msg
	for i, k := range ks {
		last = cur.HandleEvent(k, &st)
		cur = foldParity(t, cur, last)
		if i == len(ks)-1 && len(last) == 0 {
			t.Fatalf("the last key (%s) sent nothing; the case is wrong", k)
		}
	}
	return last
}

// foldParity applies the messages w sent to w, as an app copying them
// back into its model and View would.
func foldParity(t *testing.T, w Widget, msgs []tea.Msg) Widget {
	t.Helper()
	for _, msg := range msgs {
		switch m := msg.(type) {
		case parityMsg, MenuSelected:
			// The app acts on these; the widget shows nothing new.
		case TextInputChanged:
			ti := w.(TextInput)
			ti.Value = m.Text
			w = ti
		case TextAreaChanged:
			ta := w.(TextArea)
			ta.Value = m.Text
			w = ta
		case PasswordFieldChanged:
			p := w.(PasswordField)
			p.Value = m.Text
			w = p
		case CheckboxToggled:
			c := w.(Checkbox)
			c.Checked = m.Checked
			w = c
		case OptionSelected:
			l := w.(SelectList)
			l.Selected = m.Index
			w = l
		case TabChanged:
			tb := w.(Tabs)
			tb.Active = m.Index
			w = tb
		case ModalConfirmed, ModalDismissed:
			md := w.(Modal)
			md.Visible = false
			w = md
		case RowSelected:
			tb := w.(Table)
			tb.Selected = m.Index
			w = tb
		case TableSorted:
			tb := w.(Table)
			tb.SortColumn, tb.SortDirection = m.Column, m.Direction
			w = tb
		case TreeExpanded:
			tr := w.(Tree)
			tr.Nodes = setExpanded(tr.Nodes, m.NodeID, true)
			w = tr
		case TreeCollapsed:
			tr := w.(Tree)
			tr.Nodes = setExpanded(tr.Nodes, m.NodeID, false)
			w = tr
		case TreeSelected:
			tr := w.(Tree)
			tr.Selected = m.NodeID
			w = tr
		case ScrubberSeeked:
			s := w.(Scrubber)
			s.Position = m.Position
			w = s
		case ScrubberPlayed, ScrubberPaused:
			s := w.(Scrubber)
			_, s.Playing = m.(ScrubberPlayed)
			w = s
		case ScrolledTo:
			v := w.(Viewport)
			v.Offset = m.Row
			w = v
		default:
			t.Fatalf("no fold for %T", msg)
		}
	}
	return w
}

// setExpanded returns a copy of nodes with node id expanded or collapsed.
func setExpanded(nodes []TreeNode, id string, expanded bool) []TreeNode {
	out := make([]TreeNode, len(nodes))
	for i, n := range nodes {
		if n.ID == id {
			n.Expanded = expanded
		}
		n.Children = setExpanded(n.Children, id, expanded)
		out[i] = n
	}
	return out
}

// otherWidget returns w under another id; a button, whose message carries
// no id, gets another OnClick instead.
func otherWidget(t *testing.T, w ToolProvider) ToolProvider {
	t.Helper()
	const suffix = "-other"
	switch w := w.(type) {
	case Button:
		w.OnClick = parityOther{w.OnClick}
		return w
	case TextInput:
		w.ID += suffix
		return w
	case TextArea:
		w.ID += suffix
		return w
	case PasswordField:
		w.ID += suffix
		return w
	case Checkbox:
		w.ID += suffix
		return w
	case SelectList:
		w.ID += suffix
		return w
	case Tabs:
		w.ID += suffix
		return w
	case Menu:
		w.ID += suffix
		return w
	case Modal:
		w.ID += suffix
		return w
	case Table:
		w.ID += suffix
		return w
	case Tree:
		w.ID += suffix
		return w
	case Scrubber:
		w.ID += suffix
		return w
	case Viewport:
		w.ID += suffix
		return w
	}
	t.Fatalf("no decoy for %T", w)
	return nil
}

// keys is a key sequence.
func keys(ks ...tea.KeyPressMsg) []tea.KeyPressMsg { return ks }

// typed is the key presses that type s.
func typed(s string) []tea.KeyPressMsg {
	var ks []tea.KeyPressMsg
	for _, r := range s {
		if r == ' ' {
			ks = append(ks, keySpace)
			continue
		}
		ks = append(ks, keyRune(r))
	}
	return ks
}

// repeat is n presses of k.
func repeat(k tea.KeyPressMsg, n int) []tea.KeyPressMsg {
	ks := make([]tea.KeyPressMsg, n)
	for i := range ks {
		ks[i] = k
	}
	return ks
}

func TestParityButton(t *testing.T) {
	save := Button{ID: "save", Label: "Save", OnClick: parityMsg{"save"}}
	del := Button{ID: "del", Label: "Delete", OnClick: parityMsg{"delete"}, Destructive: true}
	runParity(t, []parityCase{
		{name: "enter presses", w: save, keys: keys(keyEnter), action: "click"},
		{name: "space presses", w: save, keys: keys(keySpace), action: "click"},
		{name: "destructive enter presses", w: del, keys: keys(keyEnter), action: "click", args: noArgs{}},
	})
}

func TestParityTextInput(t *testing.T) {
	empty := TextInput{ID: "name", Label: "Name"}
	ab := TextInput{ID: "name", Value: "ab"}
	runParity(t, []parityCase{
		{name: "typing a word", w: empty, keys: typed("hi"), action: "type_into", args: noArgs{"text": "hi"}},
		{name: "typing words", w: empty, keys: typed("hi there"), action: "type_into", args: noArgs{"text": "hi there"}},
		{name: "typing wide runes", w: empty, keys: typed("日本語"), action: "type_into", args: noArgs{"text": "日本語"}},
		{name: "typing at the end", w: ab, st: LocalState{Cursor: 2}, keys: typed("c"), action: "type_into", args: noArgs{"text": "abc"}},
		{name: "typing in the middle", w: ab, st: LocalState{Cursor: 1}, keys: typed("x"), action: "type_into", args: noArgs{"text": "axb"}},
		{name: "typing up to MaxLen", w: TextInput{ID: "name", MaxLen: 3}, keys: typed("abc"), action: "type_into", args: noArgs{"text": "abc"}},
		{name: "backspace to empty", w: ab, st: LocalState{Cursor: 2}, keys: repeat(keyBackspace, 2), action: "clear"},
		{name: "delete to empty", w: ab, keys: repeat(keyDelete, 2), action: "clear"},
		{name: "ctrl+u", w: ab, st: LocalState{Cursor: 2}, keys: keys(keyCtrlU), action: "clear"},
		{name: "ctrl+k", w: ab, keys: keys(keyCtrlK), action: "clear"},
		{name: "editing to a new text", w: ab, st: LocalState{Cursor: 2}, keys: append(keys(keyBackspace), typed("z")...), action: "type_into", args: noArgs{"text": "az"}},
	})
}

func TestParityTextArea(t *testing.T) {
	empty := TextArea{ID: "notes", Label: "Notes"}
	ab := TextArea{ID: "notes", Value: "ab"}
	runParity(t, []parityCase{
		{name: "typing a line", w: empty, keys: typed("hi"), action: "type_into", args: noArgs{"text": "hi"}},
		{name: "typing two lines", w: empty, keys: append(append(typed("a"), keyEnter), typed("b")...), action: "type_into", args: noArgs{"text": "a\nb"}},
		{name: "typing two lines, CRLF", w: empty, keys: append(append(typed("a"), keyEnter), typed("b")...), action: "type_into", args: noArgs{"text": "a\r\nb"}},
		{name: "enter splits a line", w: ab, st: LocalState{Cursor: 1}, keys: keys(keyEnter), action: "type_into", args: noArgs{"text": "a\nb"}},
		{name: "backspace joins lines", w: TextArea{ID: "notes", Value: "a\nb"}, st: LocalState{Cursor: 2}, keys: keys(keyBackspace), action: "type_into", args: noArgs{"text": "ab"}},
		{name: "backspace to empty", w: ab, st: LocalState{Cursor: 2}, keys: repeat(keyBackspace, 2), action: "clear"},
		{name: "ctrl+u", w: ab, st: LocalState{Cursor: 2}, keys: keys(keyCtrlU), action: "clear"},
	})
}

func TestParityPasswordField(t *testing.T) {
	empty := PasswordField{ID: "pw", Label: "Password"}
	set := PasswordField{ID: "pw", Value: "s3"}
	runParity(t, []parityCase{
		{name: "typing a secret", w: empty, keys: typed("s3cr3t"), action: "type_into", args: noArgs{"text": "s3cr3t"}},
		{name: "typing with a space", w: empty, keys: typed("a b"), action: "type_into", args: noArgs{"text": "a b"}},
		{name: "typing at the end", w: set, st: LocalState{Cursor: 2}, keys: typed("x"), action: "type_into", args: noArgs{"text": "s3x"}},
		{name: "backspace to empty", w: set, st: LocalState{Cursor: 2}, keys: repeat(keyBackspace, 2), action: "clear"},
		{name: "ctrl+w", w: set, st: LocalState{Cursor: 2}, keys: keys(keyCtrlW), action: "clear"},
		{name: "alt+backspace", w: set, st: LocalState{Cursor: 2}, keys: keys(keyAltBksp), action: "clear"},
	})
}

func TestParityCheckbox(t *testing.T) {
	off := Checkbox{ID: "agree", Label: "I agree"}
	on := Checkbox{ID: "agree", Label: "I agree", Checked: true}
	runParity(t, []parityCase{
		{name: "enter checks", w: off, keys: keys(keyEnter), action: "toggle"},
		{name: "space checks", w: off, keys: keys(keySpace), action: "toggle"},
		{name: "enter unchecks", w: on, keys: keys(keyEnter), action: "toggle"},
		{name: "space unchecks", w: on, keys: keys(keySpace), action: "toggle"},
	})
}

func TestParitySelectList(t *testing.T) {
	l := SelectList{ID: "color", Label: "Color", Options: []string{"red", "green", "blue", "cyan", "pink"}, Selected: -1}
	short := with(l, func(l *SelectList) { l.Height = 2; l.Selected = 1 })
	index := func(i int) map[string]any { return noArgs{"index": float64(i)} }
	runParity(t, []parityCase{
		{name: "enter on the first", w: l, keys: keys(keyEnter), action: "select", args: index(0)},
		{name: "down down enter", w: l, keys: keys(keyDown, keyDown, keyEnter), action: "select", args: index(2)},
		{name: "j space", w: l, keys: keys(keyRune('j'), keySpace), action: "select", args: index(1)},
		{name: "end enter", w: l, keys: keys(keyEnd, keyEnter), action: "select", args: index(4)},
		{name: "up from the highlight", w: l, st: LocalState{Row: 3}, keys: keys(keyUp, keyEnter), action: "select", args: index(2)},
		{name: "k from the highlight", w: l, st: LocalState{Row: 3}, keys: keys(keyRune('k'), keyRune('k'), keyEnter), action: "select", args: index(1)},
		{name: "pgdown in a short list", w: short, keys: keys(keyPgDown, keyEnter), action: "select", args: index(2)},
		{name: "choosing again", w: short, st: LocalState{Row: 1}, keys: keys(keyEnter), action: "select", args: index(1)},
		{name: "choosing twice", w: l, keys: keys(keyEnter, keyDown, keyEnter), action: "select", args: index(1)},
	})
}

func TestParityTabs(t *testing.T) {
	tb := Tabs{ID: "tabs", Tabs: []string{"Inbox", "Sent", "Drafts", "Spam"}}
	index := func(i int) map[string]any { return noArgs{"index": float64(i)} }
	runParity(t, []parityCase{
		{name: "right", w: tb, keys: keys(keyRight), action: "select_tab", args: index(1)},
		{name: "l l", w: tb, keys: keys(keyRune('l'), keyRune('l')), action: "select_tab", args: index(2)},
		{name: "end", w: tb, keys: keys(keyEnd), action: "select_tab", args: index(3)},
		{name: "left", w: with(tb, func(t *Tabs) { t.Active = 2 }), keys: keys(keyLeft), action: "select_tab", args: index(1)},
		{name: "h h", w: with(tb, func(t *Tabs) { t.Active = 3 }), keys: keys(keyRune('h'), keyRune('h')), action: "select_tab", args: index(1)},
		{name: "home", w: with(tb, func(t *Tabs) { t.Active = 2 }), keys: keys(keyHome), action: "select_tab", args: index(0)},
		{name: "right from none", w: with(tb, func(t *Tabs) { t.Active = -1 }), keys: keys(keyRight), action: "select_tab", args: index(0)},
	})
}

func TestParityMenu(t *testing.T) {
	// Flattened: file, new, open (disabled), edit (disabled), help.
	m := tMenu
	item := func(id string) map[string]any { return noArgs{"item_id": id} }
	runParity(t, []parityCase{
		{name: "enter on the first", w: m, keys: keys(keyEnter), action: "select", args: item("file")},
		{name: "down enter chooses a nested item", w: m, keys: keys(keyDown, keyEnter), action: "select", args: item("new")},
		{name: "down skips disabled items", w: m, keys: keys(keyDown, keyDown, keySpace), action: "select", args: item("help")},
		{name: "j j enter", w: m, keys: keys(keyRune('j'), keyRune('j'), keyEnter), action: "select", args: item("help")},
		{name: "end enter", w: m, keys: keys(keyEnd, keyEnter), action: "select", args: item("help")},
		{name: "up skips disabled items", w: m, st: LocalState{Row: 4}, keys: keys(keyUp, keyEnter), action: "select", args: item("new")},
		{name: "home enter", w: m, st: LocalState{Row: 4}, keys: keys(keyHome, keyEnter), action: "select", args: item("file")},
	})
}

func TestParityModal(t *testing.T) {
	md := Modal{ID: "confirm-delete", Title: "Delete?", Body: Text{Text: "Really?"}, Visible: true}
	runParity(t, []parityCase{
		{name: "enter confirms", w: md, keys: keys(keyEnter), action: "confirm"},
		{name: "esc dismisses", w: md, keys: keys(keyEsc), action: "dismiss"},
		{name: "custom labels: enter confirms", w: with(md, func(m *Modal) { m.ConfirmLabel, m.DismissLabel = "Delete", "Keep" }), keys: keys(keyEnter), action: "confirm"},
	})
}

func TestParityTable(t *testing.T) {
	tb := with(tTable, func(t *Table) { t.Selected = -1 }) // columns name, age; rows ann, bob, cy
	index := func(i int) map[string]any { return noArgs{"index": float64(i)} }
	sortBy := func(col, dir string) map[string]any {
		if dir == "" {
			return noArgs{"column": col}
		}
		return noArgs{"column": col, "direction": dir}
	}
	runParity(t, []parityCase{
		{name: "enter on the first row", w: tb, keys: keys(keyEnter), action: "select_row", args: index(0)},
		{name: "down space", w: tb, keys: keys(keyDown, keySpace), action: "select_row", args: index(1)},
		{name: "j j enter", w: tb, keys: keys(keyRune('j'), keyRune('j'), keyEnter), action: "select_row", args: index(2)},
		{name: "end enter", w: tb, keys: keys(keyEnd, keyEnter), action: "select_row", args: index(2)},
		{name: "up enter", w: tb, st: LocalState{Row: 2}, keys: keys(keyUp, keyEnter), action: "select_row", args: index(1)},
		{name: "s sorts ascending", w: tb, keys: keys(dwK("s")), action: "sort", args: sortBy("name", "")},
		{name: "s sorts ascending, explicit", w: tb, keys: keys(dwK("s")), action: "sort", args: sortBy("name", SortAsc)},
		{name: "right s sorts the next column", w: tb, keys: keys(keyRight, dwK("s")), action: "sort", args: sortBy("age", SortAsc)},
		{name: "s s sorts descending", w: tb, keys: keys(dwK("s"), dwK("s")), action: "sort", args: sortBy("name", SortDesc)},
		{name: "s on a descending column sorts ascending", w: with(tb, func(t *Table) { t.SortColumn, t.SortDirection = "age", SortDesc }),
			st: LocalState{Col: 1}, keys: keys(dwK("s")), action: "sort", args: sortBy("age", SortAsc)},
	})
}

func TestParityTree(t *testing.T) {
	// Visible: a (collapsed, child b), d (expanded), e. b is collapsed with child c.
	tr := with(tTree, func(t *Tree) { t.Selected = "" })
	node := func(id string) map[string]any { return noArgs{"node_id": id} }
	runParity(t, []parityCase{
		{name: "right expands", w: tr, keys: keys(keyRight), action: "expand", args: node("a")},
		{name: "right right right expands a child", w: tr, keys: keys(keyRight, keyRight, keyRight), action: "expand", args: node("b")},
		{name: "left collapses", w: tr, st: LocalState{Row: 1}, keys: keys(keyLeft), action: "collapse", args: node("d")},
		{name: "left from a child collapses its parent", w: tr, st: LocalState{Row: 2}, keys: keys(keyLeft, keyLeft), action: "collapse", args: node("d")},
		{name: "enter selects", w: tr, keys: keys(keyEnter), action: "select_node", args: node("a")},
		{name: "down down space selects a child", w: tr, keys: keys(keyDown, keyDown, keySpace), action: "select_node", args: node("e")},
		{name: "end enter", w: tr, keys: keys(keyEnd, keyEnter), action: "select_node", args: node("e")},
		{name: "home enter", w: tr, st: LocalState{Row: 2}, keys: keys(keyHome, keyEnter), action: "select_node", args: node("a")},
		{name: "expand and select a grandchild", w: tr, keys: keys(keyRight, keyRight, keyRight, keyRight, keyEnter), action: "select_node", args: node("c")},
	})
}

func TestParityScrubber(t *testing.T) {
	s := tScrubber // 0-100, at 40, step 5, paused
	pos := func(p int) map[string]any { return noArgs{"position": float64(p)} }
	runParity(t, []parityCase{
		{name: "right", w: s, keys: keys(keyRight), action: "seek", args: pos(45)},
		{name: "left", w: s, keys: keys(keyLeft), action: "seek", args: pos(35)},
		{name: "l l l", w: s, keys: repeat(keyRune('l'), 3), action: "seek", args: pos(55)},
		{name: "h h", w: s, keys: repeat(keyRune('h'), 2), action: "seek", args: pos(30)},
		{name: "pgdown", w: s, keys: keys(keyPgDown), action: "seek", args: pos(90)},
		{name: "pgup stops at Min", w: s, keys: keys(keyPgUp), action: "seek", args: pos(0)},
		{name: "right stops at Max", w: with(s, func(s *Scrubber) { s.Position = 97 }), keys: keys(keyRight), action: "seek", args: pos(100)},
		{name: "home", w: s, keys: keys(keyHome), action: "seek", args: pos(0)},
		{name: "end", w: s, keys: keys(keyEnd), action: "seek", args: pos(100)},
		{name: "swapped bounds", w: with(s, func(s *Scrubber) { s.Min, s.Max = 100, 0 }), keys: keys(keyEnd), action: "seek", args: pos(100)},
		{name: "space plays", w: s, keys: keys(keySpace), action: "play"},
		{name: "space pauses", w: with(s, func(s *Scrubber) { s.Playing = true }), keys: keys(keySpace), action: "pause"},
	})
}

func TestParityViewport(t *testing.T) {
	v := tViewport // 30 lines, 10 visible, at 5: MaxOffset 20
	row := func(r int) map[string]any { return noArgs{"row": float64(r)} }
	runParity(t, []parityCase{
		{name: "down", w: v, keys: keys(keyDown), action: "scroll_to", args: row(6)},
		{name: "up", w: v, keys: keys(keyUp), action: "scroll_to", args: row(4)},
		{name: "j j", w: v, keys: repeat(keyRune('j'), 2), action: "scroll_to", args: row(7)},
		{name: "k k k", w: v, keys: repeat(keyRune('k'), 3), action: "scroll_to", args: row(2)},
		{name: "pgdown", w: v, keys: keys(keyPgDown), action: "scroll_to", args: row(15)},
		{name: "pgdown pgdown stops at MaxOffset", w: v, keys: keys(keyPgDown, keyPgDown), action: "scroll_to", args: row(20)},
		{name: "pgup stops at the top", w: v, keys: keys(keyPgUp), action: "scroll_to", args: row(0)},
		{name: "home", w: v, keys: keys(keyHome), action: "scroll_to", args: row(0)},
		{name: "end", w: v, keys: keys(keyEnd), action: "scroll_to", args: row(v.MaxOffset())},
	})
}

// TestParityCoversEveryWriter checks that every widget type whose tools
// write has a parity test above: a new widget needs one too.
func TestParityCoversEveryWriter(t *testing.T) {
	covered := map[string]bool{
		"Button": true, "TextInput": true, "TextArea": true, "PasswordField": true, "Checkbox": true,
		"SelectList": true, "Tabs": true, "Menu": true, "Modal": true, "Table": true, "Tree": true,
		"Scrubber": true, "Viewport": true,
	}
	for _, w := range markedWidgets() {
		name := reflect.TypeOf(w).Name()
		writes := false
		for _, spec := range w.Tools() {
			writes = writes || !spec.ReadOnly
		}
		if writes != covered[name] {
			t.Errorf("%s: writes %v, has a parity test %v", name, writes, covered[name])
		}
		delete(covered, name)
	}
	for name := range covered {
		t.Errorf("%s has a parity test but markedWidgets has none", name)
	}
}
