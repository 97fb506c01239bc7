package ui

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// This file holds the MCP tools of the display widgets (Modal, Table,
// Tree, Scrubber, Viewport) and the charts (BarChart, LineChart,
// ScatterChart); the shared helpers are in tools_input.go.

var (
	_ ToolProvider = Modal{}
	_ ToolProvider = Table{}
	_ ToolProvider = Tree{}
	_ ToolProvider = Scrubber{}
	_ ToolProvider = Viewport{}
	_ ToolProvider = BarChart{}
	_ ToolProvider = LineChart{}
	_ ToolProvider = ScatterChart{}
)

// ---- Modal ----

// Tools returns confirm and dismiss; none while the modal is hidden.
func (m Modal) Tools() []ToolSpec {
	if !m.Visible {
		return nil
	}
	return []ToolSpec{
		tool("confirm", "Confirm this dialog, as pressing its confirm button or Enter would.", nil),
		tool("dismiss", "Close this dialog without confirming, as pressing its cancel button or Esc would.", nil),
	}
}

// CallTool runs confirm ([ModalConfirmed]) or dismiss ([ModalDismissed]),
// the messages Enter and Esc send.
func (m Modal) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	var msg tea.Msg
	switch action {
	case "confirm":
		msg = ModalConfirmed{ID: m.ID}
	case "dismiss":
		msg = ModalDismissed{ID: m.ID}
	default:
		return nil, nil, errUnknownAction(action)
	}
	if !m.Visible {
		return nil, nil, errors.New("this modal is not visible")
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	return okResult(), []tea.Msg{msg}, nil
}

// State returns type, id, title, visible, confirm_label and dismiss_label
// (defaults filled in). The body's widgets report their own state.
func (m Modal) State() any {
	confirm, dismiss := m.ConfirmLabel, m.DismissLabel
	if confirm == "" {
		confirm = "Confirm"
	}
	if dismiss == "" {
		dismiss = "Cancel"
	}
	return map[string]any{
		"type":          "modal",
		"id":            m.ID,
		"title":         m.Title,
		"visible":       m.Visible,
		"confirm_label": confirm,
		"dismiss_label": dismiss,
	}
}

// ---- Table ----

// Tools returns select_row, sort and get_rows; none while disabled.
func (t Table) Tools() []ToolSpec {
	if t.Disabled {
		return nil
	}
	dir := Prop("string", "Sort direction: \"asc\" (the default) or \"desc\".")
	dir["enum"] = []string{SortAsc, SortDesc}
	dir["default"] = SortAsc
	return []ToolSpec{
		tool("select_row", "Choose the row at the given zero-based index of this table, counting rows in the order get_rows returns them.",
			map[string]any{argIndex: indexProp("Zero-based index of the row to choose.")}, argIndex),
		tool("sort", "Ask for this table to be sorted by the column with the given key, ascending unless direction is \"desc\". Call get_rows to see the column keys.",
			map[string]any{
				argColumn: Prop("string", "The key of the column to sort by, as returned by get_rows."),
				argDir:    dir,
			}, argColumn),
		readTool("get_rows", "Return this table's columns (key and title), its rows as lists of cell texts in column order, the index of the selected row (-1 for none) and the current sort column and direction (null when unsorted).", nil),
	}
}

// CallTool runs select_row ([RowSelected], as Enter on the row sends),
// sort ([TableSorted], as 's' on the column sends) or get_rows.
func (t Table) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	switch action {
	case "select_row", "sort", "get_rows":
	default:
		return nil, nil, errUnknownAction(action)
	}
	if t.Disabled {
		return nil, nil, errors.New("this table is disabled")
	}
	switch action {
	case "select_row":
		if err := checkArgs(args, argIndex); err != nil {
			return nil, nil, err
		}
		i, err := checkIndex(args, argIndex, len(t.Rows), "this table", "row")
		if err != nil {
			return nil, nil, err
		}
		return okResult(), []tea.Msg{RowSelected{ID: t.ID, Index: i}}, nil
	case "sort":
		if err := checkArgs(args, argColumn, argDir); err != nil {
			return nil, nil, err
		}
		col, _, err := stringArg(args, argColumn, true)
		if err != nil {
			return nil, nil, err
		}
		dir, ok, err := stringArg(args, argDir, false)
		switch {
		case err != nil:
			return nil, nil, err
		case !ok:
			dir = SortAsc
		case dir != SortAsc && dir != SortDesc:
			return nil, nil, fmt.Errorf("argument %q must be %q or %q, got %q", argDir, SortAsc, SortDesc, dir)
		}
		keys := make([]string, 0, len(t.Columns))
		for _, c := range t.Columns {
			if c.Key == col {
				return okResult(), []tea.Msg{TableSorted{ID: t.ID, Column: col, Direction: dir}}, nil
			}
			keys = append(keys, c.Key)
		}
		if len(keys) == 0 {
			return nil, nil, fmt.Errorf("unknown column %q: this table has no columns", col)
		}
		return nil, nil, fmt.Errorf("unknown column %q: the column keys are %s", col, quoteIDs(keys))
	default: // get_rows
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return t.data(), nil, nil
	}
}

