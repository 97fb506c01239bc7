package ui

import (
	"math"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// TextInput is a one-line text field. It sends [TextInputChanged] with the
// whole new text after every edit; the app copies it back into Value.
//
// Keys: printable keys insert at the cursor (LocalState.Cursor, in runes),
// Backspace and Delete remove, Left/Right move, Home/End and ctrl+a/ctrl+e
// jump to the ends, and the readline keys (ctrl+u, ctrl+k, ctrl+w, alt+b,
// alt+f, alt+backspace, alt+d; see readline.go) kill and move. A paste is inserted at the cursor with line breaks
// turned into spaces. A click moves the cursor.
type TextInput struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is drawn before the field as "Label: "; empty draws none.
	Label string
	// Value is the current text.
	Value string
	// Placeholder is drawn, muted, while Value is empty.
	Placeholder string
	// Width is the number of columns the widget takes, label included;
	// zero (or more than is available) means all of the available width.
	Width int
	// MaxLen caps Value, in runes; zero means [DefaultMaxLen].
	MaxLen int
	// Disabled greys the field out and ignores input.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var _ Widget = TextInput{}

// Children returns nil: a text input has no children.
func (TextInput) Children() []Node { return nil }

// WidgetID returns the field's id.
func (t TextInput) WidgetID() string { return t.ID }

// Focusable reports whether the field is enabled.
func (t TextInput) Focusable() bool { return !t.Disabled }

// HandleEvent edits the text, sending [TextInputChanged] when it changed.
func (t TextInput) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	v, changed := t.field().edit(ev, st, t.MaxLen)
	if !changed {
		return nil
	}
	return []tea.Msg{TextInputChanged{ID: t.ID, Text: v}}
}

// Render draws the label and the text, scrolled horizontally so that the
// cursor stays visible; the cursor cell is in reverse video while focused.
func (t TextInput) Render(rc RenderContext) string { return t.field().render(rc) }

func (t TextInput) field() lineField {
	return lineField{label: t.Label, value: t.Value, placeholder: t.Placeholder, width: t.Width, disabled: t.Disabled}
}

// PasswordField is a one-line secret field. It edits like [TextInput] and
// sends [PasswordFieldChanged], but never draws its text: each rune shows
// as "•". Its word keys (alt+b, ctrl+w...) take the secret as one word,
// so the cursor never shows where its spaces are. Its String and GoString methods do not reveal Value either.
type PasswordField struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is drawn before the field as "Label: "; empty draws none.
	Label string
	// Value is the current secret text.
	Value string
	// Placeholder is drawn, muted, while Value is empty.
	Placeholder string
	// Width is the number of columns the widget takes, label included;
	// zero (or more than is available) means all of the available width.
	Width int
	// MaxLen caps Value, in runes; zero means [DefaultMaxLen].
	MaxLen int
	// Disabled greys the field out and ignores input.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var _ Widget = PasswordField{}

// Children returns nil: a password field has no children.
func (PasswordField) Children() []Node { return nil }

// WidgetID returns the field's id.
func (p PasswordField) WidgetID() string { return p.ID }

// Focusable reports whether the field is enabled.
func (p PasswordField) Focusable() bool { return !p.Disabled }

// HandleEvent edits the text, sending [PasswordFieldChanged] when it
// changed.
func (p PasswordField) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	v, changed := p.field().edit(ev, st, p.MaxLen)
	if !changed {
		return nil
	}
	return []tea.Msg{PasswordFieldChanged{ID: p.ID, Text: v}}
}

// Render draws the label and one "•" per rune of the text.
func (p PasswordField) Render(rc RenderContext) string { return p.field().render(rc) }

// String describes the field without revealing its text, so that logging
// it is safe.
func (p PasswordField) String() string {
	return "ui.PasswordField{ID:" + p.ID + " Label:" + p.Label + " Value:[redacted]}"
}

// GoString is like String, for the %#v verb.
func (p PasswordField) GoString() string { return p.String() }

func (p PasswordField) field() lineField {
	return lineField{label: p.Label, value: p.Value, placeholder: p.Placeholder, width: p.Width, masked: true, disabled: p.Disabled}
}

// TextArea is a multi-line text field showing Height lines. It edits like
// [TextInput] and sends [TextAreaChanged]; in addition Enter inserts a line
// break, a paste keeps its line breaks, Up/Down move between lines keeping
// the column when the line is long enough, and Home/End (ctrl+a/ctrl+e)
// jump to the ends of the cursor's line, as ctrl+u/ctrl+k kill within it.
// LocalState.Offset is the first
// visible line.
type TextArea struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is drawn on a line of its own above the text; empty draws
	// none.
	Label string
	// Value is the current text, lines separated by "\n".
	Value string
	// Placeholder is drawn, muted, while Value is empty.
	Placeholder string
	// Width is the number of columns the widget takes; zero (or more than
	// is available) means all of the available width.
	Width int
	// Height is the number of visible text lines; zero means 4. It is
	// capped at 1000.
	Height int
	// MaxLen caps Value, in runes; zero means 4 × [DefaultMaxLen].
	MaxLen int
	// Disabled greys the field out and ignores input.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var _ Widget = TextArea{}

