package tui

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
	"pgregory.net/rapid"
)

// segments is what the rows of the split tests are made of: styled and
// plain runs of several widths, wide characters among them, so that
// changed runs fall on both sides of wide cells and gaps of every length.
var segments = []string{
	"a", "word ", "        ", "界", "界界", "🙂", "é", "│", "─────────", "x",
	"\x1b[31m│\x1b[m", "\x1b[90m│\x1b[m", "\x1b[1;44mbold\x1b[m", "\x1b[7m界\x1b[m",
	"\x1b[38;2;10;200;30mgreen text\x1b[m", "\x1b[4munder\x1b[0m",
	"\x1b]8;;http://x\x07link\x1b]8;;\x07", "\x1b[1mword \x1b[m", "bold", "green text",
}

// restyles are the segments that show the same text in other styles: a
// frame that swaps them changes no character, only colours (a box gaining
// the focus), which is the frame drawn in runs.
var restyles = [][]int{{7, 10, 11}, {3, 13}, {1, 17}, {12, 18}, {14, 19}}

// TestSplitRowsShowTheFrame: through any run of frames in which rows
// change in several places at once (restyled, as when the focus moves, or
// edited), a screen that draws each such row a run at a time leaves the
// terminal showing exactly what a screen drawing every frame whole does,
// and what a fresh screen drawing only that frame does, cell by cell
// (character, width, style, link).
func TestSplitRowsShowTheFrame(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w, h := rapid.IntRange(8, 50).Draw(rt, "w"), rapid.IntRange(2, 8).Draw(rt, "h")
		split, es := newEmuScreen(w, h)
		whole, ew := newEmuScreen(w, h)
		whole.whole = true
		for _, s := range []*screen{split, whole} {
			if err := s.start(""); err != nil {
				rt.Fatal(err)
			}
		}
		seg := rapid.IntRange(0, len(segments)-1)
		rows := make([][]int, h)
		for y := range rows {
			rows[y] = rapid.SliceOfN(seg, 0, 8).Draw(rt, "row")
		}
		for step := range rapid.IntRange(1, 8).Draw(rt, "frames") {
			if rapid.Bool().Draw(rt, "restyle") {
				// Restyle segments on every row: the same text, other
				// colours, in several places a row.
				for _, r := range rows {
					for i, v := range r {
						for _, g := range restyles {
							if slices.Contains(g, v) && rapid.Bool().Draw(rt, "swap") {
								r[i] = g[rapid.IntRange(0, len(g)-1).Draw(rt, "style")]
							}
						}
					}
				}
			} else {
				// Change some segments of some rows: several places a row.
				for range rapid.IntRange(0, h*2).Draw(rt, "edits") {
					r := rows[rapid.IntRange(0, h-1).Draw(rt, "y")]
					if len(r) == 0 {
						continue
					}
					r[rapid.IntRange(0, len(r)-1).Draw(rt, "at")] = seg.Draw(rt, "to")
				}
			}
			if rapid.IntRange(0, 9).Draw(rt, "release") == 0 {
				split.release()
				whole.release()
			}
			f := rowsFrame(rows, segments)
			if err := split.draw(f); err != nil {
				rt.Fatal(err)
			}
			if err := whole.draw(f); err != nil {
				rt.Fatal(err)
			}
			fresh, ef := newEmuScreen(w, h)
			if err := fresh.start(""); err != nil {
				rt.Fatal(err)
			}
			if err := fresh.draw(f); err != nil {
				rt.Fatal(err)
			}
			sameScreen(rt, step, f, es.em, ew.em, "drawn in runs", "drawn whole", true)
			sameScreen(rt, step, f, es.em, ef.em, "drawn in runs", "a fresh screen", false)
		}
	})
}

// rowsFrame is a frame whose rows are made of the segments segs[i] for
// each i of the row.
func rowsFrame(rows [][]int, segs []string) string {
	out := make([]string, len(rows))
	for y, r := range rows {
		var b strings.Builder
		for _, i := range r {
			b.WriteString(segs[i])
		}
		out[y] = b.String()
	}
	return strings.Join(out, "\n")
}

// sameScreen compares two terminals cell by cell. Unless full, what a
// blank cell's pen cannot show is not compared (its foreground colour,
// bold, faint, italic, blink: only its background, underline, reverse and
// strikethrough show): a fresh screen's renderer clears with whatever pen
// it holds, and its own diff leaves it either way.
func sameScreen(rt *rapid.T, step int, frame string, got, want *vt.Emulator, gotName, wantName string, full bool) {
	for y := range got.Height() {
		for x := range got.Width() {
			a, b := got.CellAt(x, y), want.CellAt(x, y)
			if (a == nil) != (b == nil) {
				rt.Fatalf("frame %d, cell %d,%d: %s %#v, %s %#v\n%q", step, x, y, gotName, a, wantName, b, frame)
			}
			if a == nil {
				continue
			}
			sa, sb := a.Style, b.Style
			if !full && a.Content == " " && b.Content == " " {
				const shows = uv.AttrReverse | uv.AttrStrikethrough
				sa.Attrs &= shows
				sb.Attrs &= shows
				if sa.Attrs&uv.AttrReverse == 0 && sb.Attrs&uv.AttrReverse == 0 {
					sa.Fg, sb.Fg = nil, nil // shown only in reverse
				}
			}
			if a.Content != b.Content || a.Width != b.Width || !sa.Equal(&sb) || !a.Link.Equal(&b.Link) {
				rt.Fatalf("frame %d, cell %d,%d: %s %#v, %s %#v\n%q", step, x, y, gotName, a, wantName, b, frame)
			}
		}
	}
}

