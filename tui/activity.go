package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// HighlightFor is how long a widget an agent acted on stays highlighted,
// and AgentNoticeFor how long the status bar tells what the agent did.
const (
	HighlightFor   = time.Second
	AgentNoticeFor = 5 * time.Second
)

// agentCues is how this terminal shows what agents do: the widget an
// agent just acted on highlighted, its action in the status bar, and the
// agents' ages there.
type agentCues struct {
	lastAgent    session.Action // the last agent action seen
	seenAgentSeq uint64         // its number in the session
	highlight    string         // widget an agent just acted on
	// highlightUntil is when the highlight ends; highlightTimer and
	// noticeTimer schedule the highlightDoneMsg, the noticeDoneMsg.
	highlightUntil time.Time
	highlightTimer timer
	noticeTimer    timer
	ageTimer       timer     // the agents' ages redraw (ageMsg)
	ageDue         time.Time // when the scheduled ageMsg comes
	agesMoved      bool      // presence changed since: an age may change sooner
}

// highlightDoneMsg ends a highlight whose time is up.
type highlightDoneMsg struct{ gen uint64 }

// agentActivity notices a new agent action: it highlights the widget for
// a second and puts the action in the status bar.
//
// An agent acting many times a second moves the ends of the highlight and
// of the notice; it does not add timers. Each has at most one tick
// pending, which on arrival either ends it or, if the end moved, waits
// for the rest (see highlightTick, noticeTick): a tick is a goroutine and
// a message, and a message a frame to compose.
func (m *Model) agentActivity() tea.Cmd {
	a, seq, ok := m.sess.LastAgentAction()
	if !ok || seq == m.seenAgentSeq {
		return nil
	}
	first := m.seenAgentSeq == 0 && m.lastAgent.At.IsZero()
	m.seenAgentSeq, m.lastAgent = seq, a
	if first && time.Since(a.At) > AgentNoticeFor {
		return nil // old news when this terminal attached
	}
	// The status bar's notice ends by itself: redraw when it does, or it
	// stays (and hides what it displaced) until something else changes.
	noticeDone := m.noticeTick()
	if a.Widget == "" || a.Outcome != "ok" {
		return noticeDone
	}
	m.highlight = a.Widget
	m.highlightUntil = time.Now().Add(HighlightFor)
	return tea.Batch(noticeDone, m.highlightTick())
}

// highlightTick is the tick that ends the highlight at highlightUntil, or
// nil if one is pending.
func (m *Model) highlightTick() tea.Cmd {
	return m.highlightTimer.arm(max(time.Until(m.highlightUntil), 0), func(gen uint64) tea.Msg { return highlightDoneMsg{gen} })
}

// noticeTick is the tick that ends the agent notice (AgentNoticeFor after
// the last action), or nil if one is pending.
func (m *Model) noticeTick() tea.Cmd {
	// Just past the end: agentNotice counts the very end as shown.
	wait := time.Until(m.lastAgent.At.Add(AgentNoticeFor)) + time.Millisecond
	return m.noticeTimer.arm(max(wait, 0), func(gen uint64) tea.Msg { return noticeDoneMsg{gen} })
}

// noticeDoneMsg redraws the status bar once an agent notice has expired.
type noticeDoneMsg struct{ gen uint64 }

// agentNotice is the status bar's words for the agent's last action, if
// recent.
func (m *Model) agentNotice() string {
	a := m.lastAgent
	if a.At.IsZero() || time.Since(a.At) > AgentNoticeFor {
		return ""
	}
	name := strings.TrimPrefix(a.Origin, "agent:")
	if a.Outcome != "ok" {
		return fmt.Sprintf("%s: %s refused (%s)", name, a.Action, a.Outcome)
	}
	return name + " " + a.Summary
}

// whoIsHere is the status bar's account of who is attached: agents by the
// name and version they gave, with when each last acted ("claude-code ·
// 10s ago", or "idle 3m" once presence calls it idle), and the humans.
func (m *Model) whoIsHere() string {
	var agents, humans []string
	now := time.Now()
	for _, at := range m.sess.Attached() {
		if at.Kind == session.KindAgent {
			agents = append(agents, at.Name+" · "+lastActed(at, now))
		} else {
			humans = append(humans, at.Name)
		}
	}
	var parts []string
	switch len(agents) {
	case 0:
		parts = append(parts, "agents: none")
	case 1:
		parts = append(parts, "agent: "+agents[0])
	default:
		parts = append(parts, fmt.Sprintf("agents (%d): %s", len(agents), strings.Join(agents, ", ")))
	}
	if len(humans) > 1 {
		parts = append(parts, fmt.Sprintf("humans (%d): %s", len(humans), strings.Join(humans, ", ")))
	}
	return strings.Join(parts, " · ")
}

