package tui

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// screen draws frames on one terminal on demand, sending only the cells
// that changed since the previous frame (ultraviolet's diffing renderer,
// the engine Bubble Tea's own renderer uses).
//
// Bubble Tea's renderer redraws from a 60 Hz ticker in every program, which
// costs CPU for every idle session; this one does nothing until there is a
// new frame. It is used only from the program's event loop goroutine.
//
// The renderer keeps a copy of what the terminal shows, the largest part of
// an idle session's memory; release drops it, and the next draw rebuilds it
// from the last frame's content without writing anything, so the terminal
// still gets only the cells that changed.
type screen struct {
	w        io.Writer
	buf      bytes.Buffer
	env      []string
	profile  colorprofile.Profile
	plain    bool    // no modes, no attributes: see term.go
	focus    ui.Rect // the focused widget, where a plain terminal's cursor rests
	hasFocus bool
	cursorX  int // where the cursor rests after the frame; -1: anywhere
	cursorY  int
	real     cursorAt             // a hosted program's real cursor for the next frame (-1: hidden)
	shown    cursorAt             // the real cursor as drawn (-1: hidden)
	scr      *uv.TerminalRenderer // nil while released
	// frame is the buffer frames are composed in: while the terminal is
	// busy it holds the last frame drawn, so a new frame parses only the
	// lines that changed; a frame drawn after a quiet spell borrows one
	// from the shared pool and gives it back (see keepFrameWithin).
	frame         *uv.ScreenBuffer
	lastDraw      time.Time
	width, height int
	last          string // content of the last frame drawn
	dirty         bool   // the next draw must happen even if content is unchanged
	started       bool
	closed        bool
	// scrollFrom is how many changed rows a frame needs before the
	// renderer looks for scrolled regions (minScrollRows; 0 in a test that
	// compares against the optimization always on).
	scrollFrom int
	// whole draws each changed row in one render, as the renderer does on
	// its own (a test compares against it; see screen_runs.go).
	whole bool
	// rendererColors leaves converting colours to the renderer, as it
	// does on its own (a test compares against it; see screen_colors.go).
	rendererColors bool
	text           [2][]byte // scratch for sameText
	// rebuilt says a draw since takeRebuilt rebuilt the released renderer.
	rebuilt bool
}

// takeRebuilt reports whether a draw rebuilt the renderer since it was
// last asked (the terminal had been idle and released it), and forgets it.
func (s *screen) takeRebuilt() bool {
	r := s.rebuilt
	s.rebuilt = false
	return r
}

// minScrollRows is the fewest changed rows a frame can gain anything from
// the renderer's scroll optimization with. The optimization hashes every
// row of the old and the new frame (ultraviolet rehashes each row that has
// a touch record, and after its first render every row has one), then
// keeps only runs of at least three rows that moved; a row that moved
// holds something else than before, so a frame with fewer changed rows
// has no such run and is drawn the same without it. Most frames an agent
// or a keystroke causes change one or two rows.
const minScrollRows = 3

func newScreen(w io.Writer, env []string, profile colorprofile.Profile, width, height int) *screen {
	s := &screen{w: w, env: env, profile: profile, plain: plainProfile(profile), width: max(width, 1), height: max(height, 1), dirty: true, scrollFrom: minScrollRows,
		real: cursorAt{-1, -1}, shown: cursorAt{-1, -1}}
	s.scr = s.newRenderer()
	return s
}

func (s *screen) newRenderer() *uv.TerminalRenderer {
	r := uv.NewTerminalRenderer(&s.buf, s.env)
	r.SetColorProfile(s.rendererProfile())
	r.SetTabStops(-1)
	// A line feed is a carriage return too: flush sends every LF the
	// renderer moves down with as CR LF itself, so the renderer must not
	// count on the column staying. It would stay on a raw tty, but not
	// behind an emulated PTY (charm ssh's default, which turns LF into
	// CR LF): there "down two, left one" from column 14 (LF LF CUB) landed
	// at column 1 and drew the status bar 13 columns to the left.
	r.SetMapNewline(true)
	// Scroll regions are beyond what a plain terminal is known to do.
	r.SetScrollOptim(!s.plain)
	r.Resize(s.width, s.height)
	return r
}

