package server_test

import (
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestTerminalWaitsInNoGoroutine: a terminal's program runs no render
// ticker once it has started (Bubble Tea starts one in every program,
// waking it every second to flush output this program does not have),
// and no command waits for its snapshots (they wake it); the terminal
// still takes keys and draws what they change. Not parallel: it counts
// the process's goroutines.
func TestTerminalWaitsInNoGoroutine(t *testing.T) {
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, c)
	// Bubble Tea's render ticker, and a command waiting for snapshots.
	waiting := []string{"bubbletea/v2.(*Program).startRenderer.func1", ".(*Model).waitSnapshot.func"}
	testkit.Eventually(t, 5*time.Second, func() bool { return testkit.Goroutines(t, waiting...) == 0 },
		"goroutines still wait with one terminal open")
	c.Key(keyTab)
	c.Type("after")
	c.WaitFor(t, "Search: after", waitShort)
}
