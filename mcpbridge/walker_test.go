package mcpbridge_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// gauge is an app-defined widget type with hostile tool specs.
type gauge struct {
	ID      string
	Exclude bool
	specs   []ui.ToolSpec
}

func (gauge) Children() []ui.Node                            { return nil }
func (g gauge) WidgetID() string                             { return g.ID }
func (gauge) Focusable() bool                                { return false }
func (gauge) Render(ui.RenderContext) string                 { return "gauge" }
func (gauge) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg { return nil }
func (g gauge) Tools() []ui.ToolSpec                         { return g.specs }
func (g gauge) State() any                                   { return map[string]any{"type": "gauge", "id": g.ID} }
func (g gauge) CallTool(action string, _ map[string]any) (any, []tea.Msg, error) {
	return map[string]any{"action": action}, nil, nil
}

type walkWarning struct {
	msg  string
	args []any
}

func deriveWarn(tree ui.Node) ([]mcpbridge.Derived, []walkWarning) {
	var ws []walkWarning
	d := mcpbridge.Derive("app", tree, func(msg string, args ...any) { ws = append(ws, walkWarning{msg, args}) })
	return d, ws
}

func TestAppDefinedWidgetsAreSanitised(t *testing.T) {
	hostile := "Read\u200b the\u202e gauge\u0007\ue000\u3164 now\u00a0!"
	g := gauge{ID: "g1", specs: []ui.ToolSpec{{
		Action:      "read_level",
		Description: hostile,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"unit\u200d": map[string]any{"type": "string", "description": "unit\u2028of\u0000measure"},
		}},
		Annotations: map[string]any{"sensitive": true, "destructiveHint": true, "readOnlyHint": true, "title": "x"},
	}}}
	d, ws := deriveWarn(ui.Column{Items: []ui.Node{g}})
	if len(d) != 1 || len(ws) != 0 {
		t.Fatalf("derived %v warnings %v", d, ws)
	}
	got := d[0]
	if got.Name != "app.g1.read_level" || got.Description != "Read the gauge now!" {
		t.Fatalf("name %q description %q", got.Name, got.Description)
	}
	raw, _ := json.Marshal(got.Schema)
	for _, bad := range []string{"\\u200d", "\\u2028", "\\u0000"} {
		if strings.Contains(string(raw), bad) {
			t.Errorf("schema keeps %s: %s", bad, raw)
		}
	}
	if !strings.Contains(string(raw), `"unit"`) || !strings.Contains(string(raw), "unitofmeasure") {
		t.Errorf("schema lost its content: %s", raw)
	}
	if !got.Sensitive || !got.Destructive {
		t.Errorf("sensitive/destructive annotations dropped: %+v", got)
	}
}

func TestInvalidNamesDuplicatesAndExclusions(t *testing.T) {
	spec := func(a string) []ui.ToolSpec {
		return []ui.ToolSpec{{Action: a, Description: "d", InputSchema: ui.ObjectSchema(nil)}}
	}
	tree := ui.Column{Items: []ui.Node{
		gauge{ID: "ok", specs: spec("fine")},
		gauge{ID: "bad id!", specs: spec("fine")},
		gauge{ID: strings.Repeat("x", 65), specs: spec("fine")},
		gauge{ID: "act", specs: append(spec("Bad"), append(spec("9lives"), append(spec(strings.Repeat("a", 33)), spec("good_1")...)...)...)},
		gauge{ID: "ok", specs: spec("second")}, // duplicate id
		gauge{ID: "hidden", Exclude: true, specs: spec("fine")},
		ui.Modal{ID: "m", Visible: false, Body: gauge{ID: "inmodal", specs: spec("fine")}},
		ui.Box{Child: ui.Row{Items: []ui.Node{gauge{ID: "deep", specs: spec("fine")}}}},
	}}
	d, ws := deriveWarn(tree)
	var names []string
	for _, x := range d {
		names = append(names, x.Name)
	}
	if want := "app.ok.fine,app.act.good_1,app.deep.fine"; strings.Join(names, ",") != want {
		t.Fatalf("derived %v, want %s", names, want)
	}
	text := fmt.Sprint(ws)
	for _, want := range []string{"bad id!", "xxxxxxxx", "Bad", "9lives", "aaaaaaa", "appears twice"} {
		if !strings.Contains(text, want) {
			t.Errorf("no walkWarning naming %q in %s", want, text)
		}
	}
	// Lookup follows the same rules.
	for name, want := range map[string]bool{"app.ok.fine": true, "app.ok.second": false, "app.hidden.fine": false, "app.inmodal.fine": false, "app.deep.fine": true, "app.act.Bad": false, "other.ok.fine": false} {
		if _, _, ok := mcpbridge.Lookup("app", tree, name); ok != want {
			t.Errorf("Lookup(%s) = %v, want %v", name, ok, want)
		}
	}
}

func TestDisabledWidgetsDeriveNothing(t *testing.T) {
	d, _ := deriveWarn(ui.Column{Items: []ui.Node{
		ui.Button{ID: "b", Label: "x", OnClick: 1, Disabled: true},
		ui.TextInput{ID: "t", Disabled: true},
		ui.Checkbox{ID: "c"},
	}})
	if len(d) != 2 || d[0].Name != "app.c.toggle" || d[1].Name != "app.c.get_checked" {
		t.Fatalf("derived %+v", d)
	}
}

func TestSplitName(t *testing.T) {
	for name, want := range map[string][2]string{
		"app.search.type_into": {"search", "type_into"},
		"app.a.b.c":            {"a.b", "c"},
	} {
		id, action, ok := mcpbridge.SplitName("app", name)
		if !ok || id != want[0] || action != want[1] {
			t.Errorf("SplitName(%q) = %q %q %v", name, id, action, ok)
		}
	}
	for _, bad := range []string{"app.", "app.x", "app.x.", "other.x.y", "app..y"} {
		if _, _, ok := mcpbridge.SplitName("app", bad); ok {
			t.Errorf("SplitName(%q) accepted", bad)
		}
	}
}
