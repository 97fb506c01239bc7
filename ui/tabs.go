package ui

import (
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// tabSeparator is drawn between tab labels.
const tabSeparator = " │ "

// Tabs is a row of tab labels, one of them active. Left/Right (h/l) send
// [TabChanged] for the neighbouring tab, Home/End for the first or last,
// and a click for the clicked tab; nothing is sent when the tab would not
// change. The app copies the index back into Active.
type Tabs struct {
	// ID identifies the widget in its tree.
	ID string
	// Tabs are the tab labels, in order.
	Tabs []string
	// Active is the index of the active tab; an index out of range means
	// none (Left/Right then start from the nearest end).
	Active int
	// Disabled greys the tabs out and ignores input.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = Tabs{}
	_ ToolProvider = Tabs{}
)

// Children returns nil: tabs have no children.
func (Tabs) Children() []Node { return nil }

// WidgetID returns the widget's id.
func (t Tabs) WidgetID() string { return t.ID }

// Focusable reports whether the tabs are enabled.
func (t Tabs) Focusable() bool { return !t.Disabled }

// HandleEvent sends [TabChanged] when a key or click picks another tab.
func (t Tabs) HandleEvent(ev Event, _ *LocalState) []tea.Msg {
	n := len(t.Tabs)
	if t.Disabled || n == 0 {
		return nil
	}
	next := -1
	switch ev := ev.(type) {
	case ClickEvent:
		if ev.Y != 0 {
			return nil
		}
		for i, span := range t.spans() {
			if ev.X >= span[0] && ev.X < span[1] {
				next = i
				break
			}
		}
	case tea.KeyPressMsg:
		switch ev.String() {
		case "left", "h":
			next = min(t.Active-1, n-1)
		case "right", "l":
			next = max(t.Active+1, 0)
		case "home":
			next = 0
		case "end":
			next = n - 1
		}
	}
	if next < 0 || next >= n || next == t.Active {
		return nil
	}
	return []tea.Msg{TabChanged{ID: t.ID, Index: next}}
}

// labels returns the tab labels as drawn.
func (t Tabs) labels() []string {
	out := make([]string, len(t.Tabs))
	for i, s := range t.Tabs {
		out[i] = cleanLine(s)
	}
	return out
}

// spans returns the [start, end) columns of each tab label as drawn
// before truncation; truncation only cuts off the end of the line, so the
// columns of what is visible do not depend on the width.
func (t Tabs) spans() [][2]int {
	spans := make([][2]int, len(t.Tabs))
	x := 0
	sepW := lipgloss.Width(tabSeparator)
	for i, l := range t.labels() {
		if i > 0 {
			x += sepW
		}
		spans[i] = [2]int{x, x + lipgloss.Width(l)}
		x = spans[i][1]
	}
	return spans
}

// Render draws the labels on one line separated by " │ ", the active one
// underlined in the selected style (in reverse video while focused),
// truncated to the width.
func (t Tabs) Render(rc RenderContext) string {
	w := max(rc.Width, 1)
	if len(t.Tabs) == 0 {
		return ""
	}
	normal, sep := rc.Theme.Normal, rc.Theme.Muted
	active := rc.Theme.Selected.Bold(true).Underline(true)
	switch {
	case t.Disabled:
		normal, sep, active = rc.Theme.Disabled, rc.Theme.Disabled, rc.Theme.Disabled.Underline(true)
	case rc.Focused:
		normal = rc.Theme.Focused
		active = rc.Theme.Highlight.Inherit(active)
	}
	// Lay out the tabs up to the first one that overflows the width; the
	// positions match spans, which click handling uses.
	type segment struct {
		text string
		st   lipgloss.Style
	}
	var segs []segment
	x, overflow := 0, false
	for i, raw := range t.Tabs {
		if i > 0 {
			segs = append(segs, segment{tabSeparator, sep})
			x += lipgloss.Width(tabSeparator)
		}
		st := normal
		if i == t.Active {
			st = active
		}
		l := cleanLine(cutCells(raw, w-x+1))
		segs = append(segs, segment{l, st})
		x += lipgloss.Width(l)
		if x >= w {
			overflow = x > w || i < len(t.Tabs)-1
			break
		}
	}
	room := w
	if overflow {
		room = w - 1 // keep a cell for the ellipsis
	}
	var b strings.Builder
	for _, sg := range segs {
		text := cutCells(sg.text, room)
		b.WriteString(styled(sg.st, text))
		if room -= lipgloss.Width(text); room <= 0 {
			break
		}
	}
	if overflow {
		b.WriteString(Paint(normal, "…"))
	}
	return clipWidth(b.String(), w)
}

// ---- MCP tools ----

// Tools returns select_tab and get_tabs; none while disabled.
func (t Tabs) Tools() []ToolSpec {
	if t.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("select_tab", "Make the tab at the given zero-based index the active tab. Call get_tabs to see the tabs in order.",
			map[string]any{argIndex: indexProp("Zero-based index of the tab to make active.")}, argIndex),
		readTool("get_tabs", "Return the labels of the tabs in order and the index of the active tab (-1 when none is active).", nil),
	}
}

// CallTool runs select_tab (sending [TabChanged] like the arrow keys do;
// nothing when the tab is already active, as a key press would) or
// get_tabs.
func (t Tabs) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action != "select_tab" && action != "get_tabs" {
		return nil, nil, errUnknownAction(action)
	}
	if t.Disabled {
		return nil, nil, errors.New("these tabs are disabled")
	}
	if action == "get_tabs" {
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return map[string]any{"tabs": cloneStrings(t.Tabs), "active": inRange(t.Active, len(t.Tabs))}, nil, nil
	}
	if err := checkArgs(args, argIndex); err != nil {
		return nil, nil, err
	}
	i, err := checkIndex(args, argIndex, len(t.Tabs), "this widget", "tab")
	if err != nil {
		return nil, nil, err
	}
	if i == t.Active {
		return unchangedResult("the tab is already active"), nil, nil
	}
	return okResult(), []tea.Msg{TabChanged{ID: t.ID, Index: i}}, nil
}

// State returns type, id, tabs, active (-1 for none) and disabled.
func (t Tabs) State() any {
	return map[string]any{
		"type":     "tabs",
		"id":       t.ID,
		"tabs":     cloneStrings(t.Tabs),
		"active":   inRange(t.Active, len(t.Tabs)),
		"disabled": t.Disabled,
	}
}
