package mcpbridge

import (
	"regexp"
	"testing"

	"pgregory.net/rapid"
)

// TestNameChecksAreTheRegexps: the hand-written checks of action names and
// widget ids accept exactly what their regular expressions do.
func TestNameChecksAreTheRegexps(t *testing.T) {
	action := regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	id := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, s := range []string{"", "a", "A", "0a", "a0_", "a-b", "é", "a\n", string(make([]byte, 32)), "abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz0123456"} {
		if validAction(s) != action.MatchString(s) || validWidgetID(s) != id.MatchString(s) {
			t.Errorf("%q: action %v/%v, id %v/%v", s, validAction(s), action.MatchString(s), validWidgetID(s), id.MatchString(s))
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[a-zA-Z0-9_\-é. \n]{0,70}`).Draw(t, "s")
		if validAction(s) != action.MatchString(s) || validWidgetID(s) != id.MatchString(s) {
			t.Fatalf("%q: action %v/%v, id %v/%v", s, validAction(s), action.MatchString(s), validWidgetID(s), id.MatchString(s))
		}
	})
}
