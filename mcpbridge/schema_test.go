package mcpbridge_test

import (
	"context"
	"encoding/json"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// labeller is an app-defined widget whose schema has a property key with
// a zero-width space in it; it echoes the arguments it was given.
type labeller struct{ ID string }

func (labeller) Children() []ui.Node                            { return nil }
func (l labeller) WidgetID() string                             { return l.ID }
func (labeller) Focusable() bool                                { return true }
func (labeller) Render(ui.RenderContext) string                 { return "[labeller]" }
func (labeller) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg { return nil }
func (l labeller) State() any                                   { return map[string]any{"id": l.ID} }
func (labeller) Tools() []ui.ToolSpec {
	return []ui.ToolSpec{{Action: "set_label", Description: "Set the label.", ReadOnly: true,
		InputSchema: ui.ObjectSchema(map[string]any{"na\u200bme": ui.Prop("string", "The new label.")}, "na\u200bme")}}
}
func (labeller) CallTool(_ string, args map[string]any) (any, []tea.Msg, error) {
	return map[string]any{"args": args}, nil, nil
}

// bare is an app-defined widget that declares no schema.
type bare struct{ ID string }

func (bare) Children() []ui.Node                            { return nil }
func (b bare) WidgetID() string                             { return b.ID }
func (bare) Focusable() bool                                { return true }
func (bare) Render(ui.RenderContext) string                 { return "[bare]" }
func (bare) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg { return nil }
func (b bare) State() any                                   { return map[string]any{"id": b.ID} }
func (bare) Tools() []ui.ToolSpec {
	return []ui.ToolSpec{{Action: "poke", Description: "Poke it.", ReadOnly: true}}
}
func (bare) CallTool(string, map[string]any) (any, []tea.Msg, error) {
	return map[string]any{"poked": true}, nil, nil
}

type staticApp struct{ nodes []ui.Node }

func (a staticApp) Init() tea.Cmd                      { return nil }
func (a staticApp) Update(tea.Msg) (ui.Model, tea.Cmd) { return a, nil }
func (a staticApp) View() ui.Node                      { return ui.Column{Items: a.nodes} }

func TestCallsAreValidatedAgainstTheAdvertisedSchema(t *testing.T) {
	e := modelEnv(t, staticApp{nodes: []ui.Node{labeller{ID: "l"}, bare{ID: "b"}}})
	cs, _ := e.connect(false)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tl := range res.Tools {
		b, _ := json.Marshal(tl.InputSchema)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		schemas[tl.Name] = m
	}
	props, _ := schemas["app.l.set_label"]["properties"].(map[string]any)
	if _, ok := props["name"]; !ok || len(props) != 1 {
		t.Fatalf("set_label is advertised with properties %v, want only the cleaned \"name\"", props)
	}
	if req, _ := schemas["app.l.set_label"]["required"].([]any); len(req) != 1 || req[0] != "name" {
		t.Fatalf("set_label requires %v, want [name]", req)
	}
	if s := schemas["app.b.poke"]; s["additionalProperties"] != false || len(s["properties"].(map[string]any)) != 0 {
		t.Fatalf("a tool without a schema is advertised with %v, want no properties and none other allowed", s)
	}

	// The advertised name is the one accepted; the widget gets its own.
	out, isErr := call(t, cs, "app.l.set_label", map[string]any{"name": "ann"})
	if isErr {
		t.Fatalf("a call with the advertised property was refused: %v", out)
	}
	got, _ := out["result"].(map[string]any)["args"].(map[string]any)
	if len(got) != 1 || got["na\u200bme"] != "ann" {
		t.Fatalf("the widget got arguments %q, want its own key na\\u200bme", got)
	}
	for _, args := range []map[string]any{{}, {"name": 1}, {"name": "ann", "x": 1}} {
		if out, isErr := call(t, cs, "app.l.set_label", args); !isErr || out["error"] != mcpbridge.ErrKindInvalidArgs {
			t.Errorf("set_label %v: %v, want invalid_arguments", args, out)
		}
	}

	// No schema takes {} only.
	if out, isErr := call(t, cs, "app.b.poke", map[string]any{}); isErr {
		t.Fatalf("poke {}: %v", out)
	}
	if out, isErr := call(t, cs, "app.b.poke", nil); isErr {
		t.Fatalf("poke without arguments: %v", out)
	}
	if out, isErr := call(t, cs, "app.b.poke", map[string]any{"x": 1}); !isErr || out["error"] != mcpbridge.ErrKindInvalidArgs {
		t.Fatalf("poke {\"x\":1}: %v, want invalid_arguments", out)
	}
}
