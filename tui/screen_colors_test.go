package tui

import (
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/vt"
	"pgregory.net/rapid"
)

// colorSegments are rows' pieces in colours of every kind: the basic
// sixteen, 256-colour indexes and 24-bit colours, as foreground,
// background and underline colour, in both separator forms.
var colorSegments = []string{
	"a", "word ", "  ", "界", "│", "─────", "plain text",
	"\x1b[31mred\x1b[m", "\x1b[91;44mbright\x1b[m", "\x1b[1;96m│\x1b[m", "\x1b[90m│\x1b[m",
	"\x1b[38;5;196mindex\x1b[m", "\x1b[48;5;21m bg \x1b[m", "\x1b[38;5;8mgrey\x1b[m",
	"\x1b[38;2;10;200;30mgreen\x1b[m", "\x1b[48;2;200;10;30m  \x1b[m", "\x1b[1;38;2;250;250;250m│\x1b[m",
	"\x1b[4;58;2;1;2;3munder\x1b[m", "\x1b[4;58;5;100mul\x1b[m", "\x1b[38:2::5:6:7mcolon\x1b[m",
	"\x1b[38;2;10;200;30;48;5;17mboth\x1b[m", "v8;2 text",
}

// TestOwnColorsShowWhatTheRendererWould: through any run of frames, on a
// 16- or 256-colour terminal, a screen that brings colours to the profile
// as it parses rows leaves the terminal showing exactly what one that
// lets the renderer convert them as it writes does, cell by cell
// (character, width, every colour, attributes, link), including after a
// release. After the profile changes, it shows what a screen started at
// the new profile does: the renderer left on its own keeps showing cells
// in the old profile's colours, as its copy of the screen holds them
// unconverted.
func TestOwnColorsShowWhatTheRendererWould(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w, h := rapid.IntRange(8, 40).Draw(rt, "w"), rapid.IntRange(2, 6).Draw(rt, "h")
		profiles := []colorprofile.Profile{colorprofile.ANSI256, colorprofile.ANSI}
		p := rapid.SampledFrom(profiles).Draw(rt, "profile")
		own, eo := newProfileScreen(rt, w, h, p, false)
		ref, er := newProfileScreen(rt, w, h, p, true)
		if !own.ownColors() || ref.ownColors() {
			rt.Fatalf("own %v, reference %v", own.ownColors(), ref.ownColors())
		}
		seg := rapid.IntRange(0, len(colorSegments)-1)
		rows := make([][]int, h)
		for y := range rows {
			rows[y] = rapid.SliceOfN(seg, 0, 6).Draw(rt, "row")
		}
		changed := false // the profile, since the reference started
		for step := range rapid.IntRange(1, 8).Draw(rt, "frames") {
			for range rapid.IntRange(0, h*2).Draw(rt, "edits") {
				r := rows[rapid.IntRange(0, h-1).Draw(rt, "y")]
				if len(r) > 0 {
					r[rapid.IntRange(0, len(r)-1).Draw(rt, "at")] = seg.Draw(rt, "to")
				}
			}
			switch rapid.IntRange(0, 9).Draw(rt, "event") {
			case 0:
				own.release()
				ref.release()
			case 1:
				p = rapid.SampledFrom(profiles).Draw(rt, "new profile")
				own.setProfile(p)
				ref, er = newProfileScreen(rt, w, h, p, true)
				changed = true
			}
			f := rowsFrame(rows, colorSegments)
			if err := own.draw(f); err != nil {
				rt.Fatal(err)
			}
			if err := ref.draw(f); err != nil {
				rt.Fatal(err)
			}
			if changed {
				sameScreen(rt, step, f, eo.em, er.em, "converted on parsing", "a screen started at the new profile", false)
				continue
			}
			sameScreen(rt, step, f, eo.em, er.em, "converted on parsing", "converted by the renderer", true)
		}
	})
}

// newProfileScreen is a started screen of profile p on an emulator; with
// rendererColors, its renderer converts colours as it does on its own.
func newProfileScreen(rt *rapid.T, w, h int, p colorprofile.Profile, rendererColors bool) (*screen, *emuWriter) {
	ew := &emuWriter{em: vt.NewEmulator(w, h)}
	s := newScreen(ew, []string{"TERM=xterm-256color"}, p, w, h)
	s.rendererColors = rendererColors
	s.setProfile(p) // tells its renderer
	if err := s.start(""); err != nil {
		rt.Fatal(err)
	}
	return s, ew
}

// TestForeignColors: a row is converted when its text may name a colour
// its terminal lacks, never skipped when it does.
func TestForeignColors(t *testing.T) {
	for _, c := range []struct {
		text       string
		ansi, x256 bool
	}{
		{"plain", false, false},
		{"v8;2 no escape", false, false},
		{"\x1b[31mred\x1b[m", false, false},
		{"\x1b[1;96;44mbright\x1b[m", false, false},
		{"\x1b[38;5;196mi\x1b[m", true, false},
		{"\x1b[48:5:21mi\x1b[m", true, false},
		{"\x1b[38;2;1;2;3mrgb\x1b[m", true, true},
		{"\x1b[48;2;1;2;3mrgb\x1b[m", true, true},
		{"\x1b[4;58;2;1;2;3mul\x1b[m", true, true},
		{"\x1b[38:2::1:2:3mrgb\x1b[m", true, true},
	} {
		if got := foreignColors(c.text, colorprofile.ANSI); got != c.ansi {
			t.Errorf("foreignColors(%q, ANSI) = %v", c.text, got)
		}
		if got := foreignColors(c.text, colorprofile.ANSI256); got != c.x256 {
			t.Errorf("foreignColors(%q, ANSI256) = %v", c.text, got)
		}
	}
}
