package ui

import (
	"errors"
	"reflect"

	tea "charm.land/bubbletea/v2"
)

// Button is a push button drawn as "[ Label ]". Enter, Space or a click
// sends OnClick.
type Button struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is the text on the button.
	Label string
	// OnClick is the message sent when the button is pressed; nil sends
	// nothing.
	OnClick tea.Msg
	// Disabled greys the button out and ignores input.
	Disabled bool
	// Destructive marks the click as destructive: its tool is annotated
	// destructiveHint, so authorization can ask a human first.
	Destructive bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = Button{}
	_ ToolProvider = Button{}
)

// Children returns nil: a button has no children.
func (Button) Children() []Node { return nil }

// WidgetID returns the button's id.
func (b Button) WidgetID() string { return b.ID }

// Focusable reports whether the button is enabled.
func (b Button) Focusable() bool { return !b.Disabled }

// HandleEvent sends OnClick on Enter, Space or a click.
func (b Button) HandleEvent(ev Event, _ *LocalState) []tea.Msg {
	if b.Disabled || b.OnClick == nil {
		return nil
	}
	if isActivate(ev) {
		return []tea.Msg{b.OnClick}
	}
	return nil
}

// Render draws "[ Label ]", the label truncated to fit and shown in reverse
// video while focused.
func (b Button) Render(rc RenderContext) string {
	w := max(rc.Width, 1)
	label := fitLine(b.Label, w-4)
	if w < 5 {
		// No room for the brackets: show what fits of the label alone.
		label = fitLine(b.Label, w)
		if label == "" {
			label = "[]"
		}
		st := controlStyle(rc, b.Disabled)
		if rc.Focused && !b.Disabled {
			st = rc.Theme.Highlight
		}
		return clipWidth(Paint(st, label), w)
	}
	switch {
	case b.Disabled:
		return clipWidth(Paint(rc.Theme.Disabled, "[ "+label+" ]"), w)
	case rc.Focused:
		return clipWidth(Paint(rc.Theme.Focused, "[")+
			Paint(rc.Theme.Highlight, " "+label+" ")+
			Paint(rc.Theme.Focused, "]"), w)
	default:
		return clipWidth(Paint(rc.Theme.Normal, "[ "+label+" ]"), w)
	}
}

// ---- MCP tools ----

// Tools returns click, annotated destructiveHint when Destructive is set;
// none while disabled.
func (b Button) Tools() []ToolSpec {
	if b.Disabled {
		return nil
	}
	t := tool("click", "Press this button, exactly as a person would by clicking it or pressing Enter on it. Takes no arguments.", nil)
	if b.Destructive {
		t.Annotations = map[string]any{"destructiveHint": true}
	}
	return []ToolSpec{t}
}

// CallTool runs click, sending OnClick like Enter does. It fails when
// OnClick is nil or a function (such as a tea.Cmd), which is not a message
// an app's Update could receive.
func (b Button) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action != "click" {
		return nil, nil, errUnknownAction(action)
	}
	if b.Disabled {
		return nil, nil, errors.New("this button is disabled")
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	if b.OnClick == nil {
		return nil, nil, errors.New("this button has no action: pressing it does nothing")
	}
	if reflect.ValueOf(b.OnClick).Kind() == reflect.Func {
		return nil, nil, errors.New("this button's action cannot be triggered as a message")
	}
	return okResult(), []tea.Msg{b.OnClick}, nil
}

// State returns type, id, label, disabled and destructive.
func (b Button) State() any {
	return map[string]any{
		"type":        "button",
		"id":          b.ID,
		"label":       b.Label,
		"disabled":    b.Disabled,
		"destructive": b.Destructive,
	}
}