// data returns columns, rows, selected, sort_column and sort_direction.
func (t Table) data() map[string]any {
	cols := make([]any, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = map[string]any{"key": c.Key, "title": c.Title}
	}
	rows := make([]any, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = cloneStrings(r)
	}
	var sortCol, sortDir any
	if t.SortColumn != "" {
		// Render draws anything but SortDesc as ascending.
		sortCol, sortDir = t.SortColumn, SortAsc
		if t.SortDirection == SortDesc {
			sortDir = SortDesc
		}
	}
	return map[string]any{
		"columns":        cols,
		"rows":           rows,
		"selected":       inRange(t.Selected, len(t.Rows)),
		"sort_column":    sortCol,
		"sort_direction": sortDir,
	}
}

// State returns type, id, disabled and what get_rows returns: columns
// (key, title), rows, selected (-1 for none), sort_column and
// sort_direction (null when unsorted).
func (t Table) State() any {
	s := t.data()
	s["type"] = "table"
	s["id"] = t.ID
	s["disabled"] = t.Disabled
	return s
}

// ---- Tree ----

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

// ---- Scrubber ----

// Tools returns seek, play, pause and get_position; none while disabled.
func (s Scrubber) Tools() []ToolSpec {
	if s.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("seek", "Move this playback position control to the given position. Call get_position for the valid range.",
			map[string]any{argPosition: Prop("integer", "The position to move to, between the control's minimum and maximum inclusive.")}, argPosition),
		tool("play", "Start playback. Does nothing when already playing.", nil),
		tool("pause", "Pause playback. Does nothing when already paused.", nil),
		readTool("get_position", "Return the current position, the minimum and maximum positions, and whether playback is running.", nil),
	}
}

// position returns the position as drawn: clamped to the bounds.
func (s Scrubber) position() int {
	lo, hi := s.Bounds()
	return dwClamp(s.Position, lo, hi)
}

// CallTool runs seek ([ScrubberSeeked], as the seek keys send; nothing
// when the position would not change), play ([ScrubberPlayed]) and pause
// ([ScrubberPaused]) (nothing when already in that state; Space sends
// whichever changes it), or get_position.
func (s Scrubber) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	switch action {
	case "seek", "play", "pause", "get_position":
	default:
		return nil, nil, errUnknownAction(action)
	}
	if s.Disabled {
		return nil, nil, errors.New("this scrubber is disabled")
	}
	if action == "seek" {
		if err := checkArgs(args, argPosition); err != nil {
			return nil, nil, err
		}
		p, err := intArg(args, argPosition)
		if err != nil {
			return nil, nil, err
		}
		lo, hi := s.Bounds()
		if p < lo || p > hi {
			return nil, nil, fmt.Errorf("position %d is out of range: valid positions are %d-%d", p, lo, hi)
		}
		msgs := s.seek(p)
		if msgs == nil {
			return unchangedResult("already at that position"), nil, nil
		}
		return okResult(), msgs, nil
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	switch action {
	case "play":
		if s.Playing {
			return unchangedResult("already playing"), nil, nil
		}
		return okResult(), []tea.Msg{ScrubberPlayed{ID: s.ID}}, nil
	case "pause":
		if !s.Playing {
			return unchangedResult("already paused"), nil, nil
		}
		return okResult(), []tea.Msg{ScrubberPaused{ID: s.ID}}, nil
	default: // get_position
		lo, hi := s.Bounds()
		return map[string]any{"position": s.position(), "min": lo, "max": hi, "playing": s.Playing}, nil, nil
	}
}

