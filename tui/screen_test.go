package tui

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/vt"
	"pgregory.net/rapid"
)

// emuWriter feeds what the screen writes into a terminal emulator.
type emuWriter struct {
	em     *vt.Emulator
	writes int
}

func (w *emuWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.em.Write(p)
}

func newEmuScreen(w, h int) (*screen, *emuWriter) {
	ew := &emuWriter{em: vt.NewEmulator(w, h)}
	env := []string{"TERM=xterm-256color"}
	return newScreen(ew, env, colorprofile.ANSI256, w, h), ew
}

func lines(em *vt.Emulator) []string {
	out := strings.Split(em.String(), "\n")
	for i := range out {
		out[i] = strings.TrimRight(out[i], " ")
	}
	return out
}

func TestScreenDrawsOnlyChangesAndSharesBuffersSafely(t *testing.T) {
	a, ea := newEmuScreen(30, 6)
	b, eb := newEmuScreen(12, 3)
	a.start("a")
	b.start("b")
	if !ea.em.IsAltScreen() {
		t.Fatal("start did not switch to the alternate screen")
	}

	frameA := "alpha line one\nalpha two\n\n\nalpha five"
	frameB := "bravo\nb2"
	for i := range 3 { // alternate, so pooled buffers pass between sizes
		if err := a.draw(frameA); err != nil {
			t.Fatal(err)
		}
		if err := b.draw(frameB); err != nil {
			t.Fatal(err)
		}
		_ = i
	}
	if got := lines(ea.em); got[0] != "alpha line one" || got[1] != "alpha two" || got[4] != "alpha five" {
		t.Fatalf("screen a shows %q", got)
	}
	if got := lines(eb.em); got[0] != "bravo" || got[1] != "b2" || got[2] != "" {
		t.Fatalf("screen b shows %q", got)
	}

	// An unchanged frame writes nothing at all.
	before := ea.writes
	if err := a.draw(frameA); err != nil {
		t.Fatal(err)
	}
	if ea.writes != before {
		t.Fatalf("an unchanged frame wrote %d times", ea.writes-before)
	}

	// Shrinking content clears what is gone.
	if err := a.draw("short"); err != nil {
		t.Fatal(err)
	}
	got := lines(ea.em)
	if got[0] != "short" || got[1] != "" || got[4] != "" {
		t.Fatalf("after a shorter frame screen a shows %q", got)
	}

	// A resize repaints the same content at the new size.
	ea.em.Resize(20, 4)
	a.resize(20, 4)
	if err := a.draw("resized\nfits"); err != nil {
		t.Fatal(err)
	}
	if got := lines(ea.em); got[0] != "resized" || got[1] != "fits" {
		t.Fatalf("after resize screen a shows %q", got)
	}

	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	if ea.em.IsAltScreen() {
		t.Fatal("close did not leave the alternate screen")
	}
	if err := a.draw("after close"); err != nil || strings.Contains(ea.em.String(), "after close") {
		t.Fatal("draw after close reached the terminal")
	}
}

// BenchmarkScreenDraw measures composing, diffing and encoding a frame in
// which every line changed, to a writer that discards it.
func BenchmarkScreenDraw(b *testing.B) {
	s := newScreen(io.Discard, []string{"TERM=xterm-256color"}, colorprofile.ANSI256, 100, 30)
	frames := []string{strings.Repeat("row of text that changes a\n", 29), strings.Repeat("row of text that changes b\n", 29)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = s.draw(frames[i%2])
	}
}

