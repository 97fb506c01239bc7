package ui

import (
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// TableColumn describes one column of a [Table]. (It is not named Column,
// which is the vertical layout node.)
type TableColumn struct {
	// Key identifies the column in [TableSorted] messages and in
	// [Table.SortColumn].
	Key string
	// Title is the header text.
	Title string
	// Width is the column's width in cells. Zero (or less) shares the width
	// left over by the fixed-width columns equally.
	Width int
}

// Table is a grid of text cells under a header line, with a selected row
// and sorting by column.
//
// Keys: Up/Down (k/j), PgUp/PgDn (by the rows last drawn; before the first
// drawing by Height, 10 when Height is 0) and
// Home/End move the local highlight (LocalState.Row); Left/Right move the
// highlighted column (LocalState.Col); Enter or Space send [RowSelected]
// for the highlighted row; 's' sends [TableSorted] for the highlighted
// column, flipping to descending when the table is already sorted
// ascending by it. A click on the header line sorts by the clicked column,
// a click on a body row highlights and selects it.
type Table struct {
	// ID identifies the widget in its tree.
	ID string
	// Columns are the table's columns, left to right.
	Columns []TableColumn
	// Rows holds the cells of each row in column order. A row may have
	// fewer cells than there are columns (the rest are blank) or more (the
	// extra cells are not shown).
	Rows [][]string
	// Selected is the index of the selected row, or -1 for none.
	Selected int
	// SortColumn is the key of the column the rows are sorted by, or "".
	SortColumn string
	// SortDirection is [SortAsc] or [SortDesc].
	SortDirection string
	// Height is the number of body rows shown at once; 0 shows them all.
	// Fewer are shown where the layout has no room for them
	// ([RenderContext.Height]), more in a [Fill] with room; the
	// highlighted row stays in view either way.
	Height int
	// Disabled makes the table ignore input and drawn in the disabled style.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = Table{}
	_ ToolProvider = Table{}
)

const (
	tableMarkW      = 2 // the "› " selection mark before each row
	tableGap        = 1 // blank cells between columns
	tableHeaderRows = 2 // header line and separator
	// dwFallbackWidth lays out clicks that arrive before the widget was
	// ever rendered.
	dwFallbackWidth = 80
)

// tableLayout is what a Table's last render left in LocalState.Data, so
// that clicks map to the columns and rows the user saw.
type tableLayout struct{ width, rows int }

// Children returns nil: a table has no child nodes.
func (Table) Children() []Node { return nil }

// WidgetID returns the table's id.
func (t Table) WidgetID() string { return t.ID }

// Focusable reports whether the table is enabled.
func (t Table) Focusable() bool { return !t.Disabled }

// window clamps st (row, column, offset) to the current rows and columns,
// scrolling the offset so that the highlighted row is visible among the
// rows last drawn, and returns their number.
func (t Table) window(st *LocalState) int {
	h := t.Height
	if l, ok := st.Data.(tableLayout); ok && l.rows > 0 {
		h = l.rows
	}
	return t.windowOf(st, h)
}

// windowOf is window for h body rows (all when h is 0).
func (t Table) windowOf(st *LocalState, h int) int {
	n := len(t.Rows)
	st.Col = dwClamp(st.Col, 0, len(t.Columns)-1)
	st.Row = dwClamp(st.Row, 0, n-1)
	if h <= 0 || h > n {
		h = n
	}
	st.Offset = dwScroll(st.Offset, st.Row, h, n)
	return h
}

// bodyRows is the number of body rows drawn in rc: Height (all when 0),
// as many as there is room for in a Fill, never more than rc.Height has
// room for (but at least one).
func (t Table) bodyRows(rc RenderContext) int {
	return scrollRows(t.Height, len(t.Rows), rc.Height-tableHeaderRows, rc)
}

// sorted is the message asking to sort by column i.
func (t Table) sorted(i int) TableSorted {
	key := t.Columns[i].Key
	dir := SortAsc
	if t.SortColumn == key && t.SortDirection == SortAsc {
		dir = SortDesc
	}
	return TableSorted{ID: t.ID, Column: key, Direction: dir}
}

// columns returns the start cell and width of each column at the given
// total width.
func (t Table) columns(width int) (xs, ws []int) {
	n := len(t.Columns)
	xs, ws = make([]int, n), make([]int, n)
	fixed, shared, lastShared := 0, 0, -1
	for i, c := range t.Columns {
		if c.Width > 0 {
			fixed = dwSatAdd(fixed, min(c.Width, width))
		} else {
			shared++
			lastShared = i
		}
	}
	rest := max(0, width-tableMarkW-tableGap*(n-1)-fixed)
	x := tableMarkW
	for i, c := range t.Columns {
		w := min(c.Width, width)
		if c.Width <= 0 {
			w = rest / shared
			if i == lastShared {
				w = rest - w*(shared-1)
			}
			w = max(w, 1)
		}
		xs[i], ws[i] = x, w
		x += w + tableGap
	}
	return xs, ws
}

// HandleEvent moves the highlight, selects rows and asks for sorting; see
// [Table].
func (t Table) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	if t.Disabled || len(t.Rows) == 0 || len(t.Columns) == 0 {
		return nil
	}
	if st == nil {
		st = &LocalState{}
	}
	h := t.window(st)
	switch ev := ev.(type) {
	case tea.KeyPressMsg:
		page := t.Height
		if page <= 0 {
			page = dwPage
		}
		if _, drawn := st.Data.(tableLayout); drawn {
			page = h
		}
		if r, ok := moveRow(vimKey(ev.String()), st.Row, len(t.Rows), page); ok {
			st.Row = r
			t.window(st)
			return nil
		}
		switch ev.String() {
		case "left":
			st.Col--
		case "right":
			st.Col++
		case "enter", "space":
			return []tea.Msg{RowSelected{ID: t.ID, Index: st.Row}}
		case "s":
			return []tea.Msg{t.sorted(st.Col)}
		default:
			return nil
		}
		t.window(st)
		return nil
	case ClickEvent:
		switch {
		case ev.Y == 0:
			width := dwFallbackWidth
			if l, ok := st.Data.(tableLayout); ok {
				width = l.width
			}
			if ev.X >= width {
				return nil
			}
			xs, ws := t.columns(width)
			for i := range xs {
				if ev.X >= xs[i] && ev.X < xs[i]+ws[i]+tableGap {
					st.Col = i
					return []tea.Msg{t.sorted(i)}
				}
			}
		case ev.Y >= tableHeaderRows && ev.Y-tableHeaderRows < h:
			st.Row = st.Offset + ev.Y - tableHeaderRows
			t.window(st)
			return []tea.Msg{RowSelected{ID: t.ID, Index: st.Row}}
		}
	}
	return nil
}

