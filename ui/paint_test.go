package ui

import (
	"image/color"
	"testing"

	"charm.land/lipgloss/v2"
	"pgregory.net/rapid"
)

// TestPaintIsRender: for any style and any text, Paint gives exactly what
// Render gives; plain styles just take the fast path to it.
func TestPaintIsRender(t *testing.T) {
	colors := []color.Color{lipgloss.BrightCyan, lipgloss.Red, lipgloss.Color("#ff8800"), lipgloss.Color("201")}
	rapid.Check(t, func(t *rapid.T) {
		st := lipgloss.NewStyle()
		for _, f := range rapid.SliceOfN(rapid.IntRange(0, 16), 0, 5).Draw(t, "props") {
			switch f {
			case 0:
				st = st.Bold(true)
			case 1:
				st = st.Faint(true)
			case 2:
				st = st.Reverse(true)
			case 3:
				st = st.Underline(true)
			case 4:
				st = st.Italic(true)
			case 5:
				st = st.Foreground(colors[rapid.IntRange(0, len(colors)-1).Draw(t, "fg")])
			case 6:
				st = st.Background(lipgloss.Color("#003366"))
			case 7:
				st = st.Width(rapid.IntRange(1, 20).Draw(t, "width"))
			case 8:
				st = st.Padding(0, 1)
			case 9:
				st = st.MaxWidth(rapid.IntRange(1, 10).Draw(t, "maxwidth"))
			case 10:
				st = st.Border(lipgloss.NormalBorder())
			case 11:
				st = st.Strikethrough(true)
			case 12:
				st = st.UnderlineSpaces(false)
			case 13:
				st = st.ColorWhitespace(false)
			case 14:
				st = st.Blink(true)
			case 15:
				st = st.BorderStyle(lipgloss.RoundedBorder()) // a style, no sides: all four drawn
			case 16:
				st = st.Margin(1)
			}
		}
		s := rapid.StringMatching(`[a-z 日é\t\n\x1b\[0-9m]{0,20}`).Draw(t, "text")
		if got, want := Paint(st, s), st.Render(s); got != want {
			t.Fatalf("Paint(%q) = %q, Render = %q", s, got, want)
		}
	})
}

// TestPaintTakesTheFastPathForThemes: every style of the default theme is
// plain, so frames never go through lipgloss's Render for them.
func TestPaintTakesTheFastPathForThemes(t *testing.T) {
	th := DefaultTheme()
	for name, st := range map[string]lipgloss.Style{"Normal": th.Normal, "Focused": th.Focused, "Disabled": th.Disabled,
		"Selected": th.Selected, "Highlight": th.Highlight, "Muted": th.Muted, "Title": th.Title, "Border": th.Border,
		"FocusBorder": th.FocusBorder, "Accent": th.Accent, "Activity": th.Activity} {
		if painterFor(st) == nil {
			t.Errorf("theme style %s takes the slow path", name)
		}
	}
}
