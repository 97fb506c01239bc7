package ui

import (
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// SelectList is a list of options, one of which may be selected. The
// highlighted option is LocalState.Row and the first visible one
// LocalState.Offset. Up/Down (k/j), Home/End and PgUp/PgDn move the
// highlight without sending anything; Enter or Space sends
// [OptionSelected] for the highlighted option, and a click highlights and
// selects the clicked one. The app copies the index back into Selected.
type SelectList struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is drawn on a line of its own above the options; empty draws
	// none.
	Label string
	// Options are the choices, in order.
	Options []string
	// Selected is the index of the selected option; -1 (or any index out
	// of range) means none.
	Selected int
	// Height is the number of visible options; zero (or more than there
	// are options) shows them all. Fewer are shown where the layout has no
	// room for them ([RenderContext.Height]), more in a [Fill] with room;
	// the highlighted option stays in view either way.
	Height int
	// Disabled greys the list out and ignores input.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = SelectList{}
	_ ToolProvider = SelectList{}
)

// Children returns nil: a select list has no children.
func (SelectList) Children() []Node { return nil }

// WidgetID returns the list's id.
func (l SelectList) WidgetID() string { return l.ID }

// Focusable reports whether the list is enabled.
func (l SelectList) Focusable() bool { return !l.Disabled }

// height returns the number of visible rows: as many as were last drawn
// in st, else Height (all when 0).
func (l SelectList) height(st *LocalState) int {
	if d, ok := st.Data.(drawnRows); ok && d > 0 {
		return min(int(d), len(l.Options))
	}
	if l.Height <= 0 || l.Height > len(l.Options) {
		return len(l.Options)
	}
	return l.Height
}

// HandleEvent moves the highlight, or selects an option on Enter, Space
// or a click.
func (l SelectList) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	n := len(l.Options)
	if l.Disabled || n == 0 {
		return nil
	}
	st = stateOrScratch(st)
	h := l.height(st)
	row := min(max(st.Row, 0), n-1)
	top := windowTop(st.Offset, row, h, n)
	var msgs []tea.Msg
	switch ev := ev.(type) {
	case ClickEvent:
		y := ev.Y
		if l.Label != "" {
			y--
		}
		if y < 0 || y >= h || top+y >= n {
			return nil
		}
		row = top + y
		msgs = []tea.Msg{OptionSelected{ID: l.ID, Index: row}}
	case tea.KeyPressMsg:
		if r, ok := moveRow(vimKey(ev.String()), row, n, h); ok {
			row = min(max(r, 0), n-1)
		} else if k := ev.String(); k == "enter" || k == "space" {
			msgs = []tea.Msg{OptionSelected{ID: l.ID, Index: row}}
		}
	}
	st.Row = row
	st.Offset = windowTop(top, row, h, n)
	return msgs
}

// Render draws the label line, then a window of Height options, each
// marked "● " when selected and "○ " otherwise. The highlighted option is
// in reverse video while focused; the selected one is in the selected
// style.
func (l SelectList) Render(rc RenderContext) string {
	w := max(rc.Width, 1)
	var out []string
	if l.Label != "" {
		out = append(out, Paint(controlStyle(rc, l.Disabled), fitLine(l.Label, w)))
	}
	n := len(l.Options)
	if n == 0 {
		st := rc.Theme.Muted
		if l.Disabled {
			st = rc.Theme.Disabled
		}
		out = append(out, Paint(st, Truncate("(no options)", w)))
		return clipWidth(strings.Join(out, "\n"), w)
	}
	local := localOf(rc)
	room := rc.Height
	if l.Label != "" {
		room--
	}
	h := scrollRows(l.Height, n, room, rc)
	local.Data = drawnRows(h)
	row := min(max(local.Row, 0), n-1)
	top := windowTop(local.Offset, row, h, n)
	local.Offset = top
	for i := top; i < top+h && i < n; i++ {
		mark := "○ "
		st := rc.Theme.Normal
		if i == l.Selected {
			mark = "● "
			st = rc.Theme.Selected
		}
		line := fitLine(mark+l.Options[i], w)
		switch {
		case l.Disabled:
			st = rc.Theme.Disabled
		case rc.Focused && i == row:
			st = rc.Theme.Highlight.Inherit(st)
			line = padCells(line, w)
		}
		out = append(out, Paint(st, line))
	}
	return clipWidth(strings.Join(out, "\n"), w)
}

// ---- MCP tools ----

// Tools returns select, get_selected and get_options; none while disabled.
func (l SelectList) Tools() []ToolSpec {
	if l.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("select", "Choose the option at the given zero-based index of this list, as a person choosing it would. Call get_options to see the options in order.",
			map[string]any{argIndex: indexProp("Zero-based index of the option to choose.")}, argIndex),
		readTool("get_selected", "Return the index and label of the chosen option of this list, or index -1 and a null label when none is chosen.", nil),
		readTool("get_options", "Return the labels of this list's options in order; an option's index is its position in that list.", nil),
	}
}

// CallTool runs select (sending [OptionSelected], as Enter on the option
// does), get_selected or get_options.
func (l SelectList) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	switch action {
	case "select", "get_selected", "get_options":
	default:
		return nil, nil, errUnknownAction(action)
	}
	if l.Disabled {
		return nil, nil, errors.New("this select list is disabled")
	}
	switch action {
	case "select":
		if err := checkArgs(args, argIndex); err != nil {
			return nil, nil, err
		}
		i, err := checkIndex(args, argIndex, len(l.Options), "this list", "option")
		if err != nil {
			return nil, nil, err
		}
		return okResult(), []tea.Msg{OptionSelected{ID: l.ID, Index: i}}, nil
	case "get_selected":
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		if i := inRange(l.Selected, len(l.Options)); i >= 0 {
			return map[string]any{"index": i, "label": l.Options[i]}, nil, nil
		}
		return map[string]any{"index": -1, "label": nil}, nil, nil
	default: // get_options
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return map[string]any{"options": cloneStrings(l.Options)}, nil, nil
	}
}

// State returns type, id, label, options, selected (-1 for none) and
// disabled.
func (l SelectList) State() any {
	return map[string]any{
		"type":     "select_list",
		"id":       l.ID,
		"label":    l.Label,
		"options":  cloneStrings(l.Options),
		"selected": inRange(l.Selected, len(l.Options)),
		"disabled": l.Disabled,
	}
}
