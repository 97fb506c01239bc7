package ui

import (
	tea "charm.land/bubbletea/v2"
)

// ToolSpec is one MCP tool a widget offers in its current state. The MCP
// bridge namespaces it as <app>.<widget id>.<Action>.
type ToolSpec struct {
	// Action is the action name: a lowercase letter followed by up to 31
	// of [a-z0-9_]. Anything else derives no tool.
	Action string
	// Description is static per (widget type, action): it never carries
	// app text (labels, values, ids). A model reads it as instructions.
	Description string
	// InputSchema is a JSON Schema object ("type": "object") for the
	// arguments. Like Description it is static per (widget type, action):
	// the bridge compiles it once and reuses it.
	InputSchema map[string]any
	// ReadOnly declares a read action: it answers from the current tree
	// and sends no messages (CallTool returns none). The bridge runs it
	// without the dispatcher, lets it through while the human has paused
	// agents, and advertises it readOnlyHint. An action's name says
	// nothing about this: an undeclared "get_secret" is a write.
	ReadOnly bool
	// Annotations may mark the tool {"sensitive": true} or
	// {"destructiveHint": true}; nothing else survives derivation.
	Annotations map[string]any
}

// ToolProvider is implemented by widgets that agents can drive. What an
// agent can do with a widget is defined next to what a human can do with
// it, and both produce the same messages.
type ToolProvider interface {
	Widget
	// Tools returns the tools the widget offers in its current state
	// (none when disabled).
	Tools() []ToolSpec
	// CallTool runs an action against the widget as it is in the current
	// tree. args were validated against the action's InputSchema (numbers
	// arrive as float64). It returns a JSON-marshalable result, the app
	// messages to fold (none for reads), or an error that becomes the
	// tool's error result. It must not block.
	CallTool(action string, args map[string]any) (result any, msgs []tea.Msg, err error)
	// State returns the widget's current state as plain JSON-marshalable
	// data, for tool results and the tree resource. It never contains a
	// PasswordField's text.
	State() any
}

// ObjectSchema returns a JSON Schema object with the given properties, of
// which required are mandatory, and no others allowed.
func ObjectSchema(props map[string]any, required ...string) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// Prop returns a JSON Schema property of the given type ("string",
// "integer", "boolean") with a static description.
func Prop(typ, description string) map[string]any {
	return map[string]any{"type": typ, "description": description}
}

// Label returns how people call a widget: its label or title when its
// state has one, else its id.
func Label(w Widget) string {
	if tp, ok := w.(ToolProvider); ok {
		if st, ok := tp.State().(map[string]any); ok {
			for _, k := range []string{"label", "title"} {
				if s, ok := st[k].(string); ok && s != "" {
					return s
				}
			}
		}
	}
	return w.WidgetID()
}
