package ui

import (
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// MenuItem is one entry of a [Menu], possibly with nested entries.
type MenuItem struct {
	// ID identifies the item within its menu; [MenuSelected] carries it.
	ID string
	// Label is the text drawn for the item.
	Label string
	// Disabled greys the item out; it cannot be highlighted by the arrow
	// keys nor chosen.
	Disabled bool
	// Children are nested items, drawn below the item and indented.
	Children []MenuItem
}

// Menu is a list of items with nested items, shown flattened depth-first
// with children indented two spaces per level. The highlighted item is
// LocalState.Row, an index into [Menu.Flatten]. Up/Down (k/j) and
// Home/End move the highlight over enabled items without sending
// anything; Enter or Space sends [MenuSelected] for the highlighted item,
// and a click for the clicked item, when it is enabled. Where the layout
// has no room for every item ([RenderContext.Height]) the menu shows a
// window of them from LocalState.Offset that keeps the highlighted item in
// view.
type Menu struct {
	// ID identifies the widget in its tree.
	ID string
	// Items are the top-level items.
	Items []MenuItem
	// Disabled greys the whole menu out and ignores input.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = Menu{}
	_ ToolProvider = Menu{}
)

// Children returns nil: menu items are not nodes of the tree.
func (Menu) Children() []Node { return nil }

// WidgetID returns the menu's id.
func (m Menu) WidgetID() string { return m.ID }

// Focusable reports whether the menu is enabled.
func (m Menu) Focusable() bool { return !m.Disabled }

// menuLine is an item of the flattened menu with its depth.
type menuLine struct {
	item  MenuItem
	depth int
}

// lines flattens the items depth-first.
func (m Menu) lines() []menuLine {
	var out []menuLine
	var walk func(items []MenuItem, depth int)
	walk = func(items []MenuItem, depth int) {
		for _, it := range items {
			out = append(out, menuLine{item: it, depth: depth})
			walk(it.Children, depth+1)
		}
	}
	walk(m.Items, 0)
	return out
}

// Flatten returns the items depth-first, in the order they are drawn: each
// item is followed by its children. The items keep their Children.
func (m Menu) Flatten() []MenuItem {
	lines := m.lines()
	out := make([]MenuItem, len(lines))
	for i, l := range lines {
		out[i] = l.item
	}
	return out
}

// HandleEvent moves the highlight, or sends [MenuSelected] on Enter, Space
// or a click on an enabled item.
func (m Menu) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	lines := m.lines()
	n := len(lines)
	if m.Disabled || n == 0 {
		return nil
	}
	st = stateOrScratch(st)
	row := min(max(st.Row, 0), n-1)
	enabled := func(i int) bool { return !lines[i].item.Disabled }
	// seek returns the first enabled row from i stepping by step, or -1.
	seek := func(i, step int) int {
		for ; i >= 0 && i < n; i += step {
			if enabled(i) {
				return i
			}
		}
		return -1
	}
	var msgs []tea.Msg
	switch ev := ev.(type) {
	case ClickEvent:
		h := n
		if d, ok := st.Data.(drawnRows); ok && d > 0 {
			h = min(int(d), n)
		}
		y := windowTop(st.Offset, row, h, n) + ev.Y
		if ev.Y < 0 || ev.Y >= h || y >= n || !enabled(y) {
			return nil
		}
		row = y
		msgs = []tea.Msg{MenuSelected{ID: m.ID, ItemID: lines[row].item.ID}}
	case tea.KeyPressMsg:
		switch ev.String() {
		case "up", "k":
			if i := seek(row-1, -1); i >= 0 {
				row = i
			}
		case "down", "j":
			if i := seek(row+1, 1); i >= 0 {
				row = i
			}
		case "home":
			if i := seek(0, 1); i >= 0 {
				row = i
			}
		case "end":
			if i := seek(n-1, -1); i >= 0 {
				row = i
			}
		case "enter", "space":
			if enabled(row) {
				msgs = []tea.Msg{MenuSelected{ID: m.ID, ItemID: lines[row].item.ID}}
			}
		}
	}
	st.Row = row
	return msgs
}

