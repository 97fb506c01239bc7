package ui

import (
	"errors"

	tea "charm.land/bubbletea/v2"
)

// Checkbox is a labelled on/off box drawn as "[x] Label" or "[ ] Label".
// Enter, Space or a click sends [CheckboxToggled] with the opposite of
// Checked; the app copies it back.
type Checkbox struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is drawn after the box.
	Label string
	// Checked is the current state.
	Checked bool
	// Disabled greys the box out and ignores input.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = Checkbox{}
	_ ToolProvider = Checkbox{}
)

// Children returns nil: a checkbox has no children.
func (Checkbox) Children() []Node { return nil }

// WidgetID returns the checkbox's id.
func (c Checkbox) WidgetID() string { return c.ID }

// Focusable reports whether the checkbox is enabled.
func (c Checkbox) Focusable() bool { return !c.Disabled }

// HandleEvent sends [CheckboxToggled] on Enter, Space or a click.
func (c Checkbox) HandleEvent(ev Event, _ *LocalState) []tea.Msg {
	if c.Disabled || !isActivate(ev) {
		return nil
	}
	return []tea.Msg{CheckboxToggled{ID: c.ID, Checked: !c.Checked}}
}

// Render draws the box and the label; while focused the box is in reverse
// video and the label in the focused style.
func (c Checkbox) Render(rc RenderContext) string {
	w := max(rc.Width, 1)
	box := "[ ]"
	if c.Checked {
		box = "[x]"
	}
	label := ""
	if c.Label != "" && w > 4 {
		label = " " + fitLine(c.Label, w-4)
	}
	boxStyle, labelStyle := rc.Theme.Normal, rc.Theme.Normal
	switch {
	case c.Disabled:
		boxStyle, labelStyle = rc.Theme.Disabled, rc.Theme.Disabled
	case rc.Focused:
		boxStyle, labelStyle = rc.Theme.Highlight, rc.Theme.Focused
	}
	return clipWidth(Paint(boxStyle, box)+styled(labelStyle, label), w)
}

// ---- MCP tools ----

// Tools returns toggle and get_checked; none while disabled.
func (c Checkbox) Tools() []ToolSpec {
	if c.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("toggle", "Flip this checkbox: check it when it is unchecked, uncheck it when it is checked. Call get_checked first if you need a particular state.", nil),
		readTool("get_checked", "Return whether this checkbox is currently checked.", nil),
	}
}

// CallTool runs toggle (sending [CheckboxToggled] with the opposite of
// Checked, as Enter does) or get_checked.
func (c Checkbox) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action != "toggle" && action != "get_checked" {
		return nil, nil, errUnknownAction(action)
	}
	if c.Disabled {
		return nil, nil, errors.New("this checkbox is disabled")
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	if action == "get_checked" {
		return map[string]any{"checked": c.Checked}, nil, nil
	}
	return map[string]any{"ok": true, "checked": !c.Checked}, []tea.Msg{CheckboxToggled{ID: c.ID, Checked: !c.Checked}}, nil
}

// State returns type, id, label, checked and disabled.
func (c Checkbox) State() any {
	return map[string]any{
		"type":     "checkbox",
		"id":       c.ID,
		"label":    c.Label,
		"checked":  c.Checked,
		"disabled": c.Disabled,
	}
}