// renderer returns the renderer, rebuilding it if it was released.
func (s *screen) renderer() *uv.TerminalRenderer {
	if s.scr != nil {
		return s.scr
	}
	s.scr = s.newRenderer()
	if !s.started {
		return s.scr
	}
	s.rebuilt = true
	// As start left it, minus the output.
	if !s.plain {
		s.scr.SaveCursor()
	}
	s.scr.SetFullscreen(true)
	s.scr.SetRelativeCursor(false)
	s.scr.Erase()
	if s.dirty {
		return s.scr // the next draw repaints everything anyway
	}
	// Draw the last frame into the new renderer and throw the output away:
	// the renderer now holds what the terminal shows. Every render ends
	// with the default pen; the cursor position is forgotten, so the next
	// move is absolute.
	mark := s.buf.Len()
	s.render(s.last)
	_ = s.scr.Flush()
	s.buf.Truncate(mark)
	s.scr.SetPosition(-1, -1)
	return s.scr
}

// release drops the renderer and its copy of the screen; the next draw
// rebuilds them. For idle terminals.
//
// The frame buffer is dropped, not given back to the pool: a pool holds
// what it is given until two collections pass, and a thousand terminals
// going quiet together would leave a thousand buffers (~200 KiB each at
// 80x24) there, to be marked by the collector and held in RSS, where
// occasional frames only ever need a few.
func (s *screen) release() {
	if s.started && !s.closed {
		s.scr, s.frame = nil, nil
	}
}

// setProfile changes the color profile; the next draw repaints. The
// modes chosen at start stay.
func (s *screen) setProfile(p colorprofile.Profile) {
	s.profile = p
	if s.scr != nil {
		s.scr.SetColorProfile(s.rendererProfile())
	}
	s.dirty = true
}

// start switches the terminal to the alternate screen with mouse reporting
// and bracketed paste, and hides the cursor. A plain terminal gets none of
// that: its screen is cleared and drawn in place.
func (s *screen) start(title string) error {
	if s.started {
		return nil
	}
	s.started = true
	if s.plain {
		s.scr.SetFullscreen(true)
		s.scr.SetRelativeCursor(false)
		s.scr.Erase()
		return s.flush()
	}
	s.scr.SaveCursor()
	s.buf.WriteString(ansi.SetModeAltScreenSaveCursor)
	s.scr.SetFullscreen(true)
	s.scr.SetRelativeCursor(false)
	s.scr.Erase()
	s.buf.WriteString(ansi.ResetModeTextCursorEnable)
	s.buf.WriteString(ansi.SetModeBracketedPaste)
	// Any-event tracking reports hover for the focus lens.
	s.buf.WriteString(ansi.SetModeMouseAnyEvent + ansi.SetModeMouseExtSgr)
	if title != "" {
		s.buf.WriteString(ansi.SetWindowTitle(title))
	}
	return s.flush()
}

// resize adapts to a new terminal size; the next draw repaints everything.
func (s *screen) resize(width, height int) {
	width, height = max(width, 1), max(height, 1)
	if width == s.width && height == s.height {
		return
	}
	s.width, s.height = width, height
	s.dirty = true
	if s.scr != nil {
		s.scr.Erase()
		s.scr.Resize(width, height)
	}
}

