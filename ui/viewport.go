package ui

import (
	"errors"
	"fmt"
	"strconv"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Viewport shows a window of Height lines over a longer text whose scroll
// offset the app owns.
//
// Keys: Up/Down (k/j) scroll one line, PgUp/PgDn one page, Home/End to the
// top and bottom, each sending [ScrolledTo] unless the offset would not
// change.
type Viewport struct {
	// ID identifies the widget in its tree.
	ID string
	// Title is drawn above the text when not empty.
	Title string
	// Lines is the text, one entry per line. Tabs are expanded and control
	// characters dropped when drawn; long lines are cut.
	Lines []string
	// Offset is the index of the first visible line, clamped to
	// [0, MaxOffset()] when drawn and when scrolling.
	Offset int
	// Height is the number of lines shown at once; 0 (or less) means 10.
	// Fewer are shown where the layout has no room for them
	// ([RenderContext.Height]), more in a [Fill] with room. The keys and
	// MaxOffset go by Height.
	Height int
	// Disabled makes the viewport ignore input and drawn in the disabled
	// style.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = Viewport{}
	_ ToolProvider = Viewport{}
)

// defaultViewportHeight is the height of a Viewport whose Height is 0.
const defaultViewportHeight = 10

// Children returns nil: a viewport has no child nodes.
func (Viewport) Children() []Node { return nil }

// WidgetID returns the viewport's id.
func (v Viewport) WidgetID() string { return v.ID }

// Focusable reports whether the viewport is enabled.
func (v Viewport) Focusable() bool { return !v.Disabled }

// height returns the effective number of visible lines.
func (v Viewport) height() int {
	if v.Height <= 0 {
		return defaultViewportHeight
	}
	return v.Height
}

// MaxOffset returns the largest useful offset: the one that shows the last
// line at the bottom.
func (v Viewport) MaxOffset() int {
	return max(0, len(v.Lines)-v.height())
}

// scroll returns the message for moving to row (clamped), or nil when the
// offset would not change.
func (v Viewport) scroll(row int) []tea.Msg {
	row = dwClamp(row, 0, v.MaxOffset())
	if row == v.Offset {
		return nil
	}
	return []tea.Msg{ScrolledTo{ID: v.ID, Row: row}}
}

// HandleEvent scrolls; see [Viewport].
func (v Viewport) HandleEvent(ev Event, _ *LocalState) []tea.Msg {
	if v.Disabled {
		return nil
	}
	k, ok := ev.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	cur := dwClamp(v.Offset, 0, v.MaxOffset())
	switch k.String() {
	case "up", "k":
		return v.scroll(cur - 1)
	case "down", "j":
		return v.scroll(cur + 1)
	case "pgup":
		return v.scroll(dwSatAdd(cur, -v.height()))
	case "pgdown":
		return v.scroll(dwSatAdd(cur, v.height()))
	case "home":
		return v.scroll(0)
	case "end":
		return v.scroll(v.MaxOffset())
	}
	return nil
}

// Render draws the title, the visible lines with a scrollbar on the right
// when the text is longer than the window, and a "first–last of total"
// line.
func (v Viewport) Render(rc RenderContext) string {
	th, _, w := dwContext(rc)
	focused := rc.Focused && !v.Disabled
	pick := func(s lipgloss.Style) lipgloss.Style {
		if v.Disabled {
			return th.Disabled
		}
		return s
	}
	n, h := len(v.Lines), v.height()
	if rc.Height > 0 {
		// Fewer lines where the layout has no room, more in a Fill.
		room := rc.Height - 1 // the status line
		if v.Title != "" {
			room--
		}
		room = max(1, room)
		if rc.Fill {
			h = max(h, room)
		}
		h = min(h, room)
	}
	maxOff := max(0, n-h)
	off := dwClamp(v.Offset, 0, maxOff)
	shown := min(h, n-off)

	var lines []string
	if v.Title != "" {
		style := pick(th.Title)
		if focused {
			style = th.Highlight.Bold(true)
		}
		lines = append(lines, Paint(style, dwTrunc(dwClean(v.Title), w)))
	}

	bar := n > h && w >= 2
	cw := w
	thumb, thumbLen := 0, 0
	if bar {
		cw = w - 1
		thumbLen = max(1, int(float64(h)*float64(h)/float64(n)))
		thumb = int(float64(off) * float64(h-thumbLen) / float64(maxOff))
	}
	thumbStyle := pick(th.Normal)
	if focused {
		thumbStyle = th.Focused
	}
	for i := range shown {
		text := dwTrunc(dwClean(v.Lines[off+i]), cw)
		if !bar {
			lines = append(lines, Paint(pick(th.Normal), text))
			continue
		}
		track := Paint(pick(th.Muted), "│")
		if i >= thumb && i < thumb+thumbLen {
			track = Paint(thumbStyle, "┃")
		}
		lines = append(lines, Paint(pick(th.Normal), dwFit(text, cw))+track)
	}

	status := "(empty)"
	if n > 0 {
		status = strconv.Itoa(off+1) + "–" + strconv.Itoa(off+shown) + " of " + strconv.Itoa(n)
	}
	statusStyle := pick(th.Muted)
	if focused {
		statusStyle = th.Focused
	}
	lines = append(lines, Paint(statusStyle, dwTrunc(status, w)))
	return dwJoin(lines, w)
}

// ---- MCP tools ----

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
