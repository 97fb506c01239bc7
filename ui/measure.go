package ui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// This file holds the text measuring, cleaning and fitting that the
// renderer and the widgets share.

// Truncate cuts s to at most w cells, marking the cut with an ellipsis.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lineWidth(s) <= w {
		return s
	}
	if w == 1 {
		return "…"
	}
	return ansi.Truncate(s, w-1, "") + "…"
}

// lineWidth is the number of cells one line of styled text takes. ASCII
// text with CSI sequences (colors, attributes), the common case, is
// measured without grapheme segmentation.
func lineWidth(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			n++
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			i += 2
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
		case c == 0xe2 && i+2 < len(s) && oneCell(s[i+1], s[i+2]):
			// A box-drawing or block character (borders, rules, bars):
			// one cell, and nothing joins it to what came before.
			n++
			i += 2
		default:
			return ansi.StringWidth(s)
		}
	}
	return n
}

// oneCell reports whether the three-byte UTF-8 sequence 0xe2 b1 b2 is a
// rune of U+2500–U+259F (box drawing, block elements) or the bullet and
// ellipsis (U+2022, U+2026): drawn one cell wide, and never part of a
// grapheme cluster with the rune before it. A combining mark or joiner
// after one is not on the fast path, so the whole line is then measured
// in full.
func oneCell(b1, b2 byte) bool {
	switch b1 {
	case 0x94, 0x95: // U+2500–U+257F
		return b2 >= 0x80 && b2 <= 0xbf
	case 0x96: // U+2580–U+259F
		return b2 >= 0x80 && b2 <= 0x9f
	case 0x80: // U+2022, U+2026
		return b2 == 0xa2 || b2 == 0xa6
	}
	return false
}

// padLine pads or cuts one line to exactly w cells.
func padLine(l string, w int) string {
	lw := lineWidth(l)
	if lw > w {
		l = ansi.Truncate(l, w, "")
		lw = lineWidth(l)
	}
	if lw < w {
		return l + strings.Repeat(" ", w-lw)
	}
	return l
}

// clipWidth cuts every line of the styled string s to at most w cells, a
// last guard against grapheme clusters that are wider than their runes.
func clipWidth(s string, w int) string {
	w = max(w, 1)
	if lipgloss.Width(s) <= w {
		return s
	}
	return Paint(lipgloss.NewStyle().MaxWidth(w), s)
}

// cleanLine makes app text safe to draw on one line: line breaks and tabs
// become spaces and other control characters (which could smuggle
// terminal escape sequences) become U+FFFD.
func cleanLine(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(shownRune, s)
}

// shownRune returns the rune drawn for r: whitespace controls become a
// space, other control characters U+FFFD.
func shownRune(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return ' '
	case unicode.IsControl(r):
		return '\uFFFD'
	default:
		return r
	}
}

// runeCells returns the number of terminal cells r takes when drawn;
// control characters count as the one cell of what [shownRune] draws.
func runeCells(r rune) int {
	if r < 0x7f && r >= 0x20 || unicode.IsControl(r) {
		return 1
	}
	return lipgloss.Width(string(r))
}

// fitLine makes the app text s safe to draw on one line (see cleanLine)
// and truncates it to w cells like Truncate, without measuring more of a
// long s than it needs.
func fitLine(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if len(s) > 4*w+16 {
		s = cutCells(s, 2*w+8)
	}
	return Truncate(cleanLine(s), w)
}

// cutCells returns the longest prefix of the plain string s that fits in
// n cells.
func cutCells(s string, n int) string {
	used := 0
	for i, r := range s {
		used += runeCells(r)
		if used > n {
			return s[:i]
		}
	}
	return s
}

// padCells pads the styled string s with spaces to w cells.
func padCells(s string, w int) string {
	if n := w - lipgloss.Width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// styled renders s with st, or returns "" for an empty s.
func styled(st lipgloss.Style, s string) string {
	if s == "" {
		return ""
	}
	return Paint(st, s)
}

// The dw helpers below came with the display widgets (Modal, Table, Tree,
// Scrubber, Viewport and the charts), which draw with them; their dw
// prefix keeps them apart from the helpers above.

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
