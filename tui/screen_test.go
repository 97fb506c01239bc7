package tui

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/vt"
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
