package ui

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Scrubber is a playback position control: a play/pause state and a seek
// bar over [Min, Max].
//
// Keys: Left/Right (h/l) seek one Step back or forward, PgUp/PgDn ten
// steps, Home/End to Min/Max, each sending [ScrubberSeeked] unless the
// position would not change; Space sends [ScrubberPaused] while playing and
// [ScrubberPlayed] otherwise. A click on the bar seeks to the clicked
// point, a click on the play glyph toggles playing.
type Scrubber struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is shown before the bar.
	Label string
	// Min and Max bound the position; when Max < Min the two are swapped.
	Min, Max int
	// Position is the current position, clamped to the bounds when drawn
	// and when seeking.
	Position int
	// Step is the distance one Left/Right press seeks; 0 (or less) means 1.
	Step int
	// Playing reports whether playback is running.
	Playing bool
	// Disabled makes the scrubber ignore input and drawn in the disabled
	// style.
	Disabled bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = Scrubber{}
	_ ToolProvider = Scrubber{}
)

// scrubberPage is the number of steps PgUp/PgDn seek.
const scrubberPage = 10

// scrubberLayout is where a Scrubber's last render put its bar, kept in
// LocalState.Data for mapping clicks.
type scrubberLayout struct{ x, w int }

// Children returns nil: a scrubber has no child nodes.
func (Scrubber) Children() []Node { return nil }

// WidgetID returns the scrubber's id.
func (s Scrubber) WidgetID() string { return s.ID }

// Focusable reports whether the scrubber is enabled.
func (s Scrubber) Focusable() bool { return !s.Disabled }

// Bounds returns the position range, with Min and Max swapped when Max is
// below Min.
func (s Scrubber) Bounds() (lo, hi int) {
	return min(s.Min, s.Max), max(s.Min, s.Max)
}

// step returns the effective step.
func (s Scrubber) step() int {
	if s.Step <= 0 {
		return 1
	}
	return s.Step
}

// seek returns the message for moving to p (clamped), or nil when the
// position would not change.
func (s Scrubber) seek(p int) []tea.Msg {
	lo, hi := s.Bounds()
	p = dwClamp(p, lo, hi)
	if p == s.Position {
		return nil
	}
	return []tea.Msg{ScrubberSeeked{ID: s.ID, Position: p}}
}

// toggle returns the message for Space: pause when playing, else play.
func (s Scrubber) toggle() []tea.Msg {
	if s.Playing {
		return []tea.Msg{ScrubberPaused{ID: s.ID}}
	}
	return []tea.Msg{ScrubberPlayed{ID: s.ID}}
}

// HandleEvent seeks and plays or pauses; see [Scrubber].
func (s Scrubber) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	if s.Disabled {
		return nil
	}
	lo, hi := s.Bounds()
	pos := dwClamp(s.Position, lo, hi)
	step := s.step()
	page := math.MaxInt
	if step <= math.MaxInt/scrubberPage {
		page = step * scrubberPage
	}
	switch ev := ev.(type) {
	case tea.KeyPressMsg:
		switch ev.String() {
		case "left", "h":
			return s.seek(dwSatAdd(pos, -step))
		case "right", "l":
			return s.seek(dwSatAdd(pos, step))
		case "pgup":
			return s.seek(dwSatAdd(pos, -page))
		case "pgdown":
			return s.seek(dwSatAdd(pos, page))
		case "home":
			return s.seek(lo)
		case "end":
			return s.seek(hi)
		case "space":
			return s.toggle()
		}
	case ClickEvent:
		if ev.Y != 0 {
			return nil
		}
		if ev.X == 0 {
			return s.toggle()
		}
		if st == nil {
			return nil
		}
		l, ok := st.Data.(scrubberLayout)
		if !ok || ev.X < l.x || ev.X >= l.x+l.w {
			return nil
		}
		if l.w == 1 {
			return s.seek(lo)
		}
		f := float64(ev.X-l.x) / float64(l.w-1)
		p := float64(lo) + f*(float64(hi)-float64(lo))
		switch {
		case p <= float64(lo):
			return s.seek(lo)
		case p >= float64(hi):
			return s.seek(hi)
		}
		return s.seek(int(math.Round(p)))
	}
	return nil
}

