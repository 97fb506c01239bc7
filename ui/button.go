package ui

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Button is a push button drawn as "[ Label ]". Enter, Space or a click
// sends OnClick.
type Button struct {
	// ID identifies the widget in its tree.
	ID string
	// Label is the text on the button.
	Label string
	// OnClick is the message sent when the button is pressed; nil sends
	// nothing.
	OnClick tea.Msg
	// Disabled greys the button out and ignores input.
	Disabled bool
	// Destructive marks the click as destructive: its tool is annotated
	// destructiveHint, so authorization can ask a human first.
	Destructive bool
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var _ Widget = Button{}

// Children returns nil: a button has no children.
func (Button) Children() []Node { return nil }

// WidgetID returns the button's id.
func (b Button) WidgetID() string { return b.ID }

// Focusable reports whether the button is enabled.
func (b Button) Focusable() bool { return !b.Disabled }

// HandleEvent sends OnClick on Enter, Space or a click.
func (b Button) HandleEvent(ev Event, _ *LocalState) []tea.Msg {
	if b.Disabled || b.OnClick == nil {
		return nil
	}
	if isActivate(ev) {
		return []tea.Msg{b.OnClick}
	}
	return nil
}

// Render draws "[ Label ]", the label truncated to fit and shown in reverse
// video while focused.
func (b Button) Render(rc RenderContext) string {
	w := max(rc.Width, 1)
	label := fitLine(b.Label, w-4)
	if w < 5 {
		// No room for the brackets: show what fits of the label alone.
		label = fitLine(b.Label, w)
		if label == "" {
			label = "[]"
		}
		st := controlStyle(rc, b.Disabled)
		if rc.Focused && !b.Disabled {
			st = rc.Theme.Highlight
		}
		return clipWidth(st.Render(label), w)
	}
	switch {
	case b.Disabled:
		return clipWidth(rc.Theme.Disabled.Render("[ "+label+" ]"), w)
	case rc.Focused:
		return clipWidth(rc.Theme.Focused.Render("[")+
			rc.Theme.Highlight.Render(" "+label+" ")+
			rc.Theme.Focused.Render("]"), w)
	default:
		return clipWidth(rc.Theme.Normal.Render("[ "+label+" ]"), w)
	}
}

// The helpers below are shared by the input widgets (Button, TextInput,
// TextArea, PasswordField, Checkbox, SelectList, Tabs and Menu).

// isActivate reports whether ev presses a control: Enter, Space or a click.
func isActivate(ev Event) bool {
	switch ev := ev.(type) {
	case tea.KeyPressMsg:
		s := ev.String()
		return s == "enter" || s == "space"
	case ClickEvent:
		return true
	}
	return false
}

// keyName returns the String form of a key press, or "" for other events.
func keyName(ev Event) string {
	if k, ok := ev.(tea.KeyPressMsg); ok {
		return k.String()
	}
	return ""
}

// controlStyle returns the style of a widget's main part: Disabled,
// Focused or Normal.
func controlStyle(rc RenderContext, disabled bool) lipgloss.Style {
	switch {
	case disabled:
		return rc.Theme.Disabled
	case rc.Focused:
		return rc.Theme.Focused
	default:
		return rc.Theme.Normal
	}
}

// clipWidth cuts every line of the styled string s to at most w cells, a
// last guard against grapheme clusters that are wider than their runes.
func clipWidth(s string, w int) string {
	w = max(w, 1)
	if lipgloss.Width(s) <= w {
		return s
	}
	return lipgloss.NewStyle().MaxWidth(w).Render(s)
}

// cleanLine makes app text safe to draw on one line: line breaks and tabs
// become spaces and other control characters (which could smuggle
// terminal escape sequences) become U+FFFD.
func cleanLine(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(shownRune, s)
}

// shownRune returns the rune drawn for r: whitespace controls become a
// space, other control characters U+FFFD.
func shownRune(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return ' '
	case unicode.IsControl(r):
		return '\uFFFD'
	default:
		return r
	}
}

// runeCells returns the number of terminal cells r takes when drawn;
// control characters count as the one cell of what [shownRune] draws.
func runeCells(r rune) int {
	if r < 0x7f && r >= 0x20 || unicode.IsControl(r) {
		return 1
	}
	return lipgloss.Width(string(r))
}

// fitLine makes the app text s safe to draw on one line (see cleanLine)
// and truncates it to w cells like Truncate, without measuring more of a
// long s than it needs.
func fitLine(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if len(s) > 4*w+16 {
		s = cutCells(s, 2*w+8)
	}
	return Truncate(cleanLine(s), w)
}

// cutCells returns the longest prefix of the plain string s that fits in
// n cells.
func cutCells(s string, n int) string {
	used := 0
	for i, r := range s {
		used += runeCells(r)
		if used > n {
			return s[:i]
		}
	}
	return s
}

// padCells pads the styled string s with spaces to w cells.
func padCells(s string, w int) string {
	if n := w - lipgloss.Width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}
