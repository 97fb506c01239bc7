package teaapp

import (
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// This file turns the key names of a component's KeyMap (what
// key.Binding holds: "up", "ctrl+u", "pgdown", "k") into the key presses
// a terminal would send, so an agent's action goes through the same keys
// a human would press.

// namedKeyCodes maps the names of special keys, as tea.Key.String spells
// them, to their codes. It is built from tea's own names.
var namedKeyCodes = func() map[string]rune {
	out := map[string]rune{}
	add := func(c rune) {
		n := tea.Key{Code: c}.Keystroke()
		if utf8.RuneCountInString(n) > 1 {
			out[n] = c
		}
	}
	for _, c := range []rune{tea.KeyEnter, tea.KeyTab, tea.KeyBackspace, tea.KeyEscape, tea.KeySpace} {
		add(c)
	}
	for c := tea.KeyExtended; c < tea.KeyExtended+400; c++ {
		add(c)
	}
	return out
}()

// modifierNames are the modifier prefixes of a key name, in the order
// tea.Key.Keystroke writes them.
var modifierNames = []struct {
	prefix string
	mod    tea.KeyMod
}{
	{"ctrl+", tea.ModCtrl}, {"alt+", tea.ModAlt}, {"shift+", tea.ModShift},
	{"meta+", tea.ModMeta}, {"hyper+", tea.ModHyper}, {"super+", tea.ModSuper},
}

// parseKeyName returns the key press whose String is name, or false when
// name is not one a terminal sends as a single press.
func parseKeyName(name string) (tea.KeyPressMsg, bool) {
	rest := name
	var mod tea.KeyMod
	for _, m := range modifierNames {
		if len(rest) > len(m.prefix) && strings.HasPrefix(rest, m.prefix) {
			mod |= m.mod
			rest = rest[len(m.prefix):]
		}
	}
	var k tea.KeyPressMsg
	if c, ok := namedKeyCodes[rest]; ok {
		k = tea.KeyPressMsg{Code: c, Mod: mod}
		if c == tea.KeySpace && mod == 0 {
			k.Text = " "
		}
	} else if r, size := utf8.DecodeRuneInString(rest); size == len(rest) && r != utf8.RuneError && r >= 0x20 && r != 0x7f {
		k = tea.KeyPressMsg{Code: r, Mod: mod}
		if mod == 0 || mod == tea.ModShift {
			k.Text = rest
			k.Mod = 0
		}
	} else {
		return tea.KeyPressMsg{}, false
	}
	if k.String() != name {
		return tea.KeyPressMsg{}, false
	}
	return k, true
}

// bindingKey returns the first key of b, if enabled, that a terminal can
// send, as a key press that matches b.
func bindingKey(b key.Binding) (tea.KeyPressMsg, bool) {
	if !b.Enabled() {
		return tea.KeyPressMsg{}, false
	}
	for _, n := range b.Keys() {
		if k, ok := parseKeyName(n); ok && key.Matches(k, b) {
			return k, true
		}
	}
	return tea.KeyPressMsg{}, false
}

// runeKey returns the key press that types r.
func runeKey(r rune) tea.KeyPressMsg {
	if r == ' ' {
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	return tea.KeyPressMsg{Code: r, Text: string(r)}
}
