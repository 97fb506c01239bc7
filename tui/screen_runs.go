package tui

import (
	"bytes"
	"sync"

	uv "github.com/charmbracelet/ultraviolet"
)

// Rows changed in separate places.
//
// Ultraviolet's renderer redraws a changed row from its first to its last
// changed cell, every cell between included: it means to skip runs of
// unchanged cells within that range (as ncurses' PutRange does when a run
// is longer than a cursor move), but compares the run against the whole
// range rather than against the cost of a move, so it never does. A box
// whose border changes colour when it gains the focus then costs its
// whole width on every row, where only the two border cells changed.
//
// The screen keeps such rows from reaching the renderer in one piece: a
// row whose changes are runs apart by at least splitGap unchanged cells
// is brought to its new content in steps, one run per render, the row
// holding the new cells up to the end of the run and the old ones after
// it. Each render is an ordinary frame to the renderer (its diff of one
// row from one state to another), so what the terminal shows after the
// last step is the frame; every step is written to the same output before
// it is flushed. The renderer finds the first and last changed cell of a
// step's row, which are the run's.
//
// Only frames of at least minSplitRows changed rows are split, and only
// when the renderer is not looking for scrolled rows in them (rows that
// moved are the scroll's to draw): in practice a frame that restyles
// rows without changing their text.

// minSplitRows is the fewest changed rows a frame needs for its rows to be
// drawn in runs. Splitting costs CPU (a copy of each changed row's cells,
// a comparison, and a render per step, in which the renderer scans the
// row again): it saves bytes, not work. A frame of one or two changed
// rows (a field's text, what an agent's call changes) is drawn whole; a
// frame that restyles a box (the focus moving) saves 61% of its bytes
// (651 against 1,669 in TestFocusedBoxSendsOnlyItsBorder) for 36% more
// CPU (BenchmarkFocusedBox: 289 against 212 µs; 8% more before the
// screen converted colours itself, which made drawing whole cheaper).
const minSplitRows = 3

// splitGap is the fewest unchanged cells between two changed runs of a
// row for them to be drawn apart: a cursor move (CSI row;col H) costs up to
// eight bytes, about what redrawing eight plain cells does.
const splitGap = 8

// rowSplit is one row brought to its new content in steps.
type rowSplit struct {
	y    int
	old  int   // offset of the row's old cells in rowScratch.cells
	new  int   // offset of its new cells
	cuts []int // where each step but the last ends: new cells before, old from there
}

// rowScratch holds the old and new cells of the rows a frame splits, for
// the one frame: it is borrowed from rowScratches and given back when the
// frame has been rendered, so a terminal holds none between frames.
type rowScratch struct {
	cells  []uv.Cell
	splits []rowSplit
	cuts   []int
}

var rowScratches = sync.Pool{New: func() any { return new(rowScratch) }}

// keepOld copies row y of buf (its cells before the frame changes them)
// and returns where the copy starts.
func (r *rowScratch) keepOld(buf *uv.ScreenBuffer, y int) int {
	at := len(r.cells)
	r.cells = append(r.cells, buf.Line(y)...)
	return at
}

// split records row y, whose old cells start at old, if its changes are
// runs apart by at least splitGap unchanged cells, keeping a copy of its
// new cells; otherwise it drops the old cells' copy.
func (r *rowScratch) split(buf *uv.ScreenBuffer, y, old int) {
	line := buf.Line(y)
	prev := r.cells[old : old+len(line)]
	cuts := r.cuts[len(r.cuts):]
	inRun, end, same := false, 0, 0
	for x := range line {
		if line[x].Equal(&prev[x]) {
			same++
			continue
		}
		if inRun && same >= splitGap && cutsCleanly(line, prev, end) {
			cuts = append(cuts, end)
		}
		inRun, end, same = true, x+1, 0
	}
	if len(cuts) == 0 {
		r.cells = r.cells[:old]
		return
	}
	r.cuts = append(r.cuts, cuts...)
	at := len(r.cells)
	r.cells = append(r.cells, line...)
	r.splits = append(r.splits, rowSplit{y: y, old: old, new: at, cuts: cuts})
}