// TestReleasedScreenRedrawsOnlyWhatChanged: a screen whose renderer was
// released between two frames ends up showing exactly what one that kept
// it shows, styles included, and sends about as little.
func TestReleasedScreenRedrawsOnlyWhatChanged(t *testing.T) {
	const w, h = 40, 8
	kept, ek := newEmuScreen(w, h)
	freed, ef := newEmuScreen(w, h)
	row := func(i int, s string) string { return "\x1b[1;34m" + s + "\x1b[m row " + string(rune('a'+i)) }
	var f1, f2 []string
	for i := range h {
		f1 = append(f1, row(i, "first"))
		f2 = append(f2, row(i, "first"))
	}
	f2[3] = "\x1b[31mchanged\x1b[m here"
	frame1, frame2 := strings.Join(f1, "\n"), strings.Join(f2, "\n")

	var out [2]strings.Builder
	kept.w, freed.w = io.MultiWriter(ek, &out[0]), io.MultiWriter(ef, &out[1])
	for _, s := range []*screen{kept, freed} {
		if err := s.start(""); err != nil {
			t.Fatal(err)
		}
		if err := s.draw(frame1); err != nil {
			t.Fatal(err)
		}
	}
	full := out[1].Len()
	freed.release()
	if freed.scr != nil {
		t.Fatal("release kept the renderer")
	}
	// An unchanged frame needs no renderer and writes nothing.
	if err := freed.draw(frame1); err != nil || freed.scr != nil || out[1].Len() != full {
		t.Fatalf("unchanged frame after release: err %v, renderer rebuilt %v, %d bytes written", err, freed.scr != nil, out[1].Len()-full)
	}
	out[0].Reset()
	out[1].Reset()
	for _, s := range []*screen{kept, freed} {
		if err := s.draw(frame2); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := lines(ef.em), lines(ek.em); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("released screen shows\n%q\nwant\n%q", got, want)
	}
	for y := range h {
		for x := range w {
			if a, b := ef.em.CellAt(x, y), ek.em.CellAt(x, y); a.Content != b.Content || !a.Style.Equal(&b.Style) {
				t.Fatalf("cell %d,%d: released %+v, kept %+v", x, y, a, b)
			}
		}
	}
	if got := lines(ef.em)[3]; got != "changed here" {
		t.Fatalf("row 3 shows %q", got)
	}
	if n, k := out[1].Len(), out[0].Len(); n > k+16 || n*4 > full {
		t.Fatalf("after release the change took %d bytes (kept renderer: %d, whole first frame: %d)", n, k, full)
	}

	// Released again and resized: the next frame is repainted whole.
	freed.release()
	ef.em.Resize(30, 5)
	freed.resize(30, 5)
	if err := freed.draw("small\nframe"); err != nil {
		t.Fatal(err)
	}
	if got := lines(ef.em); got[0] != "small" || got[1] != "frame" || got[2] != "" {
		t.Fatalf("after release and resize: %q", got)
	}
	// Close rebuilds what it needs and restores the terminal.
	freed.release()
	if err := freed.close(); err != nil || ef.em.IsAltScreen() {
		t.Fatalf("close after release: err %v, still on the alternate screen %v", err, ef.em.IsAltScreen())
	}
}

// BenchmarkScreenDrawAfterRelease measures the first frame of a terminal
// that was idle: the renderer is rebuilt from the last frame (no output),
// then the change is diffed and encoded.
func BenchmarkScreenDrawAfterRelease(b *testing.B) {
	s := newScreen(io.Discard, []string{"TERM=xterm-256color"}, colorprofile.ANSI256, 100, 30)
	_ = s.start("")
	frames := []string{strings.Repeat("row of text that changes a\n", 29), strings.Repeat("row of text that changes b\n", 29)}
	_ = s.draw(frames[1])
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.release()
		_ = s.draw(frames[i%2])
	}
}

// frameText generates a frame: lines of plain, styled and wide text.
func frameText(h int) *rapid.Generator[string] {
	piece := rapid.SampledFrom([]string{"a", "word ", "  ", "界", "🙂", "é", "\x1b[31mred\x1b[m", "\x1b[1;44mbold\x1b[m", "\x1b[4munder\x1b[m", "|", "─"})
	line := rapid.Map(rapid.SliceOfN(piece, 0, 12), func(p []string) string { return strings.Join(p, "") })
	return rapid.Map(rapid.SliceOfN(line, 0, h), func(l []string) string { return strings.Join(l, "\n") })
}

// TestReleasedScreenMatchesAKeptOne: whatever the two frames, a screen
// whose renderer was released between them shows exactly what a screen
// that kept it shows.
func TestReleasedScreenMatchesAKeptOne(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const w, h = 30, 6
		kept, ek := newEmuScreen(w, h)
		freed, ef := newEmuScreen(w, h)
		frames := rapid.SliceOfN(frameText(h), 2, 4).Draw(rt, "frames")
		for _, s := range []*screen{kept, freed} {
			if err := s.start(""); err != nil {
				rt.Fatal(err)
			}
		}
		for i, f := range frames {
			if i > 0 && rapid.Bool().Draw(rt, "release") {
				freed.release()
			}
			for _, s := range []*screen{kept, freed} {
				if err := s.draw(f); err != nil {
					rt.Fatal(err)
				}
			}
			for y := range h {
				for x := range w {
					a, b := ef.em.CellAt(x, y), ek.em.CellAt(x, y)
					if (a == nil) != (b == nil) || (a != nil && (a.Content != b.Content || a.Width != b.Width || !a.Style.Equal(&b.Style))) {
						rt.Fatalf("frame %d, cell %d,%d: released %+v, kept %+v\nreleased:\n%s\nkept:\n%s", i, x, y, a, b, ef.em.String(), ek.em.String())
					}
				}
			}
		}
	})
}

// ptyWriter maps LF to CR LF on the way, as charm ssh's emulated PTY
// (the server's default) does.
type ptyWriter struct{ w io.Writer }

func (p ptyWriter) Write(b []byte) (int, error) {
	_, err := p.w.Write([]byte(strings.ReplaceAll(string(b), "\n", "\r\n")))
	return len(b), err
}