// maxVisibleRows caps the rows a widget draws for its Height field, so a
// huge Height cannot make rendering allocate without bound.
const maxVisibleRows = 1000

// Children returns nil: a text area has no children.
func (TextArea) Children() []Node { return nil }

// WidgetID returns the field's id.
func (t TextArea) WidgetID() string { return t.ID }

// Focusable reports whether the field is enabled.
func (t TextArea) Focusable() bool { return !t.Disabled }

func (t TextArea) height() int {
	if t.Height <= 0 {
		return 4
	}
	return min(t.Height, maxVisibleRows)
}

// HandleEvent edits the text, sending [TextAreaChanged] when it changed,
// and scrolls to keep the cursor's line visible.
func (t TextArea) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	if t.Disabled {
		return nil
	}
	st = stateOrScratch(st)
	if c, ok := ev.(ClickEvent); ok {
		t.click(c, st)
		return nil
	}
	v, changed := editText(t.Value, ev, st, lenLimit(t.MaxLen, 4*DefaultMaxLen), true, false)
	lines := splitLines([]rune(v))
	st.Offset = windowTop(st.Offset, lines.lineOf(st.Cursor), t.height(), len(lines.starts))
	if !changed {
		return nil
	}
	return []tea.Msg{TextAreaChanged{ID: t.ID, Text: v}}
}

// Render draws the label line, then Height lines of text scrolled to keep
// the cursor visible; the cursor cell is in reverse video while focused.
func (t TextArea) Render(rc RenderContext) string {
	w := max(rc.Width, 1)
	if t.Width > 0 {
		w = min(w, t.Width)
	}
	h := t.height()
	var out []string
	if t.Label != "" {
		out = append(out, controlStyle(rc, t.Disabled).Render(fitLine(t.Label, w)))
	}
	runes := []rune(t.Value)
	cursor := clampCursor(localOf(rc).Cursor, len(runes))
	showCursor := rc.Focused && !t.Disabled
	text, muted := rc.Theme.Normal, rc.Theme.Muted
	if t.Disabled {
		text, muted = rc.Theme.Disabled, rc.Theme.Disabled
	}
	blank := strings.Repeat(" ", w)

	if len(runes) == 0 && t.Placeholder != "" {
		ph := []rune(cleanLine(t.Placeholder))
		out = append(out, drawRow(ph, 0, 0, w, muted, rc.Theme.Highlight, showCursor))
		for range h - 1 {
			out = append(out, blank)
		}
		return clipWidth(strings.Join(out, "\n"), w)
	}

	lines := splitLines(runes)
	li := lines.lineOf(cursor)
	col := cursor - lines.starts[li]
	top := windowTop(localOf(rc).Offset, li, h, len(lines.starts))
	cur := shownRunes(lines.line(runes, li), false)
	startCells := cellsOf(cur[:scrollStart(cur, col, w)])
	for i := top; i < top+h; i++ {
		if i >= len(lines.starts) {
			out = append(out, blank)
			continue
		}
		disp := shownRunes(lines.line(runes, i), false)
		from, pad := skipCells(disp, startCells)
		row := strings.Repeat(" ", pad) + drawRow(disp, from, col, w-pad, text, rc.Theme.Highlight, showCursor && i == li)
		out = append(out, row)
	}
	return clipWidth(strings.Join(out, "\n"), w)
}

// click moves the cursor to the clicked rune. When Width is zero the
// widget's width is unknown here, so the horizontal scroll is taken as
// none: clicks in a text scrolled sideways land approximately.
func (t TextArea) click(c ClickEvent, st *LocalState) {
	y := c.Y
	if t.Label != "" {
		y--
	}
	if y < 0 {
		return
	}
	runes := []rune(t.Value)
	cursor := clampCursor(st.Cursor, len(runes))
	lines := splitLines(runes)
	li := lines.lineOf(cursor)
	top := windowTop(st.Offset, li, t.height(), len(lines.starts))
	w := t.Width
	if w <= 0 {
		w = math.MaxInt32
	}
	cur := shownRunes(lines.line(runes, li), false)
	startCells := cellsOf(cur[:scrollStart(cur, cursor-lines.starts[li], w)])
	target := min(top+y, len(lines.starts)-1)
	disp := shownRunes(lines.line(runes, target), false)
	from, pad := skipCells(disp, startCells)
	st.Cursor = lines.starts[target] + runeAtCell(disp, from, c.X-pad)
	st.Offset = top
}

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