// State returns type, id, label, position (clamped to the bounds), min,
// max, step (the effective one), playing and disabled.
func (s Scrubber) State() any {
	lo, hi := s.Bounds()
	return map[string]any{
		"type":     "scrubber",
		"id":       s.ID,
		"label":    s.Label,
		"position": s.position(),
		"min":      lo,
		"max":      hi,
		"step":     s.step(),
		"playing":  s.Playing,
		"disabled": s.Disabled,
	}
}

// ---- Viewport ----

// Tools returns scroll_to and get_visible_range; none while disabled.
func (v Viewport) Tools() []ToolSpec {
	if v.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("scroll_to", "Scroll this viewport so that the line with the given zero-based index is the first visible line. The largest valid index is the total number of lines minus the visible height (see get_visible_range), or 0.",
			map[string]any{argRow: indexProp("Zero-based index of the line to show at the top.")}, argRow),
		readTool("get_visible_range", "Return the zero-based indices of the first and last visible lines (top and bottom; bottom is -1 when there are no lines) and the total number of lines.", nil),
	}
}

// visible returns the first and last visible line (last is -1 when there
// are none).
func (v Viewport) visible() (top, bottom int) {
	top = dwClamp(v.Offset, 0, v.MaxOffset())
	return top, min(dwSatAdd(top, v.height()-1), len(v.Lines)-1)
}

// CallTool runs scroll_to ([ScrolledTo], as the scroll keys send; nothing
// when the offset would not change) or get_visible_range.
func (v Viewport) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action != "scroll_to" && action != "get_visible_range" {
		return nil, nil, errUnknownAction(action)
	}
	if v.Disabled {
		return nil, nil, errors.New("this viewport is disabled")
	}
	if action == "get_visible_range" {
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		top, bottom := v.visible()
		return map[string]any{"top": top, "bottom": bottom, "total": len(v.Lines)}, nil, nil
	}
	if err := checkArgs(args, argRow); err != nil {
		return nil, nil, err
	}
	row, err := intArg(args, argRow)
	if err != nil {
		return nil, nil, err
	}
	if hi := v.MaxOffset(); row < 0 || row > hi {
		return nil, nil, fmt.Errorf("row %d is out of range: the first visible line can be 0-%d (%s, %d visible at once)",
			row, hi, plural(len(v.Lines), "line"), v.height())
	}
	msgs := v.scroll(row)
	if msgs == nil {
		return unchangedResult("already scrolled there"), nil, nil
	}
	return okResult(), msgs, nil
}

// State returns type, id, title, offset (the first visible line), height,
// max_offset, line_count, visible_lines (the text of the visible lines)
// and disabled.
func (v Viewport) State() any {
	top, bottom := v.visible()
	return map[string]any{
		"type":          "viewport",
		"id":            v.ID,
		"title":         v.Title,
		"offset":        top,
		"height":        v.height(),
		"max_offset":    v.MaxOffset(),
		"line_count":    len(v.Lines),
		"visible_lines": cloneStrings(v.Lines[top : bottom+1]),
		"disabled":      v.Disabled,
	}
}

// ---- Charts ----

// chartRead is the shared CallTool of the read-only charts: it checks the
// action is known and takes no arguments, then answers with read.
func chartRead(action string, args map[string]any, actions map[string]func() any) (any, []tea.Msg, error) {
	read, ok := actions[action]
	if !ok {
		return nil, nil, errUnknownAction(action)
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	return read(), nil, nil
}

// Tools returns get_data and get_range.
func (b BarChart) Tools() []ToolSpec {
	return []ToolSpec{
		readTool("get_data", "Return every bar of this bar chart in order, each with its label and value (null for a value that is not a finite number).", nil),
		readTool("get_range", "Return the smallest and largest finite bar values of this bar chart, widened to include 0.", nil),
	}
}

// CallTool runs get_data or get_range; a chart sends nothing.
func (b BarChart) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return chartRead(action, args, map[string]func() any{
		"get_data":  func() any { return map[string]any{"bars": b.bars()} },
		"get_range": func() any { return b.rangeData() },
	})
}

// bars returns the bars as JSON data, non-finite values as null.
func (b BarChart) bars() []any {
	out := make([]any, len(b.Bars))
	for i, bar := range b.Bars {
		out[i] = map[string]any{"label": bar.Label, "value": jsonFloat(bar.Value)}
	}
	return out
}

// rangeData returns Range as JSON data.
func (b BarChart) rangeData() map[string]any {
	lo, hi := b.Range()
	return map[string]any{"min": jsonFloat(lo), "max": jsonFloat(hi)}
}