// cutsCleanly reports whether a row made of line's cells before x and
// prev's from x on is a row a terminal can show: no wide character is
// split from its continuation cell. x is an unchanged cell after a run.
func cutsCleanly(line, prev uv.Line, x int) bool {
	return x < len(line) && line[x].Width > 0 && prev[x].Width > 0
}

// steps is how many renders the frame needs.
func (r *rowScratch) steps() int {
	n := 1
	for _, sp := range r.splits {
		n = max(n, len(sp.cuts)+1)
	}
	return n
}

// stage sets the split rows of buf to step k (0-based) and marks them
// touched: new cells before the step's cut, old ones from there; the
// last step leaves the frame. Step 0 starts from the frame, each later
// step from the one before.
func (r *rowScratch) stage(buf *uv.ScreenBuffer, k int) {
	for _, sp := range r.splits {
		if k > len(sp.cuts) {
			continue // done in an earlier step
		}
		line := buf.Line(sp.y)
		w := len(line)
		to := w
		if k < len(sp.cuts) {
			to = sp.cuts[k]
		}
		if k == 0 {
			copy(line[to:], r.cells[sp.old+to:sp.old+w])
		} else {
			from := sp.cuts[k-1]
			copy(line[from:to], r.cells[sp.new+from:sp.new+to])
		}
		buf.TouchLine(0, sp.y, w)
	}
}

// release gives the scratch back, holding no cells.
func (r *rowScratch) release() {
	clear(r.cells)
	r.cells, r.splits, r.cuts = r.cells[:0], r.splits[:0], r.cuts[:0]
	rowScratches.Put(r)
}

// renderSteps renders buf, whose split rows r recorded, one run of each
// split row per render.
func (s *screen) renderSteps(buf *uv.ScreenBuffer, r *rowScratch) {
	n := r.steps()
	for k := range n {
		if n > 1 {
			r.stage(buf, k)
		}
		s.scr.Render(buf.RenderBuffer)
	}
}

// sameText reports whether two lines show the same characters in the same
// cells, whatever their styles: both are plain text and SGR sequences
// only (OSC sequences too, a hyperlink say), and what is left of them is
// the same. A line with any other sequence or a control character may
// move what follows it, and is never the same text.
func sameText(a, b string, scratch *[2][]byte) bool {
	ta, ok := plainText(a, scratch[0][:0])
	if !ok {
		return false
	}
	tb, ok := plainText(b, scratch[1][:0])
	scratch[0], scratch[1] = ta, tb
	return ok && bytes.Equal(ta, tb)
}

// plainText appends the characters of line to dst, without its SGR and
// OSC sequences; ok is false if it has anything else that is not a
// printable character.
func plainText(line string, dst []byte) ([]byte, bool) {
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == 0x1b && i+1 < len(line) && line[i+1] == '[':
			j := i + 2
			for j < len(line) && (line[j] >= '0' && line[j] <= '9' || line[j] == ';' || line[j] == ':') {
				j++
			}
			if j >= len(line) || line[j] != 'm' {
				return dst, false
			}
			i = j + 1
		case c == 0x1b && i+1 < len(line) && line[i+1] == ']':
			j := i + 2
			for j < len(line) && line[j] != 0x07 && line[j] != 0x1b {
				j++
			}
			switch {
			case j < len(line) && line[j] == 0x07:
				i = j + 1
			case j+1 < len(line) && line[j+1] == '\\':
				i = j + 2
			default:
				return dst, false
			}
		case c < 0x20 || c == 0x7f:
			return dst, false
		case c == 0xc2 && i+1 < len(line) && line[i+1] >= 0x80 && line[i+1] <= 0x9f:
			return dst, false // a C1 control
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst, true
}
