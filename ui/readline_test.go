package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The readline keys as Bubble Tea decodes them from a terminal's bytes
// (^U, ^K, ^W, ESC b, ESC f, ESC DEL, ESC d).
var (
	keyCtrlU     = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	keyCtrlK     = tea.KeyPressMsg{Code: 'k', Mod: tea.ModCtrl}
	keyCtrlW     = tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl}
	keyAltB      = tea.KeyPressMsg{Code: 'b', Mod: tea.ModAlt}
	keyAltF      = tea.KeyPressMsg{Code: 'f', Mod: tea.ModAlt}
	keyAltD      = tea.KeyPressMsg{Code: 'd', Mod: tea.ModAlt}
	keyAltBksp   = tea.KeyPressMsg{Code: tea.KeyBackspace, Mod: tea.ModAlt}
	keyAltLeft   = tea.KeyPressMsg{Code: tea.KeyLeft, Mod: tea.ModAlt}
	keyCtrlRight = tea.KeyPressMsg{Code: tea.KeyRight, Mod: tea.ModCtrl}
)

func TestReadlineKeyStrings(t *testing.T) {
	for key, want := range map[tea.KeyPressMsg]string{
		keyCtrlU: "ctrl+u", keyCtrlK: "ctrl+k", keyCtrlW: "ctrl+w", keyAltB: "alt+b",
		keyAltF: "alt+f", keyAltD: "alt+d", keyAltBksp: "alt+backspace",
		keyAltLeft: "alt+left", keyCtrlRight: "ctrl+right",
	} {
		if got := key.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", key, got, want)
		}
	}
}

// cursorMark marks the cursor in the texts of the cases below.
const cursorMark = "‸"

// splitCursor returns s without its cursor mark and the mark's rune index.
func splitCursor(t *testing.T, s string) (string, int) {
	t.Helper()
	i := strings.Index(s, cursorMark)
	if i < 0 || strings.Count(s, cursorMark) != 1 {
		t.Fatalf("%q: want exactly one %s", s, cursorMark)
	}
	return s[:i] + s[i+len(cursorMark):], len([]rune(s[:i]))
}

// joinCursor puts the cursor mark into value at rune index cur.
func joinCursor(value string, cur int) string {
	r := []rune(value)
	cur = clampCursor(cur, len(r))
	return string(r[:cur]) + cursorMark + string(r[cur:])
}

// press sends key to a widget built by mk from the marked text and
// returns the marked text afterwards, checking that a change is reported
// exactly when the text changed.
func press(t *testing.T, mk func(string) Widget, marked string, key tea.KeyPressMsg) string {
	t.Helper()
	value, cur := splitCursor(t, marked)
	st := &LocalState{Cursor: cur}
	msgs := mk(value).HandleEvent(key, st)
	got := value
	if len(msgs) > 0 {
		switch m := msgs[0].(type) {
		case TextInputChanged:
			got = m.Text
		case PasswordFieldChanged:
			got = m.Text
		case TextAreaChanged:
			got = m.Text
		default:
			t.Fatalf("unexpected message %T", m)
		}
		if got == value {
			t.Errorf("%q %s: reported a change that changed nothing", marked, key)
		}
	}
	return joinCursor(got, st.Cursor)
}

var (
	mkInput    = func(v string) Widget { return TextInput{ID: "t", Value: v} }
	mkPassword = func(v string) Widget { return PasswordField{ID: "p", Value: v} }
	mkArea     = func(v string) Widget { return TextArea{ID: "a", Value: v} }
)

type readlineCase struct {
	key      tea.KeyPressMsg
	in, want string
	// wantSecret is the password field's result when it differs (its
	// whole text is one word); "" means the same as want.
	wantSecret string
}

