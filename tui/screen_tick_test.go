package tui

import (
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/charmbracelet/colorprofile"
)

// tickFrames are two frames of a screen whose status bar counts an
// agent's age, one second apart.
func tickFrames() [2]string {
	rows := strings.Repeat("\x1b[90m│\x1b[m  api-gateway    eu-west   ok        41.5    512      1840                    \x1b[90m│\x1b[m\n", 22)
	return [2]string{rows + "\x1b[7m agent: x · 12s ago · ctrl+o attach\x1b[m", rows + "\x1b[7m agent: x · 13s ago · ctrl+o attach\x1b[m"}
}

// TestATerminalTickingOnceASecondKeepsItsFrame: frames a second apart
// (a little more, as a tick comes) are composed in the terminal's own
// frame buffer, so only the changed row is parsed and compared; a frame
// after a quiet spell borrows one and gives it back.
func TestATerminalTickingOnceASecondKeepsItsFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScreen(io.Discard, []string{"TERM=xterm-256color"}, colorprofile.ANSI256, 80, 24)
		if err := s.start(""); err != nil {
			t.Fatal(err)
		}
		fr := tickFrames()
		for i := range 5 {
			if err := s.draw(fr[i%2]); err != nil {
				t.Fatal(err)
			}
			if i > 0 && s.frame == nil {
				t.Fatalf("frame %d, %s after the last, gave its buffer back", i, time.Second+20*time.Millisecond)
			}
			time.Sleep(time.Second + 20*time.Millisecond)
		}
		time.Sleep(2 * time.Second) // quiet
		if err := s.draw(fr[1]); err != nil {
			t.Fatal(err)
		}
		if s.frame != nil {
			t.Fatal("a frame after a quiet spell kept its buffer")
		}
	})
}

// BenchmarkTickFrame is such a tick: one row changed, the frame buffer
// kept from the last frame or, after a quiet spell, borrowed (the whole
// screen parsed and compared again).
func BenchmarkTickFrame(b *testing.B) {
	for _, quiet := range []bool{false, true} {
		name := "kept"
		if quiet {
			name = "borrowed"
		}
		b.Run(name, func(b *testing.B) {
			s := newScreen(io.Discard, []string{"TERM=xterm-256color"}, colorprofile.ANSI256, 80, 24)
			if err := s.start(""); err != nil {
				b.Fatal(err)
			}
			fr := tickFrames()
			_ = s.draw(fr[1])
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if quiet {
					s.lastDraw = time.Now().Add(-2 * keepFrameWithin)
				}
				_ = s.draw(fr[i%2])
			}
		})
	}
}
