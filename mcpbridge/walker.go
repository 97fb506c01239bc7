package mcpbridge

import (
	"log/slog"
	"reflect"
	"strings"

	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

var (
	actionRe   = matcher(validAction)   // ^[a-z][a-z0-9_]{0,31}$
	widgetIDRe = matcher(validWidgetID) // ^[A-Za-z0-9_-]{1,64}$
)

// Derived is one tool derived from a widget of the current tree.
type Derived struct {
	// Name is <namespace>.<widget id>.<action>.
	Name     string
	WidgetID string
	Action   string
	// WidgetType is the widget's Go type name, e.g. "ui.TextInput".
	WidgetType  string
	Description string
	// Schema is the sanitised input schema.
	Schema map[string]any
	// Sensitive is set when the provider annotated the action sensitive.
	Sensitive bool
	// Destructive is set when the provider annotated it destructiveHint.
	Destructive bool
	// ReadOnly is set when the provider declared the action a read
	// (ui.ToolSpec.ReadOnly): advertised readOnlyHint, answered without
	// the dispatcher, allowed while agents are paused.
	ReadOnly bool
}

// WarnFunc receives derivation warnings (slog-style key/value args).
type WarnFunc func(msg string, args ...any)

// SlogWarn returns a WarnFunc that logs at warn level; nil logs nothing.
func SlogWarn(l *slog.Logger) WarnFunc {
	if l == nil {
		return nil
	}
	return func(msg string, args ...any) { l.Warn("mcp derivation: "+msg, args...) }
}

// Derive walks tree in pre-order and returns the tools its widgets offer
// now. A widget id or action name that is not valid, or a widget id seen
// before on any widget (tool provider or not), derives nothing and is
// reported to warn; an Exclude widget derives nothing (its children are
// still walked); a hidden overlay and its content derive nothing; while a
// modal is open, every widget outside it (shadowed) derives nothing. A
// panic in the app's code costs only the node that raised it. warn may be
// nil.
func Derive(namespace string, tree ui.Node, warn WarnFunc) []Derived {
	return derive(guard.Scope{}, namespace, tree, warn)
}

// excluded reports whether the widget asked to hide its tools.
func excluded(n ui.Node) bool {
	type excluder interface{ MCPExcluded() bool }
	if e, ok := n.(excluder); ok {
		return e.MCPExcluded()
	}
	return exclude(n)
}

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

// Lookup finds the widget a derived tool name refers to in tree, applying
// the same rules as Derive (valid, first of its id, not excluded, not in a
// hidden overlay, not behind an open modal, offering that action now).
func Lookup(namespace string, tree ui.Node, name string) (ui.ToolProvider, ui.ToolSpec, bool) {
	tp, spec, err := resolve(guard.Scope{}, namespace, tree, name)
	return tp, spec, err == nil
}

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

// Clean strips control, format, separator (other than the plain space),
// private-use, default-ignorable and invisible filler characters from s:
// every rune that safetext.Classify does not keep.
func Clean(s string) string {
	if printableASCII(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if safetext.Classify(r) != safetext.Keep {
			return -1
		}
		return r
	}, s)
}

// printableASCII reports whether s is all printable ASCII, which Clean
// keeps as it is.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] >= 0x7F {
			return false
		}
	}
	return true
}

// cleanSchema copies a schema, cleaning every string and every key. It is
// the schema a tool is advertised with and the one its calls are
// validated against. No schema (or one that is not an object schema)
// takes only {}: an object with no properties and no others allowed.
func cleanSchema(s map[string]any) map[string]any {
	out, _ := cleanValue(s).(map[string]any)
	if out == nil || out["type"] != "object" {
		out = emptySchema()
	}
	return out
}

// emptySchema is the schema of a tool that takes no arguments.
func emptySchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
}

// providerArgs renames the arguments of a call, validated against the
// cleaned schema, back to the property names the provider declared, where
// cleaning changed them (a key with a zero-width character, say): the
// agent only ever saw the cleaned names. Other arguments pass unchanged.
func providerArgs(raw map[string]any, args map[string]any) map[string]any {
	props, _ := raw["properties"].(map[string]any)
	var renamed map[string]any
	for k := range props {
		ck := Clean(k)
		if ck == k {
			continue
		}
		v, ok := args[ck]
		if !ok {
			continue
		}
		if renamed == nil {
			renamed = make(map[string]any, len(args))
			for ak, av := range args {
				renamed[ak] = av
			}
		}
		delete(renamed, ck)
		renamed[k] = v
	}
	if renamed == nil {
		return args
	}
	return renamed
}

func cleanValue(v any) any {
	switch v := v.(type) {
	case string:
		return Clean(v)
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[Clean(k)] = cleanValue(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = cleanValue(x)
		}
		return l
	case []string:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = Clean(x)
		}
		return l
	default:
		return v
	}
}

// exclude reads a widget's Exclude field, as the built-in widgets have it.
func exclude(n ui.Node) bool {
	v := reflect.ValueOf(n)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return false
	}
	f := v.FieldByName("Exclude")
	return f.IsValid() && f.Kind() == reflect.Bool && f.Bool()
}