// editText applies a key press or paste to value, the text of an editing
// widget whose cursor is st.Cursor (clamped here). It moves the cursor and
// returns the new value and whether it changed. The value never grows
// beyond maxLen runes, and a paste adds at most [DefaultMaxLen] runes.
// multiline enables Enter, Up and Down, keeps pasted line breaks and makes
// Home/End work on the cursor's line. The readline keys (readline.go) edit
// too; secret makes the whole text one word for them.
func editText(value string, ev Event, st *LocalState, maxLen int, multiline, secret bool) (string, bool) {
	runes := []rune(value)
	cur := clampCursor(st.Cursor, len(runes))
	st.Cursor = cur
	insert := func(text string, limit int) (string, bool) {
		ins := cleanInput(text, min(limit, maxLen-len(runes)), multiline)
		if len(ins) == 0 {
			return value, false
		}
		out := make([]rune, 0, len(runes)+len(ins))
		out = append(out, runes[:cur]...)
		out = append(out, ins...)
		out = append(out, runes[cur:]...)
		st.Cursor = cur + len(ins)
		return string(out), true
	}
	start, end := 0, len(runes)
	if multiline {
		start, end = lineBounds(runes, cur)
	}

	switch ev := ev.(type) {
	case tea.PasteMsg:
		return insert(ev.Content, DefaultMaxLen)
	case tea.KeyPressMsg:
		if ok, out, c := readlineKey(ev.String(), runes, cur, start, end, secret); ok {
			st.Cursor = c
			if out == nil {
				return value, false
			}
			return string(out), true
		}
		switch ev.String() {
		case "backspace":
			if cur == 0 {
				return value, false
			}
			st.Cursor = cur - 1
			return string(runes[:cur-1]) + string(runes[cur:]), true
		case "delete":
			if cur == len(runes) {
				return value, false
			}
			return string(runes[:cur]) + string(runes[cur+1:]), true
		case "left":
			st.Cursor = max(cur-1, 0)
		case "right":
			st.Cursor = min(cur+1, len(runes))
		case "home", "ctrl+a":
			st.Cursor = start
		case "end", "ctrl+e":
			st.Cursor = end
		case "up":
			if multiline && start > 0 {
				ps, pe := lineBounds(runes, start-1)
				st.Cursor = ps + min(cur-start, pe-ps)
			}
		case "down":
			if multiline && end < len(runes) {
				ns, ne := lineBounds(runes, end+1)
				st.Cursor = ns + min(cur-start, ne-ns)
			}
		case "enter":
			if multiline {
				return insert("\n", maxLen)
			}
		default:
			if ev.Text != "" && ev.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
				return insert(ev.Text, maxLen)
			}
		}
	}
	return value, false
}

// cleanInput returns at most limit runes of typed or pasted text, with
// control characters other than tabs and line breaks dropped. Line breaks
// ("\r\n", "\r" or "\n") become "\n" when multiline and a space otherwise.
// It stops reading text once it has limit runes.
func cleanInput(text string, limit int, multiline bool) []rune {
	if limit <= 0 || text == "" {
		return nil
	}
	out := make([]rune, 0, min(limit, len(text)))
	afterCR := false
	for _, r := range text {
		if len(out) >= limit {
			break
		}
		prevCR := afterCR
		afterCR = r == '\r'
		switch {
		case r == '\n' && prevCR:
			continue // the second half of "\r\n"
		case r == '\r' || r == '\n':
			r = ' '
			if multiline {
				r = '\n'
			}
		case r == '\t':
		case unicode.IsControl(r):
			continue
		}
		out = append(out, r)
	}
	return out
}

// lineBounds returns the start and end (exclusive, at the "\n" or the end
// of the text) of the line holding rune index i.
func lineBounds(runes []rune, i int) (start, end int) {
	start, end = i, i
	for start > 0 && runes[start-1] != '\n' {
		start--
	}
	for end < len(runes) && runes[end] != '\n' {
		end++
	}
	return start, end
}

// textLines holds the rune index where each line of a text starts.
type textLines struct {
	starts []int
	total  int
}

// splitLines indexes the lines of runes (at least one line).
func splitLines(runes []rune) textLines {
	l := textLines{starts: []int{0}, total: len(runes)}
	for i, r := range runes {
		if r == '\n' {
			l.starts = append(l.starts, i+1)
		}
	}
	return l
}

// lineOf returns the index of the line holding rune index i.
func (l textLines) lineOf(i int) int {
	n := 0
	for n+1 < len(l.starts) && l.starts[n+1] <= i {
		n++
	}
	return n
}

// line returns the runes of line n, without its "\n".
func (l textLines) line(runes []rune, n int) []rune {
	end := l.total
	if n+1 < len(l.starts) {
		end = l.starts[n+1] - 1
	}
	return runes[l.starts[n]:end]
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

// styled renders s with st, or returns "" for an empty s.
func styled(st lipgloss.Style, s string) string {
	if s == "" {
		return ""
	}
	return st.Render(s)
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

// clampCursor clamps a cursor to [0, n].
func clampCursor(c, n int) int { return min(max(c, 0), n) }

// lenLimit returns limit, or def when limit is not positive.
func lenLimit(limit, def int) int {
	if limit <= 0 {
		return def
	}
	return limit
}

// stateOrScratch returns st, or a throwaway state when st is nil.
func stateOrScratch(st *LocalState) *LocalState {
	if st == nil {
		return &LocalState{}
	}
	return st
}

// localOf returns rc.Local, or a zero state when it is nil.
func localOf(rc RenderContext) *LocalState {
	if rc.Local == nil {
		return &LocalState{}
	}
	return rc.Local
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
