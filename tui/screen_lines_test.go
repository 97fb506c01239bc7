package tui

import (
	"bytes"
	"fmt"
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
				buf, _ := s.compose(content, prev)
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

// TestScrollOptimizationOnlyWhereItCanHelp: a screen that looks for
// scrolled regions only in frames that changed at least minScrollRows rows
// sends exactly the bytes of one that looks in every frame, through any
// run of frames: scrolls of every size and direction, small edits, sizes
// and releases. (It sends fewer bytes than no optimization at all for a
// scroll; TestScrollOptimizationSavesBytes.)
func TestScrollOptimizationOnlyWhereItCanHelp(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var gotOut, wantOut bytes.Buffer
		w, h := rapid.IntRange(10, 40).Draw(rt, "w"), rapid.IntRange(3, 14).Draw(rt, "h")
		env := []string{"TERM=xterm-256color"}
		got := newScreen(&gotOut, env, colorprofile.TrueColor, w, h)
		want := newScreen(&wantOut, env, colorprofile.TrueColor, w, h)
		want.scrollFrom = 0
		got.whole, want.whole = true, true // rows drawn apart are TestSplitRowsShowTheFrame's
		for _, s := range []*screen{got, want} {
			if err := s.start(""); err != nil {
				rt.Fatal(err)
			}
		}
		// Distinct rows, so that a scroll is recognizable.
		rows := make([]string, 60)
		for i := range rows {
			rows[i] = fmt.Sprintf("row %d \x1b[1mof\x1b[m text", i)
		}
		top := 0
		frame := func() string { return strings.Join(rows[top:top+h], "\n") }
		for step := range rapid.IntRange(1, 20).Draw(rt, "frames") {
			switch rapid.IntRange(0, 5).Draw(rt, "event") {
			case 0: // scroll by a few rows either way
				top = min(max(top+rapid.IntRange(-4, 4).Draw(rt, "by"), 0), len(rows)-16)
			case 1: // edit a row or two
				for range rapid.IntRange(1, 2).Draw(rt, "edits") {
					i := top + rapid.IntRange(0, h-1).Draw(rt, "row")
					rows[i] = fmt.Sprintf("edited %d at %d", i, step)
				}
			case 2: // edit many rows
				for i := top; i < top+h; i += 2 {
					rows[i] += "!"
				}
			case 4: // restyle many rows, the same text in them (a box's focus)
				from, to := "\x1b[1m", "\x1b[3m"
				if rapid.Bool().Draw(rt, "back") {
					from, to = to, from
				}
				for i := top; i < top+h; i++ {
					rows[i] = strings.ReplaceAll(rows[i], from, to)
				}
			case 3:
				if rapid.Bool().Draw(rt, "release") {
					got.release()
					want.release()
				}
			}
			f := frame()
			if err := got.draw(f); err != nil {
				rt.Fatal(err)
			}
			if err := want.draw(f); err != nil {
				rt.Fatal(err)
			}
			if !bytes.Equal(gotOut.Bytes(), wantOut.Bytes()) {
				rt.Fatalf("step %d: sent %q, with the optimization on for every frame %q", step, gotOut.Bytes(), wantOut.Bytes())
			}
			gotOut.Reset()
			wantOut.Reset()
		}
	})
}

// TestScrollOptimizationSavesBytes: a frame that scrolls a region is still
// sent as a scroll, not as every row again.
func TestScrollOptimizationSavesBytes(t *testing.T) {
	var out bytes.Buffer
	s := newScreen(&out, []string{"TERM=xterm-256color"}, colorprofile.TrueColor, 60, 20)
	if err := s.start(""); err != nil {
		t.Fatal(err)
	}
	rows := make([]string, 40)
	for i := range rows {
		rows[i] = fmt.Sprintf("log line %d with some text to repeat", i)
	}
	_ = s.draw(strings.Join(rows[:20], "\n"))
	out.Reset()
	_ = s.draw(strings.Join(rows[1:21], "\n"))
	if n := out.Len(); n > 200 {
		t.Fatalf("a one-row scroll of 20 rows sent %d bytes: %q", n, out.Bytes())
	}
}
