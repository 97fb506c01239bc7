package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Sample widgets for the tool tests.
var (
	tMenu = Menu{ID: "m", Items: []MenuItem{
		{ID: "file", Label: "File", Children: []MenuItem{
			{ID: "new", Label: "New"},
			{ID: "open", Label: "Open", Disabled: true},
		}},
		{ID: "edit", Label: "Edit", Disabled: true},
		{ID: "help", Label: "Help"},
	}}
	tTable = Table{ID: "t", Columns: []TableColumn{{Key: "name", Title: "Name"}, {Key: "age", Title: "Age"}},
		Rows: [][]string{{"ann", "31"}, {"bob", "27"}, {"cy"}}, Selected: 1}
	// tTree: a (collapsed) > b (collapsed) > c; d (expanded) > e.
	tTree = Tree{ID: "tr", Nodes: []TreeNode{
		{ID: "a", Label: "A", Children: []TreeNode{
			{ID: "b", Label: "B", Children: []TreeNode{{ID: "c", Label: "C"}}},
		}},
		{ID: "d", Label: "D", Expanded: true, Children: []TreeNode{{ID: "e", Label: "E"}}},
	}, Selected: "e"}
	tScrubber = Scrubber{ID: "sc", Label: "Time", Min: 0, Max: 100, Position: 40, Step: 5}
	tViewport = Viewport{ID: "v", Lines: dwLines(30), Offset: 5, Height: 10}
	tBars     = BarChart{ID: "bc", Bars: []Bar{{"a", 3}, {"b", math.NaN()}, {"c", -2}, {"d", math.Inf(1)}}}
	tLines    = LineChart{ID: "lc", Series: []Series{
		{Name: "s1", Values: []float64{1, 2, 3}},
		{Name: "s2", Values: []float64{5, math.Inf(-1)}},
		{Name: "s3", Values: []float64{math.NaN(), 0, -4}},
	}}
	tScatter = ScatterChart{ID: "sch", Series: []ScatterSeries{
		{Name: "p", Points: []Point{{1, 2}, {-3, 4}, {math.NaN(), 1}}},
		{Name: "q", Points: []Point{{5, math.Inf(1)}, {2, -1}}},
	}}
)

// with returns a copy of w changed by f.
func with[W any](w W, f func(*W)) W {
	f(&w)
	return w
}

// jsonOf marshals v, failing the test on error.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v", v, err)
	}
	return string(b)
}

type noArgs = map[string]any

