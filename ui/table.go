package ui

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

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

var _ Widget = Table{}

const (
	tableMarkW      = 2  // the "› " selection mark before each row
	tableGap        = 1  // blank cells between columns
	tableHeaderRows = 2  // header line and separator
	dwPage          = 10 // rows moved by PgUp/PgDn when Height is 0
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

// scrollRows is how many of n rows a scrolling widget whose own height
// is want (all when 0) shows where the layout has room for room rows
// (rc.Height less the widget's other lines): more in a Fill, fewer when
// room is short, at least one.
func scrollRows(want, n, room int, rc RenderContext) int {
	h := want
	if h <= 0 || h > n {
		h = n
	}
	if rc.Height > 0 {
		room = max(1, room)
		if rc.Fill {
			h = max(h, min(n, room))
		}
		h = min(h, room)
	}
	return h
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
		return pick(th.Muted).Render(dwTrunc("(no columns)", w))
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
		hb.WriteString(style.Render(dwFit(title, ws[i])))
	}
	lines := []string{
		dwFit(hb.String(), w),
		pick(th.Muted).Render(strings.Repeat("─", w)),
	}
	if len(t.Rows) == 0 {
		lines = append(lines, pick(th.Muted).Render(dwTrunc("(no rows)", w)))
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
		lines = append(lines, style.Render(dwFit(b.String(), w)))
	}
	return dwJoin(lines, w)
}

// The helpers below are shared by the display widgets (Modal, Table, Tree,
// Scrubber, Viewport and the charts). Their dw prefix keeps them apart from
// the other widgets' helpers in this package.

// dwContext returns the theme, local state and width to draw with, filling
// in what a hand-built RenderContext may lack.
func dwContext(rc RenderContext) (*Theme, *LocalState, int) {
	th := rc.Theme
	if th == nil {
		th = DefaultTheme()
	}
	st := rc.Local
	if st == nil {
		st = &LocalState{}
	}
	return th, st, max(rc.Width, 1)
}

// dwClamp limits v to [lo, hi]; an empty range (hi < lo) gives lo.
func dwClamp(v, lo, hi int) int {
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}

// dwSatAdd adds without wrapping around: the sum saturates at the int
// limits.
// moveRow is the highlighted row after a navigation key among n rows: up,
// down, pgup and pgdown (by page), home, end. ok is false for any other
// key. The caller clamps the row.
func moveRow(key string, row, n, page int) (int, bool) {
	switch key {
	case "up":
		return row - 1, true
	case "down":
		return row + 1, true
	case "pgup":
		return dwSatAdd(row, -page), true
	case "pgdown":
		return dwSatAdd(row, page), true
	case "home":
		return 0, true
	case "end":
		return n - 1, true
	}
	return row, false
}

// vimKey maps k and j, which lists and tables also take, to up and down.
func vimKey(key string) string {
	switch key {
	case "k":
		return "up"
	case "j":
		return "down"
	}
	return key
}

func dwSatAdd(a, b int) int {
	c := a + b
	switch {
	case b > 0 && c < a:
		return math.MaxInt
	case b < 0 && c > a:
		return math.MinInt
	}
	return c
}

// dwScroll returns the first visible row of a window of h rows over n that
// keeps row visible, moving off as little as possible.
func dwScroll(off, row, h, n int) int {
	off = dwClamp(off, 0, n-h)
	if row < off {
		off = row
	}
	if h > 0 && row >= off+h {
		off = row - h + 1
	}
	return max(off, 0)
}

// dwClean makes s safe to draw on one line: tabs become spaces up to the
// next multiple of 8 columns, newlines become spaces, other control
// characters (including ESC, so no escape sequences pass) are dropped, and
// invalid UTF-8 becomes U+FFFD.
func dwClean(s string) string {
	clean := utf8.ValidString(s)
	for _, r := range s {
		if !clean || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	col, seg := 0, 0 // columns before b[seg:], where the text since the last tab starts
	for _, r := range s {
		switch {
		case r == '\t':
			col += lineWidth(b.String()[seg:])
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			seg = b.Len()
		case r == '\n':
			b.WriteByte(' ')
		case unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// dwTrunc is [Truncate] with the fast width check.
func dwTrunc(s string, w int) string {
	if w > 0 && lineWidth(s) <= w {
		return s
	}
	return Truncate(s, w)
}

// dwFit cuts s (which may be styled) to w cells with an ellipsis and pads
// it with spaces to exactly w cells.
func dwFit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = dwTrunc(s, w)
	return s + strings.Repeat(" ", max(0, w-lineWidth(s)))
}

// dwJoin joins lines, cutting any line wider than w cells: the last guard
// that keeps a widget within its width whatever the theme does.
func dwJoin(lines []string, w int) string {
	for i, l := range lines {
		lines[i] = dwTrunc(l, w)
	}
	return strings.Join(lines, "\n")
}
