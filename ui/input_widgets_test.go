package ui

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Key presses as a terminal delivers them.
var (
	keyEnter     = tea.KeyPressMsg{Code: tea.KeyEnter}
	keySpace     = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	keyBackspace = tea.KeyPressMsg{Code: tea.KeyBackspace}
	keyDelete    = tea.KeyPressMsg{Code: tea.KeyDelete}
	keyLeft      = tea.KeyPressMsg{Code: tea.KeyLeft}
	keyRight     = tea.KeyPressMsg{Code: tea.KeyRight}
	keyUp        = tea.KeyPressMsg{Code: tea.KeyUp}
	keyDown      = tea.KeyPressMsg{Code: tea.KeyDown}
	keyHome      = tea.KeyPressMsg{Code: tea.KeyHome}
	keyEnd       = tea.KeyPressMsg{Code: tea.KeyEnd}
	keyPgUp      = tea.KeyPressMsg{Code: tea.KeyPgUp}
	keyPgDown    = tea.KeyPressMsg{Code: tea.KeyPgDown}
	keyEsc       = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyTab       = tea.KeyPressMsg{Code: tea.KeyTab}
	keyShiftTab  = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	keyCtrlA     = tea.KeyPressMsg{Code: 'a', Mod: tea.ModCtrl}
	keyCtrlE     = tea.KeyPressMsg{Code: 'e', Mod: tea.ModCtrl}
	keyAltA      = tea.KeyPressMsg{Code: 'a', Text: "a", Mod: tea.ModAlt}
)

// keyRune is a printable key press.
func keyRune(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

// TestKeyStrings pins the String forms the widgets match on.
func TestKeyStrings(t *testing.T) {
	for _, tc := range []struct {
		key  tea.KeyPressMsg
		want string
	}{
		{keyEnter, "enter"}, {keySpace, "space"}, {keyBackspace, "backspace"},
		{keyDelete, "delete"}, {keyLeft, "left"}, {keyRight, "right"},
		{keyUp, "up"}, {keyDown, "down"}, {keyHome, "home"}, {keyEnd, "end"},
		{keyPgUp, "pgup"}, {keyPgDown, "pgdown"}, {keyEsc, "esc"},
		{keyTab, "tab"}, {keyShiftTab, "shift+tab"}, {keyCtrlA, "ctrl+a"},
		{keyCtrlE, "ctrl+e"}, {keyRune('a'), "a"}, {keyRune('j'), "j"},
		{keyRune('語'), "語"},
	} {
		if got := tc.key.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.key, got, tc.want)
		}
	}
}

type clickedMsg struct{ n int }

// unknownEvent is an event type no widget knows.
type unknownEvent struct{}