// TestScreenShowsTheFrameBehindAnyNewlineMapping: whatever the frames,
// the terminal shows exactly the last one, whether the way to it maps LF
// to CR LF (an emulated PTY) or not (a raw tty). The renderer moves down
// with LFs; behind the mapping it used to lose the column ("down two,
// left one" from column 14 drew the status bar at column 1).
func TestScreenShowsTheFrameBehindAnyNewlineMapping(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const w, h = 30, 8
		frames := rapid.SliceOfN(frameText(h), 2, 6).Draw(rt, "frames")
		for _, mapped := range []bool{false, true} {
			em := vt.NewEmulator(w, h)
			var out io.Writer = &emuWriter{em: em}
			if mapped {
				out = ptyWriter{out}
			}
			s := newScreen(out, []string{"TERM=xterm-256color"}, colorprofile.ANSI256, w, h)
			if err := s.start(""); err != nil {
				rt.Fatal(err)
			}
			want := vt.NewEmulator(w, h)
			for i, f := range frames {
				if err := s.draw(f); err != nil {
					rt.Fatal(err)
				}
				// What the frame looks like drawn from scratch.
				fresh := newScreen(&emuWriter{em: want}, []string{"TERM=xterm-256color"}, colorprofile.ANSI256, w, h)
				_, _ = want.Write([]byte("\x1b[H\x1b[2J"))
				if err := fresh.draw(f); err != nil {
					rt.Fatal(err)
				}
				if got, exp := em.String(), want.String(); got != exp {
					rt.Fatalf("mapped=%v frame %d:\ngot:\n%s\nwant:\n%s", mapped, i, got, exp)
				}
			}
		}
	})
}

// TestFrameByFrameMatchesAFreshScreen: a screen that drew a run of frames
// sharing most of their lines (only the changed lines are compared again)
// shows each frame exactly as a fresh screen drawing it alone, including
// frames whose lines leave a style set for the next, and frames after a
// quiet spell, which borrow a buffer another terminal just gave back
// (holding that terminal's frame) while the renderer still holds this
// terminal's last one.
func TestFrameByFrameMatchesAFreshScreen(t *testing.T) {
	piece := rapid.SampledFrom([]string{"a", "word ", "界", "\x1b[31mred\x1b[m", "\x1b[1;44mbold\x1b[m", "\x1b[7mrev\x1b[0m", "\x1b[32mopen"})
	line := rapid.Map(rapid.SliceOfN(piece, 0, 6), func(p []string) string { return strings.Join(p, "") })
	rapid.Check(t, func(rt *rapid.T) {
		const w, h = 30, 6
		s, es := newEmuScreen(w, h)
		other, _ := newEmuScreen(w, h)
		if err := s.start(""); err != nil {
			rt.Fatal(err)
		}
		if err := other.start(""); err != nil {
			rt.Fatal(err)
		}
		cur := rapid.SliceOfN(line, h, h).Draw(rt, "first")
		for i := range rapid.IntRange(1, 6).Draw(rt, "frames") {
			if i > 0 {
				for _, y := range rapid.SliceOfN(rapid.IntRange(0, h-1), 0, 2).Draw(rt, "changed") {
					cur[y] = line.Draw(rt, "line")
				}
			}
			if rapid.Bool().Draw(rt, "quiet") {
				// The other terminal draws after its own quiet spell and
				// gives its buffer back; this one's next frame ends its
				// spell and gives its buffer back too.
				other.lastDraw = time.Now().Add(-2 * keepFrameWithin)
				if err := other.draw(strings.Join(rapid.SliceOfN(line, h, h).Draw(rt, "other"), "\n")); err != nil {
					rt.Fatal(err)
				}
				s.lastDraw = time.Now().Add(-2 * keepFrameWithin)
			}
			frame := strings.Join(cur, "\n")
			if err := s.draw(frame); err != nil {
				rt.Fatal(err)
			}
			fresh, ef := newEmuScreen(w, h)
			if err := fresh.start(""); err != nil {
				rt.Fatal(err)
			}
			if err := fresh.draw(frame); err != nil {
				rt.Fatal(err)
			}
			for y := range h {
				for x := range w {
					a, b := es.em.CellAt(x, y), ef.em.CellAt(x, y)
					if (a == nil) != (b == nil) || (a != nil && (a.Content != b.Content || a.Width != b.Width || !a.Style.Equal(&b.Style))) {
						rt.Fatalf("frame %d, cell %d,%d: drawn on %+v, fresh %+v\n%q", i, x, y, a, b, frame)
					}
				}
			}
		}
	})
}

// BenchmarkScreenDrawOneLine is the common frame: one styled line of 30
// changed (an input's text), the rest as before.
func BenchmarkScreenDrawOneLine(b *testing.B) {
	s := newScreen(io.Discard, []string{"TERM=xterm-256color"}, colorprofile.ANSI256, 100, 30)
	rows := strings.Repeat("\x1b[90m│\x1b[m row of text that stays \x1b[1;96mthe same\x1b[m \x1b[90m│\x1b[m\n", 28)
	frames := []string{"\x1b[1mSearch:\x1b[m one\n" + rows, "\x1b[1mSearch:\x1b[m two\n" + rows}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = s.draw(frames[i%2])
	}
}
