package mcpbridge

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

func sameMap(a, b map[string]any) bool { return mapID(a) == mapID(b) }

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInternSpecsSharesEqualSpecs: two sessions' equal widgets (two
// calls of Tools) get the very same schema and annotations maps, equal to
// what the widget returned; the widget's slice is left as it was, and a
// spec that differs in anything stays apart.
func TestInternSpecsSharesEqualSpecs(t *testing.T) {
	w := ui.PasswordField{ID: "intern-pw", Label: "Secret"}
	a, b := w.Tools(), w.Tools()
	before := jsonOf(t, a)
	ia, ib := internSpecs(a), internSpecs(b)
	if jsonOf(t, ia) != before || jsonOf(t, ib) != before || jsonOf(t, a) != before {
		t.Fatalf("interned specs differ from the widget's:\n%s\n%s\n%s", before, jsonOf(t, ia), jsonOf(t, ib))
	}
	for i := range ia {
		if !sameMap(ia[i].InputSchema, ib[i].InputSchema) || !sameMap(ia[i].Annotations, ib[i].Annotations) {
			t.Errorf("spec %s: equal specs of two calls are not shared", ia[i].Action)
		}
		if sameMap(ia[i].InputSchema, a[i].InputSchema) {
			t.Errorf("spec %s: the table holds the widget's own map, not a copy", ia[i].Action)
		}
	}
	if reflect.ValueOf(a).Pointer() == reflect.ValueOf(ia).Pointer() {
		t.Fatal("internSpecs changed the widget's slice in place")
	}

	// The same action and description with another schema is another
	// entry.
	other := []ui.ToolSpec{{Action: a[0].Action, Description: a[0].Description,
		InputSchema: ui.ObjectSchema(map[string]any{"text": ui.Prop("string", "other")}, "text"), Annotations: a[0].Annotations}}
	io := internSpecs(other)
	if sameMap(io[0].InputSchema, ia[0].InputSchema) || jsonOf(t, io) != jsonOf(t, other) {
		t.Fatalf("a different schema was interned as %s", jsonOf(t, io[0].InputSchema))
	}
}

// TestInternSpecsOwnsItsCopies: app code that changes a map it returned
// after it was interned changes nothing that was handed out.
func TestInternSpecsOwnsItsCopies(t *testing.T) {
	props := map[string]any{"n": map[string]any{"type": "integer", "enum": []any{1.0, 2.0}}}
	spec := []ui.ToolSpec{{Action: "pick", Description: "intern-owns", InputSchema: ui.ObjectSchema(props)}}
	want := jsonOf(t, spec)
	got := internSpecs(spec)
	props["n"].(map[string]any)["enum"].([]any)[0] = 9.0
	props["x"] = true
	if jsonOf(t, got) != want {
		t.Fatalf("the interned spec changed with the app's map: %s, want %s", jsonOf(t, got), want)
	}
	if again := internSpecs([]ui.ToolSpec{{Action: "pick", Description: "intern-owns", InputSchema: ui.ObjectSchema(map[string]any{"n": map[string]any{"type": "integer", "enum": []any{1.0, 2.0}}})}}); !sameMap(again[0].InputSchema, got[0].InputSchema) {
		t.Fatal("an equal spec after the app changed its map was not found")
	}
}