// draw shows content (at most height lines of styled text). It writes
// nothing when the frame is unchanged.
func (s *screen) draw(content string) error {
	if s.closed || (!s.dirty && content == s.last && s.real == s.shown) {
		return nil
	}
	// What the renderer holds now (its copy of the screen): the last
	// frame, unless this draw repaints everything.
	prev := s.last
	if s.dirty {
		prev = ""
	}
	s.renderer()
	s.dirty = false
	s.last = content
	s.renderDiff(content, prev)
	switch {
	case s.real.x >= 0 && !s.plain:
		s.scr.MoveTo(s.real.x, s.real.y)
	case s.cursorX >= 0:
		s.scr.MoveTo(s.cursorX, s.cursorY)
	}
	if err := s.scr.Flush(); err != nil {
		return fmt.Errorf("tui: render: %w", err)
	}
	if !s.plain && (s.real.x >= 0) != (s.shown.x >= 0) {
		// A hosted program's real cursor: shown where it put it, hidden
		// as always otherwise.
		if s.real.x >= 0 {
			s.buf.WriteString(ansi.SetModeTextCursorEnable)
		} else {
			s.buf.WriteString(ansi.ResetModeTextCursorEnable)
		}
	}
	s.shown = s.real
	return s.flush()
}

// cursorAt is a cell of the terminal, or -1, -1 for none.
type cursorAt struct{ x, y int }

// render composes content in the frame buffer and renders it into the
// renderer's output buffer.
func (s *screen) render(content string) { s.renderDiff(content, "") }

// renderDiff is render when the renderer and the frame buffer already hold
// prev: only the lines of content that differ from prev's at the same row
// are parsed again and marked touched, so neither the parse nor the
// renderer's comparison costs anything for the rest of the screen. That
// holds only when every line of both frames ends with the default pen (a
// line's cells depend on the pen the line above left when the frame is
// parsed as one text); otherwise, and with no prev, the whole frame is
// parsed.
func (s *screen) renderDiff(content, prev string) {
	now := time.Now()
	busy := now.Sub(s.lastDraw) < keepFrameWithin
	s.lastDraw = now
	buf, fr := s.compose(content, prev)
	s.cursorX, s.cursorY = s.restingCursor(buf)
	scroll := s.scrolls(fr)
	if scroll {
		// Every row gets a touch record, so every row is hashed again
		// (what ultraviolet does on its own once a buffer has been
		// rendered): no hash is left from a frame drawn without it.
		for y := range buf.Height() {
			if y < len(buf.Touched) && buf.Touched[y] == nil {
				buf.Touched[y] = &uv.LineData{FirstCell: -1, LastCell: -1}
			}
		}
	}
	s.scr.SetScrollOptim(scroll)
	if fr.rows != nil { // never in a frame that scrolls: see compose
		s.renderSteps(buf, fr.rows)
		fr.rows.release()
	} else {
		s.scr.Render(buf.RenderBuffer)
	}
	if !busy {
		// An occasional frame: the buffer goes back to the pool, so that
		// terminals that draw now and then hold none between frames.
		frames.Put(buf)
		s.frame = nil
	}
}

// keepFrameWithin is how soon after the last one a frame must come for
// its terminal to keep a frame buffer of its own.
//
// A terminal drawn about once a second (an agent acting at that pace, a
// program's one-second timer) keeps its buffer: the bound is above a
// second with room for a timer's lateness. At exactly a second such frames
// came a few milliseconds too late and every one borrowed a frame, parsed
// the whole screen into it and had the renderer compare every row, 13
// times the cost of the one row that changed (BenchmarkTickFrame). Rarer
// frames (an agent's age in the status bar, counted in steps of ageStep)
// borrow one; the idle release (Options.IdleRelease) drops the buffer of
// a terminal that stops drawing.
const keepFrameWithin = 1500 * time.Millisecond

// frames holds the frame buffers terminals borrow for an occasional frame.
var frames = sync.Pool{New: func() any { b := uv.NewScreenBuffer(1, 1); return &b }}

// composed is what compose says of a frame.
type composed struct {
	changed  int  // rows changed (all of them when the whole frame was parsed)
	restyled bool // every changed row shows the same characters as before
	// rows holds the changed rows to draw in steps (screen_runs.go), nil
	// if there are none or the renderer looks for scrolled rows in the
	// frame (rows that moved are the scroll's to draw).
	rows *rowScratch
}

