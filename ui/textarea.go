package ui

import (
	"math"
	"strings"

	tea "charm.land/bubbletea/v2"
)

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

var (
	_ Widget       = TextArea{}
	_ ToolProvider = TextArea{}
)

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
		out = append(out, Paint(controlStyle(rc, t.Disabled), fitLine(t.Label, w)))
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

// ---- MCP tools ----

// maxLen returns the effective length limit of the field.
func (t TextArea) maxLen() int { return lenLimit(t.MaxLen, 4*DefaultMaxLen) }

// Tools returns type_into, clear and get_value; none while disabled.
func (t TextArea) Tools() []ToolSpec {
	if t.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("type_into", "Replace the whole text of this multi-line text area with the given text; separate lines with \"\\n\". To add to the current text, read it first with get_value.",
			map[string]any{argText: Prop("string", "The new full text of the field, lines separated by \"\\n\"; it replaces the current text.")}, argText),
		tool("clear", "Erase all the text of this multi-line text area.", nil),
		readTool("get_value", "Return the current text of this multi-line text area, lines separated by \"\\n\".", nil),
	}
}

// CallTool runs type_into (sending [TextAreaChanged] with the new whole
// text, line breaks normalised to "\n"), clear or get_value.
func (t TextArea) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return textFieldCall("text area", action, args, t.Disabled, t.maxLen(), true, true, t.Value,
		func(s string) tea.Msg { return TextAreaChanged{ID: t.ID, Text: s} })
}

// State returns type, id, label, value, placeholder, max_len (the
// effective limit, in characters), height (visible lines) and disabled.
func (t TextArea) State() any {
	return map[string]any{
		"type":        "text_area",
		"id":          t.ID,
		"label":       t.Label,
		"value":       t.Value,
		"placeholder": t.Placeholder,
		"max_len":     t.maxLen(),
		"height":      t.height(),
		"disabled":    t.Disabled,
	}
}
