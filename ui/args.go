package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file holds what every widget's MCP tools share: the argument
// names, reading and validating arguments, and building specs, results
// and errors. Each widget's own Tools, CallTool and State are in the
// widget's file.
//
// Every write sends exactly the messages the widget's keyboard path sends
// for the same change, and sends nothing when a person's equivalent key
// press would change nothing (the result then says "changed": false).
// Descriptions and schemas are static per (widget type, action): app text
// appears only in results, State and error messages.

// Argument names and their static schema descriptions.
const (
	argText     = "text"
	argIndex    = "index"
	argItemID   = "item_id"
	argNodeID   = "node_id"
	argColumn   = "column"
	argDir      = "direction"
	argPosition = "position"
	argRow      = "row"
)

// okResult is the result of a write that sent its message.
func okResult() map[string]any { return map[string]any{"ok": true} }

// unchangedResult is the result of a write that changed nothing, so sent
// nothing, like the equivalent key press.
func unchangedResult(why string) map[string]any {
	return map[string]any{"ok": true, "changed": false, "reason": why}
}

// tool builds a ToolSpec with a fresh schema, so callers may change what
// they get.
func tool(action, desc string, props map[string]any, required ...string) ToolSpec {
	return ToolSpec{Action: action, Description: desc, InputSchema: ObjectSchema(props, required...)}
}

// readTool builds a read action's ToolSpec (see [ToolSpec.ReadOnly]).
func readTool(action, desc string, props map[string]any, required ...string) ToolSpec {
	t := tool(action, desc, props, required...)
	t.ReadOnly = true
	return t
}

// indexProp is a zero-based integer property.
func indexProp(desc string) map[string]any {
	p := Prop("integer", desc)
	p["minimum"] = 0
	return p
}

// errUnknownAction is the error for an action a widget does not have.
func errUnknownAction(action string) error {
	return fmt.Errorf("unknown action %q", action)
}

// checkArgs rejects arguments other than allowed, which the schemas
// forbid (additionalProperties is false).
func checkArgs(args map[string]any, allowed ...string) error {
	var extra []string
	for k := range args {
		if !slices.Contains(allowed, k) {
			extra = append(extra, strconv.Quote(k))
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	if len(allowed) == 0 {
		return fmt.Errorf("unexpected argument %s: this action takes no arguments", strings.Join(extra, ", "))
	}
	want := make([]string, len(allowed))
	for i, a := range allowed {
		want[i] = strconv.Quote(a)
	}
	return fmt.Errorf("unexpected argument %s: this action takes %s", strings.Join(extra, ", "), strings.Join(want, ", "))
}

// jsonType names the JSON type of an argument value, for errors.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, float32, int, int64, int32, json.Number:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// intArg returns the integer argument name. Numbers arrive as float64
// from JSON; a non-integral, non-finite or huge value is an error, as is a
// value of another type or a missing one.
func intArg(args map[string]any, name string) (int, error) {
	v, ok := args[name]
	if !ok {
		return 0, fmt.Errorf("missing required argument %q (an integer)", name)
	}
	var f float64
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		if n < math.MinInt || n > math.MaxInt {
			return 0, fmt.Errorf("argument %q is too large", name)
		}
		return int(n), nil
	case int32:
		return int(n), nil
	case float64:
		f = n
	case float32:
		f = float64(n)
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return intArg(map[string]any{name: i}, name)
		}
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, fmt.Errorf("argument %q must be an integer, got %q", name, n.String())
		}
	default:
		return 0, fmt.Errorf("argument %q must be an integer, got %s", name, jsonType(v))
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("argument %q must be an integer, got a non-finite number", name)
	case f != math.Trunc(f):
		return 0, fmt.Errorf("argument %q must be an integer, got %s", name, strconv.FormatFloat(f, 'g', -1, 64))
	case f < -(1<<53) || f > 1<<53:
		// Beyond 2^53 a float64 no longer holds every integer; no widget
		// has ranges that large.
		return 0, fmt.Errorf("argument %q is too large: %s", name, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return int(f), nil
}

// stringArg returns the string argument name. A missing argument is an
// error when required; otherwise it returns ok false. A JSON null counts as
// missing for an optional argument.
func stringArg(args map[string]any, name string, required bool) (s string, ok bool, err error) {
	v, present := args[name]
	if !present || (v == nil && !required) {
		if required {
			return "", false, fmt.Errorf("missing required argument %q (a string)", name)
		}
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, fmt.Errorf("argument %q must be a string, got %s", name, jsonType(v))
	}
	return s, true, nil
}

// plural returns "n noun" or "n nouns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// indexRangeErr is the error for index v of a container holding n items,
// e.g. `index 9 is out of range: this list has 4 options (0-3)`.
func indexRangeErr(arg string, v, n int, container, noun string) error {
	if n == 0 {
		return fmt.Errorf("%s %d is out of range: %s has no %ss", arg, v, container, noun)
	}
	return fmt.Errorf("%s %d is out of range: %s has %s (0-%d)", arg, v, container, plural(n, noun), n-1)
}

// checkIndex reads the integer argument arg and checks it against [0, n).
func checkIndex(args map[string]any, arg string, n int, container, noun string) (int, error) {
	i, err := intArg(args, arg)
	if err != nil {
		return 0, err
	}
	if i < 0 || i >= n {
		return 0, indexRangeErr(arg, i, n, container, noun)
	}
	return i, nil
}

// maxListedIDs caps the ids an error message lists.
const maxListedIDs = 20

// quoteIDs quotes ids for an error message, at most maxListedIDs of them.
func quoteIDs(ids []string) string {
	var b strings.Builder
	for i, id := range ids {
		if i == maxListedIDs {
			fmt.Fprintf(&b, " and %d more", len(ids)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(id))
	}
	return b.String()
}

// cloneStrings copies ss; never nil, so it encodes as [] rather than null.
func cloneStrings(ss []string) []string {
	out := make([]string, len(ss))
	copy(out, ss)
	return out
}

// inRange returns i, or -1 when i is not in [0, n).
func inRange(i, n int) int {
	if i < 0 || i >= n {
		return -1
	}
	return i
}
