package ui

import (
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// TreeNode is one node of a [Tree].
type TreeNode struct {
	// ID identifies the node in the tree's messages.
	ID string
	// Label is the text shown for the node.
	Label string
	// Expanded reports whether the node's children are shown.
	Expanded bool
	// Children are the node's child nodes.
	Children []TreeNode
}

// TreeRow is one visible row of a [Tree]: a node, its depth (0 for a root
// node) and the id of its parent ("" for a root node).
type TreeRow struct {
	// Node is the node shown on the row.
	Node TreeNode
	// Depth is the node's nesting level, 0 for a root node.
	Depth int
	// Parent is the id of the node's parent, "" for a root node.
	Parent string
}

// Tree is an outline of nodes that expand and collapse.
//
// Keys: Up/Down, PgUp/PgDn (by the rows last drawn; before the first
// drawing by Height, 10 when Height is 0) and Home/End
// move the local highlight (LocalState.Row, an index into [Tree.Visible]).
// Right expands a collapsed node ([TreeExpanded]) or moves to the first
// child of an expanded one; Left collapses an expanded node
// ([TreeCollapsed]) or moves to the parent of any other; Enter or Space
// send [TreeSelected]. A click on a row highlights and selects it, a click
// on the ▸/▾ glyph of a node with children expands or collapses it.
type Tree struct {
	// ID identifies the widget in its tree.
	ID string
	// Nodes are the root nodes.
	Nodes []TreeNode
	// Selected is the id of the selected node, or "".
	Selected string
	// Height is the number of rows shown at once; 0 shows them all.
	// Fewer are shown where the layout has no room for them
	// ([RenderContext.Height]), more in a [Fill] with room; the
	// highlighted row stays in view either way.
	Height int
	// Disabled makes the tree ignore input and drawn in the disabled style.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = Tree{}
	_ ToolProvider = Tree{}
)

// treeMarkW is the width of the "› " mark before the selected node.
const treeMarkW = 2

// Children returns nil: tree nodes are data, not child nodes.
func (Tree) Children() []Node { return nil }

// WidgetID returns the tree's id.
func (t Tree) WidgetID() string { return t.ID }

// Focusable reports whether the tree is enabled.
func (t Tree) Focusable() bool { return !t.Disabled }

// Visible returns the rows currently shown: a depth-first walk of the
// nodes that descends only into expanded nodes.
func (t Tree) Visible() []TreeRow {
	var rows []TreeRow
	var walk func(nodes []TreeNode, depth int, parent string)
	walk = func(nodes []TreeNode, depth int, parent string) {
		for _, n := range nodes {
			rows = append(rows, TreeRow{Node: n, Depth: depth, Parent: parent})
			if n.Expanded {
				walk(n.Children, depth+1, n.ID)
			}
		}
	}
	walk(t.Nodes, 0, "")
	return rows
}

// window clamps st to n visible rows, scrolling so that the highlighted
// row is visible among the rows last drawn, and returns their number.
func (t Tree) window(st *LocalState, n int) int {
	h := t.Height
	if d, ok := st.Data.(drawnRows); ok && d > 0 {
		h = int(d)
	}
	return t.windowOf(st, n, h)
}

// windowOf is window for h rows (all when h is 0).
func (t Tree) windowOf(st *LocalState, n, h int) int {
	st.Row = dwClamp(st.Row, 0, n-1)
	if h <= 0 || h > n {
		h = n
	}
	st.Offset = dwScroll(st.Offset, st.Row, h, n)
	return h
}

// HandleEvent moves the highlight, expands, collapses and selects nodes;
// see [Tree].
func (t Tree) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	if t.Disabled {
		return nil
	}
	rows := t.Visible()
	if len(rows) == 0 {
		return nil
	}
	if st == nil {
		st = &LocalState{}
	}
	h := t.window(st, len(rows))
	cur := rows[st.Row]
	hasKids := len(cur.Node.Children) > 0
	switch ev := ev.(type) {
	case tea.KeyPressMsg:
		page := t.Height
		if page <= 0 {
			page = dwPage
		}
		if _, drawn := st.Data.(drawnRows); drawn {
			page = h
		}
		if r, ok := moveRow(ev.String(), st.Row, len(rows), page); ok {
			st.Row = r
			t.window(st, len(rows))
			return nil
		}
		switch ev.String() {
		case "right":
			switch {
			case hasKids && !cur.Node.Expanded:
				return []tea.Msg{TreeExpanded{ID: t.ID, NodeID: cur.Node.ID}}
			case hasKids:
				st.Row++ // the first child is the next visible row
			}
		case "left":
			if hasKids && cur.Node.Expanded {
				return []tea.Msg{TreeCollapsed{ID: t.ID, NodeID: cur.Node.ID}}
			}
			// The parent is the nearest row above that is one level up.
			for i := st.Row - 1; i >= 0; i-- {
				if rows[i].Depth < cur.Depth {
					st.Row = i
					break
				}
			}
		case "enter", "space":
			return []tea.Msg{TreeSelected{ID: t.ID, NodeID: cur.Node.ID}}
		default:
			return nil
		}
		t.window(st, len(rows))
		return nil
	case ClickEvent:
		if ev.Y < 0 || ev.Y >= h {
			return nil
		}
		st.Row = st.Offset + ev.Y
		t.window(st, len(rows))
		r := rows[st.Row]
		glyph := dwSatAdd(treeMarkW, 2*r.Depth)
		if len(r.Node.Children) > 0 && ev.X >= glyph && ev.X < glyph+2 {
			if r.Node.Expanded {
				return []tea.Msg{TreeCollapsed{ID: t.ID, NodeID: r.Node.ID}}
			}
			return []tea.Msg{TreeExpanded{ID: t.ID, NodeID: r.Node.ID}}
		}
		return []tea.Msg{TreeSelected{ID: t.ID, NodeID: r.Node.ID}}
	}
	return nil
}

