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

// toolName is a tool name parsed once: split ([SplitName]) and checked
// against the id and action alphabets. A call parses its tool's name when
// it comes in (meter) and every step after reads the parts from here
// (toolOf) instead of splitting the name again.
type toolName struct {
	name     string
	widgetID string // "" unless derived
	action   string // "" unless derived
	// derived reports whether the name has the form
	// <namespace>.<widget id>.<action> (SplitName's ok).
	derived bool
	// valid reports whether it is derived with an id and an action of
	// their alphabets: only such a name can resolve to a widget's tool.
	valid bool
}

// parseToolName parses name in namespace.
func parseToolName(namespace, name string) toolName {
	id, action, ok := SplitName(namespace, name)
	return toolName{
		name: name, widgetID: id, action: action, derived: ok,
		valid: ok && widgetIDRe.MatchString(id) && actionRe.MatchString(action),
	}
}

// parseTool is parseToolName in the bridge's namespace.
func (c *sessionServer) parseTool(name string) toolName {
	return parseToolName(c.b.opts.Namespace, name)
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
