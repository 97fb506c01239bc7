package tui

import (
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// ApprovalMsg shows an approval prompt for an agent's call. The answer is
// sent on Reply (buffered by the sender) exactly once: when the human
// answers, when the request is withdrawn, or when the terminal closes
// (refused).
type ApprovalMsg struct {
	Req   session.ApprovalRequest
	Reply chan<- session.Approval
}

// WithdrawApprovalMsg removes a pending prompt whose caller stopped
// waiting; it is answered as refused.
type WithdrawApprovalMsg struct{ ID string }

// maxPendingApprovals bounds the prompts queued in one terminal; more are
// refused at once.
const maxPendingApprovals = 16

// JoinMsg shows the owner a request to join the session. The answer is
// sent on Reply (buffered by the sender) exactly once, as for approvals.
type JoinMsg struct {
	Req   session.JoinRequest
	Reply chan<- session.JoinAnswer
}

// promptState is the prompts waiting for the human, the one on top
// first, with its arming and countdown.
type promptState struct {
	approvals []pendingApproval
	promptSeq uint64    // numbers prompts as they come
	armedSeq  uint64    // the prompt the arming below is for
	armedAt   time.Time // when the prompt on top takes answer keys
	armTimer  timer     // the prompt's arming redraw (armedMsg)
	countdown timer     // the prompt's countdown redraw (countdownMsg)
}

// pendingApproval is one prompt waiting for the human: an agent's call to
// approve, or (join != nil) someone asking to join.
type pendingApproval struct {
	seq       uint64 // numbers prompts in order of arrival (Model.promptSeq)
	req       session.ApprovalRequest
	reply     chan<- session.Approval
	join      *session.JoinRequest
	joinReply chan<- session.JoinAnswer
}

func (p pendingApproval) id() string {
	if p.join != nil {
		return p.join.ID
	}
	return p.req.ID
}

// deadline is when the prompt answers itself with a refusal (zero: never).
func (p pendingApproval) deadline() time.Time {
	if p.join != nil {
		return p.join.Deadline
	}
	return p.req.Deadline
}

func (p pendingApproval) refuse() {
	if p.join != nil {
		p.joinReply <- session.JoinRefused
		return
	}
	p.reply <- session.Refused
}

// approvalKey answers the prompt on top, if any. It reports whether the
// key was taken by the prompt.
func (m *Model) approvalKey(k tea.KeyPressMsg) bool {
	if len(m.approvals) == 0 {
		return false
	}
	if bindingOf(k) == bindQuit {
		return false // leaving refuses everything (Close)
	}
	if !m.armed() {
		return true // typed before the human could see the prompt: swallowed
	}
	if j := m.approvals[0].join; j != nil {
		if a, ok := joinKeys[k.String()]; ok && (a != session.JoinAsOwner || j.Browser) {
			m.answerJoin(a)
		}
		return true
	}
	if a, ok := approvalKeys[k.String()]; ok {
		m.answer(a)
	}
	return true // the prompt holds the keyboard while it is open
}

func (m *Model) addJoin(msg JoinMsg) {
	if len(m.approvals) >= maxPendingApprovals {
		msg.Reply <- session.JoinRefused
		return
	}
	req := msg.Req
	m.promptSeq++
	m.approvals = append(m.approvals, pendingApproval{seq: m.promptSeq, join: &req, joinReply: msg.Reply})
}

func (m *Model) answerJoin(a session.JoinAnswer) {
	p := m.approvals[0]
	m.approvals = m.approvals[1:]
	p.joinReply <- a
}

func (m *Model) addApproval(msg ApprovalMsg) {
	if len(m.approvals) >= maxPendingApprovals {
		msg.Reply <- session.Refused
		return
	}
	m.promptSeq++
	m.approvals = append(m.approvals, pendingApproval{seq: m.promptSeq, req: msg.Req, reply: msg.Reply})
}

func (m *Model) answer(a session.Approval) {
	p := m.approvals[0]
	m.approvals = m.approvals[1:]
	p.reply <- a
}

func (m *Model) withdraw(id string) {
	for i, p := range m.approvals {
		if p.id() == id {
			m.approvals = append(m.approvals[:i:i], m.approvals[i+1:]...)
			p.refuse()
			return
		}
	}
}

// refuseAll answers every pending prompt as refused (the terminal is
// going away).
func (m *Model) refuseAll() {
	for _, p := range m.approvals {
		p.refuse()
	}
	m.approvals = nil
}

// armedMsg redraws a prompt whose answer keys have become active.
type armedMsg struct{ gen uint64 }

// arm starts the arming delay of the prompt on top when it is new there
// (it arrived, or the one before it was answered or withdrawn).
func (m *Model) arm() {
	if len(m.approvals) == 0 {
		m.armedSeq = 0
		return
	}
	if top := m.approvals[0].seq; top != m.armedSeq {
		m.armedSeq = top
		m.armedAt = m.opts.Now().Add(max(m.opts.PromptArming, 0))
	}
}

// armed reports whether the prompt on top takes answer keys now.
func (m *Model) armed() bool {
	m.arm()
	return !m.opts.Now().Before(m.armedAt)
}

// tickArming schedules a redraw for when the prompt on top is armed, so
// that its key hints light up; one at a time.
func (m *Model) tickArming() tea.Cmd {
	if m.armTimer.pending || len(m.approvals) == 0 {
		return nil
	}
	wait := m.armedAt.Sub(m.opts.Now())
	if wait <= 0 {
		return nil
	}
	return m.armTimer.arm(wait, func(gen uint64) tea.Msg { return armedMsg{gen} })
}

// ArmingNote is the line a prompt shows while it ignores answer keys.
const ArmingNote = "answer keys active in "

// keyHints renders a prompt's key hints: muted, with a note of when they
// become active, while the prompt is arming.
func (m *Model) keyHints(hints string, inner int) []string {
	th := m.opts.Theme
	left := m.armedAt.Sub(m.opts.Now())
	if left <= 0 {
		return []string{ui.Paint(th.Focused, ui.Truncate(hints, inner))}
	}
	tenths := int((left + 100*time.Millisecond - 1) / (100 * time.Millisecond))
	note := ArmingNote + strconv.Itoa(tenths/10) + "." + strconv.Itoa(tenths%10) + "s"
	return []string{ui.Paint(th.Muted, ui.Truncate(hints, inner)), ui.Paint(th.Muted, ui.Truncate(note, inner))}
}

// approvalBox renders the prompt on top, at most width cells wide.
func (m *Model) approvalBox(width int) []string {
	if len(m.approvals) == 0 {
		return nil
	}
	th := m.opts.Theme
	inner := max(1, width-4)
	if j := m.approvals[0].join; j != nil {
		who := j.User
		if j.KeyFingerprint != "" {
			who += " (" + j.KeyFingerprint + ")"
		}
		title, hints := "Someone asks to join your session", "[o] observer (watch only)   [r] driver (can type)   [n] refuse"
		if j.Browser {
			title = "A browser asks to join your session (a link you made)"
			hints = "[o] observer   [r] driver   [m] it is me (owner)   [n] refuse"
		}
		lines := []string{
			ui.Paint(th.Title, title),
			ui.Truncate(who+" from "+j.RemoteAddr, inner),
		}
		lines = append(lines, m.keyHints(hints, inner)...)
		if d := m.approvals[0].deadline(); !d.IsZero() {
			lines = append(lines, ui.Paint(th.Muted, ui.Truncate("refused in "+secondsLeft(d)+" without an answer", inner)))
		}
		box := lipgloss.NewStyle().Border(lipgloss.ThickBorder()).BorderForeground(lipgloss.BrightYellow).Padding(0, 1).Width(width).MaxWidth(width)
		return strings.Split(ui.Paint(box, strings.Join(lines, "\n")), "\n")
	}
	r := m.approvals[0].req
	what := r.Tool
	if r.Widget != "" {
		what += " on " + r.Widget
	}
	lines := []string{
		ui.Paint(th.Title, "Approve an agent's action?"),
		ui.Truncate(r.Agent+" wants to run "+what, inner),
	}
	if r.Prompt != "" {
		lines = append(lines, ui.Truncate(r.Prompt, inner))
	}
	if r.Args != "" && r.Args != "{}" {
		lines = append(lines, ui.Truncate("arguments: "+r.Args, inner))
	}
	lines = append(lines, m.keyHints("[a] allow once   [s] allow for this session   [d] deny", inner)...)
	if !r.Deadline.IsZero() {
		lines = append(lines, ui.Paint(th.Muted, ui.Truncate("denied in "+secondsLeft(r.Deadline)+" without an answer", inner)))
	}
	if n := len(m.approvals) - 1; n > 0 {
		lines = append(lines, ui.Paint(th.Muted, ui.Truncate(strings.Repeat("+", min(n, 3))+" more waiting", inner)))
	}
	box := lipgloss.NewStyle().Border(lipgloss.ThickBorder()).BorderForeground(lipgloss.BrightYellow).Padding(0, 1).Width(width).MaxWidth(width)
	return strings.Split(ui.Paint(box, strings.Join(lines, "\n")), "\n")
}

// secondsLeft is the time until d in whole seconds, rounded up: "45 s".
func secondsLeft(d time.Time) string {
	left := time.Until(d)
	return strconv.Itoa(max(0, int((left+time.Second-1)/time.Second))) + " s"
}

// countdownMsg redraws an open prompt's countdown.
type countdownMsg struct{ gen uint64 }

// tickCountdown schedules the next countdown redraw while the prompt on
// top has a deadline, at the next whole second before it; one at a time.
func (m *Model) tickCountdown() tea.Cmd {
	if m.countdown.pending || len(m.approvals) == 0 {
		return nil
	}
	d := m.approvals[0].deadline()
	if d.IsZero() {
		return nil
	}
	wait := time.Until(d) % time.Second
	if wait <= 0 {
		wait = time.Second
	}
	return m.countdown.arm(wait, func(gen uint64) tea.Msg { return countdownMsg{gen} })
}
