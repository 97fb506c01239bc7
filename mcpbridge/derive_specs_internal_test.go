package mcpbridge

import (
	"reflect"
	"slices"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// choiceField is a self-contained widget whose schema follows its fields:
// the choices it accepts.
type choiceField struct {
	ui.TextInput
	choices []string
}

func (f choiceField) SameAs(o ui.Widget) bool {
	g, ok := o.(choiceField)
	return ok && f.TextInput == g.TextInput && slices.Equal(f.choices, g.choices)
}

func (f choiceField) Tools() []ui.ToolSpec {
	enum := make([]any, len(f.choices))
	for i, c := range f.choices {
		enum[i] = c
	}
	return []ui.ToolSpec{{Action: "choose", Description: "Choose one.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"choice": map[string]any{"type": "string", "enum": enum}}}}}
}

// The watcher's derivation reuses the tools of a widget that changed
// while its tools did not (its text), and derives them again when they
// changed (its schema): either way what a fresh derivation gives.
func TestDeriveCacheFollowsChangedSpecs(t *testing.T) {
	var cache deriveCache
	step := func(f choiceField) []Derived {
		t.Helper()
		tree := ui.Column{Items: []ui.Node{f}}
		got := deriveCached(guard.Scope{}, "app", tree, nil, &cache)
		if want := derive(guard.Scope{}, "app", tree, nil); !reflect.DeepEqual(got, want) {
			t.Fatalf("cached %v, fresh %v", got, want)
		}
		return got
	}
	f := choiceField{TextInput: ui.TextInput{ID: "f", Value: "a"}, choices: []string{"x"}}
	first := step(f)
	f.Value = "b"
	typed := step(f)
	if reflect.ValueOf(typed[0].Schema).Pointer() != reflect.ValueOf(first[0].Schema).Pointer() {
		t.Errorf("the tools of a widget whose specs did not change were derived again")
	}
	f.choices = []string{"x", "y"}
	got := step(f)
	enum := got[0].Schema["properties"].(map[string]any)["choice"].(map[string]any)["enum"]
	if !reflect.DeepEqual(enum, []any{"x", "y"}) {
		t.Errorf("enum after the choices changed: %v", enum)
	}
}