// Render draws the play state ("▶" playing, "⏸" paused), the label, the
// bar with its knob at the position, and "position/max".
func (s Scrubber) Render(rc RenderContext) string {
	th, st, w := dwContext(rc)
	lo, hi := s.Bounds()
	pos := dwClamp(s.Position, lo, hi)
	focused := rc.Focused && !s.Disabled
	pick := func(style lipgloss.Style) lipgloss.Style {
		if s.Disabled {
			return th.Disabled
		}
		return style
	}

	glyph := "⏸"
	if s.Playing {
		glyph = "▶"
	}
	suffix := " " + strconv.Itoa(pos) + "/" + strconv.Itoa(hi)
	const minBar = 4
	// Room for the label: what is left after the glyph, the suffix and a
	// short bar.
	label := dwClean(s.Label)
	if room := w - 2 - lineWidth(suffix) - minBar - 1; label != "" && room >= 1 {
		label = dwTrunc(label, room) + " "
	} else {
		label = ""
	}
	prefixW := 2 + lineWidth(label)
	bw := w - prefixW - lineWidth(suffix)
	if bw < 1 {
		suffix = ""
		bw = w - prefixW
	}
	bw = max(bw, 0)
	st.Data = scrubberLayout{x: prefixW, w: bw}

	labelStyle, fillStyle, knobStyle := pick(th.Normal), pick(th.Accent), pick(th.Normal)
	if focused {
		labelStyle, fillStyle, knobStyle = th.Focused, th.Focused, th.Highlight.Bold(true)
	}
	var b strings.Builder
	b.WriteString(Paint(labelStyle, glyph+" "+label))
	if bw > 0 {
		knob := 0
		if hi > lo && bw > 1 {
			f := (float64(pos) - float64(lo)) / (float64(hi) - float64(lo))
			knob = dwClamp(int(math.Round(f*float64(bw-1))), 0, bw-1)
		}
		if knob > 0 {
			b.WriteString(Paint(fillStyle, strings.Repeat("━", knob)))
		}
		b.WriteString(Paint(knobStyle, "●"))
		if rest := bw - knob - 1; rest > 0 {
			b.WriteString(Paint(pick(th.Muted), strings.Repeat("─", rest)))
		}
	}
	b.WriteString(Paint(pick(th.Normal), suffix))
	return dwJoin([]string{b.String()}, w)
}

// ---- MCP tools ----

// Tools returns seek, play, pause and get_position; none while disabled.
func (s Scrubber) Tools() []ToolSpec {
	if s.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("seek", "Move this playback position control to the given position. Call get_position for the valid range.",
			map[string]any{argPosition: Prop("integer", "The position to move to, between the control's minimum and maximum inclusive.")}, argPosition),
		tool("play", "Start playback. Does nothing when already playing.", nil),
		tool("pause", "Pause playback. Does nothing when already paused.", nil),
		readTool("get_position", "Return the current position, the minimum and maximum positions, and whether playback is running.", nil),
	}
}

// position returns the position as drawn: clamped to the bounds.
func (s Scrubber) position() int {
	lo, hi := s.Bounds()
	return dwClamp(s.Position, lo, hi)
}

// CallTool runs seek ([ScrubberSeeked], as the seek keys send; nothing
// when the position would not change), play ([ScrubberPlayed]) and pause
// ([ScrubberPaused]) (nothing when already in that state; Space sends
// whichever changes it), or get_position.
func (s Scrubber) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	switch action {
	case "seek", "play", "pause", "get_position":
	default:
		return nil, nil, errUnknownAction(action)
	}
	if s.Disabled {
		return nil, nil, errors.New("this scrubber is disabled")
	}
	if action == "seek" {
		if err := checkArgs(args, argPosition); err != nil {
			return nil, nil, err
		}
		p, err := intArg(args, argPosition)
		if err != nil {
			return nil, nil, err
		}
		lo, hi := s.Bounds()
		if p < lo || p > hi {
			return nil, nil, fmt.Errorf("position %d is out of range: valid positions are %d-%d", p, lo, hi)
		}
		msgs := s.seek(p)
		if msgs == nil {
			return unchangedResult("already at that position"), nil, nil
		}
		return okResult(), msgs, nil
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	switch action {
	case "play":
		if s.Playing {
			return unchangedResult("already playing"), nil, nil
		}
		return okResult(), []tea.Msg{ScrubberPlayed{ID: s.ID}}, nil
	case "pause":
		if !s.Playing {
			return unchangedResult("already paused"), nil, nil
		}
		return okResult(), []tea.Msg{ScrubberPaused{ID: s.ID}}, nil
	default: // get_position
		lo, hi := s.Bounds()
		return map[string]any{"position": s.position(), "min": lo, "max": hi, "playing": s.Playing}, nil, nil
	}
}

// State returns type, id, label, position (clamped to the bounds), min,
// max, step (the effective one), playing and disabled.
func (s Scrubber) State() any {
	lo, hi := s.Bounds()
	return map[string]any{
		"type":     "scrubber",
		"id":       s.ID,
		"label":    s.Label,
		"position": s.position(),
		"min":      lo,
		"max":      hi,
		"step":     s.step(),
		"playing":  s.Playing,
		"disabled": s.Disabled,
	}
}
