package keyname

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		want tea.KeyPressMsg
	}{
		{"enter", tea.KeyPressMsg{Code: tea.KeyEnter}},
		{"shift+tab", tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}},
		{"ctrl+c", tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}},
		{"a", tea.KeyPressMsg{Code: 'a', Text: "a"}},
		{"é", tea.KeyPressMsg{Code: 'é', Text: "é"}},
		{" ", tea.KeyPressMsg{Code: ' ', Text: " "}},
	} {
		if got, err := Parse(tc.name); err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "ab", "\n", "\x1b", "\x7f", "\u009b", "\uFFFD", "\xff", "hyper+x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
	for _, n := range Names() {
		if _, err := Parse(n); err != nil {
			t.Errorf("a listed name does not parse: %v", err)
		}
	}
}
