package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/mcptest"
)

// ---- as an agent drives it: over MCP, through a real server ----

// printed returns the lines the program printed because of the last call
// (the "printed" of its result).
func printed(t *testing.T, res map[string]any) []string {
	t.Helper()
	r, _ := res["result"].(map[string]any)
	lines, _ := r["printed"].([]any)
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		s, ok := l.(string)
		if !ok {
			t.Fatalf("printed holds %#v, want strings; result: %v", l, res)
		}
		out = append(out, s)
	}
	return out
}

func TestAgentBooksTheThirdRow(t *testing.T) {
	s := mcptest.Start(t, App())
	s.AssertScreen("Lisbon")
	s.CallTool(Name+".table.select_row", map[string]any{"index": 2})
	res, isErr := s.Call(Name+".table.activate", nil)
	if isErr {
		t.Fatalf("table.activate = %v", res)
	}
	if got := printed(t, res); len(got) != 1 || got[0] != "Let's go to Kyoto!" {
		t.Errorf("activate printed %q, want [\"Let's go to Kyoto!\"]; result: %v", got, res)
	}
	// The printed line is on the screen by the time the call answers.
	s.AssertScreen("Let's go to Kyoto!")
	// A call that prints nothing has no printed lines.
	res, isErr = s.Call(Name+".table.select_row", map[string]any{"index": 11})
	if isErr {
		t.Fatalf("select_row{index: 11} = %v", res)
	}
	if got := printed(t, res); len(got) != 0 {
		t.Errorf("select_row printed %q, want nothing", got)
	}
	// Row 11 is below the board's nine visible rows: the table scrolls to it.
	res, _ = s.Call(Name+".table.activate", nil)
	if got := printed(t, res); len(got) != 1 || got[0] != "Let's go to Hobart!" {
		t.Errorf("activate on the last row printed %q, want [\"Let's go to Hobart!\"]", got)
	}

	if res, isErr := s.Call(Name+".table.select_row", map[string]any{"index": 12}); !isErr {
		t.Errorf("select_row{index: 12} of 12 rows = %v, want an error", res)
	}
}

func TestAgentWaitsForTheRefresh(t *testing.T) {
	s := mcptest.Start(t, App())
	// The session started a moment ago: the timer (refreshEvery, 2 s) has
	// not fired yet.
	s.AssertScreen("fares from yesterday")
	res, isErr := s.Call("raxol_wait_for", map[string]any{"text": "data refreshed", "timeout_ms": 10000})
	if isErr || res["matched"] != true {
		t.Fatalf("raxol_wait_for{data refreshed} = %v (isError %v), want matched", res, isErr)
	}
	if screen, _ := res["screen"].(string); !strings.Contains(screen, "data refreshed") {
		t.Errorf("raxol_wait_for's screen lacks what it matched:\n%s", screen)
	}
	s.AssertScreen("data refreshed")
}

func TestWaitingForTextThatNeverComesTimesOut(t *testing.T) {
	s := mcptest.Start(t, App())
	start := time.Now()
	res, isErr := s.Call("raxol_wait_for", map[string]any{"text": "Let's go to Atlantis!", "timeout_ms": 300})
	took := time.Since(start)
	if isErr || res["matched"] != false {
		t.Fatalf("raxol_wait_for{never} = %v (isError %v), want a result with matched false", res, isErr)
	}
	if screen, _ := res["screen"].(string); !strings.Contains(screen, "Lisbon") {
		t.Errorf("raxol_wait_for's screen on timeout is not the board:\n%s", screen)
	}
	if took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("raxol_wait_for with timeout_ms 300 answered after %v", took)
	}
}

// ---- the program alone: messages folded by hand, as Bubble Tea does ----

func TestEnterPrintsTheCity(t *testing.T) {
	var m tea.Model = initialModel()
	for range 3 {
		m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	m, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("Enter returned no command")
	}
	// tea.Printf's message keeps its text in an unexported field: %v shows it.
	if got := fmt.Sprintf("%v", cmd()); !strings.Contains(got, "Let's go to Valparaíso!") {
		t.Errorf("Enter on the fourth row printed %s, want Let's go to Valparaíso!", got)
	}
	if v := ansi.Strip(m.View().Content); !strings.Contains(v, "fares from yesterday") {
		t.Errorf("view before the timer fired:\n%s", v)
	}
}

func TestTheTimerRefreshes(t *testing.T) {
	m := initialModel()
	cmd := m.Init()
	if cmd == nil {
		t.Fatal("Init returned no command, want the refresh timer")
	}
	start := time.Now()
	msg := cmd()
	if took := time.Since(start); took < refreshEvery-100*time.Millisecond {
		t.Errorf("the timer fired after %v, want about %v", took, refreshEvery)
	}
	next, _ := m.Update(msg)
	if v := ansi.Strip(next.View().Content); !strings.Contains(v, "data refreshed") || strings.Contains(v, "fares from yesterday") {
		t.Errorf("view after the timer fired:\n%s", v)
	}
}