func TestInputWidgetEvents(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	longWide := strings.Repeat("é", 10_000)
	menu := Menu{ID: "m", Items: []MenuItem{
		{ID: "file", Label: "File", Children: []MenuItem{
			{ID: "new", Label: "New"},
			{ID: "open", Label: "Open", Disabled: true},
		}},
		{ID: "edit", Label: "Edit", Disabled: true},
		{ID: "help", Label: "Help"},
	}}
	opts := []string{"a", "b", "c", "d", "e"}
	list := SelectList{ID: "s", Options: opts, Selected: -1, Height: 2}
	labelled := SelectList{ID: "s", Label: "Pick", Options: opts, Selected: 1, Height: 2}
	tabs := Tabs{ID: "tb", Tabs: []string{"A", "BB", "C"}, Active: 1}
	area := TextArea{ID: "ta", Value: "abc\nd\nefgh"}

	type tc struct {
		name   string
		w      Widget
		st     LocalState
		ev     Event
		want   []tea.Msg
		wantSt *LocalState // nil: not checked
	}
	ti := func(v string) TextInput { return TextInput{ID: "t", Value: v} }
	changed := func(s string) []tea.Msg { return []tea.Msg{TextInputChanged{ID: "t", Text: s}} }
	areaChanged := func(s string) []tea.Msg { return []tea.Msg{TextAreaChanged{ID: "ta", Text: s}} }
	pwChanged := func(s string) []tea.Msg { return []tea.Msg{PasswordFieldChanged{ID: "p", Text: s}} }
	at := func(cursor int) *LocalState { return &LocalState{Cursor: cursor} }
	row := func(r, off int) *LocalState { return &LocalState{Row: r, Offset: off} }

	cases := []tc{
		// Button.
		{name: "button enter", w: Button{ID: "b", OnClick: clickedMsg{1}}, ev: keyEnter, want: []tea.Msg{clickedMsg{1}}},
		{name: "button space", w: Button{ID: "b", OnClick: clickedMsg{1}}, ev: keySpace, want: []tea.Msg{clickedMsg{1}}},
		{name: "button click", w: Button{ID: "b", OnClick: clickedMsg{1}}, ev: ClickEvent{X: 2}, want: []tea.Msg{clickedMsg{1}}},
		{name: "button other key", w: Button{ID: "b", OnClick: clickedMsg{1}}, ev: keyRune('a')},
		{name: "button tab", w: Button{ID: "b", OnClick: clickedMsg{1}}, ev: keyTab},
		{name: "button paste", w: Button{ID: "b", OnClick: clickedMsg{1}}, ev: tea.PasteMsg{Content: " "}},
		{name: "button unknown event", w: Button{ID: "b", OnClick: clickedMsg{1}}, ev: unknownEvent{}},
		{name: "button nil OnClick", w: Button{ID: "b"}, ev: keyEnter},
		{name: "button disabled enter", w: Button{ID: "b", OnClick: clickedMsg{1}, Disabled: true}, ev: keyEnter},
		{name: "button disabled click", w: Button{ID: "b", OnClick: clickedMsg{1}, Disabled: true}, ev: ClickEvent{}},

		// TextInput: typing.
		{name: "input type into empty", w: ti(""), ev: keyRune('a'), want: changed("a"), wantSt: at(1)},
		{name: "input type mid", w: ti("ac"), st: LocalState{Cursor: 1}, ev: keyRune('b'), want: changed("abc"), wantSt: at(2)},
		{name: "input space", w: ti("ab"), st: LocalState{Cursor: 1}, ev: keySpace, want: changed("a b"), wantSt: at(2)},
		{name: "input multibyte", w: ti("日本"), st: LocalState{Cursor: 1}, ev: keyRune('語'), want: changed("日語本"), wantSt: at(2)},
		{name: "input emoji", w: ti("ab"), st: LocalState{Cursor: 2}, ev: keyRune('😀'), want: changed("ab😀"), wantSt: at(3)},
		{name: "input shifted", w: ti(""), ev: tea.KeyPressMsg{Code: 'a', ShiftedCode: 'A', Text: "A", Mod: tea.ModShift}, want: changed("A"), wantSt: at(1)},
		{name: "input alt key", w: ti("x"), st: LocalState{Cursor: 1}, ev: keyAltA, wantSt: at(1)},
		{name: "input at MaxLen", w: TextInput{ID: "t", Value: "abc", MaxLen: 3}, st: LocalState{Cursor: 3}, ev: keyRune('d'), wantSt: at(3)},
		{name: "input cursor past end", w: ti("abc"), st: LocalState{Cursor: 99}, ev: keyRune('d'), want: changed("abcd"), wantSt: at(4)},
		{name: "input negative cursor", w: ti("abc"), st: LocalState{Cursor: -5}, ev: keyRune('x'), want: changed("xabc"), wantSt: at(1)},
		// TextInput: deleting.
		{name: "input backspace at 0", w: ti("abc"), ev: keyBackspace, wantSt: at(0)},
		{name: "input backspace", w: ti("日本語"), st: LocalState{Cursor: 2}, ev: keyBackspace, want: changed("日語"), wantSt: at(1)},
		{name: "input backspace over MaxLen", w: TextInput{ID: "t", Value: "abcd", MaxLen: 2}, st: LocalState{Cursor: 4}, ev: keyBackspace, want: changed("abc"), wantSt: at(3)},
		{name: "input delete at end", w: ti("abc"), st: LocalState{Cursor: 3}, ev: keyDelete, wantSt: at(3)},
		{name: "input delete", w: ti("日本語"), st: LocalState{Cursor: 1}, ev: keyDelete, want: changed("日語"), wantSt: at(1)},
		// TextInput: moving.
		{name: "input left at 0", w: ti("abc"), ev: keyLeft, wantSt: at(0)},
		{name: "input left", w: ti("abc"), st: LocalState{Cursor: 2}, ev: keyLeft, wantSt: at(1)},
		{name: "input right at end", w: ti("abc"), st: LocalState{Cursor: 3}, ev: keyRight, wantSt: at(3)},
		{name: "input right", w: ti("日本"), st: LocalState{Cursor: 1}, ev: keyRight, wantSt: at(2)},
		{name: "input home", w: ti("abc"), st: LocalState{Cursor: 2}, ev: keyHome, wantSt: at(0)},
		{name: "input ctrl+a", w: ti("abc"), st: LocalState{Cursor: 2}, ev: keyCtrlA, wantSt: at(0)},
		{name: "input end", w: ti("日本語"), st: LocalState{Cursor: 1}, ev: keyEnd, wantSt: at(3)},
		{name: "input ctrl+e", w: ti("abc"), ev: keyCtrlE, wantSt: at(3)},
		// TextInput: keys and events it ignores.
		{name: "input enter", w: ti("abc"), st: LocalState{Cursor: 1}, ev: keyEnter, wantSt: at(1)},
		{name: "input up", w: ti("abc"), st: LocalState{Cursor: 1}, ev: keyUp, wantSt: at(1)},
		{name: "input down", w: ti("abc"), st: LocalState{Cursor: 1}, ev: keyDown, wantSt: at(1)},
		{name: "input tab", w: ti("abc"), st: LocalState{Cursor: 1}, ev: keyTab, wantSt: at(1)},
		{name: "input esc", w: ti("abc"), st: LocalState{Cursor: 1}, ev: keyEsc, wantSt: at(1)},
		{name: "input key release", w: ti("abc"), st: LocalState{Cursor: 1}, ev: tea.KeyReleaseMsg{Code: 'a', Text: "a"}, wantSt: at(1)},
		{name: "input unknown event", w: ti("abc"), st: LocalState{Cursor: 1}, ev: unknownEvent{}, wantSt: at(1)},
		// TextInput: paste.
		{name: "input paste", w: ti("ad"), st: LocalState{Cursor: 1}, ev: tea.PasteMsg{Content: "b\nc"}, want: changed("ab cd"), wantSt: at(4)},
		{name: "input paste crlf", w: ti(""), ev: tea.PasteMsg{Content: "a\r\nb\rc"}, want: changed("a b c"), wantSt: at(5)},
		{name: "input paste escapes dropped", w: ti(""), ev: tea.PasteMsg{Content: "a\x1b[31mb\x07"}, want: changed("a[31mb"), wantSt: at(6)},
		{name: "input paste empty", w: ti("a"), ev: tea.PasteMsg{}, wantSt: at(0)},
		{name: "input paste capped", w: ti(""), ev: tea.PasteMsg{Content: long}, want: changed(long[:DefaultMaxLen]), wantSt: at(DefaultMaxLen)},
		{name: "input paste multibyte capped", w: TextInput{ID: "t", MaxLen: 2 * DefaultMaxLen}, ev: tea.PasteMsg{Content: longWide}, want: changed(strings.Repeat("é", DefaultMaxLen)), wantSt: at(DefaultMaxLen)},
		{name: "input paste near MaxLen", w: TextInput{ID: "t", Value: "abcdefgh", MaxLen: 10}, st: LocalState{Cursor: 4}, ev: tea.PasteMsg{Content: "123456"}, want: changed("abcd12efgh"), wantSt: at(6)},
		{name: "input paste at MaxLen", w: TextInput{ID: "t", Value: "ab", MaxLen: 2}, ev: tea.PasteMsg{Content: "x"}, wantSt: at(0)},
		// TextInput: clicks.
		{name: "input click", w: ti("abcdef"), ev: ClickEvent{X: 2}, wantSt: at(2)},
		{name: "input click past end", w: ti("abc"), ev: ClickEvent{X: 30}, wantSt: at(3)},
		{name: "input click after label", w: TextInput{ID: "t", Label: "Name", Value: "abcdef"}, ev: ClickEvent{X: 8}, wantSt: at(2)},
		{name: "input click on label", w: TextInput{ID: "t", Label: "Name", Value: "abcdef"}, st: LocalState{Cursor: 5}, ev: ClickEvent{X: 1}, wantSt: at(5)},
		{name: "input click wide runes", w: ti("日本語"), ev: ClickEvent{X: 3}, wantSt: at(1)},
		{name: "input click scrolled", w: TextInput{ID: "t", Value: "abcdefghij", Width: 5}, st: LocalState{Cursor: 10}, ev: ClickEvent{X: 0}, wantSt: at(6)},
		// TextInput: disabled.
		{name: "input disabled type", w: TextInput{ID: "t", Disabled: true}, st: LocalState{Cursor: 7}, ev: keyRune('a'), wantSt: at(7)},
		{name: "input disabled paste", w: TextInput{ID: "t", Disabled: true}, ev: tea.PasteMsg{Content: "a"}},
		{name: "input disabled click", w: TextInput{ID: "t", Value: "abc", Disabled: true}, ev: ClickEvent{X: 1}, wantSt: at(0)},

		// PasswordField.
		{name: "password type", w: PasswordField{ID: "p", Value: "se"}, st: LocalState{Cursor: 2}, ev: keyRune('c'), want: pwChanged("sec"), wantSt: at(3)},
		{name: "password space", w: PasswordField{ID: "p", Value: "a"}, st: LocalState{Cursor: 1}, ev: keySpace, want: pwChanged("a "), wantSt: at(2)},
		{name: "password multibyte", w: PasswordField{ID: "p", Value: "日"}, st: LocalState{Cursor: 1}, ev: keyRune('本'), want: pwChanged("日本"), wantSt: at(2)},
		{name: "password backspace", w: PasswordField{ID: "p", Value: "abc"}, st: LocalState{Cursor: 3}, ev: keyBackspace, want: pwChanged("ab"), wantSt: at(2)},
		{name: "password backspace at 0", w: PasswordField{ID: "p", Value: "abc"}, ev: keyBackspace, wantSt: at(0)},
		{name: "password delete", w: PasswordField{ID: "p", Value: "abc"}, ev: keyDelete, want: pwChanged("bc"), wantSt: at(0)},
		{name: "password delete at end", w: PasswordField{ID: "p", Value: "abc"}, st: LocalState{Cursor: 3}, ev: keyDelete, wantSt: at(3)},
		{name: "password left", w: PasswordField{ID: "p", Value: "abc"}, st: LocalState{Cursor: 3}, ev: keyLeft, wantSt: at(2)},
		{name: "password left at 0", w: PasswordField{ID: "p", Value: "abc"}, ev: keyLeft, wantSt: at(0)},
		{name: "password right", w: PasswordField{ID: "p", Value: "abc"}, ev: keyRight, wantSt: at(1)},
		{name: "password right at end", w: PasswordField{ID: "p", Value: "abc"}, st: LocalState{Cursor: 3}, ev: keyRight, wantSt: at(3)},
		{name: "password home", w: PasswordField{ID: "p", Value: "abc"}, st: LocalState{Cursor: 3}, ev: keyHome, wantSt: at(0)},
		{name: "password ctrl+a", w: PasswordField{ID: "p", Value: "abc"}, st: LocalState{Cursor: 3}, ev: keyCtrlA, wantSt: at(0)},
		{name: "password end", w: PasswordField{ID: "p", Value: "abc"}, ev: keyEnd, wantSt: at(3)},
		{name: "password ctrl+e", w: PasswordField{ID: "p", Value: "abc"}, ev: keyCtrlE, wantSt: at(3)},
		{name: "password enter", w: PasswordField{ID: "p", Value: "abc"}, ev: keyEnter, wantSt: at(0)},
		{name: "password unknown event", w: PasswordField{ID: "p", Value: "abc"}, ev: unknownEvent{}},
		{name: "password paste", w: PasswordField{ID: "p"}, ev: tea.PasteMsg{Content: "a\nb"}, want: pwChanged("a b"), wantSt: at(3)},
		{name: "password paste capped", w: PasswordField{ID: "p"}, ev: tea.PasteMsg{Content: long}, want: pwChanged(long[:DefaultMaxLen]), wantSt: at(DefaultMaxLen)},
		{name: "password paste near MaxLen", w: PasswordField{ID: "p", Value: "ab", MaxLen: 4}, st: LocalState{Cursor: 2}, ev: tea.PasteMsg{Content: "cdef"}, want: pwChanged("abcd"), wantSt: at(4)},
		{name: "password at MaxLen", w: PasswordField{ID: "p", Value: "ab", MaxLen: 2}, st: LocalState{Cursor: 2}, ev: keyRune('c'), wantSt: at(2)},
		{name: "password click", w: PasswordField{ID: "p", Label: "PIN", Value: "1234"}, ev: ClickEvent{X: 6}, wantSt: at(1)},
		{name: "password disabled", w: PasswordField{ID: "p", Disabled: true}, ev: keyRune('a')},

		// TextArea: editing as TextInput does, plus lines.
		{name: "area type", w: TextArea{ID: "ta", Value: "ac"}, st: LocalState{Cursor: 1}, ev: keyRune('b'), want: areaChanged("abc"), wantSt: at(2)},
		{name: "area space", w: TextArea{ID: "ta", Value: "ab"}, st: LocalState{Cursor: 1}, ev: keySpace, want: areaChanged("a b"), wantSt: at(2)},
		{name: "area multibyte", w: TextArea{ID: "ta", Value: "日\n本"}, st: LocalState{Cursor: 3}, ev: keyRune('語'), want: areaChanged("日\n本語"), wantSt: at(4)},
		{name: "area enter", w: TextArea{ID: "ta", Value: "ab"}, st: LocalState{Cursor: 1}, ev: keyEnter, want: areaChanged("a\nb"), wantSt: at(2)},
		{name: "area enter at MaxLen", w: TextArea{ID: "ta", Value: "abc", MaxLen: 3}, st: LocalState{Cursor: 1}, ev: keyEnter, wantSt: at(1)},
		{name: "area backspace joins lines", w: TextArea{ID: "ta", Value: "a\nb"}, st: LocalState{Cursor: 2}, ev: keyBackspace, want: areaChanged("ab"), wantSt: at(1)},
		{name: "area backspace at 0", w: TextArea{ID: "ta", Value: "a\nb"}, ev: keyBackspace, wantSt: at(0)},
		{name: "area delete", w: TextArea{ID: "ta", Value: "a\nb"}, st: LocalState{Cursor: 1}, ev: keyDelete, want: areaChanged("ab"), wantSt: at(1)},
		{name: "area delete at end", w: TextArea{ID: "ta", Value: "a\nb"}, st: LocalState{Cursor: 3}, ev: keyDelete, wantSt: at(3)},
		{name: "area left across line", w: area, st: LocalState{Cursor: 4}, ev: keyLeft, wantSt: at(3)},
		{name: "area left at 0", w: area, ev: keyLeft, wantSt: at(0)},
		{name: "area right", w: area, st: LocalState{Cursor: 3}, ev: keyRight, wantSt: at(4)},
		{name: "area right at end", w: area, st: LocalState{Cursor: 10}, ev: keyRight, wantSt: at(10)},
		{name: "area down clamps column", w: area, st: LocalState{Cursor: 2}, ev: keyDown, wantSt: at(5)},
		{name: "area down keeps column", w: area, st: LocalState{Cursor: 5}, ev: keyDown, wantSt: at(7)},
		{name: "area down at last line", w: area, st: LocalState{Cursor: 8}, ev: keyDown, wantSt: at(8)},
		{name: "area up keeps column", w: area, st: LocalState{Cursor: 9}, ev: keyUp, wantSt: at(5)},
		{name: "area up", w: area, st: LocalState{Cursor: 4}, ev: keyUp, wantSt: at(0)},
		{name: "area up at first line", w: area, st: LocalState{Cursor: 2}, ev: keyUp, wantSt: at(2)},
		{name: "area home", w: area, st: LocalState{Cursor: 5}, ev: keyHome, wantSt: at(4)},
		{name: "area ctrl+a", w: area, st: LocalState{Cursor: 8}, ev: keyCtrlA, wantSt: at(6)},
		{name: "area end", w: area, st: LocalState{Cursor: 0}, ev: keyEnd, wantSt: at(3)},
		{name: "area ctrl+e", w: area, st: LocalState{Cursor: 6}, ev: keyCtrlE, wantSt: at(10)},
		{name: "area scrolls down", w: TextArea{ID: "ta", Value: "1\n2\n3\n4", Height: 2}, st: LocalState{Cursor: 2}, ev: keyDown, wantSt: &LocalState{Cursor: 4, Offset: 1}},
		{name: "area scrolls up", w: TextArea{ID: "ta", Value: "1\n2\n3\n4", Height: 2}, st: LocalState{Cursor: 4, Offset: 2}, ev: keyUp, wantSt: &LocalState{Cursor: 2, Offset: 1}},
		{name: "area tab", w: area, st: LocalState{Cursor: 1}, ev: keyTab, wantSt: at(1)},
		{name: "area unknown event", w: area, st: LocalState{Cursor: 1}, ev: unknownEvent{}, wantSt: at(1)},
		{name: "area paste keeps newlines", w: TextArea{ID: "ta", Value: "ab"}, st: LocalState{Cursor: 1}, ev: tea.PasteMsg{Content: "x\r\ny\nz"}, want: areaChanged("ax\ny\nzb"), wantSt: at(6)},
		{name: "area paste capped", w: TextArea{ID: "ta"}, ev: tea.PasteMsg{Content: long}, want: areaChanged(long[:DefaultMaxLen]), wantSt: at(DefaultMaxLen)},
		{name: "area paste near MaxLen", w: TextArea{ID: "ta", Value: "abc", MaxLen: 5}, st: LocalState{Cursor: 3}, ev: tea.PasteMsg{Content: "\n\n\n"}, want: areaChanged("abc\n\n"), wantSt: at(5)},
		{name: "area click", w: TextArea{ID: "ta", Label: "Notes", Value: "ab\ncd"}, ev: ClickEvent{X: 1, Y: 2}, wantSt: at(4)},
		{name: "area click on label", w: TextArea{ID: "ta", Label: "Notes", Value: "ab\ncd"}, st: LocalState{Cursor: 1}, ev: ClickEvent{X: 1, Y: 0}, wantSt: at(1)},
		{name: "area click below text", w: TextArea{ID: "ta", Value: "ab\ncd"}, ev: ClickEvent{X: 9, Y: 3}, wantSt: at(5)},
		{name: "area click scrolled", w: TextArea{ID: "ta", Value: "1\n2\n3\n4", Height: 2}, st: LocalState{Cursor: 6, Offset: 2}, ev: ClickEvent{X: 0, Y: 0}, wantSt: &LocalState{Cursor: 4, Offset: 2}},
		{name: "area disabled", w: TextArea{ID: "ta", Disabled: true}, ev: keyEnter, wantSt: &LocalState{}},

		// Checkbox.
		{name: "checkbox enter", w: Checkbox{ID: "c"}, ev: keyEnter, want: []tea.Msg{CheckboxToggled{ID: "c", Checked: true}}},
		{name: "checkbox space", w: Checkbox{ID: "c", Checked: true}, ev: keySpace, want: []tea.Msg{CheckboxToggled{ID: "c", Checked: false}}},
		{name: "checkbox click", w: Checkbox{ID: "c"}, ev: ClickEvent{X: 5}, want: []tea.Msg{CheckboxToggled{ID: "c", Checked: true}}},
		{name: "checkbox other key", w: Checkbox{ID: "c"}, ev: keyRune('x')},
		{name: "checkbox paste", w: Checkbox{ID: "c"}, ev: tea.PasteMsg{Content: " "}},
		{name: "checkbox unknown event", w: Checkbox{ID: "c"}, ev: unknownEvent{}},
		{name: "checkbox disabled", w: Checkbox{ID: "c", Disabled: true}, ev: keyEnter},
		{name: "checkbox disabled click", w: Checkbox{ID: "c", Disabled: true}, ev: ClickEvent{}},

		// SelectList.
		{name: "list down", w: list, ev: keyDown, wantSt: row(1, 0)},
		{name: "list down scrolls", w: list, st: LocalState{Row: 1}, ev: keyDown, wantSt: row(2, 1)},
		{name: "list j", w: list, ev: keyRune('j'), wantSt: row(1, 0)},
		{name: "list down at end", w: list, st: LocalState{Row: 4, Offset: 3}, ev: keyDown, wantSt: row(4, 3)},
		{name: "list up", w: list, st: LocalState{Row: 3, Offset: 3}, ev: keyUp, wantSt: row(2, 2)},
		{name: "list k", w: list, st: LocalState{Row: 1}, ev: keyRune('k'), wantSt: row(0, 0)},
		{name: "list up at 0", w: list, ev: keyUp, wantSt: row(0, 0)},
		{name: "list home", w: list, st: LocalState{Row: 4, Offset: 3}, ev: keyHome, wantSt: row(0, 0)},
		{name: "list end", w: list, ev: keyEnd, wantSt: row(4, 3)},
		{name: "list pgdown", w: list, ev: keyPgDown, wantSt: row(2, 1)},
		{name: "list pgdown near end", w: list, st: LocalState{Row: 3, Offset: 2}, ev: keyPgDown, wantSt: row(4, 3)},
		{name: "list pgup", w: list, st: LocalState{Row: 4, Offset: 3}, ev: keyPgUp, wantSt: row(2, 2)},
		{name: "list pgup near start", w: list, st: LocalState{Row: 1}, ev: keyPgUp, wantSt: row(0, 0)},
		{name: "list pgdown all rows", w: SelectList{ID: "s", Options: opts}, ev: keyPgDown, wantSt: row(4, 0)},
		{name: "list enter", w: list, st: LocalState{Row: 2, Offset: 1}, ev: keyEnter, want: []tea.Msg{OptionSelected{ID: "s", Index: 2}}, wantSt: row(2, 1)},
		{name: "list space", w: list, ev: keySpace, want: []tea.Msg{OptionSelected{ID: "s", Index: 0}}, wantSt: row(0, 0)},
		{name: "list enter row out of range", w: list, st: LocalState{Row: 99, Offset: -3}, ev: keyEnter, want: []tea.Msg{OptionSelected{ID: "s", Index: 4}}, wantSt: row(4, 3)},
		{name: "list click", w: list, st: LocalState{Row: 3, Offset: 3}, ev: ClickEvent{X: 1, Y: 1}, want: []tea.Msg{OptionSelected{ID: "s", Index: 4}}, wantSt: row(4, 3)},
		{name: "list click under label", w: labelled, ev: ClickEvent{Y: 2}, want: []tea.Msg{OptionSelected{ID: "s", Index: 1}}, wantSt: row(1, 0)},
		{name: "list click on label", w: labelled, ev: ClickEvent{Y: 0}, wantSt: row(0, 0)},
		{name: "list click below window", w: list, ev: ClickEvent{Y: 2}, wantSt: row(0, 0)},
		{name: "list other key", w: list, ev: keyRune('x'), wantSt: row(0, 0)},
		{name: "list unknown event", w: list, ev: unknownEvent{}},
		{name: "list empty", w: SelectList{ID: "s", Selected: -1}, ev: keyEnter},
		{name: "list empty click", w: SelectList{ID: "s"}, ev: ClickEvent{}},
		{name: "list disabled", w: SelectList{ID: "s", Options: opts, Disabled: true}, ev: keyEnter, wantSt: row(0, 0)},
		{name: "list disabled down", w: SelectList{ID: "s", Options: opts, Disabled: true}, ev: keyDown, wantSt: row(0, 0)},

		// Tabs.
		{name: "tabs left", w: tabs, ev: keyLeft, want: []tea.Msg{TabChanged{ID: "tb", Index: 0}}},
		{name: "tabs h", w: tabs, ev: keyRune('h'), want: []tea.Msg{TabChanged{ID: "tb", Index: 0}}},
		{name: "tabs right", w: tabs, ev: keyRight, want: []tea.Msg{TabChanged{ID: "tb", Index: 2}}},
		{name: "tabs l", w: tabs, ev: keyRune('l'), want: []tea.Msg{TabChanged{ID: "tb", Index: 2}}},
		{name: "tabs left at first", w: Tabs{ID: "tb", Tabs: tabs.Tabs, Active: 0}, ev: keyLeft},
		{name: "tabs right at last", w: Tabs{ID: "tb", Tabs: tabs.Tabs, Active: 2}, ev: keyRight},
		{name: "tabs home", w: tabs, ev: keyHome, want: []tea.Msg{TabChanged{ID: "tb", Index: 0}}},
		{name: "tabs home at first", w: Tabs{ID: "tb", Tabs: tabs.Tabs, Active: 0}, ev: keyHome},
		{name: "tabs end", w: tabs, ev: keyEnd, want: []tea.Msg{TabChanged{ID: "tb", Index: 2}}},
		{name: "tabs end at last", w: Tabs{ID: "tb", Tabs: tabs.Tabs, Active: 2}, ev: keyEnd},
		{name: "tabs right from none", w: Tabs{ID: "tb", Tabs: tabs.Tabs, Active: -1}, ev: keyRight, want: []tea.Msg{TabChanged{ID: "tb", Index: 0}}},
		{name: "tabs left from out of range", w: Tabs{ID: "tb", Tabs: tabs.Tabs, Active: 7}, ev: keyLeft, want: []tea.Msg{TabChanged{ID: "tb", Index: 2}}},
		// "A │ BB │ C": A at 0, BB at 4-5, C at 9.
		{name: "tabs click first", w: tabs, ev: ClickEvent{X: 0}, want: []tea.Msg{TabChanged{ID: "tb", Index: 0}}},
		{name: "tabs click last", w: tabs, ev: ClickEvent{X: 9}, want: []tea.Msg{TabChanged{ID: "tb", Index: 2}}},
		{name: "tabs click active", w: tabs, ev: ClickEvent{X: 5}},
		{name: "tabs click separator", w: tabs, ev: ClickEvent{X: 2}},
		{name: "tabs click past end", w: tabs, ev: ClickEvent{X: 10}},
		{name: "tabs click below", w: tabs, ev: ClickEvent{X: 0, Y: 1}},
		{name: "tabs click wide label", w: Tabs{ID: "tb", Tabs: []string{"日本", "x"}}, ev: ClickEvent{X: 7}, want: []tea.Msg{TabChanged{ID: "tb", Index: 1}}},
		{name: "tabs enter", w: tabs, ev: keyEnter},
		{name: "tabs unknown event", w: tabs, ev: unknownEvent{}},
		{name: "tabs empty", w: Tabs{ID: "tb"}, ev: keyRight},
		{name: "tabs disabled", w: Tabs{ID: "tb", Tabs: tabs.Tabs, Disabled: true}, ev: keyRight},
		{name: "tabs disabled click", w: Tabs{ID: "tb", Tabs: tabs.Tabs, Disabled: true}, ev: ClickEvent{X: 9}},

		// Menu: flattened File, New, Open (disabled), Edit (disabled), Help.
		{name: "menu down", w: menu, ev: keyDown, wantSt: row(1, 0)},
		{name: "menu down skips disabled", w: menu, st: LocalState{Row: 1}, ev: keyDown, wantSt: row(4, 0)},
		{name: "menu j", w: menu, ev: keyRune('j'), wantSt: row(1, 0)},
		{name: "menu down at end", w: menu, st: LocalState{Row: 4}, ev: keyDown, wantSt: row(4, 0)},
		{name: "menu up skips disabled", w: menu, st: LocalState{Row: 4}, ev: keyUp, wantSt: row(1, 0)},
		{name: "menu k", w: menu, st: LocalState{Row: 1}, ev: keyRune('k'), wantSt: row(0, 0)},
		{name: "menu up at first", w: menu, ev: keyUp, wantSt: row(0, 0)},
		{name: "menu home", w: menu, st: LocalState{Row: 4}, ev: keyHome, wantSt: row(0, 0)},
		{name: "menu end", w: menu, ev: keyEnd, wantSt: row(4, 0)},
		{name: "menu enter", w: menu, st: LocalState{Row: 1}, ev: keyEnter, want: []tea.Msg{MenuSelected{ID: "m", ItemID: "new"}}, wantSt: row(1, 0)},
		{name: "menu space", w: menu, st: LocalState{Row: 4}, ev: keySpace, want: []tea.Msg{MenuSelected{ID: "m", ItemID: "help"}}, wantSt: row(4, 0)},
		{name: "menu enter on disabled", w: menu, st: LocalState{Row: 2}, ev: keyEnter, wantSt: row(2, 0)},
		{name: "menu enter row out of range", w: menu, st: LocalState{Row: 50}, ev: keyEnter, want: []tea.Msg{MenuSelected{ID: "m", ItemID: "help"}}, wantSt: row(4, 0)},
		{name: "menu click", w: menu, ev: ClickEvent{X: 3, Y: 4}, want: []tea.Msg{MenuSelected{ID: "m", ItemID: "help"}}, wantSt: row(4, 0)},
		{name: "menu click child", w: menu, ev: ClickEvent{X: 3, Y: 1}, want: []tea.Msg{MenuSelected{ID: "m", ItemID: "new"}}, wantSt: row(1, 0)},
		{name: "menu click disabled", w: menu, st: LocalState{Row: 1}, ev: ClickEvent{Y: 2}, wantSt: row(1, 0)},
		{name: "menu click below", w: menu, ev: ClickEvent{Y: 5}, wantSt: row(0, 0)},
		{name: "menu other key", w: menu, ev: keyRune('x'), wantSt: row(0, 0)},
		{name: "menu unknown event", w: menu, ev: unknownEvent{}},
		{name: "menu empty", w: Menu{ID: "m"}, ev: keyEnter},
		{name: "menu disabled", w: Menu{ID: "m", Items: menu.Items, Disabled: true}, ev: keyEnter},
		{name: "menu disabled click", w: Menu{ID: "m", Items: menu.Items, Disabled: true}, ev: ClickEvent{}},
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := c.st
			got := c.w.HandleEvent(c.ev, &st)
			if len(c.want) == 0 {
				if len(got) != 0 {
					t.Errorf("got %s, want no messages", describeMsgs(got))
				}
			} else if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %s, want %s", describeMsgs(got), describeMsgs(c.want))
			}
			if c.wantSt != nil && !reflect.DeepEqual(st, *c.wantSt) {
				t.Errorf("state after = %+v, want %+v", st, *c.wantSt)
			}
		})
	}
}

