package tui

import "testing"

// Agents can press the readline keys; each parses to the key press whose
// String the text widgets match.
func TestParseReadlineKeys(t *testing.T) {
	for _, name := range []string{"ctrl+u", "ctrl+k", "ctrl+w", "alt+b", "alt+f", "alt+d", "alt+backspace"} {
		k, err := ParseKey(name)
		if err != nil || k.String() != name {
			t.Errorf("ParseKey(%q) = %v (%q), %v", name, k, k.String(), err)
		}
	}
}
