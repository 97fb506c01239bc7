package tui

import (
	"strings"

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

type pendingApproval struct {
	req   session.ApprovalRequest
	reply chan<- session.Approval
}

// approvalKey answers the prompt on top, if any. It reports whether the
// key was taken by the prompt.
func (m *Model) approvalKey(k tea.KeyPressMsg) bool {
	if len(m.approvals) == 0 {
		return false
	}
	switch k.String() {
	case "a", "y":
		m.answer(session.ApprovedOnce)
	case "s":
		m.answer(session.ApprovedForSession)
	case "d", "n", "esc":
		m.answer(session.Refused)
	case "ctrl+c":
		return false // leaving refuses everything (Close)
	}
	return true // the prompt holds the keyboard while it is open
}

func (m *Model) addApproval(msg ApprovalMsg) {
	if len(m.approvals) >= maxPendingApprovals {
		msg.Reply <- session.Refused
		return
	}
	m.approvals = append(m.approvals, pendingApproval{msg.Req, msg.Reply})
}

func (m *Model) answer(a session.Approval) {
	p := m.approvals[0]
	m.approvals = m.approvals[1:]
	p.reply <- a
}

func (m *Model) withdraw(id string) {
	for i, p := range m.approvals {
		if p.req.ID == id {
			m.approvals = append(m.approvals[:i:i], m.approvals[i+1:]...)
			p.reply <- session.Refused
			return
		}
	}
}

// refuseAll answers every pending prompt as refused (the terminal is
// going away).
func (m *Model) refuseAll() {
	for _, p := range m.approvals {
		p.reply <- session.Refused
	}
	m.approvals = nil
}

// approvalBox renders the prompt on top, at most width cells wide.
func (m *Model) approvalBox(width int) []string {
	if len(m.approvals) == 0 {
		return nil
	}
	r := m.approvals[0].req
	th := m.opts.Theme
	inner := max(1, width-4)
	what := r.Tool
	if r.Widget != "" {
		what += " on " + r.Widget
	}
	lines := []string{
		th.Title.Render("Approve an agent's action?"),
		ui.Truncate(r.Agent+" wants to run "+what, inner),
	}
	if r.Prompt != "" {
		lines = append(lines, ui.Truncate(r.Prompt, inner))
	}
	if r.Args != "" && r.Args != "{}" {
		lines = append(lines, ui.Truncate("arguments: "+r.Args, inner))
	}
	lines = append(lines, th.Focused.Render(ui.Truncate("[a] allow once   [s] allow for this session   [d] deny", inner)))
	if n := len(m.approvals) - 1; n > 0 {
		lines = append(lines, th.Muted.Render(ui.Truncate(strings.Repeat("+", min(n, 3))+" more waiting", inner)))
	}
	box := lipgloss.NewStyle().Border(lipgloss.ThickBorder()).BorderForeground(lipgloss.BrightYellow).Padding(0, 1).Width(width).MaxWidth(width)
	return strings.Split(box.Render(strings.Join(lines, "\n")), "\n")
}
