package tui

import (
	"fmt"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/session"
)

// binding is what a key bound by the terminal does, before (or instead
// of) the focused widget: see keyFrom for who may use each.
type binding int

const (
	bindNone        binding = iota // the key goes to the focused widget
	bindQuit                       // leave; never an agent's key
	bindAttach                     // open or close the attach panel (owner)
	bindLog                        // open or close the activity log
	bindPause                      // pause agents or hand back (owner, human)
	bindFocusOnly                  // agents may act on the focused widget only (owner, human)
	bindRotateToken                // a new token, with the attach panel open (human)
	bindFocusNext                  // focus the next widget
	bindFocusPrev                  // focus the previous widget
	bindEscape                     // to the open modal, wherever focus is in it
)

// bindings are the keys the terminal takes, by name (tea.KeyPressMsg's
// String): one table for the input code (keyFrom, approvalKey,
// agentKeys, the observer's keys) and for the hints on screen (keyFor).
var bindings = map[string]binding{
	"ctrl+c":    bindQuit,
	"ctrl+o":    bindAttach,
	"ctrl+g":    bindLog,
	"ctrl+p":    bindPause,
	"ctrl+f":    bindFocusOnly,
	"ctrl+r":    bindRotateToken,
	"tab":       bindFocusNext,
	"shift+tab": bindFocusPrev,
	"esc":       bindEscape,
}

// bindingOf is what k does in the terminal (bindNone: it goes to the
// focused widget).
func bindingOf(k tea.KeyPressMsg) binding { return bindings[k.String()] }

// keyFor is the key bound to b, as the hints on screen spell it.
func keyFor(b binding) string {
	for k, kb := range bindings {
		if kb == b {
			return k
		}
	}
	panic(fmt.Sprintf("tui: no key bound to binding %d", b))
}

// approvalKeys answer an agent's call waiting for approval.
var approvalKeys = map[string]session.Approval{
	"a":   session.ApprovedOnce,
	"y":   session.ApprovedOnce,
	"s":   session.ApprovedForSession,
	"d":   session.Refused,
	"n":   session.Refused,
	"esc": session.Refused,
}

// joinKeys answer a request to join the session.
var joinKeys = map[string]session.JoinAnswer{
	"o":   session.JoinAsObserver,
	"r":   session.JoinAsDriver,
	"n":   session.JoinRefused,
	"esc": session.JoinRefused,
}

// namedKeys are the key names an agent may press besides single
// characters.
var namedKeys = map[string]tea.KeyPressMsg{
	"enter":     {Code: tea.KeyEnter},
	"tab":       {Code: tea.KeyTab},
	"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
	"esc":       {Code: tea.KeyEscape},
	"space":     {Code: tea.KeySpace, Text: " "},
	"backspace": {Code: tea.KeyBackspace},
	"delete":    {Code: tea.KeyDelete},
	"up":        {Code: tea.KeyUp},
	"down":      {Code: tea.KeyDown},
	"left":      {Code: tea.KeyLeft},
	"right":     {Code: tea.KeyRight},
	"home":      {Code: tea.KeyHome},
	"end":       {Code: tea.KeyEnd},
	"pgup":      {Code: tea.KeyPgUp},
	"pgdown":    {Code: tea.KeyPgDown},
	"ctrl+a":    {Code: 'a', Mod: tea.ModCtrl},
	"ctrl+e":    {Code: 'e', Mod: tea.ModCtrl},
	"ctrl+o":    {Code: 'o', Mod: tea.ModCtrl},
	"ctrl+c":    {Code: 'c', Mod: tea.ModCtrl},
	// The readline keys of the text widgets (ui/readline.go).
	"ctrl+u":        {Code: 'u', Mod: tea.ModCtrl},
	"ctrl+k":        {Code: 'k', Mod: tea.ModCtrl},
	"ctrl+w":        {Code: 'w', Mod: tea.ModCtrl},
	"alt+b":         {Code: 'b', Mod: tea.ModAlt},
	"alt+f":         {Code: 'f', Mod: tea.ModAlt},
	"alt+d":         {Code: 'd', Mod: tea.ModAlt},
	"alt+backspace": {Code: tea.KeyBackspace, Mod: tea.ModAlt},
}

// KeyNames lists the named keys ParseKey accepts, for documentation.
func KeyNames() []string {
	return []string{"enter", "tab", "shift+tab", "esc", "space", "backspace", "delete", "up", "down", "left", "right", "home", "end", "pgup", "pgdown", "ctrl+a", "ctrl+e", "ctrl+o", "ctrl+u", "ctrl+k", "ctrl+w", "alt+b", "alt+f", "alt+d", "alt+backspace"}
}

// ParseKey turns a key name, or a single printable character, into the
// key press a terminal would produce.
func ParseKey(name string) (tea.KeyPressMsg, error) {
	if k, ok := namedKeys[name]; ok {
		return k, nil
	}
	if r, size := utf8.DecodeRuneInString(name); size == len(name) && r != utf8.RuneError && r >= 0x20 && r != 0x7f {
		return tea.KeyPressMsg{Code: r, Text: name}, nil
	}
	return tea.KeyPressMsg{}, fmt.Errorf("unknown key %q: use a single character or one of %v", name, KeyNames())
}