// State returns type, id, title, bars (label, value) and range (min, max).
func (b BarChart) State() any {
	return map[string]any{
		"type":  "bar_chart",
		"id":    b.ID,
		"title": b.Title,
		"bars":  b.bars(),
		"range": b.rangeData(),
	}
}

// Tools returns get_series, get_range and get_point_at.
func (l LineChart) Tools() []ToolSpec {
	return []ToolSpec{
		readTool("get_series", "Return every series of this line chart with its name and its values in x order, x starting at 0 (null for a value that is not a finite number).", nil),
		readTool("get_range", "Return the smallest and largest finite values over all series of this line chart.", nil),
		readTool("get_point_at", "Return the value of every series of this line chart at the given zero-based x index; series too short to have it are left out.",
			map[string]any{argIndex: indexProp("Zero-based x index of the point.")}, argIndex),
	}
}

// CallTool runs get_series, get_range or get_point_at; a chart sends
// nothing.
func (l LineChart) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action == "get_point_at" {
		if err := checkArgs(args, argIndex); err != nil {
			return nil, nil, err
		}
		n := 0
		for _, s := range l.Series {
			n = max(n, len(s.Values))
		}
		i, err := checkIndex(args, argIndex, n, "the longest series of this chart", "value")
		if err != nil {
			return nil, nil, err
		}
		points := []any{}
		for _, s := range l.Series {
			if i < len(s.Values) {
				points = append(points, map[string]any{"name": s.Name, "index": i, "value": jsonFloat(s.Values[i])})
			}
		}
		return map[string]any{"points": points}, nil, nil
	}
	return chartRead(action, args, map[string]func() any{
		"get_series": func() any { return map[string]any{"series": l.series()} },
		"get_range":  func() any { return l.rangeData() },
	})
}

// series returns the series as JSON data, non-finite values as null.
func (l LineChart) series() []any {
	out := make([]any, len(l.Series))
	for i, s := range l.Series {
		out[i] = map[string]any{"name": s.Name, "values": jsonFloats(s.Values)}
	}
	return out
}

// rangeData returns Range as JSON data.
func (l LineChart) rangeData() map[string]any {
	lo, hi := l.Range()
	return map[string]any{"min": jsonFloat(lo), "max": jsonFloat(hi)}
}

// State returns type, id, title, series (name, values) and range (min,
// max).
func (l LineChart) State() any {
	return map[string]any{
		"type":   "line_chart",
		"id":     l.ID,
		"title":  l.Title,
		"series": l.series(),
		"range":  l.rangeData(),
	}
}

// Tools returns get_points and get_range.
func (s ScatterChart) Tools() []ToolSpec {
	return []ToolSpec{
		readTool("get_points", "Return every series of this scatter chart with its name and its points as x, y pairs (null for a coordinate that is not a finite number).", nil),
		readTool("get_range", "Return the smallest and largest x and y over the points of this scatter chart whose coordinates are both finite numbers.", nil),
	}
}

// CallTool runs get_points or get_range; a chart sends nothing.
func (s ScatterChart) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return chartRead(action, args, map[string]func() any{
		"get_points": func() any { return map[string]any{"series": s.series()} },
		"get_range":  func() any { return s.rangeData() },
	})
}

// series returns the series as JSON data, non-finite coordinates as
// null.
func (s ScatterChart) series() []any {
	out := make([]any, len(s.Series))
	for i, ser := range s.Series {
		pts := make([]any, len(ser.Points))
		for j, p := range ser.Points {
			pts[j] = map[string]any{"x": jsonFloat(p.X), "y": jsonFloat(p.Y)}
		}
		out[i] = map[string]any{"name": ser.Name, "points": pts}
	}
	return out
}

// rangeData returns Range as JSON data.
func (s ScatterChart) rangeData() map[string]any {
	xmin, xmax, ymin, ymax := s.Range()
	return map[string]any{
		"x": map[string]any{"min": jsonFloat(xmin), "max": jsonFloat(xmax)},
		"y": map[string]any{"min": jsonFloat(ymin), "max": jsonFloat(ymax)},
	}
}

// State returns type, id, title, series (name, points of x and y) and
// range (x and y, each min and max).
func (s ScatterChart) State() any {
	return map[string]any{
		"type":   "scatter_chart",
		"id":     s.ID,
		"title":  s.Title,
		"series": s.series(),
		"range":  s.rangeData(),
	}
}
