package keyname

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// named are the key names an agent may press besides single characters.
var named = map[string]tea.KeyPressMsg{
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

// Names lists the named keys Parse accepts, for documentation.
func Names() []string {
	return []string{"enter", "tab", "shift+tab", "esc", "space", "backspace", "delete", "up", "down", "left", "right", "home", "end", "pgup", "pgdown", "ctrl+a", "ctrl+e", "ctrl+o", "ctrl+u", "ctrl+k", "ctrl+w", "alt+b", "alt+f", "alt+d", "alt+backspace"}
}

// Parse turns a key name, or a single printable character, into the key
// press a terminal would produce.
func Parse(name string) (tea.KeyPressMsg, error) {
	if k, ok := named[name]; ok {
		return k, nil
	}
	// One printable character: no C0 or C1 control (U+009B is a CSI to
	// an 8-bit terminal), no DEL, no invalid UTF-8.
	if r, size := utf8.DecodeRuneInString(name); size == len(name) && r != utf8.RuneError && !unicode.IsControl(r) {
		return tea.KeyPressMsg{Code: r, Text: name}, nil
	}
	return tea.KeyPressMsg{}, fmt.Errorf("unknown key %q: use a single character or one of %v", name, Names())
}