// lineCases hold for one-line text in all three widgets.
var lineCases = []readlineCase{
	// ctrl+a, ctrl+e
	{key: keyCtrlA, in: "foo bar‸", want: "‸foo bar"},
	{key: keyCtrlA, in: "‸foo", want: "‸foo"},
	{key: keyCtrlA, in: "", want: "‸"},
	{key: keyCtrlE, in: "‸café 日本", want: "café 日本‸"},
	{key: keyCtrlE, in: "ab‸", want: "ab‸"},
	// ctrl+u: kill to the start.
	{key: keyCtrlU, in: "foo bar‸", want: "‸"},
	{key: keyCtrlU, in: "café ‸日本", want: "‸日本"},
	{key: keyCtrlU, in: "‸abc", want: "‸abc"},
	{key: keyCtrlU, in: "‸", want: "‸"},
	// ctrl+k: kill to the end.
	{key: keyCtrlK, in: "日‸本語", want: "日‸"},
	{key: keyCtrlK, in: "‸abc", want: "‸"},
	{key: keyCtrlK, in: "abc‸", want: "abc‸"},
	// ctrl+w: back to white space.
	{key: keyCtrlW, in: "foo bar‸", want: "foo ‸", wantSecret: "‸"},
	{key: keyCtrlW, in: "foo bar   ‸", want: "foo ‸", wantSecret: "‸"},
	{key: keyCtrlW, in: "git push origin/ma‸in", want: "git push ‸in", wantSecret: "‸in"},
	{key: keyCtrlW, in: "café 日本‸", want: "café ‸", wantSecret: "‸"},
	{key: keyCtrlW, in: "   ‸x", want: "‸x"},
	{key: keyCtrlW, in: "‸abc", want: "‸abc"},
	{key: keyCtrlW, in: "a.b-c_d‸", want: "‸"},
	// alt+backspace: back to the start of a word.
	{key: keyAltBksp, in: "foo bar‸", want: "foo ‸", wantSecret: "‸"},
	{key: keyAltBksp, in: "origin/main‸", want: "origin/‸", wantSecret: "‸"},
	{key: keyAltBksp, in: "foo bar,  ‸", want: "foo ‸", wantSecret: "‸"},
	{key: keyAltBksp, in: "café‸ 日本", want: "‸ 日本"},
	{key: keyAltBksp, in: "x 日本‸", want: "x ‸", wantSecret: "‸"},
	{key: keyAltBksp, in: "‸abc", want: "‸abc"},
	{key: keyAltBksp, in: "...‸", want: "‸"},
	// alt+d: forward to the end of a word.
	{key: keyAltD, in: "‸foo bar", want: "‸ bar", wantSecret: "‸"},
	{key: keyAltD, in: "foo‸, bar baz", want: "foo‸ baz", wantSecret: "foo‸"},
	{key: keyAltD, in: "abc‸", want: "abc‸"},
	// alt+b, alt+f: word motions.
	{key: keyAltB, in: "foo bar‸", want: "foo ‸bar", wantSecret: "‸foo bar"},
	{key: keyAltB, in: "foo ba‸r", want: "foo ‸bar", wantSecret: "‸foo bar"},
	{key: keyAltB, in: "foo ‸bar", want: "‸foo bar"},
	{key: keyAltB, in: "foo,  ...‸", want: "‸foo,  ..."},
	{key: keyAltB, in: "é日本‸", want: "‸é日本"},
	{key: keyAltB, in: "cafe\u0301 x‸", want: "cafe\u0301 ‸x", wantSecret: "‸cafe\u0301 x"},
	{key: keyAltB, in: "x cafe\u0301‸", want: "x ‸cafe\u0301", wantSecret: "‸x cafe\u0301"},
	{key: keyAltB, in: "‸abc", want: "‸abc"},
	{key: keyAltF, in: "‸foo bar", want: "foo‸ bar", wantSecret: "foo bar‸"},
	{key: keyAltF, in: "foo‸ bar", want: "foo bar‸"},
	{key: keyAltF, in: "‸  ,,日本 語", want: "  ,,日本‸ 語", wantSecret: "  ,,日本 語‸"},
	{key: keyAltF, in: "snake‸_case x", want: "snake_case‸ x", wantSecret: "snake_case x‸"},
	{key: keyAltF, in: "abc‸", want: "abc‸"},
	{key: keyAltLeft, in: "foo bar‸", want: "foo ‸bar", wantSecret: "‸foo bar"},
	{key: keyCtrlRight, in: "‸foo bar", want: "foo‸ bar", wantSecret: "foo bar‸"},
}