// compose brings the frame buffer from prev to content (see renderDiff)
// and returns it, the lines it changed marked touched.
func (s *screen) compose(content, prev string) (*uv.ScreenBuffer, composed) {
	buf := s.frame
	borrowed := buf == nil
	if borrowed {
		// Borrowed: what it holds is another terminal's.
		buf = frames.Get().(*uv.ScreenBuffer)
		s.frame = buf
	}
	if buf.Width() != s.width || buf.Height() != s.height {
		buf.Resize(s.width, s.height)
		borrowed = true // holds nothing of prev either
	}
	if prev == "" || leaksPen(content) || leaksPen(prev) {
		buf.Clear() // touches every line
		uv.NewStyledString(content).Draw(buf, buf.Bounds())
		s.convertRows(buf, content, 0, s.height)
		return buf, composed{changed: s.height}
	}
	if borrowed {
		// The renderer still holds prev, the buffer something else: every
		// line is parsed, but only those that differ from prev's are left
		// touched, so the renderer compares those alone (an occasional
		// frame, such as a status bar's tick, changes one or two).
		buf.Clear()
		uv.NewStyledString(content).Draw(buf, buf.Bounds())
		s.convertRows(buf, content, 0, s.height)
		fr := s.survey(content, prev)
		for y := range min(s.height, len(buf.Touched)) {
			var cl, pl string
			cl, content, _ = strings.Cut(content, "\n")
			pl, prev, _ = strings.Cut(prev, "\n")
			if cl == pl {
				buf.Touched[y] = nil
			}
		}
		return buf, fr
	}
	fr := s.survey(content, prev)
	var rows *rowScratch
	if !s.whole && fr.changed >= minSplitRows && !s.scrolls(fr) {
		rows = rowScratches.Get().(*rowScratch)
	}
	for y := range s.height {
		var cl, pl string
		cl, content, _ = strings.Cut(content, "\n")
		pl, prev, _ = strings.Cut(prev, "\n")
		if cl == pl {
			continue
		}
		old := 0
		if rows != nil {
			old = rows.keepOld(buf, y)
		}
		row := uv.Rect(0, y, s.width, 1)
		if cl != "" {
			// Draw clears the row first; both mark touched only the cells
			// that change, so the renderer compares those alone.
			uv.NewStyledString(cl).Draw(buf, row)
			s.convertRows(buf, cl, y, y+1)
		} else {
			buf.ClearArea(row) // touches the line
		}
		if rows != nil {
			rows.split(buf, y, old)
		}
	}
	if rows != nil && len(rows.splits) == 0 {
		rows.release()
		rows = nil
	}
	fr.rows = rows
	return buf, fr
}

// survey counts the rows of content that differ from prev's, and
// whether every one of them shows the text it showed (restyled).
func (s *screen) survey(content, prev string) composed {
	fr := composed{restyled: true}
	for range s.height {
		var cl, pl string
		cl, content, _ = strings.Cut(content, "\n")
		pl, prev, _ = strings.Cut(prev, "\n")
		if cl == pl {
			continue
		}
		fr.changed++
		if fr.restyled && !sameText(cl, pl, &s.text) {
			fr.restyled = false
		}
	}
	return fr
}

// scrolls reports whether the renderer looks for scrolled rows in a frame
// compose described. A frame whose changed rows show the text they showed,
// restyled (a box gaining the focus), has no row that moved.
func (s *screen) scrolls(fr composed) bool {
	return !s.plain && fr.changed >= s.scrollFrom && !fr.restyled
}

// leaksPen reports whether a line of frame ends with a style set, that is
// whether the last SGR sequence of any line is not a reset.
func leaksPen(frame string) bool {
	for frame != "" {
		var line string
		line, frame, _ = strings.Cut(frame, "\n")
		i := strings.LastIndex(line, "\x1b[")
		if i < 0 {
			continue
		}
		seq := line[i+2:]
		j := strings.IndexFunc(seq, func(r rune) bool { return r < '0' || r > ';' }) // past the parameters
		if j < 0 || seq[j] != 'm' {
			return true // not an SGR at the end: be safe
		}
		if p := seq[:j]; p != "" && p != "0" {
			return true
		}
	}
	return false
}

