package mcpbridge

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// simpleSchema draws a schema of the kind acceptsSimple decides, now and
// then with a keyword it does not know.
func simpleSchema(rt *rapid.T) map[string]any {
	props := map[string]any{}
	var names []string
	for i := range rapid.IntRange(0, 3).Draw(rt, "props") {
		name := []string{"text", "index", "on", "x\u200bname"}[i]
		if rapid.IntRange(0, 5).Draw(rt, "odd name") == 0 {
			name = "x\u200bname"
		}
		p := map[string]any{"type": rapid.SampledFrom([]string{"string", "integer", "number", "boolean", "array"}).Draw(rt, "type"),
			"description": "d"}
		keys := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"minimum", "maximum", "minLength", "maxLength", "enum", "pattern"}),
			0, 2, func(s string) string { return s }).Draw(rt, "keywords")
		for _, k := range keys {
			switch k {
			case "enum":
				p[k] = []any{"a", "b"}
			case "pattern":
				p[k] = "^a"
			default:
				p[k] = rapid.SampledFrom([]any{0, 2, 1.5, -1, 3}).Draw(rt, k)
			}
		}
		props[name] = p
		names = append(names, name)
	}
	s := ui.ObjectSchema(props)
	if len(names) > 0 && rapid.Bool().Draw(rt, "required") {
		s["required"] = rapid.SliceOfDistinct(rapid.SampledFrom(names), func(s string) string { return s }).Draw(rt, "req")
	}
	if rapid.IntRange(0, 5).Draw(rt, "open") == 0 {
		s["additionalProperties"] = true
	}
	return s
}

// drawArgs draws arguments for s: mostly its own properties with values of
// about the right type, now and then a wrong one or an extra key.
func drawArgs(rt *rapid.T, s map[string]any) map[string]any {
	pools := map[string][]any{
		"string":  {"", "a", "ab", "héllo", "日本"},
		"integer": {0.0, 1.0, 2.0, 3.0, -1.0, 1.5},
		"number":  {0.0, 1.5, 2.0, -1.0, 2.5},
		"boolean": {true, false},
	}
	wrong := []any{nil, "x", 1.0, 1.5, true, []any{}, map[string]any{}}
	args := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	for _, k := range []string{"text", "index", "on", "x\u200bname"} {
		p, ok := props[k].(map[string]any)
		if !ok || rapid.IntRange(0, 3).Draw(rt, "skip "+k) == 0 {
			continue
		}
		pool := pools[p["type"].(string)]
		if pool == nil || rapid.IntRange(0, 5).Draw(rt, "wrong "+k) == 0 {
			pool = wrong
		}
		args[k] = rapid.SampledFrom(pool).Draw(rt, k)
	}
	if rapid.IntRange(0, 9).Draw(rt, "extra") == 0 {
		args[rapid.SampledFrom([]string{"extra", "xname"}).Draw(rt, "extra key")] = "e"
	}
	return args
}

// TestAcceptsSimpleAgreesWithTheValidator: whatever acceptsSimple accepts,
// jsonschema-go accepts against the advertised (cleaned) schema.
func TestAcceptsSimpleAgreesWithTheValidator(t *testing.T) {
	var c schemaCache
	checks, accepted := 0, 0
	defer func() {
		// Not a test of nothing: a good share is decided here.
		if checks >= 100 && accepted < checks/20 {
			t.Errorf("acceptsSimple accepted %d of %d draws", accepted, checks)
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		for range 30 { // many small cases a run: acceptance needs several draws to line up
			checks++
			s := simpleSchema(rt)
			args := drawArgs(rt, s)
			if !acceptsSimple(s, args) {
				continue
			}
			accepted++
			// The full validator alone (acceptsSimple is in validate itself).
			if err := c.validateFull("k", s, args); err != nil {
				rt.Fatalf("acceptsSimple accepted %v against %v, the validator refuses: %v", args, s, err)
			}
		}
	})
}