func TestReadlineKeysOneLine(t *testing.T) {
	for _, w := range []struct {
		name   string
		mk     func(string) Widget
		secret bool
	}{{"TextInput", mkInput, false}, {"PasswordField", mkPassword, true}, {"TextArea", mkArea, false}} {
		for _, tc := range lineCases {
			want := tc.want
			if w.secret && tc.wantSecret != "" {
				want = tc.wantSecret
			}
			if tc.in == "" {
				tc.in = cursorMark
			}
			if got := press(t, w.mk, tc.in, tc.key); got != want {
				t.Errorf("%s %q + %s = %q, want %q", w.name, tc.in, tc.key, got, want)
			}
		}
	}
}

func TestReadlineKeysTextArea(t *testing.T) {
	for _, tc := range []readlineCase{
		// Line keys stay on the cursor's line.
		{key: keyCtrlA, in: "one\ntw‸o\nthree", want: "one\n‸two\nthree"},
		{key: keyCtrlE, in: "one\nt‸wo\nthree", want: "one\ntwo‸\nthree"},
		{key: keyCtrlU, in: "one\ntw‸o\nthree", want: "one\n‸o\nthree"},
		{key: keyCtrlU, in: "one\n‸two", want: "one\n‸two"},
		{key: keyCtrlK, in: "one\nt‸wo\nthree", want: "one\nt‸\nthree"},
		{key: keyCtrlK, in: "one‸\ntwo", want: "one‸\ntwo"},
		{key: keyCtrlK, in: "日本‸語\n", want: "日本‸\n"},
		// Word keys cross line ends, which are white space.
		{key: keyCtrlW, in: "one\n‸two", want: "‸two"},
		{key: keyCtrlW, in: "a b\ncd‸", want: "a b\n‸"},
		{key: keyAltBksp, in: "one\n\n‸two", want: "‸two"},
		{key: keyAltB, in: "one\n‸two", want: "‸one\ntwo"},
		{key: keyAltF, in: "one‸\n  two", want: "one\n  two‸"},
		{key: keyAltD, in: "one‸\ntwo three", want: "one‸ three"},
	} {
		if got := press(t, mkArea, tc.in, tc.key); got != tc.want {
			t.Errorf("TextArea %q + %s = %q, want %q", tc.in, tc.key, got, tc.want)
		}
	}
}

// A disabled field ignores the readline keys; MaxLen does not hold them
// back (they never grow the text).
func TestReadlineKeysDisabledAndMaxLen(t *testing.T) {
	for _, w := range []Widget{
		TextInput{ID: "t", Value: "foo bar", Disabled: true},
		PasswordField{ID: "p", Value: "foo bar", Disabled: true},
		TextArea{ID: "a", Value: "foo bar", Disabled: true},
	} {
		st := &LocalState{Cursor: 7}
		if msgs := w.HandleEvent(keyCtrlW, st); msgs != nil || st.Cursor != 7 {
			t.Errorf("%T disabled: ctrl+w gave %v, cursor %d", w, msgs, st.Cursor)
		}
	}
	st := &LocalState{Cursor: 4}
	msgs := TextInput{ID: "t", Value: "abcdef", MaxLen: 3}.HandleEvent(keyCtrlK, st)
	if len(msgs) != 1 || msgs[0].(TextInputChanged).Text != "abcd" {
		t.Errorf("ctrl+k over MaxLen = %v", msgs)
	}
}
