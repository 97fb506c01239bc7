package tui

import (
	"image/color"
	"strings"

	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// Colours brought down to the terminal's profile once, where they are
// parsed.
//
// Ultraviolet's renderer converts colours to the terminal's profile as it
// writes each cell, the cell's style and the pen's both, through
// colorprofile's cache: a map behind one lock that every terminal of the
// process shares. On a 256- or 16-colour terminal (what an SSH client
// reports unless it forwards COLORTERM) that was a tenth of a keystroke's
// CPU when a box changed colour, for colours that were already the
// terminal's own: themes use the basic sixteen.
//
// The screen converts instead: a row's cells are brought to the profile
// when the row is parsed into the frame buffer, which only a row whose
// text names a colour outside the profile needs, and the renderer is told
// the terminal takes any colour, so it writes the cells' colours as they
// are. The renderer's copy of the screen then holds converted cells, as
// the frame buffer does, and compares them alike.

// ownsColors reports whether the screen converts colours itself for a
// terminal of profile p (the renderer is then told TrueColor). Plain and
// colourless profiles drop styles whole, which is the renderer's to do;
// TrueColor needs no conversion.
func ownsColors(p colorprofile.Profile) bool {
	return p == colorprofile.ANSI || p == colorprofile.ANSI256
}

// rendererProfile is the profile the renderer is told.
func (s *screen) rendererProfile() colorprofile.Profile {
	if s.ownColors() {
		return colorprofile.TrueColor
	}
	return s.profile
}

func (s *screen) ownColors() bool { return !s.rendererColors && ownsColors(s.profile) }

// convertRows brings the colours of rows [from, to) of buf to the
// profile, if the screen converts them and text (those rows' text) names
// a colour the profile may not have.
func (s *screen) convertRows(buf *uv.ScreenBuffer, text string, from, to int) {
	if !s.ownColors() || !foreignColors(text, s.profile) {
		return
	}
	for y := from; y < min(to, buf.Height()); y++ {
		line := buf.Line(y)
		for x := range line {
			st := &line[x].Style
			st.Fg = convertColor(st.Fg, s.profile)
			st.Bg = convertColor(st.Bg, s.profile)
			st.UnderlineColor = convertColor(st.UnderlineColor, s.profile)
		}
	}
}

// foreignColors reports whether text may name a colour outside profile p
// (ANSI or ANSI256): a 24-bit colour (38;2, 48;2, 58;2, or with colons),
// and for ANSI a 256-colour index (38;5 and the like) too. The basic
// sixteen are every profile's. It may say yes for text that only looks
// like it (the row is then converted for nothing), never no for text that
// names one.
func foreignColors(text string, p colorprofile.Profile) bool {
	if !strings.Contains(text, "\x1b") {
		return false
	}
	if strings.Contains(text, "8;2") || strings.Contains(text, "8:2") {
		return true
	}
	return p == colorprofile.ANSI && (strings.Contains(text, "8;5") || strings.Contains(text, "8:5"))
}

// convertColor is what colorprofile's Profile.Convert makes of c for p
// (ANSI or ANSI256), without its shared cache.
func convertColor(c color.Color, p colorprofile.Profile) color.Color {
	switch c.(type) {
	case nil, ansi.BasicColor:
		return c
	case ansi.IndexedColor:
		if p == colorprofile.ANSI {
			return ansi.Convert16(c)
		}
		return c
	}
	if p == colorprofile.ANSI {
		return ansi.Convert16(c)
	}
	return ansi.Convert256(c)
}
