package ui

import "math"

// This file holds the scrolling the list-like widgets (SelectList, Menu,
// Table, Tree, TextArea) share: windows of rows kept around the
// highlighted one, and the saturating integer arithmetic the scrolling
// and seeking keys need.

// dwPage is the number of rows PgUp/PgDn move in a Table or Tree whose
// Height is 0.
const dwPage = 10

// drawnRows is what a scrolling list (SelectList, Tree, Menu) leaves in
// LocalState.Data: the number of rows it last drew, which its keys page
// by and its clicks map to.
type drawnRows int

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

// windowTop returns the first visible row of a window of h rows over n
// rows: top, moved as little as possible to show row, and kept in range.
func windowTop(top, row, h, n int) int {
	if h <= 0 || n <= h {
		return 0
	}
	row = min(max(row, 0), n-1)
	if row < top {
		top = row
	}
	if row >= top+h {
		top = row - h + 1
	}
	return min(max(top, 0), n-h)
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