// TestCleanedSchemaAndToolDefShared: the cleaned schema of an interned
// raw schema and the tool registered for a derived tool with it are made
// once and equal to what cleanSchema and toolDef make; of anything not
// interned, they are fresh.
func TestCleanedSchemaAndToolDefShared(t *testing.T) {
	raw := internSpecs(ui.TextInput{ID: "intern-in", Label: "In"}.Tools())[0].InputSchema
	c1, c2 := cleanedSchema(raw), cleanedSchema(raw)
	if !sameMap(c1, c2) || jsonOf(t, c1) != jsonOf(t, cleanSchema(raw)) {
		t.Fatalf("cleaned schemas %p %p (%s), want one, %s", c1, c2, jsonOf(t, c1), jsonOf(t, cleanSchema(raw)))
	}
	fresh := ui.TextInput{ID: "intern-in", Label: "In"}.Tools()[0].InputSchema // not interned
	if f := cleanedSchema(fresh); sameMap(f, c1) || jsonOf(t, f) != jsonOf(t, c1) {
		t.Fatal("the cleaned schema of a raw schema not interned is shared, or differs")
	}
	if sameMap(cleanedSchema(c1), c1) {
		t.Fatal("a cleaned schema was taken for a raw one")
	}

	d := Derived{Name: "app.intern-in.type_into", Description: "Type.", Schema: c1, Sensitive: true}
	t1, t2 := internedToolDef(d), internedToolDef(d)
	if t1 != t2 || jsonOf(t, t1) != jsonOf(t, toolDef(d)) {
		t.Fatalf("tool definitions %p %p (%s), want one, %s", t1, t2, jsonOf(t, t1), jsonOf(t, toolDef(d)))
	}
	for _, o := range []Derived{
		{Name: "app.intern-in.type_into", Description: "Type.", Schema: cleanSchema(raw), Sensitive: true}, // a fresh schema
		{Name: "app.intern-in.type_into", Description: "Type.", Schema: c1},                                // not sensitive
		{Name: "app.intern-in.type_into", Description: "Type.", Schema: raw, Sensitive: true},              // a raw schema
	} {
		if got := internedToolDef(o); got == t1 || jsonOf(t, got) != jsonOf(t, toolDef(o)) {
			t.Errorf("%+v: got the shared definition, or one unlike toolDef's", o)
		}
	}
}

// TestInternBounded: past maxInterned specs, new ones are used as they
// are, and those interned before are still shared.
func TestInternBounded(t *testing.T) {
	first := internSpecs([]ui.ToolSpec{{Action: "a", Description: "intern-bound-first", InputSchema: ui.ObjectSchema(nil)}})
	interned.mu.Lock()
	limit := maxInterned
	maxInterned = interned.n + 5 // not the whole table for the tests after
	interned.mu.Unlock()
	defer func() {
		interned.mu.Lock()
		maxInterned = limit
		interned.mu.Unlock()
	}()
	for i := 0; ; i++ {
		interned.mu.Lock()
		full := interned.n >= maxInterned
		interned.mu.Unlock()
		if full {
			break
		}
		internSpecs([]ui.ToolSpec{{Action: "a", Description: fmt.Sprint("intern-bound-", i), InputSchema: ui.ObjectSchema(nil)}})
	}
	spec := []ui.ToolSpec{{Action: "a", Description: "intern-bound-late", InputSchema: ui.ObjectSchema(nil)}}
	if got := internSpecs(spec); !sameMap(got[0].InputSchema, spec[0].InputSchema) {
		t.Fatal("a spec was interned past the bound")
	}
	again := internSpecs([]ui.ToolSpec{{Action: "a", Description: "intern-bound-first", InputSchema: ui.ObjectSchema(nil)}})
	if !sameMap(again[0].InputSchema, first[0].InputSchema) {
		t.Fatal("a spec interned before the bound is no longer shared")
	}
}

// TestInternConcurrent: sessions intern at once (-race).
func TestInternConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]map[string]any, 8)
	for i := range got {
		wg.Go(func() {
			specs := internSpecs(ui.Checkbox{ID: "intern-cc", Label: "C"}.Tools())
			s := cleanedSchema(specs[0].InputSchema)
			_ = internedToolDef(Derived{Name: "app.intern-cc." + specs[0].Action, Schema: s})
			got[i] = s
		})
	}
	wg.Wait()
	for _, s := range got[1:] {
		if !sameMap(s, got[0]) {
			t.Fatal("concurrent sessions got different cleaned schemas for one spec")
		}
	}
}
