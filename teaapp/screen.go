package teaapp

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Bounds on what a program's view may hand the screen.
const (
	maxLines     = 1000 // lines of one view
	maxLineBytes = 8192 // bytes of one line, escapes included
)

// ScreenID is the widget id of a hosted program's screen.
const ScreenID = "program"

// screen is the root of a hosted program's tree: its view, cleaned, and
// the components it shows. It is immutable once built.
type screen struct {
	lines   []string // the view's lines: SGR and OSC 8 only
	widths  []int    // the cells each of lines takes
	printed []string // lines the program printed, oldest first
	w, h    int      // the size the program is drawn at
	comps   []ui.Widget
	focus   string
	owner   bool   // the owner's window decides the size (else the smallest)
	gen     uint64 // which build of the host's this is (never 0)
	mouse   bool   // the view asked for mouse events (tea.View.MouseMode)
	alt     bool   // the view is in the alternate screen (tea.View.AltScreen)
	cursor  *cell
}

// Cursor implements ui.CursorOwner: the real cursor the view places
// (tea.View.Cursor), in the view's cells. In each terminal the printed
// lines drawn above the view push it down (Render counts them in its local
// state's Offset) and only the view's rows it shows can hold it (Row).
func (s screen) Cursor() (x, y int, ok bool) {
	if s.cursor == nil || s.cursor.X < 0 || s.cursor.Y < 0 || s.cursor.X >= s.w || s.cursor.Y >= s.h {
		return 0, 0, false
	}
	return s.cursor.X, s.cursor.Y, true
}

// AltScreen reports whether the program draws in the alternate screen: its
// last view then goes with it when the session ends, as it would from a
// terminal of its own.
func (s screen) AltScreen() bool { return s.alt }

var (
	_ ui.Hosted      = screen{}
	_ ui.Widget      = screen{}
	_ ui.Unchanging  = screen{}
	_ ui.CursorOwner = screen{}
)

// Unchanged implements ui.Unchanging: the host hands out the same build
// of its screen while the view and the components stay the same.
func (s screen) Unchanged(prev ui.Node) bool {
	p, ok := prev.(screen)
	return ok && p.gen == s.gen
}

// Children are the components: the tree's widgets for tools and state.
func (s screen) Children() []ui.Node {
	out := make([]ui.Node, len(s.comps))
	for i, w := range s.comps {
		out[i] = w
	}
	return out
}

// Focused implements ui.Hosted: the component with the program's focus.
func (s screen) Focused() string { return s.focus }

// WidgetID implements ui.Widget.
func (s screen) WidgetID() string { return ScreenID }

// Focusable is false: keys reach the program as keys no widget takes.
func (s screen) Focusable() bool { return false }

// HandleEvent turns a click into the program's own mouse messages when
// its view asked for mouse events (a press and a release, at the cell of
// the view clicked: the printed lines drawn above it, which Render counts
// in st.Offset for this terminal, are not the program's); keys reach the
// program as keys no widget takes.
func (s screen) HandleEvent(ev ui.Event, st *ui.LocalState) []tea.Msg {
	c, ok := ev.(ui.ClickEvent)
	if !ok || !s.mouse {
		return nil
	}
	y := c.Y - st.Offset
	if y < 0 || y >= s.h || c.X < 0 || c.X >= s.w {
		return nil
	}
	m := tea.Mouse{X: c.X, Y: y, Button: tea.MouseLeft}
	return []tea.Msg{tea.MouseClickMsg(m), tea.MouseReleaseMsg(m)}
}

// Render draws the view in the terminal's rectangle: lines the program
// printed above it where there is room, cropped to the rectangle, with a
// note when the terminal shows less than the program draws, or pads it.
func (s screen) Render(rc ui.RenderContext) string {
	w := max(rc.Width, 1)
	h := rc.Height
	if h <= 0 {
		h = s.h
	}
	view := s.lines
	if len(view) > s.h {
		view = view[:s.h]
	}
	cropped := len(view) > h || s.w > w
	rows := h
	if cropped && rows > 1 {
		rows-- // the note's line
	}
	var out []string
	if room := rows - len(view); room > 0 && len(s.printed) > 0 {
		p := s.printed
		if len(p) > room {
			p = p[len(p)-room:]
		}
		out = append(out, p...)
	}
	if rc.Local != nil {
		rc.Local.Offset = len(out) // where the view starts, for clicks and the cursor
	}
	for i, l := range out { // printed lines
		if ansi.StringWidth(l) > w {
			out[i] = ansi.Truncate(l, w, "")
		}
	}
	for i, l := range view {
		if len(out) >= rows {
			break
		}
		wide := false
		if i < len(s.widths) {
			wide = s.widths[i] > w
		} else {
			wide = ansi.StringWidth(l) > w
		}
		if wide {
			l = ansi.Truncate(l, w, "")
		}
		out = append(out, l)
	}
	if rc.Local != nil {
		rc.Local.Row = len(out) - rc.Local.Offset // the view's rows shown, for the cursor
	}
	who := "the owner's window"
	if !s.owner {
		who = "the smallest window"
	}
	switch {
	case cropped:
		note := fmt.Sprintf("⋯ the program is drawn at %dx%d (%s); this terminal shows %dx%d of it", s.w, s.h, who, w, h)
		out = append(out, ui.Truncate(note, w))
	case rc.Height > 0 && (s.w < w || s.h < h) && len(out) < h:
		// A terminal larger than the program pads it, and says so on
		// its last row (a rendering without a height, the last view
		// left on the screen, has none).
		for len(out) < h-1 {
			out = append(out, "")
		}
		note := fmt.Sprintf("⋯ the program is drawn at %dx%d (%s); this terminal is %dx%d", s.w, s.h, who, w, h)
		out = append(out, ui.Truncate(note, w))
	}
	return strings.Join(out, "\n")
}

