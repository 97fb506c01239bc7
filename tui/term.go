package tui

import (
	"strings"

	"github.com/charmbracelet/colorprofile"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// What a terminal can do is decided from its type (TERM) with a small
// built-in table, since the server has no terminfo database, and from the
// client's environment (NO_COLOR, COLORTERM...; colorprofile.Env):
//
//   - Terminals that cannot be driven: a full-screen app needs ANSI
//     (ECMA-48) cursor addressing. The hardcopy and glass types in
//     [Undrivable]'s table have none, or only a non-ANSI one (vt52's
//     ESC Y); a session on one is refused with one line saying so.
//   - Plain terminals (profile NoTTY: an empty TERM, "dumb", "ansi-mini"
//     and the like, taken to address the cursor but to want no
//     attributes): no colours
//     or attributes at all, no alternate screen, no mouse, no bracketed
//     paste, no cursor hiding and no window title; the screen is drawn
//     with cursor moves and text alone.
//   - Monochrome terminals (profile ASCII: vt100 to vt420, "-mono" and
//     "-m" types, or NO_COLOR): attributes (bold, reverse) but no colour.
//   - "linux" (the console): 16 colours at most (ANSI).
//
// On plain and monochrome terminals, where focus drawn in colour alone
// would not show, the focused widget is also marked in the text: "> "
// before its first line ([ui.RenderOptions.MarkFocus]).

// undrivable lists terminal types a full-screen app cannot drive: no
// cursor addressing, or none in ANSI form.
var undrivable = map[string]bool{
	"unknown": true, "glasstty": true, "printer": true, "lpr": true,
	"tty33": true, "tty35": true, "tty37": true, "tty43": true,
	"vt52": true,
}

// Undrivable returns the one line telling the user that a terminal of
// type term cannot run the app, or "" when it can.
func Undrivable(term string) string {
	if !undrivable[strings.ToLower(term)] {
		return ""
	}
	return "a terminal with ANSI cursor addressing is needed (TERM=" + term + " has none); try TERM=xterm-256color"
}

// plainTerms address the cursor (ANSI) but draw no attributes.
// "dumb" is among them: terminfo gives it no cup, but a user who sets
// TERM=dumb (an editor's shell, a CI runner, a deliberate choice) sits at
// a terminal that addresses the cursor in ANSI as every emulator does;
// it asked for no attributes, and gets none.
var plainTerms = map[string]bool{"ansi-mini": true, "dumb": true}

// maxProfile is the most a terminal of type term is known to show.
func maxProfile(term string) colorprofile.Profile {
	term = strings.ToLower(term)
	switch {
	case term == "" || plainTerms[term] || undrivable[term]:
		return colorprofile.NoTTY
	case strings.HasSuffix(term, "-mono"), strings.HasSuffix(term, "-m"),
		strings.HasPrefix(term, "vt1"), strings.HasPrefix(term, "vt2"),
		strings.HasPrefix(term, "vt3"), strings.HasPrefix(term, "vt4"):
		return colorprofile.ASCII
	case term == "linux" || strings.HasPrefix(term, "linux-"):
		return colorprofile.ANSI
	}
	return colorprofile.TrueColor
}

// termLimit is the most the terminal type in env shows; without a TERM
// in env (a terminal not from SSH, in tests) it is unlimited.
func termLimit(env []string) colorprofile.Profile {
	term, found := "", false
	for _, kv := range env { // the last one wins, as in a shell
		if v, ok := strings.CutPrefix(kv, "TERM="); ok {
			term, found = v, true
		}
	}
	if !found {
		return colorprofile.TrueColor
	}
	return maxProfile(term)
}

// Profile returns the color profile of a terminal with the client
// environment env (TERM included): what colorprofile.Env makes of env,
// but never more than the terminal type is known to show. CLICOLOR_FORCE
// cannot add colours to a type that has none.
func Profile(env []string) colorprofile.Profile {
	return min(colorprofile.Env(env), termLimit(env))
}

// limitProfile bounds a profile reported later (Bubble Tea's
// ColorProfileMsg, which may upgrade to TrueColor when the terminal says
// it has RGB) by what the terminal type shows, and keeps a terminal that
// started without colours (plain, monochrome, NO_COLOR) without them.
func limitProfile(p colorprofile.Profile, env []string, initial colorprofile.Profile) colorprofile.Profile {
	p = min(p, termLimit(env))
	if initial == colorprofile.NoTTY || initial == colorprofile.ASCII {
		p = min(p, initial)
	}
	return p
}

// plainProfile reports whether p allows no attributes at all.
func plainProfile(p colorprofile.Profile) bool { return p == colorprofile.NoTTY }

// markFocus reports whether focus must be marked in the text under p:
// focus is drawn with colours (a box's border, a label), which p lacks.
func markFocus(p colorprofile.Profile) bool {
	return p == colorprofile.NoTTY || p == colorprofile.ASCII
}

// focusRect returns where the focused widget was drawn in the last frame
// (the topmost of its rectangles), for a plain terminal's cursor.
func (m *Model) focusRect() (ui.Rect, bool) {
	for i := len(m.frame.Hits) - 1; i >= 0; i-- {
		if h := m.frame.Hits[i]; h.ID == m.focus && m.focus != "" {
			return h.Rect, true
		}
	}
	return ui.Rect{}, false
}