func TestToolCalls(t *testing.T) {
	type msgs = []tea.Msg
	cmd := tea.Cmd(func() tea.Msg { return nil })
	ti := TextInput{ID: "ti", Value: "old"}
	ta := TextArea{ID: "ta", Value: "x\ny"}
	pw := PasswordField{ID: "pw", Value: "old"}
	sl := SelectList{ID: "s", Options: []string{"a", "b", "c", "d"}, Selected: 1}
	tabs := Tabs{ID: "tb", Tabs: []string{"A", "B", "C"}, Active: 1}

	tests := []struct {
		name   string
		w      ToolProvider
		action string
		args   map[string]any
		want   string // the result as JSON; "" when an error is wanted
		msgs   []tea.Msg
		err    string
	}{
		// Button.
		{"button click", Button{ID: "b", OnClick: clickedMsg{1}}, "click", nil, `{"ok":true}`, msgs{clickedMsg{1}}, ""},
		{"button click destructive", Button{ID: "b", OnClick: clickedMsg{2}, Destructive: true}, "click", noArgs{}, `{"ok":true}`, msgs{clickedMsg{2}}, ""},
		{"button nil OnClick", Button{ID: "b"}, "click", nil, "", nil, "this button has no action: pressing it does nothing"},
		{"button func OnClick", Button{ID: "b", OnClick: cmd}, "click", nil, "", nil, "this button's action cannot be triggered as a message"},
		{"button plain func OnClick", Button{ID: "b", OnClick: func() {}}, "click", nil, "", nil, "this button's action cannot be triggered as a message"},
		{"button disabled", Button{ID: "b", OnClick: clickedMsg{1}, Disabled: true}, "click", nil, "", nil, "this button is disabled"},
		{"button unknown action", Button{ID: "b", OnClick: clickedMsg{1}}, "press", nil, "", nil, `unknown action "press"`},
		{"button extra argument", Button{ID: "b", OnClick: clickedMsg{1}}, "click", noArgs{"x": 1.0}, "", nil, `unexpected argument "x": this action takes no arguments`},

		// TextInput.
		{"input type_into replaces", ti, "type_into", noArgs{"text": "new"}, `{"ok":true}`, msgs{TextInputChanged{ID: "ti", Text: "new"}}, ""},
		{"input type_into same text", ti, "type_into", noArgs{"text": "old"}, `{"ok":true}`, msgs{TextInputChanged{ID: "ti", Text: "old"}}, ""},
		{"input type_into empty", ti, "type_into", noArgs{"text": ""}, `{"ok":true}`, msgs{TextInputChanged{ID: "ti", Text: ""}}, ""},
		{"input type_into tab", ti, "type_into", noArgs{"text": "a\tb"}, `{"ok":true}`, msgs{TextInputChanged{ID: "ti", Text: "a\tb"}}, ""},
		{"input type_into at default limit", ti, "type_into", noArgs{"text": strings.Repeat("é", DefaultMaxLen)}, `{"ok":true}`, msgs{TextInputChanged{ID: "ti", Text: strings.Repeat("é", DefaultMaxLen)}}, ""},
		{"input type_into over default limit", ti, "type_into", noArgs{"text": strings.Repeat("x", DefaultMaxLen+1)}, "", nil, `argument "text" is too long: this field takes at most 4096 characters`},
		{"input type_into over MaxLen", with(ti, func(w *TextInput) { w.MaxLen = 3 }), "type_into", noArgs{"text": "日本語x"}, "", nil, `argument "text" is too long: this field takes at most 3 characters`},
		{"input type_into at MaxLen", with(ti, func(w *TextInput) { w.MaxLen = 3 }), "type_into", noArgs{"text": "日本語"}, `{"ok":true}`, msgs{TextInputChanged{ID: "ti", Text: "日本語"}}, ""},
		{"input type_into newline", ti, "type_into", noArgs{"text": "a\nb"}, "", nil, `argument "text" contains a line break, but this is a single-line field`},
		{"input type_into carriage return", ti, "type_into", noArgs{"text": "a\rb"}, "", nil, `argument "text" contains a line break, but this is a single-line field`},
		{"input type_into escape", ti, "type_into", noArgs{"text": "\x1b[2J"}, "", nil, `argument "text" contains a control character: only tabs are allowed`},
		{"input type_into bidi override", ti, "type_into", noArgs{"text": "abc\u202egpj.exe"}, "", nil, `argument "text" contains a bidirectional control character (U+202E): right-to-left text needs none`},
		{"input type_into bidi isolate", ti, "type_into", noArgs{"text": "\u2067x"}, "", nil, `argument "text" contains a bidirectional control character (U+2067): right-to-left text needs none`},
		{"input type_into right-to-left text with marks", ti, "type_into", noArgs{"text": "שלום\u200f abc 👨\u200d👩\u200d👧"}, `{"ok":true}`, msgs{TextInputChanged{ID: "ti", Text: "שלום\u200f abc 👨\u200d👩\u200d👧"}}, ""},
		{"input type_into invalid utf8", ti, "type_into", noArgs{"text": "a\xffb"}, "", nil, `argument "text" is not valid UTF-8`},
		{"input type_into missing text", ti, "type_into", noArgs{}, "", nil, `missing required argument "text" (a string)`},
		{"input type_into nil args", ti, "type_into", nil, "", nil, `missing required argument "text" (a string)`},
		{"input type_into wrong type", ti, "type_into", noArgs{"text": 5.0}, "", nil, `argument "text" must be a string, got number`},
		{"input type_into null", ti, "type_into", noArgs{"text": nil}, "", nil, `argument "text" must be a string, got null`},
		{"input type_into extra arg", ti, "type_into", noArgs{"text": "a", "value": "b"}, "", nil, `unexpected argument "value": this action takes "text"`},
		{"input clear", ti, "clear", nil, `{"ok":true}`, msgs{TextInputChanged{ID: "ti", Text: ""}}, ""},
		{"input get_value", ti, "get_value", nil, `{"value":"old"}`, nil, ""},
		{"input disabled type_into", with(ti, func(w *TextInput) { w.Disabled = true }), "type_into", noArgs{"text": "a"}, "", nil, "this text input is disabled"},
		{"input disabled clear", with(ti, func(w *TextInput) { w.Disabled = true }), "clear", nil, "", nil, "this text input is disabled"},
		{"input disabled get_value", with(ti, func(w *TextInput) { w.Disabled = true }), "get_value", nil, "", nil, "this text input is disabled"},
		{"input unknown action", ti, "append", nil, "", nil, `unknown action "append"`},

		// TextArea.
		{"area type_into", ta, "type_into", noArgs{"text": "a\nb"}, `{"ok":true}`, msgs{TextAreaChanged{ID: "ta", Text: "a\nb"}}, ""},
		{"area type_into normalises breaks", ta, "type_into", noArgs{"text": "a\r\nb\rc"}, `{"ok":true}`, msgs{TextAreaChanged{ID: "ta", Text: "a\nb\nc"}}, ""},
		{"area type_into escape", ta, "type_into", noArgs{"text": "a\x07"}, "", nil, `argument "text" contains a control character: only tabs and line breaks are allowed`},
		{"area type_into bidi embedding", ta, "type_into", noArgs{"text": "a\n\u202bb"}, "", nil, `argument "text" contains a bidirectional control character (U+202B): right-to-left text needs none`},
		{"area type_into at default limit", ta, "type_into", noArgs{"text": strings.Repeat("x", 4*DefaultMaxLen)}, `{"ok":true}`, msgs{TextAreaChanged{ID: "ta", Text: strings.Repeat("x", 4*DefaultMaxLen)}}, ""},
		{"area type_into over default limit", ta, "type_into", noArgs{"text": strings.Repeat("x", 4*DefaultMaxLen+1)}, "", nil, `argument "text" is too long: this field takes at most 16384 characters`},
		{"area type_into over MaxLen", with(ta, func(w *TextArea) { w.MaxLen = 2 }), "type_into", noArgs{"text": "a\nb"}, "", nil, `argument "text" is too long: this field takes at most 2 characters`},
		{"area type_into wrong type", ta, "type_into", noArgs{"text": true}, "", nil, `argument "text" must be a string, got boolean`},
		{"area clear", ta, "clear", nil, `{"ok":true}`, msgs{TextAreaChanged{ID: "ta", Text: ""}}, ""},
		{"area get_value", ta, "get_value", nil, `{"value":"x\ny"}`, nil, ""},
		{"area disabled", with(ta, func(w *TextArea) { w.Disabled = true }), "get_value", nil, "", nil, "this text area is disabled"},
		{"area unknown action", ta, "type", nil, "", nil, `unknown action "type"`},

		// PasswordField.
		{"password type_into", pw, "type_into", noArgs{"text": "s3cret"}, `{"ok":true}`, msgs{PasswordFieldChanged{ID: "pw", Text: "s3cret"}}, ""},
		{"password type_into newline", pw, "type_into", noArgs{"text": "a\nb"}, "", nil, `argument "text" contains a line break, but this is a single-line field`},
		{"password type_into over MaxLen", with(pw, func(w *PasswordField) { w.MaxLen = 4 }), "type_into", noArgs{"text": "abcde"}, "", nil, `argument "text" is too long: this field takes at most 4 characters`},
		{"password type_into over default limit", pw, "type_into", noArgs{"text": strings.Repeat("x", DefaultMaxLen+1)}, "", nil, `argument "text" is too long: this field takes at most 4096 characters`},
		{"password type_into missing", pw, "type_into", noArgs{}, "", nil, `missing required argument "text" (a string)`},
		{"password clear", pw, "clear", nil, `{"ok":true}`, msgs{PasswordFieldChanged{ID: "pw", Text: ""}}, ""},
		{"password has no get_value", pw, "get_value", nil, "", nil, `unknown action "get_value"`},
		{"password disabled", with(pw, func(w *PasswordField) { w.Disabled = true }), "clear", nil, "", nil, "this password field is disabled"},

		// Checkbox.
		{"checkbox toggle on", Checkbox{ID: "c"}, "toggle", nil, `{"checked":true,"ok":true}`, msgs{CheckboxToggled{ID: "c", Checked: true}}, ""},
		{"checkbox toggle off", Checkbox{ID: "c", Checked: true}, "toggle", nil, `{"checked":false,"ok":true}`, msgs{CheckboxToggled{ID: "c", Checked: false}}, ""},
		{"checkbox get_checked", Checkbox{ID: "c", Checked: true}, "get_checked", nil, `{"checked":true}`, nil, ""},
		{"checkbox disabled toggle", Checkbox{ID: "c", Disabled: true}, "toggle", nil, "", nil, "this checkbox is disabled"},
		{"checkbox disabled get_checked", Checkbox{ID: "c", Disabled: true}, "get_checked", nil, "", nil, "this checkbox is disabled"},
		{"checkbox unknown action", Checkbox{ID: "c"}, "check", nil, "", nil, `unknown action "check"`},

		// SelectList.
		{"list select", sl, "select", noArgs{"index": 2.0}, `{"ok":true}`, msgs{OptionSelected{ID: "s", Index: 2}}, ""},
		{"list select first", sl, "select", noArgs{"index": 0.0}, `{"ok":true}`, msgs{OptionSelected{ID: "s", Index: 0}}, ""},
		{"list select already selected", sl, "select", noArgs{"index": 1.0}, `{"ok":true}`, msgs{OptionSelected{ID: "s", Index: 1}}, ""},
		{"list select int", sl, "select", noArgs{"index": 3}, `{"ok":true}`, msgs{OptionSelected{ID: "s", Index: 3}}, ""},
		{"list select json.Number", sl, "select", noArgs{"index": json.Number("2")}, `{"ok":true}`, msgs{OptionSelected{ID: "s", Index: 2}}, ""},
		{"list select integral float64 2.0e0", sl, "select", noArgs{"index": 2e0}, `{"ok":true}`, msgs{OptionSelected{ID: "s", Index: 2}}, ""},
		{"list select out of range", sl, "select", noArgs{"index": 9.0}, "", nil, "index 9 is out of range: this list has 4 options (0-3)"},
		{"list select just past the end", sl, "select", noArgs{"index": 4.0}, "", nil, "index 4 is out of range: this list has 4 options (0-3)"},
		{"list select negative", sl, "select", noArgs{"index": -1.0}, "", nil, "index -1 is out of range: this list has 4 options (0-3)"},
		{"list select one option", SelectList{ID: "s", Options: []string{"x"}}, "select", noArgs{"index": 1.0}, "", nil, "index 1 is out of range: this list has 1 option (0-0)"},
		{"list select no options", SelectList{ID: "s"}, "select", noArgs{"index": 0.0}, "", nil, "index 0 is out of range: this list has no options"},
		{"list select non-integral", sl, "select", noArgs{"index": 1.5}, "", nil, `argument "index" must be an integer, got 1.5`},
		{"list select NaN", sl, "select", noArgs{"index": math.NaN()}, "", nil, `argument "index" must be an integer, got a non-finite number`},
		{"list select huge", sl, "select", noArgs{"index": 1e300}, "", nil, `argument "index" is too large: 1e+300`},
		{"list select string", sl, "select", noArgs{"index": "2"}, "", nil, `argument "index" must be an integer, got string`},
		{"list select bool", sl, "select", noArgs{"index": true}, "", nil, `argument "index" must be an integer, got boolean`},
		{"list select missing", sl, "select", noArgs{}, "", nil, `missing required argument "index" (an integer)`},
		{"list get_selected", sl, "get_selected", nil, `{"index":1,"label":"b"}`, nil, ""},
		{"list get_selected none", with(sl, func(w *SelectList) { w.Selected = -1 }), "get_selected", nil, `{"index":-1,"label":null}`, nil, ""},
		{"list get_selected stale", with(sl, func(w *SelectList) { w.Selected = 7 }), "get_selected", nil, `{"index":-1,"label":null}`, nil, ""},
		{"list get_options", sl, "get_options", nil, `{"options":["a","b","c","d"]}`, nil, ""},
		{"list get_options empty", SelectList{ID: "s"}, "get_options", nil, `{"options":[]}`, nil, ""},
		{"list disabled select", with(sl, func(w *SelectList) { w.Disabled = true }), "select", noArgs{"index": 1.0}, "", nil, "this select list is disabled"},
		{"list disabled get_options", with(sl, func(w *SelectList) { w.Disabled = true }), "get_options", nil, "", nil, "this select list is disabled"},
		{"list unknown action", sl, "choose", nil, "", nil, `unknown action "choose"`},

		// Tabs.
		{"tabs select_tab", tabs, "select_tab", noArgs{"index": 2.0}, `{"ok":true}`, msgs{TabChanged{ID: "tb", Index: 2}}, ""},
		{"tabs select_tab 0", tabs, "select_tab", noArgs{"index": 0.0}, `{"ok":true}`, msgs{TabChanged{ID: "tb", Index: 0}}, ""},
		{"tabs select_tab active", tabs, "select_tab", noArgs{"index": 1.0}, `{"changed":false,"ok":true,"reason":"the tab is already active"}`, nil, ""},
		{"tabs select_tab out of range", tabs, "select_tab", noArgs{"index": 3.0}, "", nil, "index 3 is out of range: this widget has 3 tabs (0-2)"},
		{"tabs select_tab non-integral", tabs, "select_tab", noArgs{"index": 0.25}, "", nil, `argument "index" must be an integer, got 0.25`},
		{"tabs get_tabs", tabs, "get_tabs", nil, `{"active":1,"tabs":["A","B","C"]}`, nil, ""},
		{"tabs get_tabs none active", with(tabs, func(w *Tabs) { w.Active = 5 }), "get_tabs", nil, `{"active":-1,"tabs":["A","B","C"]}`, nil, ""},
		{"tabs disabled", with(tabs, func(w *Tabs) { w.Disabled = true }), "get_tabs", nil, "", nil, "these tabs are disabled"},
		{"tabs unknown action", tabs, "select", nil, "", nil, `unknown action "select"`},

		// Menu.
		{"menu select nested", tMenu, "select", noArgs{"item_id": "new"}, `{"ok":true}`, msgs{MenuSelected{ID: "m", ItemID: "new"}}, ""},
		{"menu select top level", tMenu, "select", noArgs{"item_id": "help"}, `{"ok":true}`, msgs{MenuSelected{ID: "m", ItemID: "help"}}, ""},
		{"menu select disabled item", tMenu, "select", noArgs{"item_id": "open"}, "", nil, `menu item "open" is disabled`},
		{"menu select unknown item", tMenu, "select", noArgs{"item_id": "nope"}, "", nil, `unknown item_id "nope": the enabled items are "file", "new", "help"`},
		{"menu select empty menu", Menu{ID: "m"}, "select", noArgs{"item_id": "x"}, "", nil, `unknown item_id "x": this menu has no enabled items`},
		{"menu select missing", tMenu, "select", noArgs{}, "", nil, `missing required argument "item_id" (a string)`},
		{"menu select wrong type", tMenu, "select", noArgs{"item_id": 3.0}, "", nil, `argument "item_id" must be a string, got number`},
		{"menu get_items", tMenu, "get_items", nil, `{"items":[{"depth":0,"disabled":false,"id":"file","label":"File"},{"depth":1,"disabled":false,"id":"new","label":"New"},{"depth":1,"disabled":true,"id":"open","label":"Open"},{"depth":0,"disabled":true,"id":"edit","label":"Edit"},{"depth":0,"disabled":false,"id":"help","label":"Help"}]}`, nil, ""},
		{"menu disabled", with(tMenu, func(w *Menu) { w.Disabled = true }), "select", noArgs{"item_id": "new"}, "", nil, "this menu is disabled"},
		{"menu unknown action", tMenu, "open", nil, "", nil, `unknown action "open"`},

		// Modal.
		{"modal confirm", Modal{ID: "md", Visible: true}, "confirm", nil, `{"ok":true}`, msgs{ModalConfirmed{ID: "md"}}, ""},
		{"modal dismiss", Modal{ID: "md", Visible: true}, "dismiss", nil, `{"ok":true}`, msgs{ModalDismissed{ID: "md"}}, ""},
		{"modal hidden confirm", Modal{ID: "md"}, "confirm", nil, "", nil, "this modal is not visible"},
		{"modal hidden dismiss", Modal{ID: "md"}, "dismiss", nil, "", nil, "this modal is not visible"},
		{"modal unknown action", Modal{ID: "md", Visible: true}, "close", nil, "", nil, `unknown action "close"`},

		// Table.
		{"table select_row", tTable, "select_row", noArgs{"index": 2.0}, `{"ok":true}`, msgs{RowSelected{ID: "t", Index: 2}}, ""},
		{"table select_row out of range", tTable, "select_row", noArgs{"index": 3.0}, "", nil, "index 3 is out of range: this table has 3 rows (0-2)"},
		{"table select_row no rows", Table{ID: "t"}, "select_row", noArgs{"index": 0.0}, "", nil, "index 0 is out of range: this table has no rows"},
		{"table select_row wrong type", tTable, "select_row", noArgs{"index": []any{1.0}}, "", nil, `argument "index" must be an integer, got array`},
		{"table sort default asc", tTable, "sort", noArgs{"column": "name"}, `{"ok":true}`, msgs{TableSorted{ID: "t", Column: "name", Direction: SortAsc}}, ""},
		{"table sort desc", tTable, "sort", noArgs{"column": "age", "direction": "desc"}, `{"ok":true}`, msgs{TableSorted{ID: "t", Column: "age", Direction: SortDesc}}, ""},
		{"table sort asc", tTable, "sort", noArgs{"column": "age", "direction": "asc"}, `{"ok":true}`, msgs{TableSorted{ID: "t", Column: "age", Direction: SortAsc}}, ""},
		{"table sort unknown column", tTable, "sort", noArgs{"column": "Name"}, "", nil, `unknown column "Name": the column keys are "name", "age"`},
		{"table sort no columns", Table{ID: "t"}, "sort", noArgs{"column": "x"}, "", nil, `unknown column "x": this table has no columns`},
		{"table sort unknown direction", tTable, "sort", noArgs{"column": "name", "direction": "up"}, "", nil, `argument "direction" must be "asc" or "desc", got "up"`},
		{"table sort direction wrong type", tTable, "sort", noArgs{"column": "name", "direction": 1.0}, "", nil, `argument "direction" must be a string, got number`},
		{"table sort missing column", tTable, "sort", noArgs{"direction": "asc"}, "", nil, `missing required argument "column" (a string)`},
		{"table get_rows", with(tTable, func(w *Table) { w.SortColumn, w.SortDirection = "age", SortDesc }), "get_rows", nil,
			`{"columns":[{"key":"name","title":"Name"},{"key":"age","title":"Age"}],"rows":[["ann","31"],["bob","27"],["cy"]],"selected":1,"sort_column":"age","sort_direction":"desc"}`, nil, ""},
		{"table get_rows unsorted", Table{ID: "t", Selected: 4}, "get_rows", nil,
			`{"columns":[],"rows":[],"selected":-1,"sort_column":null,"sort_direction":null}`, nil, ""},
		{"table disabled", with(tTable, func(w *Table) { w.Disabled = true }), "get_rows", nil, "", nil, "this table is disabled"},
		{"table unknown action", tTable, "filter", nil, "", nil, `unknown action "filter"`},

		// Tree.
		{"tree expand", tTree, "expand", noArgs{"node_id": "a"}, `{"ok":true}`, msgs{TreeExpanded{ID: "tr", NodeID: "a"}}, ""},
		{"tree expand hidden node", tTree, "expand", noArgs{"node_id": "b"}, `{"ok":true}`, msgs{TreeExpanded{ID: "tr", NodeID: "b"}}, ""},
		{"tree expand expanded", tTree, "expand", noArgs{"node_id": "d"}, `{"changed":false,"ok":true,"reason":"the node is already expanded"}`, nil, ""},
		{"tree expand leaf", tTree, "expand", noArgs{"node_id": "c"}, "", nil, `node "c" has no children to expand`},
		{"tree collapse", tTree, "collapse", noArgs{"node_id": "d"}, `{"ok":true}`, msgs{TreeCollapsed{ID: "tr", NodeID: "d"}}, ""},
		{"tree collapse collapsed", tTree, "collapse", noArgs{"node_id": "b"}, `{"changed":false,"ok":true,"reason":"the node is already collapsed"}`, nil, ""},
		{"tree collapse leaf", tTree, "collapse", noArgs{"node_id": "e"}, "", nil, `node "e" has no children to collapse`},
		{"tree select_node hidden", tTree, "select_node", noArgs{"node_id": "c"}, `{"ok":true}`, msgs{TreeSelected{ID: "tr", NodeID: "c"}}, ""},
		{"tree select_node", tTree, "select_node", noArgs{"node_id": "d"}, `{"ok":true}`, msgs{TreeSelected{ID: "tr", NodeID: "d"}}, ""},
		{"tree unknown node", tTree, "select_node", noArgs{"node_id": "z"}, "", nil, `unknown node_id "z": no node of this tree has that id`},
		{"tree missing node_id", tTree, "expand", noArgs{}, "", nil, `missing required argument "node_id" (a string)`},
		{"tree node_id wrong type", tTree, "collapse", noArgs{"node_id": map[string]any{}}, "", nil, `argument "node_id" must be a string, got object`},
		{"tree disabled", with(tTree, func(w *Tree) { w.Disabled = true }), "select_node", noArgs{"node_id": "d"}, "", nil, "this tree is disabled"},
		{"tree unknown action", tTree, "toggle", nil, "", nil, `unknown action "toggle"`},

		// Scrubber.
		{"scrubber seek", tScrubber, "seek", noArgs{"position": 50.0}, `{"ok":true}`, msgs{ScrubberSeeked{ID: "sc", Position: 50}}, ""},
		{"scrubber seek min", tScrubber, "seek", noArgs{"position": 0.0}, `{"ok":true}`, msgs{ScrubberSeeked{ID: "sc", Position: 0}}, ""},
		{"scrubber seek max", tScrubber, "seek", noArgs{"position": 100.0}, `{"ok":true}`, msgs{ScrubberSeeked{ID: "sc", Position: 100}}, ""},
		{"scrubber seek current", tScrubber, "seek", noArgs{"position": 40.0}, `{"changed":false,"ok":true,"reason":"already at that position"}`, nil, ""},
		{"scrubber seek past max", tScrubber, "seek", noArgs{"position": 101.0}, "", nil, "position 101 is out of range: valid positions are 0-100"},
		{"scrubber seek below min", tScrubber, "seek", noArgs{"position": -1.0}, "", nil, "position -1 is out of range: valid positions are 0-100"},
		{"scrubber seek swapped bounds", Scrubber{ID: "sc", Min: 10, Max: -10}, "seek", noArgs{"position": -10.0}, `{"ok":true}`, msgs{ScrubberSeeked{ID: "sc", Position: -10}}, ""},
		{"scrubber seek swapped bounds out of range", Scrubber{ID: "sc", Min: 10, Max: -10}, "seek", noArgs{"position": 11.0}, "", nil, "position 11 is out of range: valid positions are -10-10"},
		{"scrubber seek non-integral", tScrubber, "seek", noArgs{"position": 50.5}, "", nil, `argument "position" must be an integer, got 50.5`},
		{"scrubber seek missing", tScrubber, "seek", noArgs{}, "", nil, `missing required argument "position" (an integer)`},
		{"scrubber play", tScrubber, "play", nil, `{"ok":true}`, msgs{ScrubberPlayed{ID: "sc"}}, ""},
		{"scrubber play playing", with(tScrubber, func(w *Scrubber) { w.Playing = true }), "play", nil, `{"changed":false,"ok":true,"reason":"already playing"}`, nil, ""},
		{"scrubber pause", with(tScrubber, func(w *Scrubber) { w.Playing = true }), "pause", nil, `{"ok":true}`, msgs{ScrubberPaused{ID: "sc"}}, ""},
		{"scrubber pause paused", tScrubber, "pause", nil, `{"changed":false,"ok":true,"reason":"already paused"}`, nil, ""},
		{"scrubber get_position", tScrubber, "get_position", nil, `{"max":100,"min":0,"playing":false,"position":40}`, nil, ""},
		{"scrubber get_position clamps", Scrubber{ID: "sc", Min: 10, Max: 0, Position: 99, Playing: true}, "get_position", nil, `{"max":10,"min":0,"playing":true,"position":10}`, nil, ""},
		{"scrubber disabled seek", with(tScrubber, func(w *Scrubber) { w.Disabled = true }), "seek", noArgs{"position": 1.0}, "", nil, "this scrubber is disabled"},
		{"scrubber disabled get_position", with(tScrubber, func(w *Scrubber) { w.Disabled = true }), "get_position", nil, "", nil, "this scrubber is disabled"},
		{"scrubber unknown action", tScrubber, "stop", nil, "", nil, `unknown action "stop"`},

		// Viewport.
		{"viewport scroll_to", tViewport, "scroll_to", noArgs{"row": 7.0}, `{"ok":true}`, msgs{ScrolledTo{ID: "v", Row: 7}}, ""},
		{"viewport scroll_to max", tViewport, "scroll_to", noArgs{"row": 20.0}, `{"ok":true}`, msgs{ScrolledTo{ID: "v", Row: 20}}, ""},
		{"viewport scroll_to current", tViewport, "scroll_to", noArgs{"row": 5.0}, `{"changed":false,"ok":true,"reason":"already scrolled there"}`, nil, ""},
		{"viewport scroll_to past max", tViewport, "scroll_to", noArgs{"row": 21.0}, "", nil, "row 21 is out of range: the first visible line can be 0-20 (30 lines, 10 visible at once)"},
		{"viewport scroll_to negative", tViewport, "scroll_to", noArgs{"row": -1.0}, "", nil, "row -1 is out of range: the first visible line can be 0-20 (30 lines, 10 visible at once)"},
		{"viewport scroll_to short text", Viewport{ID: "v", Lines: dwLines(3)}, "scroll_to", noArgs{"row": 1.0}, "", nil, "row 1 is out of range: the first visible line can be 0-0 (3 lines, 10 visible at once)"},
		{"viewport scroll_to non-integral", tViewport, "scroll_to", noArgs{"row": 1.1}, "", nil, `argument "row" must be an integer, got 1.1`},
		{"viewport get_visible_range", tViewport, "get_visible_range", nil, `{"bottom":14,"top":5,"total":30}`, nil, ""},
		{"viewport get_visible_range clamps offset", with(tViewport, func(w *Viewport) { w.Offset = 99 }), "get_visible_range", nil, `{"bottom":29,"top":20,"total":30}`, nil, ""},
		{"viewport get_visible_range short", Viewport{ID: "v", Lines: dwLines(3)}, "get_visible_range", nil, `{"bottom":2,"top":0,"total":3}`, nil, ""},
		{"viewport get_visible_range empty", Viewport{ID: "v"}, "get_visible_range", nil, `{"bottom":-1,"top":0,"total":0}`, nil, ""},
		{"viewport disabled", with(tViewport, func(w *Viewport) { w.Disabled = true }), "scroll_to", noArgs{"row": 1.0}, "", nil, "this viewport is disabled"},
		{"viewport unknown action", tViewport, "scroll", nil, "", nil, `unknown action "scroll"`},

		// Charts.
		{"bar get_data", tBars, "get_data", nil, `{"bars":[{"label":"a","value":3},{"label":"b","value":null},{"label":"c","value":-2},{"label":"d","value":null}]}`, nil, ""},
		{"bar get_range", tBars, "get_range", nil, `{"max":3,"min":-2}`, nil, ""},
		{"bar get_range empty", BarChart{ID: "bc"}, "get_range", nil, `{"max":0,"min":0}`, nil, ""},
		{"bar unknown action", tBars, "get_series", nil, "", nil, `unknown action "get_series"`},
		{"bar extra argument", tBars, "get_data", noArgs{"index": 1.0}, "", nil, `unexpected argument "index": this action takes no arguments`},
		{"line get_series", tLines, "get_series", nil, `{"series":[{"name":"s1","values":[1,2,3]},{"name":"s2","values":[5,null]},{"name":"s3","values":[null,0,-4]}]}`, nil, ""},
		{"line get_range", tLines, "get_range", nil, `{"max":5,"min":-4}`, nil, ""},
		{"line get_point_at", tLines, "get_point_at", noArgs{"index": 1.0}, `{"points":[{"index":1,"name":"s1","value":2},{"index":1,"name":"s2","value":null},{"index":1,"name":"s3","value":0}]}`, nil, ""},
		{"line get_point_at skips short series", tLines, "get_point_at", noArgs{"index": 2.0}, `{"points":[{"index":2,"name":"s1","value":3},{"index":2,"name":"s3","value":-4}]}`, nil, ""},
		{"line get_point_at out of range", tLines, "get_point_at", noArgs{"index": 3.0}, "", nil, "index 3 is out of range: the longest series of this chart has 3 values (0-2)"},
		{"line get_point_at empty", LineChart{ID: "lc"}, "get_point_at", noArgs{"index": 0.0}, "", nil, "index 0 is out of range: the longest series of this chart has no values"},
		{"line get_point_at non-integral", tLines, "get_point_at", noArgs{"index": 0.5}, "", nil, `argument "index" must be an integer, got 0.5`},
		{"line get_point_at missing", tLines, "get_point_at", noArgs{}, "", nil, `missing required argument "index" (an integer)`},
		{"line unknown action", tLines, "get_points", nil, "", nil, `unknown action "get_points"`},
		{"scatter get_points", tScatter, "get_points", nil, `{"series":[{"name":"p","points":[{"x":1,"y":2},{"x":-3,"y":4},{"x":null,"y":1}]},{"name":"q","points":[{"x":5,"y":null},{"x":2,"y":-1}]}]}`, nil, ""},
		{"scatter get_range", tScatter, "get_range", nil, `{"x":{"max":2,"min":-3},"y":{"max":4,"min":-1}}`, nil, ""},
		{"scatter unknown action", tScatter, "get_cluster_info", nil, "", nil, `unknown action "get_cluster_info"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, gotMsgs, err := tt.w.CallTool(tt.action, tt.args)
			if !reflect.DeepEqual(gotMsgs, tt.msgs) {
				t.Errorf("msgs = %#v, want %#v", gotMsgs, tt.msgs)
			}
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				if res != nil {
					t.Errorf("result with an error = %#v, want nil", res)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := jsonOf(t, res); got != tt.want {
				t.Errorf("result = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestToolsMatchKeys checks that each write action sends exactly what the
// equivalent key press or click sends.
func TestToolsMatchKeys(t *testing.T) {
	sl := SelectList{ID: "s", Options: []string{"a", "b", "c", "d"}, Selected: -1}
	tabs := Tabs{ID: "tb", Tabs: []string{"A", "B", "C"}, Active: 1}
	tests := []struct {
		name   string
		w      ToolProvider
		ev     Event
		st     LocalState
		action string
		args   map[string]any
	}{
		{"button enter", Button{ID: "b", OnClick: clickedMsg{3}}, keyEnter, LocalState{}, "click", nil},
		{"button click", Button{ID: "b", OnClick: clickedMsg{3}, Destructive: true}, ClickEvent{X: 1}, LocalState{}, "click", nil},
		{"input typing", TextInput{ID: "ti"}, keyRune('a'), LocalState{}, "type_into", noArgs{"text": "a"}},
		{"input backspace", TextInput{ID: "ti", Value: "x"}, keyBackspace, LocalState{Cursor: 1}, "clear", nil},
		{"area typing", TextArea{ID: "ta"}, keyRune('a'), LocalState{}, "type_into", noArgs{"text": "a"}},
		{"area enter", TextArea{ID: "ta", Value: "a"}, keyEnter, LocalState{Cursor: 1}, "type_into", noArgs{"text": "a\n"}},
		{"area paste with CRLF", TextArea{ID: "ta"}, tea.PasteMsg{Content: "x\r\ny"}, LocalState{}, "type_into", noArgs{"text": "x\r\ny"}},
		{"password typing", PasswordField{ID: "pw"}, keyRune('a'), LocalState{}, "type_into", noArgs{"text": "a"}},
		{"password backspace", PasswordField{ID: "pw", Value: "x"}, keyBackspace, LocalState{Cursor: 1}, "clear", nil},
		{"checkbox enter unchecked", Checkbox{ID: "c"}, keyEnter, LocalState{}, "toggle", nil},
		{"checkbox space checked", Checkbox{ID: "c", Checked: true}, keySpace, LocalState{}, "toggle", nil},
		{"list enter", sl, keyEnter, LocalState{Row: 2}, "select", noArgs{"index": 2.0}},
		{"list click", sl, ClickEvent{Y: 3}, LocalState{}, "select", noArgs{"index": 3.0}},
		{"tabs right", tabs, keyRight, LocalState{}, "select_tab", noArgs{"index": 2.0}},
		{"tabs left", tabs, keyLeft, LocalState{}, "select_tab", noArgs{"index": 0.0}},
		{"tabs end", tabs, keyEnd, LocalState{}, "select_tab", noArgs{"index": 2.0}},
		{"menu enter nested", tMenu, keyEnter, LocalState{Row: 1}, "select", noArgs{"item_id": "new"}},
		{"menu click", tMenu, ClickEvent{Y: 4}, LocalState{}, "select", noArgs{"item_id": "help"}},
		{"modal enter", Modal{ID: "md", Visible: true}, dwK("enter"), LocalState{}, "confirm", nil},
		{"modal esc", Modal{ID: "md", Visible: true}, dwK("esc"), LocalState{}, "dismiss", nil},
		{"table enter", tTable, dwK("enter"), LocalState{Row: 2}, "select_row", noArgs{"index": 2.0}},
		{"table s unsorted", tTable, dwK("s"), LocalState{Col: 1}, "sort", noArgs{"column": "age"}},
		{"table s flips to desc", with(tTable, func(w *Table) { w.SortColumn, w.SortDirection = "name", SortAsc }), dwK("s"), LocalState{}, "sort", noArgs{"column": "name", "direction": "desc"}},
		{"tree right", tTree, dwK("right"), LocalState{Row: 0}, "expand", noArgs{"node_id": "a"}},
		{"tree left", tTree, dwK("left"), LocalState{Row: 1}, "collapse", noArgs{"node_id": "d"}},
		{"tree enter", tTree, dwK("enter"), LocalState{Row: 2}, "select_node", noArgs{"node_id": "e"}},
		{"scrubber right", tScrubber, dwK("right"), LocalState{}, "seek", noArgs{"position": float64(tScrubber.Position + tScrubber.Step)}},
		{"scrubber left", tScrubber, dwK("left"), LocalState{}, "seek", noArgs{"position": float64(tScrubber.Position - tScrubber.Step)}},
		{"scrubber end", tScrubber, dwK("end"), LocalState{}, "seek", noArgs{"position": 100.0}},
		{"scrubber space paused", tScrubber, dwK("space"), LocalState{}, "play", nil},
		{"scrubber space playing", with(tScrubber, func(w *Scrubber) { w.Playing = true }), dwK("space"), LocalState{}, "pause", nil},
		{"viewport down", tViewport, dwK("down"), LocalState{}, "scroll_to", noArgs{"row": 6.0}},
		{"viewport end", tViewport, dwK("end"), LocalState{}, "scroll_to", noArgs{"row": float64(tViewport.MaxOffset())}},
		{"viewport home", tViewport, dwK("home"), LocalState{}, "scroll_to", noArgs{"row": 0.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.st
			byKey := tt.w.HandleEvent(tt.ev, &st)
			if len(byKey) == 0 {
				t.Fatalf("the key sent nothing; the test is wrong")
			}
			_, byTool, err := tt.w.CallTool(tt.action, tt.args)
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if !reflect.DeepEqual(byTool, byKey) {
				t.Errorf("tool sent %#v, key sent %#v", byTool, byKey)
			}
		})
	}

	// Where a key changes nothing, the tool sends nothing either.
	quiet := []struct {
		name   string
		w      ToolProvider
		ev     Event
		action string
		args   map[string]any
	}{
		{"tabs at the active tab", Tabs{ID: "tb", Tabs: []string{"A", "B"}, Active: 1}, keyRight, "select_tab", noArgs{"index": 1.0}},
		{"scrubber at max", with(tScrubber, func(w *Scrubber) { w.Position = 100 }), dwK("end"), "seek", noArgs{"position": 100.0}},
		{"viewport at top", with(tViewport, func(w *Viewport) { w.Offset = 0 }), dwK("home"), "scroll_to", noArgs{"row": 0.0}},
		{"tree expanded", tTree, dwK("right"), "expand", noArgs{"node_id": "d"}},
	}
	for _, tt := range quiet {
		st := LocalState{}
		if tt.name == "tree expanded" {
			st.Row = 1
		}
		byKey := tt.w.HandleEvent(tt.ev, &st)
		res, byTool, err := tt.w.CallTool(tt.action, tt.args)
		if err != nil || byKey != nil || byTool != nil {
			t.Errorf("%s: key sent %#v, tool sent %#v (%v, err %v); want nothing from both", tt.name, byKey, byTool, res, err)
		}
	}
}

const marker = "APPTEXT-7f3"

// markedWidgets returns one enabled widget of every type, full of app text
// carrying the marker.
func markedWidgets() []ToolProvider {
	m := func(s string) string { return s + "-" + marker }
	return []ToolProvider{
		Button{ID: m("b"), Label: m("Delete"), OnClick: clickedMsg{1}, Destructive: true},
		TextInput{ID: m("ti"), Label: m("Name"), Value: m("v"), Placeholder: m("ph")},
		TextArea{ID: m("ta"), Label: m("Notes"), Value: m("v"), Placeholder: m("ph")},
		PasswordField{ID: m("pw"), Label: m("Password"), Value: m("secret"), Placeholder: m("ph")},
		Checkbox{ID: m("c"), Label: m("Agree"), Checked: true},
		SelectList{ID: m("s"), Label: m("Pick"), Options: []string{m("a"), m("b")}, Selected: 1},
		Tabs{ID: m("tb"), Tabs: []string{m("A"), m("B")}},
		Menu{ID: m("m"), Items: []MenuItem{{ID: m("i"), Label: m("Item"), Children: []MenuItem{{ID: m("j"), Label: m("Sub")}}}}},
		Modal{ID: m("md"), Title: m("Sure?"), Visible: true, Body: Text{Text: m("body")}, ConfirmLabel: m("Yes"), DismissLabel: m("No")},
		Table{ID: m("t"), Columns: []TableColumn{{Key: m("k"), Title: m("K")}}, Rows: [][]string{{m("cell")}}, SortColumn: m("k"), SortDirection: SortDesc},
		Tree{ID: m("tr"), Nodes: []TreeNode{{ID: m("n"), Label: m("N"), Children: []TreeNode{{ID: m("n2"), Label: m("N2")}}}}, Selected: m("n")},
		Scrubber{ID: m("sc"), Label: m("Time"), Max: 10},
		Viewport{ID: m("v"), Title: m("Log"), Lines: []string{m("l1"), m("l2")}},
		BarChart{ID: m("bc"), Title: m("Bars"), Bars: []Bar{{m("a"), 1}, {m("nan"), math.NaN()}}},
		LineChart{ID: m("lc"), Title: m("Lines"), Series: []Series{{Name: m("s"), Values: []float64{1, math.Inf(1), math.NaN()}}}},
		ScatterChart{ID: m("sch"), Title: m("Points"), Series: []ScatterSeries{{Name: m("p"), Points: []Point{{1, 2}, {math.Inf(-1), math.NaN()}}}}},
	}
}

// walkStrings calls f with every string in v, map keys included.
func walkStrings(v any, f func(string)) {
	switch v := v.(type) {
	case string:
		f(v)
	case []string:
		for _, s := range v {
			f(s)
		}
	case []any:
		for _, e := range v {
			walkStrings(e, f)
		}
	case map[string]any:
		for k, e := range v {
			f(k)
			walkStrings(e, f)
		}
	case nil, bool, int, float64:
	default:
		panic(fmt.Sprintf("walkStrings: unexpected %T", v))
	}
}

// TestToolSpecsCarryNoAppText checks that no app text reaches a tool's
// action, description, schema or annotations, while it does reach State.
func TestToolSpecsCarryNoAppText(t *testing.T) {
	for _, w := range markedWidgets() {
		specs := w.Tools()
		if len(specs) == 0 {
			t.Errorf("%T: no tools", w)
		}
		for _, s := range specs {
			check := func(where, str string) {
				if strings.Contains(str, marker) {
					t.Errorf("%T %s: %s carries app text: %q", w, s.Action, where, str)
				}
			}
			check("action", s.Action)
			check("description", s.Description)
			walkStrings(s.InputSchema, func(str string) { check("schema", str) })
			walkStrings(s.Annotations, func(str string) { check("annotations", str) })
			check("spec", fmt.Sprintf("%#v", s))
		}
		// The app text belongs in State (the password's excepted).
		st := jsonOf(t, w.State())
		if _, isPW := w.(PasswordField); !isPW && !strings.Contains(st, marker) {
			t.Errorf("%T: State carries no app text: %s", w, st)
		}
	}
}

var actionRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// TestToolSpecsShape checks every widget's actions, their order, names,
// schemas and annotations.
func TestToolSpecsShape(t *testing.T) {
	want := map[string][]string{
		"button":         {"click"},
		"text_input":     {"type_into", "clear", "get_value"},
		"text_area":      {"type_into", "clear", "get_value"},
		"password_field": {"type_into", "clear"},
		"checkbox":       {"toggle", "get_checked"},
		"select_list":    {"select", "get_selected", "get_options"},
		"tabs":           {"select_tab", "get_tabs"},
		"menu":           {"select", "get_items"},
		"modal":          {"confirm", "dismiss"},
		"table":          {"select_row", "sort", "get_rows"},
		"tree":           {"expand", "collapse", "select_node"},
		"scrubber":       {"seek", "play", "pause", "get_position"},
		"viewport":       {"scroll_to", "get_visible_range"},
		"bar_chart":      {"get_data", "get_range"},
		"line_chart":     {"get_series", "get_range", "get_point_at"},
		"scatter_chart":  {"get_points", "get_range"},
	}
	seen := map[string]bool{}
	descs := map[string]string{}
	for _, w := range markedWidgets() {
		typ, _ := w.State().(map[string]any)["type"].(string)
		seen[typ] = true
		var actions []string
		for _, s := range w.Tools() {
			actions = append(actions, s.Action)
			if !actionRE.MatchString(s.Action) {
				t.Errorf("%s: bad action name %q", typ, s.Action)
			}
			// The built-in reads are declared, and happen to be named get_*.
			if s.ReadOnly != strings.HasPrefix(s.Action, "get_") {
				t.Errorf("%s %s: ReadOnly is %v", typ, s.Action, s.ReadOnly)
			}
			if len(s.Description) < 20 {
				t.Errorf("%s %s: description too short: %q", typ, s.Action, s.Description)
			}
			// Descriptions are static per (type, action) and distinct per type.
			descs[typ+"."+s.Action] = s.Description
			js := jsonOf(t, s.InputSchema)
			if !strings.Contains(js, `"type":"object"`) || !strings.Contains(js, `"additionalProperties":false`) {
				t.Errorf("%s %s: schema %s", typ, s.Action, js)
			}
			var ann string
			if s.Annotations != nil {
				ann = jsonOf(t, s.Annotations)
			}
			wantAnn := ""
			switch {
			case typ == "button":
				wantAnn = `{"destructiveHint":true}`
			case typ == "password_field":
				wantAnn = `{"sensitive":true}`
			}
			if ann != wantAnn {
				t.Errorf("%s %s: annotations %s, want %q", typ, s.Action, ann, wantAnn)
			}
		}
		if !reflect.DeepEqual(actions, want[typ]) {
			t.Errorf("%s: actions %v, want %v", typ, actions, want[typ])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("widget types seen %v, want all %d", seen, len(want))
	}
	if descs["text_input.type_into"] == descs["text_area.type_into"] || descs["text_input.type_into"] == descs["password_field.type_into"] {
		t.Error("text field type_into descriptions should say which field they fill")
	}

	// A button that is not destructive carries no annotation.
	if a := (Button{ID: "b", OnClick: clickedMsg{1}}).Tools()[0].Annotations; a != nil {
		t.Errorf("plain button annotations = %v", a)
	}
	// The required arguments of each action.
	required := map[string]string{
		"text_input.type_into": `["text"]`, "select_list.select": `["index"]`, "tabs.select_tab": `["index"]`,
		"menu.select": `["item_id"]`, "table.select_row": `["index"]`, "table.sort": `["column"]`,
		"tree.expand": `["node_id"]`, "scrubber.seek": `["position"]`, "viewport.scroll_to": `["row"]`,
		"line_chart.get_point_at": `["index"]`, "table.get_rows": `null`, "button.click": `null`,
	}
	for _, w := range markedWidgets() {
		typ := w.State().(map[string]any)["type"].(string)
		for _, s := range w.Tools() {
			if r, ok := required[typ+"."+s.Action]; ok {
				if got := jsonOf(t, s.InputSchema["required"]); got != r {
					t.Errorf("%s.%s required = %s, want %s", typ, s.Action, got, r)
				}
			}
		}
	}
	sortSchema := jsonOf(t, tTable.Tools()[1].InputSchema)
	if !strings.Contains(sortSchema, `"enum":["asc","desc"]`) {
		t.Errorf("sort schema lacks the direction enum: %s", sortSchema)
	}

	// Tools returns fresh schemas: changing one does not change the next.
	specs := tTable.Tools()
	specs[0].InputSchema["properties"].(map[string]any)["index"].(map[string]any)["description"] = "changed"
	if d := tTable.Tools()[0].InputSchema["properties"].(map[string]any)["index"].(map[string]any)["description"]; d == "changed" {
		t.Error("Tools shares its schema maps between calls")
	}
}

// TestNoToolsWhenDisabled checks that disabled widgets and hidden
// modals offer no tools.
func TestNoToolsWhenDisabled(t *testing.T) {
	off := []ToolProvider{
		Button{ID: "b", OnClick: clickedMsg{1}, Disabled: true},
		TextInput{ID: "x", Disabled: true},
		TextArea{ID: "x", Disabled: true},
		PasswordField{ID: "x", Disabled: true},
		Checkbox{ID: "x", Disabled: true},
		SelectList{ID: "x", Options: []string{"a"}, Disabled: true},
		Tabs{ID: "x", Tabs: []string{"a"}, Disabled: true},
		with(tMenu, func(w *Menu) { w.Disabled = true }),
		Modal{ID: "x"},
		with(tTable, func(w *Table) { w.Disabled = true }),
		with(tTree, func(w *Tree) { w.Disabled = true }),
		with(tScrubber, func(w *Scrubber) { w.Disabled = true }),
		with(tViewport, func(w *Viewport) { w.Disabled = true }),
	}
	for _, w := range off {
		if specs := w.Tools(); specs != nil {
			t.Errorf("%T: Tools() = %v, want nil", w, specs)
		}
		st := w.State().(map[string]any)
		if _, isModal := w.(Modal); isModal {
			if st["visible"] != false {
				t.Errorf("modal state %v", st)
			}
		} else if st["disabled"] != true {
			t.Errorf("%T: State disabled = %v", w, st["disabled"])
		}
	}
}

// TestToolStatesAndReadsMarshal checks that every State and every read
// result, NaN and infinite chart values included, encodes as JSON, and
// that States carry the documented keys.
func TestToolStatesAndReadsMarshal(t *testing.T) {
	keys := map[string][]string{
		"button":         {"type", "id", "label", "disabled", "destructive"},
		"text_input":     {"type", "id", "label", "value", "placeholder", "max_len", "disabled"},
		"text_area":      {"type", "id", "label", "value", "placeholder", "max_len", "height", "disabled"},
		"password_field": {"type", "id", "label", "placeholder", "set", "max_len", "disabled"},
		"checkbox":       {"type", "id", "label", "checked", "disabled"},
		"select_list":    {"type", "id", "label", "options", "selected", "disabled"},
		"tabs":           {"type", "id", "tabs", "active", "disabled"},
		"menu":           {"type", "id", "items", "disabled"},
		"modal":          {"type", "id", "title", "visible", "confirm_label", "dismiss_label"},
		"table":          {"type", "id", "columns", "rows", "selected", "sort_column", "sort_direction", "disabled"},
		"tree":           {"type", "id", "nodes", "selected", "disabled"},
		"scrubber":       {"type", "id", "label", "position", "min", "max", "step", "playing", "disabled"},
		"viewport":       {"type", "id", "title", "offset", "height", "max_offset", "line_count", "visible_lines", "disabled"},
		"bar_chart":      {"type", "id", "title", "bars", "range"},
		"line_chart":     {"type", "id", "title", "series", "range"},
		"scatter_chart":  {"type", "id", "title", "series", "range"},
	}
	all := append(markedWidgets(), tBars, tLines, tScatter, tTable, tTree, tMenu, tViewport, Viewport{ID: "empty"},
		BarChart{ID: "inf", Bars: []Bar{{"x", math.Inf(-1)}}},
		LineChart{ID: "nan", Series: []Series{{Name: "n", Values: []float64{math.NaN()}}}},
		ScatterChart{ID: "nan", Series: []ScatterSeries{{Name: "n", Points: []Point{{math.NaN(), math.Inf(1)}}}}})
	for _, w := range all {
		st, ok := w.State().(map[string]any)
		if !ok {
			t.Fatalf("%T: State is %T", w, w.State())
		}
		typ, _ := st["type"].(string)
		var got []string
		for k := range st {
			got = append(got, k)
		}
		if want := keys[typ]; len(want) != len(got) {
			t.Errorf("%s: State keys %v, want %v", typ, got, want)
		} else {
			for _, k := range want {
				if _, ok := st[k]; !ok {
					t.Errorf("%s: State lacks %q", typ, k)
				}
			}
		}
		if st["id"] != w.WidgetID() {
			t.Errorf("%s: State id %v", typ, st["id"])
		}
		jsonOf(t, st)
		for _, s := range w.Tools() {
			if _, req := s.InputSchema["required"]; req && s.Action != "get_point_at" {
				continue // a write that needs arguments
			}
			args := noArgs{}
			if s.Action == "get_point_at" {
				args["index"] = 0.0
			}
			res, msgs, err := w.CallTool(s.Action, args)
			if err != nil {
				if typ == "button" && s.Action == "click" {
					continue
				}
				t.Errorf("%s %s: %v", typ, s.Action, err)
				continue
			}
			if s.ReadOnly && msgs != nil {
				t.Errorf("%s %s: a read sent %v", typ, s.Action, msgs)
			}
			jsonOf(t, res)
		}
	}
}

// TestPasswordNeverRevealed checks that a PasswordField's text shows in
// no State, result, error, spec or formatted value.
func TestPasswordNeverRevealed(t *testing.T) {
	const secret = "hunter2"
	pws := []PasswordField{
		{ID: "pw", Label: "Password", Value: secret},
		{ID: "pw", Value: secret, MaxLen: 3},
		{ID: "pw", Value: secret, Disabled: true},
	}
	calls := []struct {
		action string
		args   map[string]any
	}{
		{"type_into", noArgs{"text": secret}},
		{"type_into", noArgs{"text": secret + "\n"}},
		{"type_into", noArgs{"text": secret + "\x1b"}},
		{"type_into", noArgs{"text": secret + strings.Repeat("x", DefaultMaxLen)}},
		{"clear", nil},
		{"get_value", nil},
		{"reveal", nil},
	}
	seen := func(where, s string) {
		t.Helper()
		if strings.Contains(s, secret) {
			t.Errorf("%s reveals the password: %s", where, s)
		}
	}
	for _, p := range pws {
		st := jsonOf(t, p.State())
		seen("State", st)
		if !strings.Contains(st, `"set":true`) {
			t.Errorf("State %s lacks set:true", st)
		}
		for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
			seen(f, fmt.Sprintf(f, p))
			seen(f+" pointer", fmt.Sprintf(f, &p))
		}
		seen("Tools", fmt.Sprintf("%#v", p.Tools()))
		for _, c := range calls {
			res, msgs, err := p.CallTool(c.action, c.args)
			seen("result of "+c.action, jsonOf(t, res))
			seen("result of "+c.action, fmt.Sprintf("%#v", res))
			if err != nil {
				seen("error of "+c.action, err.Error())
			}
			for _, m := range msgs {
				seen("message %v", fmt.Sprintf("%v", m))
			}
		}
	}
	// An empty field reports set false and nothing about a length.
	st := jsonOf(t, PasswordField{ID: "pw"}.State())
	if !strings.Contains(st, `"set":false`) || strings.Contains(st, "length") {
		t.Errorf("empty State = %s", st)
	}
}
