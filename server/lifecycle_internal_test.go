package server

import (
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/tui"
)

type still struct{}

func (still) Init() tea.Cmd                         { return nil }
func (s still) Update(tea.Msg) (tea.Model, tea.Cmd) { return s, nil }
func (still) View() tea.View                        { return tea.View{} }

// TestSendsToAStuckProgramAreBounded: a program that takes no messages
// (here: never run, so Send blocks) gets at most maxInFlightSends waiting
// goroutines; beyond that the terminal refuses, and everything finishes
// once the program ends.
func TestSendsToAStuckProgramAreBounded(t *testing.T) {
	p := tea.NewProgram(still{}, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutRenderer(), tea.WithoutSignalHandler())
	term := newTerminal(nil, tui.RoleOwner)
	term.mu.Lock()
	term.p = p
	term.mu.Unlock()
	accepted := 0
	for range maxInFlightSends + 10 {
		if term.send(tui.NoticeMsg("x")) != nil {
			accepted++
		}
	}
	if accepted != maxInFlightSends {
		t.Fatalf("%d sends queued on a stuck program, want %d", accepted, maxInFlightSends)
	}
	p.Kill() // Send returns once the program is killed
	term.end()
	if term.send(tui.NoticeMsg("late")) != nil {
		t.Fatal("a send after the end was queued")
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		60 * time.Second: "1m", 45 * time.Second: "45s", 90 * time.Second: "90s",
		5 * time.Minute: "5m", 2 * time.Hour: "2h", 90 * time.Minute: "1h30m",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
