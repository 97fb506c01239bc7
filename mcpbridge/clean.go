package mcpbridge

import (
	"strings"

	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
)

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