// ageMsg redraws the status bar when an agent's age there changes; gen
// tells the one scheduled last from one it replaced.
type ageMsg struct{ gen uint64 }

// tickAges schedules a redraw for when the first agent's age in the
// status bar would read differently ("12s" becomes "13s", "4m" "5m"), so
// that it never freezes; nothing while no agent is attached. One is
// scheduled at a time, but one a minute away is replaced by an earlier
// one when presence changed since (an agent acted: its "now" becomes
// "10s ago" one step (ageStep) later, not at the next minute).
func (m *Model) tickAges() tea.Cmd {
	if m.ageTimer.pending && !m.agesMoved {
		return nil
	}
	m.agesMoved = false
	now := time.Now()
	wait := time.Duration(0)
	for _, at := range m.sess.Attached() {
		if at.Kind != session.KindAgent {
			continue
		}
		d := max(0, now.Sub(at.LastActive))
		unit := ageStep
		switch {
		case d >= time.Hour:
			unit = time.Hour
		case d >= time.Minute:
			unit = time.Minute
		}
		if next := unit - d%unit; wait == 0 || next < wait {
			wait = next
		}
	}
	if wait == 0 {
		return nil
	}
	due := now.Add(wait)
	if m.ageTimer.pending && !due.Before(m.ageDue) {
		return nil
	}
	m.ageDue = due
	return m.ageTimer.rearm(wait+10*time.Millisecond, func(gen uint64) tea.Msg { return ageMsg{gen} })
}

// ageStep is how an age under a minute is counted in the status bar:
// "now", "10s ago", "20s ago"... A terminal whose agent is attached but
// quiet is redrawn once per step; counted in seconds, that redraw came
// every second and kept the terminal's copy of its screen (two buffers of
// 80x24 cells, 430 KB) from ever being released as idle (IdleRelease);
// counted in tens of seconds, it is released between them.
const ageStep = 10 * time.Second

// lastActed is an agent's last action as a short age: "now", "10s ago",
// "4m ago", or "idle 3m" for one presence shows idle.
func lastActed(at session.Attachment, now time.Time) string {
	d := max(0, now.Sub(at.LastActive))
	var age string
	switch {
	case d < ageStep:
		age = "now"
	case d < time.Minute:
		age = fmt.Sprintf("%ds", int(d/ageStep)*int(ageStep/time.Second))
	case d < time.Hour:
		age = fmt.Sprintf("%dm", int(d/time.Minute))
	default:
		age = fmt.Sprintf("%dh", int(d/time.Hour))
	}
	switch {
	case at.Idle:
		return "idle " + age
	case age == "now":
		return age
	}
	return age + " ago"
}

// pausedNote and focusOnlyNote are control's words, made once: the status
// bar asks for them at every frame.
var (
	pausedNote    = "AGENTS PAUSED (" + keyFor(bindPause) + " hands back)"
	focusOnlyNote = "agents: focused widget only (" + keyFor(bindFocusOnly) + ")"
)

// control is the status bar's word on what agents may do, if restricted.
func (m *Model) control() string {
	c := m.sess.Control()
	switch {
	case c.Paused:
		return pausedNote
	case c.FocusOnly:
		return focusOnlyNote
	}
	return ""
}

// activityPanel lists the latest actions, newest last, in height lines.
func (m *Model) activityPanel(height int) []string {
	log := m.sess.Activity()
	th := m.opts.Theme
	lines := []string{ui.Paint(th.Title, fmt.Sprintf("Activity (%d, %s closes)", len(log), keyFor(bindLog)))}
	n := max(0, height-1)
	if len(log) > n {
		log = log[len(log)-n:]
	}
	for _, a := range log {
		line := fmt.Sprintf("%s %-22s %s", a.At.Format("15:04:05"), ui.Truncate(a.Origin, 22), a.Summary)
		if a.Count > 1 {
			line += fmt.Sprintf(" ×%d", a.Count)
		}
		if a.Outcome != "ok" {
			line += " (" + a.Outcome + ")"
		}
		if a.Agent {
			line = ui.Paint(th.Accent, ui.Truncate(line, m.width))
		} else {
			line = ui.Truncate(line, m.width)
		}
		lines = append(lines, line)
	}
	return lines
}

// record notes a person's action on widget id (or an agent's keys through
// a terminal) in the session's activity log.
func record(sess *session.Session, id string, tree ui.Node, msgs []tea.Msg, origin string, agent bool, outcome string) {
	label := id
	if w, ok := ui.Find(tree, id); ok {
		label = ui.Label(w)
	}
	verb := "acted on"
	if len(msgs) > 0 {
		verb = ui.Describe(msgs[0])
	}
	sess.Record(session.Action{
		Origin:  origin,
		Agent:   agent,
		Widget:  id,
		Label:   label,
		Action:  "keys",
		Summary: verb + " " + label,
		Outcome: outcome,
	})
}