// describeMsgs prints messages compactly, shortening long texts.
func describeMsgs(msgs []tea.Msg) string {
	var parts []string
	for _, m := range msgs {
		s := fmt.Sprintf("%T%+v", m, m)
		switch m := m.(type) {
		case TextInputChanged:
			s = fmt.Sprintf("TextInputChanged{%s %d runes %.20q}", m.ID, utf8.RuneCountInString(m.Text), m.Text)
		case TextAreaChanged:
			s = fmt.Sprintf("TextAreaChanged{%s %d runes %.20q}", m.ID, utf8.RuneCountInString(m.Text), m.Text)
		case PasswordFieldChanged:
			s = fmt.Sprintf("PasswordFieldChanged{%s %d runes %.20q}", m.ID, utf8.RuneCountInString(m.Text), m.Text)
		}
		parts = append(parts, s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func TestEventsWithNilState(t *testing.T) {
	for _, w := range []Widget{
		TextInput{ID: "t"}, PasswordField{ID: "p"}, TextArea{ID: "ta"},
		SelectList{ID: "s", Options: []string{"a"}}, Menu{ID: "m", Items: []MenuItem{{ID: "x"}}},
	} {
		for _, ev := range []Event{keyRune('a'), keyDown, keyEnter, ClickEvent{}, tea.PasteMsg{Content: "x"}} {
			w.HandleEvent(ev, nil) // must not panic
		}
	}
}

func TestFocusable(t *testing.T) {
	for _, tc := range []struct {
		w    Widget
		want bool
	}{
		{Button{}, true}, {Button{Disabled: true}, false},
		{TextInput{}, true}, {TextInput{Disabled: true}, false},
		{TextArea{}, true}, {TextArea{Disabled: true}, false},
		{PasswordField{}, true}, {PasswordField{Disabled: true}, false},
		{Checkbox{}, true}, {Checkbox{Disabled: true}, false},
		{SelectList{}, true}, {SelectList{Disabled: true}, false},
		{Tabs{}, true}, {Tabs{Disabled: true}, false},
		{Menu{}, true}, {Menu{Disabled: true}, false},
	} {
		if got := tc.w.Focusable(); got != tc.want {
			t.Errorf("%T{Disabled:%v}.Focusable() = %v", tc.w, !tc.want, got)
		}
		if tc.w.Children() != nil {
			t.Errorf("%T.Children() != nil", tc.w)
		}
	}
	if got := (Button{ID: "x"}).WidgetID(); got != "x" {
		t.Errorf("WidgetID() = %q", got)
	}
}

func TestMenuFlatten(t *testing.T) {
	m := Menu{Items: []MenuItem{
		{ID: "a", Children: []MenuItem{{ID: "a1", Children: []MenuItem{{ID: "a1x"}}}, {ID: "a2"}}},
		{ID: "b"},
	}}
	var ids []string
	for _, it := range m.Flatten() {
		ids = append(ids, it.ID)
	}
	if want := []string{"a", "a1", "a1x", "a2", "b"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("Flatten ids = %v, want %v", ids, want)
	}
	if got := (Menu{}).Flatten(); len(got) != 0 {
		t.Errorf("empty Flatten = %v", got)
	}
}

var ansiSeq = regexp.MustCompile(`\x1b\[[0-9;:]*[A-Za-z]`)

// plain strips styling from rendered text.
func plain(s string) string { return ansiSeq.ReplaceAllString(s, "") }

// renderAt draws w with a fresh render context.
func renderAt(w Widget, width int, focused bool, st LocalState) string {
	return w.Render(RenderContext{
		Width:   width,
		Focused: focused,
		Local:   &st,
		Theme:   DefaultTheme(),
		Child:   func(Node, int) string { return "" },
	})
}

// renderSamples returns widgets with empty, typical and hostile data.
func renderSamples() []Widget {
	huge := strings.Repeat("界a😀\u0301b", 3000)
	hostile := "x\x1b[2J\ty\r\nz\u0085"
	many := make([]string, 300)
	for i := range many {
		many[i] = fmt.Sprintf("option %d %s", i, huge[:i%50])
	}
	deep := []MenuItem{{ID: "leaf", Label: huge}}
	for i := range 60 {
		deep = []MenuItem{{ID: fmt.Sprint(i), Label: "level", Children: deep, Disabled: i%3 == 0}}
	}
	return []Widget{
		Button{}, Button{ID: "b", Label: "OK", OnClick: clickedMsg{}}, Button{ID: "b", Label: huge, Disabled: true},
		TextInput{}, TextInput{ID: "t", Label: "Name", Value: "hello", Placeholder: "type"},
		TextInput{ID: "t", Placeholder: "placeholder 界"}, TextInput{ID: "t", Label: huge, Value: huge, Width: 30},
		TextInput{ID: "t", Value: hostile, Width: -4, MaxLen: -1}, TextInput{ID: "t", Label: "L", Value: "界界界", Disabled: true},
		TextArea{}, TextArea{ID: "ta", Label: "Notes", Value: "one\ntwo 界\nthree\nfour\nfive", Height: 2},
		TextArea{ID: "ta", Placeholder: "write", Height: 3}, TextArea{ID: "ta", Label: huge, Value: huge + "\n" + hostile + "\n\n", Height: 1 << 30, Width: 7},
		TextArea{ID: "ta", Value: "a\nb", Disabled: true, Height: -3},
		PasswordField{}, PasswordField{ID: "p", Label: "Password", Value: "ZQXJ界"}, PasswordField{ID: "p", Placeholder: "secret"},
		PasswordField{ID: "p", Value: huge, Disabled: true},
		Checkbox{}, Checkbox{ID: "c", Label: "Accept", Checked: true}, Checkbox{ID: "c", Label: huge, Disabled: true},
		SelectList{}, SelectList{ID: "s", Label: "Pick", Options: []string{"a", "界b", hostile}, Selected: 1},
		SelectList{ID: "s", Options: many, Selected: 299, Height: 5}, SelectList{ID: "s", Options: many, Selected: -7, Height: 1 << 30},
		SelectList{ID: "s", Options: []string{"x", "y"}, Selected: 1, Disabled: true},
		Tabs{}, Tabs{ID: "tb", Tabs: []string{"One", "Two 界", "Three"}, Active: 1}, Tabs{ID: "tb", Tabs: many, Active: 999},
		Tabs{ID: "tb", Tabs: []string{huge, hostile, ""}, Active: -3}, Tabs{ID: "tb", Tabs: []string{"a", "b"}, Disabled: true},
		Menu{}, Menu{ID: "m", Items: []MenuItem{{ID: "a", Label: "A", Children: []MenuItem{{ID: "b", Label: "B 界"}}}, {ID: "c", Label: hostile, Disabled: true}}},
		Menu{ID: "m", Items: deep}, Menu{ID: "m", Items: deep, Disabled: true},
	}
}

func TestInputWidgetRenderFits(t *testing.T) {
	states := []LocalState{
		{},
		{Cursor: 3, Row: 1, Offset: 1},
		{Cursor: 1 << 40, Row: 1 << 40, Offset: 1 << 40},
		{Cursor: -9, Row: -9, Offset: -9},
	}
	for i, w := range renderSamples() {
		for _, width := range []int{1, 2, 5, 40, 1000} {
			for _, focused := range []bool{false, true} {
				for _, st := range states {
					out := renderAt(w, width, focused, st)
					for n, line := range strings.Split(out, "\n") {
						if lw := lipgloss.Width(line); lw > width {
							t.Fatalf("sample %d (%T) width %d focused %v state %+v: line %d is %d cells: %q",
								i, w, width, focused, st, n, lw, line)
						}
					}
					if strings.ContainsAny(plain(out), "\x1b\t\r\u0085") {
						t.Fatalf("sample %d (%T): control characters drawn: %q", i, w, out)
					}
				}
			}
		}
	}
}

func TestInputWidgetRenderFocusAndDisabledLooks(t *testing.T) {
	for _, w := range []Widget{
		Button{ID: "b", Label: "OK"},
		TextInput{ID: "t", Label: "Name", Value: "hi"},
		TextArea{ID: "ta", Value: "hi"},
		PasswordField{ID: "p", Value: "hi"},
		Checkbox{ID: "c", Label: "Accept"},
		SelectList{ID: "s", Options: []string{"a", "b"}},
		Tabs{ID: "tb", Tabs: []string{"a", "b"}},
		Menu{ID: "m", Items: []MenuItem{{ID: "a", Label: "A"}}},
	} {
		normal := renderAt(w, 40, false, LocalState{})
		focused := renderAt(w, 40, true, LocalState{})
		if normal == focused {
			t.Errorf("%T: focused render equals unfocused: %q", w, normal)
		}
		// The focus look must not rely on color alone: it needs reverse
		// video (7) or bold (1) among its attributes.
		if !regexp.MustCompile(`\x1b\[([0-9;]*;)?[17][;m]`).MatchString(focused) {
			t.Errorf("%T: focused render has no bold or reverse attribute: %q", w, focused)
		}
	}
	disabled := []Widget{
		Button{ID: "b", Label: "OK", Disabled: true},
		TextInput{ID: "t", Value: "hi", Disabled: true},
		TextArea{ID: "ta", Value: "hi", Disabled: true},
		PasswordField{ID: "p", Value: "hi", Disabled: true},
		Checkbox{ID: "c", Label: "Accept", Disabled: true},
		SelectList{ID: "s", Options: []string{"a"}, Disabled: true},
		Tabs{ID: "tb", Tabs: []string{"a"}, Disabled: true},
		Menu{ID: "m", Items: []MenuItem{{ID: "a", Label: "A"}}, Disabled: true},
	}
	faint := regexp.MustCompile(`\x1b\[([0-9;]*;)?2[;m]`)
	for _, w := range disabled {
		out := renderAt(w, 40, true, LocalState{})
		if !faint.MatchString(out) {
			t.Errorf("%T: disabled render is not in the disabled style: %q", w, out)
		}
		if strings.Contains(out, "\x1b[7m") {
			t.Errorf("%T: disabled render shows a focus highlight: %q", w, out)
		}
	}
}

func TestInputWidgetRenderContent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		w     Widget
		st    LocalState
		width int
		want  string // with styling stripped
	}{
		{"button", Button{Label: "OK"}, LocalState{}, 40, "[ OK ]"},
		{"button truncated", Button{Label: "Submit"}, LocalState{}, 8, "[ Sub… ]"},
		{"checkbox on", Checkbox{Label: "Accept", Checked: true}, LocalState{}, 40, "[x] Accept"},
		{"checkbox off", Checkbox{Label: "Accept"}, LocalState{}, 40, "[ ] Accept"},
		{"input", TextInput{Label: "Name", Value: "bob"}, LocalState{}, 12, "Name: bob   "},
		{"input placeholder", TextInput{Placeholder: "who?"}, LocalState{}, 6, "who?  "},
		{"input scrolled to cursor", TextInput{Value: "abcdefghij"}, LocalState{Cursor: 10}, 5, "ghij "},
		{"input scrolled wide", TextInput{Value: "日本語"}, LocalState{Cursor: 3}, 5, "本語 "},
		{"password", PasswordField{Label: "PIN", Value: "1234"}, LocalState{}, 10, "PIN: ••••\u0020"},
		{"area", TextArea{Value: "a\nb\nc", Height: 2}, LocalState{Cursor: 4}, 3, "b  \nc  "},
		{"area label placeholder", TextArea{Label: "L", Placeholder: "p", Height: 2}, LocalState{}, 2, "L\np \n  "},
		{"list", SelectList{Label: "Pick", Options: []string{"a", "b", "c"}, Selected: 1, Height: 2}, LocalState{Row: 2}, 10, "Pick\n● b\n○ c"},
		{"list empty", SelectList{}, LocalState{}, 40, "(no options)"},
		{"tabs", Tabs{Tabs: []string{"A", "BB", "C"}, Active: 1}, LocalState{}, 40, "A │ BB │ C"},
		{"tabs truncated", Tabs{Tabs: []string{"A", "BB", "C"}}, LocalState{}, 6, "A │ B…"},
		{"menu", Menu{Items: []MenuItem{{Label: "File", Children: []MenuItem{{Label: "New"}}}, {Label: "Help"}}}, LocalState{}, 40, "File\n  New\nHelp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := plain(renderAt(tc.w, tc.width, false, tc.st)); got != tc.want {
				t.Errorf("render = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestInputWidgetCursorDrawn(t *testing.T) {
	out := renderAt(TextInput{Value: "abc"}, 10, true, LocalState{Cursor: 1})
	if want := DefaultTheme().Highlight.Render("b"); !strings.Contains(out, want) {
		t.Errorf("focused input %q does not draw the cursor on b as %q", out, want)
	}
	out = renderAt(TextArea{Value: "ab\ncd"}, 10, true, LocalState{Cursor: 5})
	if want := DefaultTheme().Highlight.Render(" "); !strings.Contains(strings.Split(out, "\n")[1], want) {
		t.Errorf("focused area %q does not draw the cursor at the end of line 2", out)
	}
}

func TestPasswordFieldNeverShowsText(t *testing.T) {
	const secret = "ZQXJ界"
	fields := []PasswordField{
		{ID: "p", Value: secret},
		{ID: "p", Label: "Password", Value: secret, Placeholder: "secret"},
		{ID: "p", Value: strings.Repeat(secret, 500), Width: 12},
		{ID: "p", Value: secret, Disabled: true},
	}
	for _, p := range fields {
		for _, width := range []int{1, 2, 5, 40, 1000} {
			for _, focused := range []bool{false, true} {
				for _, cursor := range []int{0, 2, 1 << 20} {
					out := renderAt(p, width, focused, LocalState{Cursor: cursor})
					if strings.ContainsAny(out, secret) {
						t.Fatalf("width %d focused %v: rendered %q reveals the secret", width, focused, out)
					}
				}
			}
		}
		for _, s := range []string{p.String(), fmt.Sprint(p), fmt.Sprintf("%v %+v %#v %s", p, p, p, p)} {
			if strings.ContainsAny(s, "ZQXJ界") {
				t.Errorf("formatted field %q reveals the secret", s)
			}
		}
	}
	if got := plain(renderAt(PasswordField{Value: secret}, 40, false, LocalState{})); !strings.HasPrefix(got, "•••••") {
		t.Errorf("render = %q, want one • per rune", got)
	}
}
