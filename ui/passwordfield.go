package ui

import tea "charm.land/bubbletea/v2"

// PasswordField is a one-line secret field. It edits like [TextInput] and
// sends [PasswordFieldChanged], but never draws its text: each rune shows
// as "•". Its word keys (alt+b, ctrl+w...) take the secret as one word,
// so the cursor never shows where its spaces are. Its String and GoString methods do not reveal Value either.
type PasswordField struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is drawn before the field as "Label: "; empty draws none.
	Label string
	// Value is the current secret text.
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
	_ Widget       = PasswordField{}
	_ ToolProvider = PasswordField{}
)

// Children returns nil: a password field has no children.
func (PasswordField) Children() []Node { return nil }

// WidgetID returns the field's id.
func (p PasswordField) WidgetID() string { return p.ID }

// Focusable reports whether the field is enabled.
func (p PasswordField) Focusable() bool { return !p.Disabled }

// HandleEvent edits the text, sending [PasswordFieldChanged] when it
// changed.
func (p PasswordField) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	v, changed := p.field().edit(ev, st, p.MaxLen)
	if !changed {
		return nil
	}
	return []tea.Msg{PasswordFieldChanged{ID: p.ID, Text: v}}
}

// Render draws the label and one "•" per rune of the text.
func (p PasswordField) Render(rc RenderContext) string { return p.field().render(rc) }

// String describes the field without revealing its text, so that logging
// it is safe.
func (p PasswordField) String() string {
	return "ui.PasswordField{ID:" + p.ID + " Label:" + p.Label + " Value:[redacted]}"
}

// GoString is like String, for the %#v verb.
func (p PasswordField) GoString() string { return p.String() }

func (p PasswordField) field() lineField {
	return lineField{label: p.Label, value: p.Value, placeholder: p.Placeholder, width: p.Width, masked: true, disabled: p.Disabled}
}

// ---- MCP tools ----

// maxLen returns the effective length limit of the field.
func (p PasswordField) maxLen() int { return lenLimit(p.MaxLen, DefaultMaxLen) }

// Tools returns type_into and clear, both annotated sensitive; none while
// disabled. There is no get_value: the text is never read back.
func (p PasswordField) Tools() []ToolSpec {
	if p.Disabled {
		return nil
	}
	typeInto := tool("type_into", "Replace the whole secret text of this password field with the given text. Line breaks are not allowed. The text is never shown or returned.",
		map[string]any{argText: Prop("string", "The new full secret text of the field; it replaces the current text.")}, argText)
	typeInto.Annotations = map[string]any{"sensitive": true}
	clear := tool("clear", "Erase the secret text of this password field.", nil)
	clear.Annotations = map[string]any{"sensitive": true}
	return []ToolSpec{typeInto, clear}
}

// CallTool runs type_into (sending [PasswordFieldChanged] with the new
// whole text) or clear. Neither the result nor an error carries the text.
func (p PasswordField) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return textFieldCall("password field", action, args, p.Disabled, p.maxLen(), false, false, "",
		func(s string) tea.Msg { return PasswordFieldChanged{ID: p.ID, Text: s} })
}

// State returns type, id, label, placeholder, set (whether the text is
// not empty; never the text nor its length), max_len and disabled.
func (p PasswordField) State() any {
	return map[string]any{
		"type":        "password_field",
		"id":          p.ID,
		"label":       p.Label,
		"placeholder": p.Placeholder,
		"set":         p.Value != "",
		"max_len":     p.maxLen(),
		"disabled":    p.Disabled,
	}
}
