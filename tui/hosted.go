package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// A hosted program (ui.Hosted: a Bubble Tea program served by package
// teaapp) draws its whole screen and takes its own keys. The terminal
// keeps for the session only ctrl+o (the attach panel), ctrl+g (the
// activity log), ctrl+p (pause agents), ctrl+f (focus only) and, while
// the attach panel is open, ctrl+r (rotate the token); every other key,
// Tab, Shift+Tab, Esc and ctrl+c included, goes to the program. The
// terminal tells the program its size (ui.TerminalSize) when it attaches,
// resizes and leaves; the program decides the one size it is drawn at.

// hostedState is what the terminal keeps about a hosted program.
type hostedState struct {
	told ui.TerminalSize // the size last told (zero: never)
}

// hosted reports whether the session's app is a hosted program.
func (m *Model) hosted() bool { return ui.IsHosted(m.snap.Tree) }

// programTakes reports whether binding b's key goes to a hosted program
// rather than to the terminal.
func programTakes(b binding) bool {
	switch b {
	case bindQuit, bindFocusNext, bindFocusPrev, bindEscape, bindNone:
		return true
	}
	return false
}

// toProgram hands a key to the hosted program, as a key no widget takes.
func (m *Model) toProgram(k tea.KeyPressMsg, origin dispatcher.Origin) {
	m.routeFrom("", k, origin)
}

// tellSize tells a hosted program this terminal's app area (its window
// less the status bar), when it changed since last told. gone says the
// terminal is leaving.
func (m *Model) tellSize(gone bool) {
	if !m.hosted() || m.opts.TerminalID == "" {
		return
	}
	ts := ui.TerminalSize{Terminal: m.opts.TerminalID, Width: m.width, Height: max(1, m.height-1),
		Owner: m.opts.Role == RoleOwner, Gone: gone}
	if ts == m.told {
		return
	}
	if gone && m.told == (ui.TerminalSize{}) {
		return // never told: nothing to take back
	}
	m.told = ts
	_ = m.sess.Dispatcher.Send(m.origin, ts) // a full queue: the next resize tells it
}

// hostedFocus is the component a hosted program has focused: the human's
// attention.
func (m *Model) hostedFocus() (string, bool) {
	h, ok := m.snap.Tree.(ui.Hosted)
	if !ok {
		return "", false
	}
	return h.Focused(), true
}

// lastWords is what a hosted program leaves on the main screen when its
// session ended, as a program of its own does when it quits: its final
// view (the latest snapshot's), "" for a program in the alternate screen,
// for any other app or while the session goes on (a terminal that only
// leaves takes nothing with it).
func (m *Model) lastWords() string {
	if m.sess.Context().Err() == nil {
		return ""
	}
	tree := m.sess.Dispatcher.Snapshot().Tree
	if !ui.IsHosted(tree) {
		return ""
	}
	if a, ok := tree.(interface{ AltScreen() bool }); ok && a.AltScreen() {
		return "" // an alternate screen's view leaves with it
	}
	var out string
	_ = m.sess.Guard().Do(metrics.HookRender, "", func() {
		out = ui.RenderNode(tree, m.width, ui.RenderOptions{Theme: m.opts.Theme})
	})
	out = strings.TrimRight(out, " \n")
	if out == "" {
		return ""
	}
	return out + "\n"
}

// programCursor is where a hosted program puts the terminal's real cursor
// in this terminal's frame (tea.View.Cursor), or ok false: none, or not in
// the part of the program this terminal shows. The app's frame starts at
// the top-left cell; the root's local state says how many printed lines
// are drawn above the view (Offset) and how many of the view's rows are
// shown (Row).
func (m *Model) programCursor() (x, y int, ok bool) {
	co, isOwner := m.snap.Tree.(ui.CursorOwner)
	w, isWidget := m.snap.Tree.(ui.Widget)
	if !isOwner || !isWidget {
		return 0, 0, false
	}
	x, y, ok = co.Cursor()
	if !ok {
		return 0, 0, false
	}
	m.mu.Lock()
	st := *m.localLocked(w.WidgetID())
	m.mu.Unlock()
	if x >= m.width || y >= st.Row {
		return 0, 0, false
	}
	return x, y + st.Offset, true
}
