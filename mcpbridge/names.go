package mcpbridge

import "strings"

// SplitName splits <namespace>.<widget id>.<action>.
func SplitName(namespace, name string) (widgetID, action string, ok bool) {
	rest, found := strings.CutPrefix(name, namespace+".")
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

var (
	actionRe   = matcher(validAction)   // ^[a-z][a-z0-9_]{0,31}$
	widgetIDRe = matcher(validWidgetID) // ^[A-Za-z0-9_-]{1,64}$
)

// matcher gives a check the MatchString method the regexps it replaced
// had (they were a tenth of deriving a tree's tools).
type matcher func(string) bool

func (m matcher) MatchString(s string) bool { return m(s) }

// validAction: a lowercase letter followed by up to 31 of [a-z0-9_].
func validAction(s string) bool {
	if len(s) == 0 || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// validWidgetID: 1 to 64 of [A-Za-z0-9_-].
func validWidgetID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
