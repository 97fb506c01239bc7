package ui

import (
	"math"
	"strings"

	"charm.land/lipgloss/v2"
)

// This file holds the drawing and hit testing the text fields share:
// lineField is the one-line field of TextInput and PasswordField, and the
// row helpers draw and scroll one row of text with a cursor in it (for
// TextArea too).

// lineField draws and hit-tests the one-line fields, TextInput and
// PasswordField.
type lineField struct {
	label, value, placeholder string
	width                     int
	masked                    bool
	disabled                  bool
}

// edit applies ev to the field's text: a click moves the cursor, keys and
// pastes edit within maxLen runes (zero: DefaultMaxLen). It reports the new
// text and whether it changed; a disabled field ignores everything.
func (f lineField) edit(ev Event, st *LocalState, maxLen int) (string, bool) {
	if f.disabled {
		return f.value, false
	}
	st = stateOrScratch(st)
	if c, ok := ev.(ClickEvent); ok {
		f.click(c, st)
		return f.value, false
	}
	return editText(f.value, ev, st, lenLimit(maxLen, DefaultMaxLen), false, f.masked)
}

// layout returns the label prefix and the width of the text part for a
// widget given w columns.
func (f lineField) layout(w int) (prefix string, fieldW int) {
	if f.width > 0 {
		w = min(w, f.width)
	}
	prefix = fieldLabel(f.label, w)
	return prefix, max(w-lipgloss.Width(prefix), 1)
}

func (f lineField) render(rc RenderContext) string {
	w := max(rc.Width, 1)
	prefix, fieldW := f.layout(w)
	runes := shownRunes([]rune(f.value), f.masked)
	cursor := clampCursor(localOf(rc).Cursor, len(runes))
	showCursor := rc.Focused && !f.disabled
	text, muted := rc.Theme.Normal, rc.Theme.Muted
	if f.disabled {
		text, muted = rc.Theme.Disabled, rc.Theme.Disabled
	}
	var body string
	if len(runes) == 0 && f.placeholder != "" {
		body = drawRow([]rune(cleanLine(f.placeholder)), 0, 0, fieldW, muted, rc.Theme.Highlight, showCursor)
	} else {
		body = drawRow(runes, scrollStart(runes, cursor, fieldW), cursor, fieldW, text, rc.Theme.Highlight, showCursor)
	}
	return clipWidth(styled(controlStyle(rc, f.disabled), prefix)+body, w)
}

// click moves the cursor to the clicked rune. When Width is zero the
// widget's width is unknown here, so the horizontal scroll is taken as
// none: clicks in a text scrolled sideways land approximately.
func (f lineField) click(c ClickEvent, st *LocalState) {
	w := f.width
	if w <= 0 {
		w = math.MaxInt32
	}
	prefix, fieldW := f.layout(w)
	x := c.X - lipgloss.Width(prefix)
	if x < 0 {
		return
	}
	runes := shownRunes([]rune(f.value), f.masked)
	from := scrollStart(runes, clampCursor(st.Cursor, len(runes)), fieldW)
	st.Cursor = runeAtCell(runes, from, x)
}

// fieldLabel returns the "Label: " prefix fitted into a widget w columns
// wide, leaving the text at least half the width (up to 10 columns); it
// returns "" when there is no label or no room.
func fieldLabel(label string, w int) string {
	room := w - min(w/2, 10) - 2
	if label == "" || room < 1 {
		return ""
	}
	l := fitLine(label, room)
	if l == "…" && room < 2 {
		return ""
	}
	return l + ": "
}

// shownRunes returns a copy of runes as drawn: control characters made
// safe, or every rune replaced by "•" when masked.
func shownRunes(runes []rune, masked bool) []rune {
	out := make([]rune, len(runes))
	for i, r := range runes {
		if masked {
			out[i] = '•'
		} else {
			out[i] = shownRune(r)
		}
	}
	return out
}

// scrollStart returns the first rune to draw so that the cursor cell (the
// rune at cursor, or a space after the last rune) is visible in w cells,
// drawing as much as possible before it.
func scrollStart(runes []rune, cursor, w int) int {
	used := 1
	if cursor < len(runes) {
		used = runeCells(runes[cursor])
	}
	s := cursor
	for s > 0 {
		c := runeCells(runes[s-1])
		if used+c > w {
			break
		}
		used += c
		s--
	}
	return s
}

// drawRow draws runes from index from into exactly w cells. When
// showCursor is set, the cursor cell (the rune at cursor, or a space when
// cursor is past the last rune) is drawn with cur, the rest with text.
// Runes that do not fit whole are left out; the row is padded with spaces.
func drawRow(runes []rune, from, cursor, w int, text, cur lipgloss.Style, showCursor bool) string {
	if w <= 0 {
		return ""
	}
	var before, at, after strings.Builder
	used := 0
	for i := max(from, 0); i < len(runes); i++ {
		c := runeCells(runes[i])
		if used+c > w {
			break
		}
		used += c
		switch {
		case !showCursor || i < cursor:
			before.WriteRune(runes[i])
		case i == cursor:
			at.WriteRune(runes[i])
		default:
			after.WriteRune(runes[i])
		}
	}
	if showCursor && cursor >= len(runes) && cursor >= from && used < w {
		at.WriteByte(' ')
	}
	return padCells(styled(text, before.String())+styled(cur, at.String())+styled(text, after.String()), w)
}

// cellsOf returns the cells runes take.
func cellsOf(runes []rune) int {
	n := 0
	for _, r := range runes {
		n += runeCells(r)
	}
	return n
}

// skipCells returns the index of the first rune drawn when the first cells
// cells of runes are scrolled out of view, and the blank cells to draw
// before it where a wide rune was cut.
func skipCells(runes []rune, cells int) (from, pad int) {
	used := 0
	for from < len(runes) && used < cells {
		used += runeCells(runes[from])
		from++
	}
	return from, max(used-cells, 0)
}

// runeAtCell returns the index of the rune drawn at cell x when drawing
// starts at rune from, or len(runes) past the end.
func runeAtCell(runes []rune, from, x int) int {
	if x < 0 {
		return from
	}
	used := 0
	for i := from; i < len(runes); i++ {
		c := runeCells(runes[i])
		if x < used+c {
			return i
		}
		used += c
	}
	return len(runes)
}