// Render draws the visible rows, indented two cells per level.
func (t Tree) Render(rc RenderContext) string {
	th, st, w := dwContext(rc)
	pick := func(s lipgloss.Style) lipgloss.Style {
		if t.Disabled {
			return th.Disabled
		}
		return s
	}
	rows := t.Visible()
	if len(rows) == 0 {
		return Paint(pick(th.Muted), dwTrunc("(empty)", w))
	}
	h := t.windowOf(st, len(rows), scrollRows(t.Height, len(rows), rc.Height, rc))
	st.Data = drawnRows(h)
	focused := rc.Focused && !t.Disabled
	lines := make([]string, 0, h)
	for i := st.Offset; i < st.Offset+h; i++ {
		r := rows[i]
		selected := t.Selected != "" && r.Node.ID == t.Selected
		var b strings.Builder
		if selected {
			b.WriteString("› ")
		} else {
			b.WriteString("  ")
		}
		// Indentation past the width is never seen; don't build it.
		b.WriteString(strings.Repeat("  ", min(r.Depth, w)))
		switch {
		case len(r.Node.Children) == 0:
			b.WriteString("  ")
		case r.Node.Expanded:
			b.WriteString("▾ ")
		default:
			b.WriteString("▸ ")
		}
		b.WriteString(dwClean(r.Node.Label))
		style := th.Normal
		switch {
		case t.Disabled:
			style = th.Disabled
		case focused && i == st.Row && selected:
			style = th.Highlight.Bold(true)
		case focused && i == st.Row:
			style = th.Highlight
		case selected:
			style = th.Selected
		}
		lines = append(lines, Paint(style, dwFit(b.String(), w)))
	}
	return dwJoin(lines, w)
}

// ---- MCP tools ----

// Tools returns expand, collapse and select_node; none while disabled.
func (t Tree) Tools() []ToolSpec {
	if t.Disabled {
		return nil
	}
	nodeID := func() map[string]any {
		return map[string]any{argNodeID: Prop("string", "The id of the tree node, as listed in this tree's state.")}
	}
	return []ToolSpec{
		tool("expand", "Expand the tree node with the given node id, showing its children. The node must have children; it need not be visible.", nodeID(), argNodeID),
		tool("collapse", "Collapse the tree node with the given node id, hiding its children. The node must have children; it need not be visible.", nodeID(), argNodeID),
		tool("select_node", "Choose the tree node with the given node id, as a person choosing it would. The node need not be visible.", nodeID(), argNodeID),
	}
}

// find returns the first node with the given id, depth-first, expanded or
// not.
func (t Tree) find(id string) (TreeNode, bool) {
	var walk func([]TreeNode) (TreeNode, bool)
	walk = func(nodes []TreeNode) (TreeNode, bool) {
		for _, n := range nodes {
			if n.ID == id {
				return n, true
			}
			if m, ok := walk(n.Children); ok {
				return m, true
			}
		}
		return TreeNode{}, false
	}
	return walk(t.Nodes)
}

// CallTool runs expand ([TreeExpanded], as Right sends), collapse
// ([TreeCollapsed], as Left sends) or select_node ([TreeSelected], as
// Enter sends) on any node of the tree. Expanding an expanded node or
// collapsing a collapsed one sends nothing, as the keys would not.
func (t Tree) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	switch action {
	case "expand", "collapse", "select_node":
	default:
		return nil, nil, errUnknownAction(action)
	}
	if t.Disabled {
		return nil, nil, errors.New("this tree is disabled")
	}
	if err := checkArgs(args, argNodeID); err != nil {
		return nil, nil, err
	}
	id, _, err := stringArg(args, argNodeID, true)
	if err != nil {
		return nil, nil, err
	}
	n, ok := t.find(id)
	if !ok {
		return nil, nil, fmt.Errorf("unknown node_id %q: no node of this tree has that id", id)
	}
	switch action {
	case "expand":
		switch {
		case len(n.Children) == 0:
			return nil, nil, fmt.Errorf("node %q has no children to expand", id)
		case n.Expanded:
			return unchangedResult("the node is already expanded"), nil, nil
		}
		return okResult(), []tea.Msg{TreeExpanded{ID: t.ID, NodeID: id}}, nil
	case "collapse":
		switch {
		case len(n.Children) == 0:
			return nil, nil, fmt.Errorf("node %q has no children to collapse", id)
		case !n.Expanded:
			return unchangedResult("the node is already collapsed"), nil, nil
		}
		return okResult(), []tea.Msg{TreeCollapsed{ID: t.ID, NodeID: id}}, nil
	default: // select_node
		return okResult(), []tea.Msg{TreeSelected{ID: t.ID, NodeID: id}}, nil
	}
}

// treeNodes returns nodes as JSON data.
func treeNodes(nodes []TreeNode) []any {
	out := make([]any, len(nodes))
	for i, n := range nodes {
		out[i] = map[string]any{
			"id":       n.ID,
			"label":    n.Label,
			"expanded": n.Expanded,
			"children": treeNodes(n.Children),
		}
	}
	return out
}

// State returns type, id, nodes (nested, each with id, label, expanded
// and children), selected (null for none) and disabled.
func (t Tree) State() any {
	var sel any
	if t.Selected != "" {
		sel = t.Selected
	}
	return map[string]any{
		"type":     "tree",
		"id":       t.ID,
		"nodes":    treeNodes(t.Nodes),
		"selected": sel,
		"disabled": t.Disabled,
	}
}