// TestAcceptsSimpleTakesTheBuiltIns: valid arguments to every built-in
// widget's write action the demo's agents use most are accepted without
// the full validator.
func TestAcceptsSimpleTakesTheBuiltIns(t *testing.T) {
	for _, c := range []struct {
		w      ui.ToolProvider
		action string
		args   map[string]any
	}{
		{ui.TextInput{ID: "t"}, "type_into", map[string]any{"text": "hello"}},
		{ui.TextInput{ID: "t"}, "clear", map[string]any{}},
		{ui.Table{ID: "t", Rows: [][]string{{"a"}}}, "select_row", map[string]any{"index": 0.0}},
		{ui.Checkbox{ID: "c"}, "toggle", map[string]any{}},
	} {
		var spec *ui.ToolSpec
		for _, s := range c.w.Tools() {
			if s.Action == c.action {
				spec = &s
			}
		}
		if spec == nil {
			t.Fatalf("%T has no %s", c.w, c.action)
		}
		if !acceptsSimple(spec.InputSchema, c.args) {
			t.Errorf("%T.%s %v goes to the full validator (schema %v)", c.w, c.action, c.args, spec.InputSchema)
		}
	}
}

// TestSchemaCacheKeysBySchema: two widgets of one type declaring different
// schemas for one action are each held to their own.
func TestSchemaCacheKeysBySchema(t *testing.T) {
	var c schemaCache
	loose := ui.ObjectSchema(map[string]any{"n": map[string]any{"type": "integer", "enum": []any{1, 2, 3}}})
	tight := ui.ObjectSchema(map[string]any{"n": map[string]any{"type": "integer", "enum": []any{1}}})
	if err := c.validate("app.Picker.pick", loose, map[string]any{"n": 3.0}); err != nil {
		t.Fatal(err)
	}
	if err := c.validate("app.Picker.pick", tight, map[string]any{"n": 3.0}); err == nil {
		t.Fatal("3 passed a schema allowing only 1: the first schema of the type was used")
	}
}

// TestAcceptsSimpleAgreesOnEveryKeyword: one property of every type with
// every combination of the keywords acceptsSimple knows (each absent or
// one of a few values, invalid ones included), required or not, against
// values of every kind: whatever acceptsSimple accepts, the validator
// accepts, and it accepts some of each type.
func TestAcceptsSimpleAgreesOnEveryKeyword(t *testing.T) {
	var c schemaCache
	kws := []string{"minimum", "maximum", "minLength", "maxLength"}
	vals := []any{nil, 0, 2, 1.5} // nil: absent
	args := []any{"", "a", "héllo", 0.0, 1.0, 2.0, 1.5, 3.0, -1.0, true, nil, []any{}}
	accepted := map[string]int{}
	for _, typ := range []string{"string", "integer", "number", "boolean", "array"} {
		for combo := range 1 << (2 * len(kws)) {
			p := map[string]any{"type": typ}
			for i, k := range kws {
				if v := vals[(combo>>(2*i))&3]; v != nil {
					p[k] = v
				}
			}
			for _, req := range []bool{false, true} {
				s := ui.ObjectSchema(map[string]any{"p": p})
				if req {
					s["required"] = []string{"p"}
				}
				for _, a := range append(args, "absent") {
					in := map[string]any{"p": a}
					if a == "absent" {
						in = map[string]any{}
					}
					if !acceptsSimple(s, in) {
						continue
					}
					accepted[typ]++
					if err := c.validateFull("k", s, in); err != nil {
						t.Fatalf("acceptsSimple accepted %v against %v, the validator refuses: %v", in, s, err)
					}
				}
			}
		}
	}
	for _, typ := range []string{"string", "integer", "number", "boolean"} {
		if accepted[typ] == 0 {
			t.Errorf("nothing of type %s was accepted", typ)
		}
	}
	if accepted["array"] != 0 {
		t.Errorf("%d arrays were accepted without the validator", accepted["array"])
	}
}
