package tui

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"pgregory.net/rapid"
)

// TestFrameBufferHoldsEveryFrame: through any run of frames, sizes and
// releases, the frame buffer holds exactly what parsing the whole frame
// gives, and every row that changed since the last frame is marked for
// the renderer, however few lines were parsed again.
func TestFrameBufferHoldsEveryFrame(t *testing.T) {
	lines := []string{
		"", "plain text", "\x1b[1mbold\x1b[0m and after", "\x1b[38;5;12mblue\x1b[m", "╭─ Box ─╮", "│ cell │",
		"日本語の行", "wide 日 at the end 日", strings.Repeat("long line ", 20), "\x1b[7mreverse\x1b[0m",
		"\x1b[1munterminated bold", "e\u0301 combining", "👍 emoji", "tab\tin it", "…•▁█",
	}
	rapid.Check(t, func(rt *rapid.T) {
		var out bytes.Buffer
		w, h := rapid.IntRange(5, 60).Draw(rt, "w"), rapid.IntRange(2, 12).Draw(rt, "h")
		s := newScreen(&out, []string{"TERM=xterm-256color"}, colorprofile.TrueColor, w, h)
		if err := s.start(""); err != nil {
			rt.Fatal(err)
		}
		prevCells := fullParse("", w, h)
		for step := range rapid.IntRange(1, 15).Draw(rt, "frames") {
			switch rapid.IntRange(0, 9).Draw(rt, "event") {
			case 0:
				w, h = rapid.IntRange(5, 60).Draw(rt, "w"), rapid.IntRange(2, 12).Draw(rt, "h")
				s.resize(w, h)
				prevCells = nil // a resize repaints everything
			case 1:
				s.release()
			}
			n := rapid.IntRange(0, h+2).Draw(rt, "lines")
			frame := make([]string, n)
			for i := range frame {
				frame[i] = rapid.SampledFrom(lines).Draw(rt, "line")
			}
			content := strings.Join(frame, "\n")
			prev := s.last
			if s.dirty {
				prev = ""
			}
			s.dirty = false
			s.last = content
			{
				buf := s.compose(content, prev)
				want := fullParse(content, w, h)
				for y := range h {
					if got, exp := buf.Line(y).String(), want.Line(y).String(); got != exp {
						rt.Fatalf("step %d: row %d holds %q, a fresh parse %q", step, y, got, exp)
					}
					for x := range w {
						if !cellsEqual(buf.CellAt(x, y), want.CellAt(x, y)) {
							rt.Fatalf("step %d: cell %d,%d differs from a fresh parse", step, x, y)
						}
					}
					if prevCells != nil && prevCells.Line(y).Render() != want.Line(y).Render() && (y >= len(buf.Touched) || buf.Touched[y] == nil) {
						rt.Fatalf("step %d: row %d changed but is not marked", step, y)
					}
				}
				prevCells = want
				// What the renderer does after a frame.
				clear(buf.Touched)
			}
		}
	})
}

// fullParse is a frame parsed whole into a fresh buffer.
func fullParse(content string, w, h int) *uv.ScreenBuffer {
	b := uv.NewScreenBuffer(w, h)
	uv.NewStyledString(content).Draw(b, b.Bounds())
	return &b
}

func cellsEqual(a, b *uv.Cell) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Content == b.Content && a.Width == b.Width && a.Style == b.Style && a.Link == b.Link
}
