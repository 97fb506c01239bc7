package ui

import tea "charm.land/bubbletea/v2"

// TextInput is a one-line text field. It sends [TextInputChanged] with the
// whole new text after every edit; the app copies it back into Value.
//
// Keys: printable keys insert at the cursor (LocalState.Cursor, in runes),
// Backspace and Delete remove, Left/Right move, Home/End and ctrl+a/ctrl+e
// jump to the ends, and the readline keys (ctrl+u, ctrl+k, ctrl+w, alt+b,
// alt+f, alt+backspace, alt+d; see readline.go) kill and move. A paste is inserted at the cursor with line breaks
// turned into spaces. A click moves the cursor.
type TextInput struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is drawn before the field as "Label: "; empty draws none.
	Label string
	// Value is the current text.
	Value string
	// Placeholder is drawn, muted, while Value is empty.
	Placeholder string
	// Width is the number of columns the widget takes, label included;
	// zero (or more than is available) means all of the available width.
	Width int
	// MaxLen caps Value, in runes; zero means [DefaultMaxLen].
	MaxLen int
	// Disabled greys the field out and ignores input.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = TextInput{}
	_ ToolProvider = TextInput{}
)

// Children returns nil: a text input has no children.
func (TextInput) Children() []Node { return nil }

// WidgetID returns the field's id.
func (t TextInput) WidgetID() string { return t.ID }

// Focusable reports whether the field is enabled.
func (t TextInput) Focusable() bool { return !t.Disabled }

// HandleEvent edits the text, sending [TextInputChanged] when it changed.
func (t TextInput) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	v, changed := t.field().edit(ev, st, t.MaxLen)
	if !changed {
		return nil
	}
	return []tea.Msg{TextInputChanged{ID: t.ID, Text: v}}
}

// Render draws the label and the text, scrolled horizontally so that the
// cursor stays visible; the cursor cell is in reverse video while focused.
func (t TextInput) Render(rc RenderContext) string { return t.field().render(rc) }

func (t TextInput) field() lineField {
	return lineField{label: t.Label, value: t.Value, placeholder: t.Placeholder, width: t.Width, disabled: t.Disabled}
}

// ---- MCP tools ----

// maxLen returns the effective length limit of the field.
func (t TextInput) maxLen() int { return lenLimit(t.MaxLen, DefaultMaxLen) }

// Tools returns type_into, clear and get_value; none while disabled.
func (t TextInput) Tools() []ToolSpec {
	if t.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("type_into", "Replace the whole text of this single-line text input with the given text. Line breaks are not allowed. To add to the current text, read it first with get_value.",
			map[string]any{argText: Prop("string", "The new full text of the field; it replaces the current text.")}, argText),
		tool("clear", "Erase all the text of this single-line text input.", nil),
		readTool("get_value", "Return the current text of this single-line text input.", nil),
	}
}

// CallTool runs type_into (sending [TextInputChanged] with the new whole
// text), clear or get_value.
func (t TextInput) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return textFieldCall("text input", action, args, t.Disabled, t.maxLen(), false, true, t.Value,
		func(s string) tea.Msg { return TextInputChanged{ID: t.ID, Text: s} })
}

// State returns type, id, label, value, placeholder, max_len (the
// effective limit, in characters) and disabled.
func (t TextInput) State() any {
	return map[string]any{
		"type":        "text_input",
		"id":          t.ID,
		"label":       t.Label,
		"value":       t.Value,
		"placeholder": t.Placeholder,
		"max_len":     t.maxLen(),
		"disabled":    t.Disabled,
	}
}
