package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/session"
)

// lastLine is the status bar as text.
func lastLine(m *Model) string {
	lines := strings.Split(strings.TrimRight(screenText(m), "\n"), "\n")
	return lines[len(lines)-1]
}

// A narrow status bar drops its least important parts first: the keys to
// attach and to quit stay down to 30 columns (spelled out when there is
// room), an urgent notice is cut rather than dropped, and the parts kept
// are in their usual order.
func TestStatusBarNarrow(t *testing.T) {
	m, s := newTerm(t)
	m.Update(NoticeMsg("the server is stopping in 30 seconds; save your work"))
	for _, w := range []int{30, 40, 60, 80, 100, 140} {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		bar := lastLine(m)
		if got := ansi.StringWidth(bar); got > w {
			t.Errorf("%d columns: status bar is %d cells: %q", w, got, bar)
		}
		for _, want := range []string{"ctrl+o", "ctrl+c"} {
			if !strings.Contains(bar, want) {
				t.Errorf("%d columns: status bar %q lacks %q", w, bar, want)
			}
		}
		if w >= 60 && !strings.Contains(bar, "the server is") {
			t.Errorf("%d columns: status bar %q lacks the notice", w, bar)
		}
		if w >= 140 && !strings.Contains(bar, "session "+s.ID) {
			t.Errorf("%d columns: status bar %q lacks the session", w, bar)
		}
		if i, j := strings.Index(bar, "ctrl+o"), strings.Index(bar, "ctrl+c"); i > j {
			t.Errorf("%d columns: status bar %q is out of order", w, bar)
		}
	}
	m.Update(NoticeMsg(""))
	// Without a notice the keys are spelled out at 30 columns.
	m.Update(tea.WindowSizeMsg{Width: 30, Height: 24})
	if bar := lastLine(m); !strings.Contains(bar, "ctrl+o attach · ctrl+c quit") {
		t.Errorf("30 columns: status bar %q does not spell out the keys", bar)
	}
	// At 60 the session is shown too.
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 24})
	if bar := lastLine(m); !strings.Contains(bar, "session "+s.ID) || !strings.Contains(bar, "ctrl+o") || !strings.Contains(bar, "ctrl+c") {
		t.Errorf("60 columns: status bar %q lacks the session or the keys", bar)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if bar := lastLine(m); !strings.Contains(bar, "session "+s.ID) || !strings.Contains(bar, "agents: none") {
		t.Errorf("80 columns: status bar %q lacks the session or who is here", bar)
	}
}

func TestStatusBarNarrowObserver(t *testing.T) {
	s := newSession(t)
	m := New(s, Options{Terminal: "bob", Role: RoleObserver})
	t.Cleanup(m.Close)
	for _, w := range []int{30, 40, 60} {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		bar := lastLine(m)
		if !strings.Contains(bar, "ctrl+c leave") || !strings.Contains(bar, "observer") || strings.Contains(bar, "ctrl+o") {
			t.Errorf("%d columns: observer's status bar %q", w, bar)
		}
	}
}

// Several agents with long names make who-is-here long: it is cut to the
// room left (it says agents are here, and how many) rather than dropped.
func TestStatusBarCutsALongWhoIsHere(t *testing.T) {
	m, s := newTerm(t)
	for _, n := range []string{"claude-code-with-a-long-name 2.1", "cursor-agent-long-name 0.9", "mcp-go-client 1.2.1"} {
		p := s.Join(session.KindAgent, n)
		defer p.Detach()
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 24})
	bar := lastLine(m)
	if !strings.Contains(bar, "agents (3): claude-code") || !strings.Contains(bar, "…") {
		t.Errorf("status bar %q does not show the agents, cut", bar)
	}
	if !strings.Contains(bar, "ctrl+o") || !strings.Contains(bar, "ctrl+c") || ansi.StringWidth(bar) > 100 {
		t.Errorf("status bar %q lost its keys or overflows", bar)
	}
}
