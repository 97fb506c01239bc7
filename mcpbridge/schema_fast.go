package mcpbridge

import (
	"math"
	"slices"
	"unicode/utf8"
)

// acceptsSimple reports whether args are valid against schema when schema
// is of the simple kind every built-in widget declares: an object whose
// properties are strings, integers, numbers or booleans, with at most
// required names, additionalProperties, minimum/maximum and
// minLength/maxLength. It decides only acceptance, and only for such a
// schema whose names cleaning leaves alone (the advertised copy means
// the same); for anything else, or arguments it would refuse, it returns
// false and the full validator decides (and words the refusal).
// TestAcceptsSimpleAgreesWithTheValidator holds it to jsonschema-go.
func acceptsSimple(schema map[string]any, args map[string]any) bool {
	if schema["type"] != "object" {
		return false
	}
	props := map[string]any{}
	for k, v := range schema {
		switch k {
		case "type", "description", "title":
		case "properties":
			p, ok := v.(map[string]any)
			if !ok {
				return false
			}
			props = p
		case "additionalProperties":
			if _, ok := v.(bool); !ok {
				return false
			}
		case "required":
			var names []string
			switch r := v.(type) {
			case []string:
				names = r
			case []any:
				for _, x := range r {
					s, ok := x.(string)
					if !ok {
						return false
					}
					names = append(names, s)
				}
			default:
				return false
			}
			for _, n := range names {
				if Clean(n) != n {
					return false
				}
				if _, ok := args[n]; !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	for k, p := range props {
		if Clean(k) != k {
			return false
		}
		ps, ok := p.(map[string]any)
		if !ok {
			return false
		}
		v, present := args[k]
		if !acceptsSimpleValue(ps, v, present) {
			return false
		}
	}
	for k := range args {
		if _, ok := props[k]; !ok {
			return false // refused if closed; if open, the validator's to say
		}
	}
	return true
}

// acceptsSimpleValue is acceptsSimple for one property (v is absent when
// !present).
func acceptsSimpleValue(ps map[string]any, v any, present bool) bool {
	typ, _ := ps["type"].(string)
	var lo, hi, minLen, maxLen float64 = math.Inf(-1), math.Inf(1), 0, math.Inf(1)
	for k, x := range ps {
		switch k {
		case "type", "description", "title":
		case "minimum", "maximum", "minLength", "maxLength":
			n, ok := number(x)
			if !ok || ((k == "minLength" || k == "maxLength") && (n < 0 || n != math.Trunc(n))) {
				return false // not a number, or a length that is not a count: the validator's to refuse
			}
			switch k {
			case "minimum":
				lo = n
			case "maximum":
				hi = n
			case "minLength":
				minLen = n
			case "maxLength":
				maxLen = n
			}
		default:
			return false
		}
	}
	if !slices.Contains([]string{"string", "integer", "number", "boolean"}, typ) {
		return false
	}
	if !present {
		return true
	}
	switch typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return false
		}
		n := float64(utf8.RuneCountInString(s))
		return n >= minLen && n <= maxLen
	case "boolean":
		_, ok := v.(bool)
		return ok
	default:
		f, ok := v.(float64)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) || (typ == "integer" && f != math.Trunc(f)) {
			return false
		}
		return f >= lo && f <= hi
	}
}

// number is x as a float64 when it is one of Go's number types.
func number(x any) (float64, bool) {
	switch n := x.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
