package mcpbridge

import (
	"reflect"
	"testing"

	tea "charm.land/bubbletea/v2"
	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// TestDeriveCacheDerivesWhatAFreshDerivationDoes: through any run of
// changes to the demo (typing, tabs, selection, sorting, regions, toggles), the
// watcher's cached derivation gives exactly the tools a fresh one gives.
func TestDeriveCacheDerivesWhatAFreshDerivationDoes(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var m ui.Model = demo.New()
		var cache deriveCache
		for step := range rapid.IntRange(1, 15).Draw(rt, "steps") {
			var msg tea.Msg
			switch rapid.IntRange(0, 7).Draw(rt, "change") {
			case 0:
				msg = ui.TextInputChanged{ID: demo.IDSearch, Text: rapid.SampledFrom([]string{"", "a", "eu", "zzz"}).Draw(rt, "text")}
			case 1:
				msg = ui.TabChanged{ID: demo.IDTabs, Index: rapid.IntRange(0, 3).Draw(rt, "tab")}
			case 2:
				msg = ui.RowSelected{ID: demo.IDTable, Index: rapid.IntRange(0, 5).Draw(rt, "row")}
			case 3:
				msg = ui.CheckboxToggled{ID: demo.IDLive, Checked: rapid.Bool().Draw(rt, "live")}
			case 4:
				msg = ui.TableSorted{ID: demo.IDTable, Column: rapid.SampledFrom([]string{"cpu", "name"}).Draw(rt, "col"), Direction: ui.SortDesc}
			case 5:
				msg = ui.OptionSelected{ID: demo.IDRegion, Index: rapid.IntRange(0, 3).Draw(rt, "region")}
			case 6:
				msg = ui.TextAreaChanged{ID: demo.IDNotes, Text: rapid.SampledFrom([]string{"", "n", "notes"}).Draw(rt, "notes")}
			}
			if msg != nil {
				m, _ = m.Update(msg)
			}
			tree := m.View()
			got := deriveCached(guard.Scope{}, "demo", tree, nil, &cache)
			want := derive(guard.Scope{}, "demo", tree, nil)
			if !reflect.DeepEqual(got, want) {
				rt.Fatalf("step %d: the cached derivation differs from a fresh one", step)
			}
		}
	})
}

// TestDeriveCacheKeepsToolsAWidgetStillOffers: a text input whose value
// changed (every keystroke, every type_into) offers the same tools, and
// their derivation is kept rather than made again; tools that differ in
// anything (description, schema, annotations, read-only) are derived
// again.
func TestDeriveCacheKeepsToolsAWidgetStillOffers(t *testing.T) {
	tree := func(value string, disabled bool) ui.Node {
		return ui.Column{Items: []ui.Node{ui.TextInput{ID: "name", Label: "Name", Value: value, Disabled: disabled}}}
	}
	var cache deriveCache
	first := deriveCached(guard.Scope{}, "app", tree("a", false), nil, &cache)
	second := deriveCached(guard.Scope{}, "app", tree("ab", false), nil, &cache)
	if len(first) == 0 || len(second) != len(first) {
		t.Fatalf("%d then %d tools, want the same, at least one", len(first), len(second))
	}
	if reflect.ValueOf(first[0].Schema).UnsafePointer() != reflect.ValueOf(second[0].Schema).UnsafePointer() {
		t.Fatal("a changed value's unchanged tools were derived again")
	}
	if got := deriveCached(guard.Scope{}, "app", tree("ab", true), nil, &cache); len(got) != 0 {
		t.Fatalf("a disabled input kept %d tools", len(got))
	}
	if got, want := deriveCached(guard.Scope{}, "app", tree("abc", false), nil, &cache), derive(guard.Scope{}, "app", tree("abc", false), nil); !reflect.DeepEqual(got, want) {
		t.Fatal("after the change the cached derivation differs from a fresh one")
	}

	spec := func() ui.ToolSpec {
		return ui.ToolSpec{Action: "go", Description: "Go.", ReadOnly: false,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}},
			Annotations: map[string]any{"sensitive": true}}
	}
	if !sameSpecs([]ui.ToolSpec{spec()}, []ui.ToolSpec{spec()}) {
		t.Fatal("equal specs built apart are not the same")
	}
	for name, change := range map[string]func(*ui.ToolSpec){
		"action":      func(s *ui.ToolSpec) { s.Action = "stop" },
		"description": func(s *ui.ToolSpec) { s.Description = "Stop." },
		"read-only":   func(s *ui.ToolSpec) { s.ReadOnly = true },
		"schema": func(s *ui.ToolSpec) {
			s.InputSchema["properties"].(map[string]any)["x"] = map[string]any{"type": "integer"}
		},
		"annotations": func(s *ui.ToolSpec) { s.Annotations = nil },
	} {
		b := spec()
		change(&b)
		if sameSpecs([]ui.ToolSpec{spec()}, []ui.ToolSpec{b}) {
			t.Errorf("specs differing in %s are the same", name)
		}
	}
	if sameSpecs([]ui.ToolSpec{spec()}, []ui.ToolSpec{spec(), spec()}) {
		t.Error("one spec and two are the same")
	}
}