// TestFocusedBoxSendsOnlyItsBorder: a box of 18 rows whose border changes
// colour (the focus moving to it) is sent as its border cells, not as its
// rows: fewer than half the bytes of drawing each row whole (most of
// what is left is the border's colour, set again for every cell).
func TestFocusedBoxSendsOnlyItsBorder(t *testing.T) {
	sent := func(whole bool) (int, *vt.Emulator) {
		var out bytes.Buffer
		em := vt.NewEmulator(80, 24)
		s := newScreen(&out, []string{"TERM=xterm-256color"}, colorprofile.ANSI256, 80, 24)
		s.whole = whole
		if err := s.start(""); err != nil {
			t.Fatal(err)
		}
		// The terminal is busy (a frame in the last second), so it keeps
		// its frame and parses only the rows that change.
		_ = s.draw(focusBox("1;96"))
		_ = s.draw(focusBox("90"))
		_, _ = em.Write(out.Bytes())
		out.Reset()
		if err := s.draw(focusBox("1;96")); err != nil {
			t.Fatal(err)
		}
		n := out.Len()
		_, _ = em.Write(out.Bytes())
		return n, em
	}
	split, es := sent(false)
	whole, ew := sent(true)
	if split*2 > whole {
		t.Fatalf("the border's change sent %d bytes in runs, %d whole: want half at most", split, whole)
	}
	if es.String() != ew.String() {
		t.Fatalf("the terminal shows\n%s\ndrawn in runs, and\n%s\ndrawn whole", es.String(), ew.String())
	}
	for y := 1; y < 19; y++ {
		for _, x := range []int{0, 64} {
			a, b := es.CellAt(x, y), ew.CellAt(x, y)
			if a == nil || b == nil || !a.Style.Equal(&b.Style) || a.Content != "│" {
				t.Fatalf("border cell %d,%d: %+v in runs, %+v whole", x, y, a, b)
			}
		}
	}
	t.Logf("border change: %d bytes in runs, %d whole", split, whole)
}

// focusBox is a frame with a box of 18 rows bordered in the given SGR.
func focusBox(border string) string {
	var b strings.Builder
	b.WriteString("\x1b[1mSearch:\x1b[m text\n")
	for i := range 18 {
		fmt.Fprintf(&b, "\x1b[%sm│\x1b[m %-20s \x1b[36m%-40s\x1b[m \x1b[%sm│\x1b[m\n", border, fmt.Sprintf("service-%d", i), "running since a while", border)
	}
	return b.String()
}

// TestSameText: restyled lines are the same text; a line with a sequence
// that is not SGR or OSC, or a control character, never is.
func TestSameText(t *testing.T) {
	var scratch [2][]byte
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"\x1b[90m│\x1b[m abc \x1b[90m│\x1b[m", "\x1b[1;96m│\x1b[m abc \x1b[1;96m│\x1b[m", true},
		{"plain", "plain", true},
		{"\x1b]8;;http://a\x07x\x1b]8;;\x07", "\x1b]8;;http://b\x1b\\x\x1b]8;;\x1b\\", true},
		{"\x1b[38:2::1:2:3mx", "x", true},
		{"abc", "abd", false},
		{"ab", "a\x1b[1mb", true},
		{"a\tb", "a\tb", false},
		{"a\x1b[5Cb", "a\x1b[5Cb", false},
		{"a\u009bb", "a\u009bb", false},
		{"a\x7fb", "a\x7fb", false},
		{"a\x1b]unterminated", "a\x1b]unterminated", false},
		{"a\x1b", "a\x1b", false},
	} {
		if got := sameText(c.a, c.b, &scratch); got != c.want {
			t.Errorf("sameText(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// BenchmarkFocusedBox is TestFocusedBoxSendsOnlyItsBorder's frames, the
// focus moving into and out of the box, drawn in runs and whole.
func BenchmarkFocusedBox(b *testing.B) {
	for _, whole := range []bool{false, true} {
		b.Run(fmt.Sprintf("whole=%v", whole), func(b *testing.B) {
			s := newScreen(io.Discard, []string{"TERM=xterm-256color"}, colorprofile.ANSI256, 80, 24)
			s.whole = whole
			if err := s.start(""); err != nil {
				b.Fatal(err)
			}
			frames := []string{focusBox("90"), focusBox("1;96")}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_ = s.draw(frames[i%2])
			}
		})
	}
}
