package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// panelState says which panels are open between the app and the status
// bar: the attach panel (ctrl+o, owner only) and the activity log
// (ctrl+g).
type panelState struct {
	showAttach bool
	showLog    bool
	viewLink   string // the browser link the open attach panel shows ("" none)
}

// AttachURLs returns the session's Streamable HTTP and SSE endpoint URLs.
func AttachURLs(baseURL, sessionID string) (streamable, sse string) {
	base := strings.TrimRight(baseURL, "/") + "/sessions/" + sessionID
	return base + "/mcp", base + "/sse"
}

// attachMinWidth is the narrowest window the attach panel is drawn in;
// below it the panel says how wide the window must be.
const attachMinWidth = 20

// attachPanel lists the URLs and the token for a window of the terminal's
// width with room for at most rows lines. A value longer than the width
// is wrapped, broken anywhere and with nothing added, each of its lines
// starting at the left edge: joining them gives the value back, and a
// line copied on its own is part of it. A window too narrow or too short
// for the panel gets a notice saying what size it needs, never a value cut
// without notice.
func (m *Model) attachPanel(rows int) []string {
	w := m.width
	th := m.opts.Theme
	streamable, sse := AttachURLs(m.opts.BaseURL, m.sess.ID)
	token := m.sess.Token()
	if w >= attachMinWidth {
		var lines []string
		text := func(st lipgloss.Style, s string) {
			for _, l := range strings.Split(ansi.Wrap(s, w, ""), "\n") {
				lines = append(lines, ui.Paint(st, l))
			}
		}
		value := func(s string) {
			lines = append(lines, strings.Split(ansi.Hardwrap(s, w, true), "\n")...)
		}
		text(th.Title, "Attach an agent to this session ("+keyFor(bindAttach)+" closes)")
		text(th.Muted, "MCP Streamable HTTP URL:")
		value(streamable)
		text(th.Muted, "MCP SSE URL:")
		value(sse)
		if token != "" {
			text(th.Muted, "Bearer token (Authorization: Bearer <token>):")
			value(token)
			text(th.Muted, keyFor(bindRotateToken)+" makes a new token and disconnects the agents using this one.")
		} else {
			// Restored from a snapshot, which keeps only the token's hash.
			text(th.Muted, "Bearer token: restored session; agents keep the token they had.")
			text(th.Muted, keyFor(bindRotateToken)+" makes a new one (shown here) and disconnects them.")
		}
		if len(lines) <= rows && m.viewLink != "" {
			// The browser link is shown where it fits beside the rest:
			// an agent's URLs and token come first.
			without := len(lines)
			text(th.Muted, "Open in a browser (you are asked to let it in; the link works once, for 10 minutes):")
			value(m.viewLink)
			if len(lines) > rows {
				lines = lines[:without]
			}
		}
		if m.opts.Browsers != nil && len(lines) < rows {
			if b := m.opts.Browsers(); len(b) > 0 {
				without := len(lines)
				text(th.Muted, "Browsers: "+strings.Join(b, ", ")+" ("+keyFor(bindRemoveBrowsers)+" removes them)")
				if len(lines) > rows {
					lines = lines[:without]
				}
			}
		}
		if len(lines) <= rows {
			return lines
		}
		return m.attachTooSmall(w, rows, fmt.Sprintf("The window is too short for the attach panel: it needs %d more rows (%s closes).", len(lines)-rows, keyFor(bindAttach)))
	}
	return m.attachTooSmall(w, rows, fmt.Sprintf("Window too narrow for the attach panel: it needs %d columns (%s closes).", attachMinWidth, keyFor(bindAttach)))
}

// attachTooSmall is the notice drawn instead of the attach panel, wrapped
// to the width and cut to rows lines.
func (m *Model) attachTooSmall(w, rows int, msg string) []string {
	lines := strings.Split(ansi.Wrap(msg, w, ""), "\n")
	for i, l := range lines {
		lines[i] = ui.Paint(m.opts.Theme.Title, l)
	}
	if len(lines) > rows {
		lines = lines[:max(rows, 0)]
	}
	return lines
}