// Render draws one line per item, indented by depth. The highlighted item
// is in reverse video while focused; disabled items are greyed out.
func (m Menu) Render(rc RenderContext) string {
	w := max(rc.Width, 1)
	lines := m.lines()
	if len(lines) == 0 {
		return ""
	}
	local := localOf(rc)
	row := min(max(local.Row, 0), len(lines)-1)
	h := scrollRows(0, len(lines), rc.Height, rc)
	top := windowTop(local.Offset, row, h, len(lines))
	local.Offset, local.Data = top, drawnRows(h)
	out := make([]string, 0, h)
	for i, l := range lines[top : top+h] {
		i += top
		indent := min(2*l.depth, w-1)
		text := strings.Repeat(" ", indent) + fitLine(l.item.Label, w-indent)
		st := rc.Theme.Normal
		if m.Disabled || l.item.Disabled {
			st = rc.Theme.Disabled
		}
		if rc.Focused && !m.Disabled && i == row {
			st = rc.Theme.Highlight.Inherit(st)
			text = padCells(text, w)
		}
		out = append(out, styled(st, text))
	}
	return clipWidth(strings.Join(out, "\n"), w)
}

// ---- MCP tools ----

// Tools returns select and get_items; none while disabled.
func (m Menu) Tools() []ToolSpec {
	if m.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("select", "Choose the menu item with the given item id, as a person choosing it would. Call get_items to see the item ids; disabled items cannot be chosen.",
			map[string]any{argItemID: Prop("string", "The id of the menu item to choose, as returned by get_items.")}, argItemID),
		readTool("get_items", "Return every item of this menu, nested items included, in display order, each with its id, label, nesting depth (0 for a top-level item) and whether it is disabled.", nil),
	}
}

// CallTool runs select (sending [MenuSelected], as Enter on the item
// does; the item may be nested anywhere but must be enabled) or
// get_items.
func (m Menu) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action != "select" && action != "get_items" {
		return nil, nil, errUnknownAction(action)
	}
	if m.Disabled {
		return nil, nil, errors.New("this menu is disabled")
	}
	lines := m.lines()
	if action == "get_items" {
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return map[string]any{"items": menuItems(lines)}, nil, nil
	}
	if err := checkArgs(args, argItemID); err != nil {
		return nil, nil, err
	}
	id, _, err := stringArg(args, argItemID, true)
	if err != nil {
		return nil, nil, err
	}
	found := false
	var enabled []string
	for _, l := range lines {
		if l.item.Disabled {
			found = found || l.item.ID == id
			continue
		}
		if l.item.ID == id {
			return okResult(), []tea.Msg{MenuSelected{ID: m.ID, ItemID: id}}, nil
		}
		enabled = append(enabled, l.item.ID)
	}
	switch {
	case found:
		return nil, nil, fmt.Errorf("menu item %q is disabled", id)
	case len(enabled) == 0:
		return nil, nil, fmt.Errorf("unknown item_id %q: this menu has no enabled items", id)
	}
	return nil, nil, fmt.Errorf("unknown item_id %q: the enabled items are %s", id, quoteIDs(enabled))
}

// menuItems returns the flattened items as JSON data.
func menuItems(lines []menuLine) []any {
	out := make([]any, len(lines))
	for i, l := range lines {
		out[i] = map[string]any{
			"id":       l.item.ID,
			"label":    l.item.Label,
			"depth":    l.depth,
			"disabled": l.item.Disabled,
		}
	}
	return out
}

// State returns type, id, items (flattened depth-first, each with id,
// label, depth and disabled) and disabled.
func (m Menu) State() any {
	return map[string]any{
		"type":     "menu",
		"id":       m.ID,
		"items":    menuItems(m.lines()),
		"disabled": m.Disabled,
	}
}