// setCursor tells the screen where a hosted program shows the terminal's
// real cursor in the next frame (ok false: hidden, as always otherwise).
func (s *screen) setCursor(x, y int, ok bool) {
	if !ok {
		x, y = -1, -1
	}
	s.real = cursorAt{x, y}
}

// setFocus tells a plain terminal's screen where the focused widget is
// drawn in the next frame (ok false: nothing is focused).
func (s *screen) setFocus(r ui.Rect, ok bool) { s.focus, s.hasFocus = r, ok }

// restingCursor returns where a plain terminal's cursor rests after buf
// is drawn, or -1, -1 for anywhere. The terminal cannot show the reverse
// video the focused widget's text cursor or highlighted row is drawn in,
// but it shows its own cursor (never hidden there): it rests on the first
// reverse cell of the focused widget, else on the widget's first cell.
func (s *screen) restingCursor(buf *uv.ScreenBuffer) (int, int) {
	if !s.plain || !s.hasFocus {
		return -1, -1
	}
	r := s.focus
	for y := max(r.Y, 0); y < min(r.Y+r.H, buf.Height()); y++ {
		for x := max(r.X, 0); x < min(r.X+r.W, buf.Width()); x++ {
			if c := buf.CellAt(x, y); c != nil && c.Style.Attrs&uv.AttrReverse != 0 {
				return x, y
			}
		}
	}
	if r.X < 0 || r.Y < 0 || r.X >= buf.Width() || r.Y >= buf.Height() {
		return -1, -1
	}
	return r.X, r.Y
}

// writeAfter writes text on the main screen after close: a hosted
// program's last view (already cleaned by its root).
func (s *screen) writeAfter(text string) error {
	if !s.closed || !s.started {
		return nil
	}
	s.buf.WriteString(text)
	return s.flush()
}

// close restores the terminal: mouse and paste modes off, cursor shown,
// main screen back.
func (s *screen) close() error {
	if s.closed || !s.started {
		s.closed = true
		return nil
	}
	s.renderer()
	s.closed = true
	if s.plain {
		// No main screen to go back to: clear what the app showed (the
		// attach panel's token, say) and leave the cursor at the top.
		_ = s.scr.Flush()
		s.buf.WriteString(ansi.CursorHomePosition + ansi.EraseScreenBelow)
		return s.flush()
	}
	s.scr.MoveTo(0, s.height-1)
	_ = s.scr.Flush()
	s.buf.WriteString(ansi.ResetModeMouseButtonEvent + ansi.ResetModeMouseAnyEvent + ansi.ResetModeMouseExtSgr)
	s.buf.WriteString(ansi.ResetModeBracketedPaste)
	s.scr.Erase()
	s.scr.SetRelativeCursor(true)
	s.scr.SetFullscreen(false)
	s.buf.WriteString(ansi.ResetModeAltScreenSaveCursor)
	s.scr.RestoreCursor()
	_ = s.scr.Flush()
	s.buf.WriteString(ansi.SetModeTextCursorEnable)
	return s.flush()
}

func (s *screen) flush() error {
	if s.buf.Len() == 0 {
		return nil
	}
	out := s.buf.Bytes()
	if bytes.IndexByte(out, '\n') >= 0 {
		out = crlf(out)
	}
	_, err := s.w.Write(out)
	s.buf.Reset()
	if err != nil {
		return fmt.Errorf("tui: write: %w", err)
	}
	return nil
}

// crlf makes every LF of b not already after a CR a CR LF, so that the
// output means the same whether or not the way to the terminal maps LF
// to CR LF (an emulated PTY does; a raw one does not). A CR CR LF, if a
// mapping adds its own CR, moves the cursor the same.
func crlf(b []byte) []byte {
	out := make([]byte, 0, len(b)+bytes.Count(b, []byte{'\n'}))
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}
