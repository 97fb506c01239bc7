package ui

import "charm.land/lipgloss/v2"

// Theme holds the styles widgets draw with. Colors are from the basic 16
// ANSI colors, and focus and selection also change attributes (bold,
// reverse), so the looks read on 16-color and monochrome terminals.
type Theme struct {
	Normal      lipgloss.Style // plain text
	Focused     lipgloss.Style // the focused widget's main part
	Disabled    lipgloss.Style // a disabled widget
	Selected    lipgloss.Style // a selected row, item or tab
	Highlight   lipgloss.Style // the local highlight (cursor row) in a focused list
	Muted       lipgloss.Style // placeholders, hints, axes
	Title       lipgloss.Style // box and chart titles
	Border      lipgloss.Style // box borders
	FocusBorder lipgloss.Style // the border of a focused widget's frame
	Accent      lipgloss.Style // chart bars, lines and points
	Activity    lipgloss.Style // a widget an agent just acted on
}

// DefaultTheme returns the built-in theme.
func DefaultTheme() *Theme {
	s := lipgloss.NewStyle
	return &Theme{
		Normal:      s(),
		Focused:     s().Bold(true).Foreground(lipgloss.BrightCyan),
		Disabled:    s().Faint(true).Foreground(lipgloss.BrightBlack),
		Selected:    s().Bold(true).Foreground(lipgloss.BrightGreen),
		Highlight:   s().Reverse(true),
		Muted:       s().Foreground(lipgloss.BrightBlack),
		Title:       s().Bold(true),
		Border:      s().Foreground(lipgloss.BrightBlack),
		FocusBorder: s().Foreground(lipgloss.BrightCyan),
		Accent:      s().Foreground(lipgloss.Cyan),
		Activity:    s().Reverse(true).Bold(true).Foreground(lipgloss.BrightYellow),
	}
}