// viewText is a view split into what the screen keeps of it: at most
// maxLines lines, each as the program drew it (raw, a substring of its
// view), cleaned (cleanLine, what the screen draws), the cells it takes
// and its text without styling (what finding components looks at). The
// slices are never changed once made: screens share them.
type viewText struct {
	raw, lines, plain []string
	widths            []int
}

// splitView splits content (see viewText), taking from prev, the last
// view's, every line that is the same at the same row: a key changes a
// line or two of a view, and cleaning and measuring a line is most of
// the work.
func splitView(content string, prev *viewText) viewText {
	raw := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	if len(raw) > maxLines {
		raw = raw[:maxLines]
	}
	v := viewText{raw: raw, lines: make([]string, len(raw)), plain: make([]string, len(raw)), widths: make([]int, len(raw))}
	for i, l := range raw {
		if prev != nil && i < len(prev.raw) && prev.raw[i] == l {
			v.lines[i], v.widths[i], v.plain[i] = prev.lines[i], prev.widths[i], prev.plain[i]
			continue
		}
		v.lines[i], v.plain[i], v.widths[i] = cleanParts(l)
	}
	return v
}

// text is the view without styling, its lines joined: the screen in
// which components are looked for (shown).
func (v *viewText) text() string { return strings.Join(v.plain, "\n") }

// cleanLine keeps of a line of a program's view only what may reach a
// terminal: printable text, SGR styling (CSI … m) and OSC 8 hyperlinks.
// Every other escape sequence (screen clears, cursor moves, the
// clipboard, titles, modes) and every control character is removed; a
// tab becomes spaces to the next multiple of 8. Nothing it keeps can
// move the cursor or draw outside the line.
func cleanLine(l string) string {
	c, _, _ := cleanParts(l)
	return c
}

// cleanParts is cleanLine, with the clean line's text without styling
// (ansi.Strip of it) and the cells it takes (ansi.StringWidth of it),
// both from the same pass where its text is ASCII (where the text is
// not, the width is measured again: dropping what lies between two
// characters may join them into one).
func cleanParts(l string) (clean, plain string, width int) {
	if len(l) > maxLineBytes {
		l = l[:maxLineBytes]
	}
	if plainLine(l) {
		return l, l, len(l) // most lines: nothing to take out
	}
	var b, p strings.Builder
	b.Grow(len(l))
	p.Grow(len(l))
	var state byte
	col := 0
	ascii := true
	for len(l) > 0 {
		seq, w, n, next := ansi.DecodeSequence(l, state, nil)
		state = next
		if n <= 0 {
			break
		}
		l = l[n:]
		switch {
		case w > 0:
			if len(seq) != 1 {
				ascii = false
			}
			if !strings.ContainsFunc(seq, unsafeRune) {
				b.WriteString(seq)
				p.WriteString(seq)
				col += w
			}
		case seq == "\t":
			pad := 8 - col%8
			b.WriteString(spaces[:pad])
			p.WriteString(spaces[:pad])
			col += pad
		case isSGR(seq), isHyperlink(seq):
			b.WriteString(seq)
		}
	}
	if state != ansi.NormalState {
		// An unterminated sequence at the end: dropped with the rest.
		b.WriteString(ansi.ResetStyle)
	}
	clean, plain = b.String(), p.String()
	if !ascii {
		col = ansi.StringWidth(clean)
	}
	return clean, plain, col
}

// spaces are the spaces a tab becomes (at most 8).
const spaces = "        "

// plainLine reports whether l is printable ASCII only: kept as it is.
func plainLine(l string) bool {
	for i := 0; i < len(l); i++ {
		if c := l[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// isSGR reports whether seq is a CSI … m sequence (7-bit: ESC [).
func isSGR(seq string) bool {
	if !strings.HasPrefix(seq, "\x1b[") || !strings.HasSuffix(seq, "m") {
		return false
	}
	for _, r := range seq[2 : len(seq)-1] {
		if !(r >= '0' && r <= '9' || r == ';' || r == ':') {
			return false
		}
	}
	return true
}

// isHyperlink reports whether seq is an OSC 8 hyperlink (7-bit, ended by
// BEL or ST) whose text holds no control character.
func isHyperlink(seq string) bool {
	body, ok := strings.CutPrefix(seq, "\x1b]8;")
	if !ok {
		return false
	}
	switch {
	case strings.HasSuffix(body, "\x07"):
		body = body[:len(body)-1]
	case strings.HasSuffix(body, "\x1b\\"):
		body = body[:len(body)-2]
	default:
		return false
	}
	return len(body) <= 2048 && !strings.ContainsFunc(body, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
}

// unsafeRune reports a rune that must not reach a terminal inside text:
// C1 controls, bidi overrides and isolates.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// cell is a position in the program's rectangle.
type cell struct{ X, Y int }
