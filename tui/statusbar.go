package tui

import (
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// statusState is the status bar: its notice and the last line drawn.
type statusState struct {
	notice string // one-line notice (NoticeMsg, a failed save)
	// status is the last status bar drawn and what it was drawn from.
	status struct {
		key  statusKey
		line string
	}
}

// statusBar is the last line: what the session is, what agents did and may
// do, who is here and the keys. Each part has a rank; when the line is too
// narrow the least important parts are dropped first (an urgent part that
// does not fit whole is cut with an ellipsis), and the rest keep their
// order. The keys to quit and, for the owner, to attach an agent are
// ranked first, in a short form ("ctrl+o") that is spelled out
// ("ctrl+o attach") when there is room: they stay down to 30 columns.
func (m *Model) statusBar() string {
	// The bar is laid out again only when what it shows changed: most
	// frames (an agent's change to the app) leave it as it was.
	key := statusKey{notice: m.notice, control: m.control(), agent: m.agentNotice(), who: m.whoIsHere(), width: m.width}
	if m.status.line != "" && m.status.key == key {
		return m.status.line
	}
	m.status.key, m.status.line = key, m.layoutStatusBar(key)
	return m.status.line
}

// statusKey is what the status bar is drawn from (besides what is fixed
// for a terminal: its role and session).
type statusKey struct {
	notice, control, agent, who string
	width                       int
}

// layoutStatusBar fits the status bar's parts into the width.
func (m *Model) layoutStatusBar(k statusKey) string {
	type part struct {
		text   string
		short  string // the form used until there is room for text
		rank   int    // 0 is kept longest
		urgent bool   // may be cut to fit
		keep   bool
		long   bool // shown as text rather than short
	}
	parts := []part{{text: "raxol-ssh", rank: 10}}
	for i, s := range []string{k.notice, k.control, k.agent} {
		if s != "" {
			parts = append(parts, part{text: s, rank: 2 + i, urgent: true})
		}
	}
	if m.opts.Role != RoleOwner {
		parts = append(parts, part{text: m.opts.Role.String(), rank: 5})
	}
	// Who is here is cut rather than dropped when it is long (several
	// agents with their ages).
	parts = append(parts, part{text: "session " + m.sess.ID, rank: 6}, part{text: k.who, rank: 7, urgent: true})
	// A hosted program takes ctrl+c itself (an observer's still leaves).
	quits := !m.hosted() || m.opts.Role == RoleObserver
	if m.opts.Role == RoleOwner {
		parts = append(parts, part{text: keyFor(bindAttach) + " attach", short: keyFor(bindAttach), rank: 1}, part{text: keyFor(bindLog) + " log", rank: 11},
			part{text: keyFor(bindPause) + " pause", rank: 12})
		if quits {
			parts = append(parts, part{text: keyFor(bindQuit) + " quit", short: keyFor(bindQuit), rank: 0})
		}
	} else {
		parts = append(parts, part{text: keyFor(bindLog) + " log", rank: 11})
		if quits {
			parts = append(parts, part{text: keyFor(bindQuit) + " leave", short: keyFor(bindQuit), rank: 0})
		}
	}
	const sep = " · "
	sepW := ansi.StringWidth(sep)
	// The keys are spelled out after who is here and before the rest:
	// ctrl+c at rank 8, ctrl+o at 9.
	type step struct {
		i      int
		rank   int
		expand bool
	}
	var steps []step
	for i, p := range parts {
		steps = append(steps, step{i: i, rank: p.rank})
		if p.short != "" {
			steps = append(steps, step{i: i, rank: 8 + p.rank, expand: true})
		}
	}
	sort.SliceStable(steps, func(a, b int) bool { return steps[a].rank < steps[b].rank })
	used, n, full := 1, 0, false // the space in front, the parts kept, a part was dropped
	for _, st := range steps {
		p := &parts[st.i]
		if st.expand {
			if extra := ansi.StringWidth(p.text) - ansi.StringWidth(p.short); p.keep && used+extra <= m.width {
				p.long = true
				used += extra
			}
			continue
		}
		text := p.text
		if p.short != "" {
			text = p.short
		}
		if text == "" || full {
			continue
		}
		gap := 0
		if n > 0 {
			gap = sepW
		}
		need := gap + ansi.StringWidth(text)
		if used+need > m.width {
			// Cut an urgent part that has room for a few words; drop
			// anything else, and everything less important with it
			// (but the keys are still spelled out if they fit).
			full = true
			left := m.width - used - gap
			if !p.urgent || left < 8 {
				continue
			}
			p.text = ui.Truncate(p.text, left)
			need = gap + ansi.StringWidth(p.text)
		}
		p.keep = true
		used += need
		n++
	}
	var shown []string
	for _, p := range parts {
		switch {
		case p.keep && (p.short == "" || p.long):
			shown = append(shown, p.text)
		case p.keep:
			shown = append(shown, p.short)
		}
	}
	// The line is padded to the width: a space after the last part
	// when there is room for it.
	text := ui.Truncate(" "+strings.Join(shown, sep), m.width)
	return ui.Paint(statusStyle, text+strings.Repeat(" ", max(0, m.width-ansi.StringWidth(text))))
}

// statusStyle draws the status bar.
var statusStyle = lipgloss.NewStyle().Reverse(true)