// Render draws the header, a separator and the visible body rows.
func (t Table) Render(rc RenderContext) string {
	th, st, w := dwContext(rc)
	h := t.bodyRows(rc)
	st.Data = tableLayout{width: w, rows: h}
	pick := func(s lipgloss.Style) lipgloss.Style {
		if t.Disabled {
			return th.Disabled
		}
		return s
	}
	if len(t.Columns) == 0 {
		return Paint(pick(th.Muted), dwTrunc("(no columns)", w))
	}
	t.windowOf(st, h)
	h = min(h, len(t.Rows))
	xs, ws := t.columns(w)
	focused := rc.Focused && !t.Disabled

	var hb strings.Builder
	hb.WriteString(strings.Repeat(" ", tableMarkW))
	for i, c := range t.Columns {
		if xs[i] >= w {
			break
		}
		if i > 0 {
			hb.WriteString(strings.Repeat(" ", tableGap))
		}
		title := dwClean(c.Title)
		if t.SortColumn != "" && c.Key == t.SortColumn && ws[i] >= 3 {
			arrow := "▲"
			if t.SortDirection == SortDesc {
				arrow = "▼"
			}
			title = dwTrunc(title, ws[i]-2) + " " + arrow
		}
		style := pick(th.Title)
		if focused && i == st.Col {
			style = th.Focused.Underline(true)
		}
		hb.WriteString(Paint(style, dwFit(title, ws[i])))
	}
	lines := []string{
		dwFit(hb.String(), w),
		Paint(pick(th.Muted), strings.Repeat("─", w)),
	}
	if len(t.Rows) == 0 {
		lines = append(lines, Paint(pick(th.Muted), dwTrunc("(no rows)", w)))
		return dwJoin(lines, w)
	}
	for i := st.Offset; i < st.Offset+h; i++ {
		var b strings.Builder
		if i == t.Selected {
			b.WriteString("› ")
		} else {
			b.WriteString("  ")
		}
		row := t.Rows[i]
		for j := range t.Columns {
			if xs[j] >= w {
				break
			}
			if j > 0 {
				b.WriteString(strings.Repeat(" ", tableGap))
			}
			cell := ""
			if j < len(row) {
				cell = dwClean(row[j])
			}
			b.WriteString(dwFit(cell, ws[j]))
		}
		style := th.Normal
		switch {
		case t.Disabled:
			style = th.Disabled
		case focused && i == st.Row && i == t.Selected:
			style = th.Highlight.Bold(true)
		case focused && i == st.Row:
			style = th.Highlight
		case i == t.Selected:
			style = th.Selected
		}
		lines = append(lines, Paint(style, dwFit(b.String(), w)))
	}
	return dwJoin(lines, w)
}

// ---- MCP tools ----

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
