package server_test

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/server"
)

// waitingGoroutines counts the goroutines of the process that only wait
// for a terminal: Bubble Tea's render tickers and snapshot-waiting
// commands.
func waitingGoroutines(t *testing.T) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	return strings.Count(b.String(), "bubbletea/v2.(*Program).startRenderer.func1") +
		strings.Count(b.String(), ".(*Model).waitSnapshot.func")
}

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
	deadline := time.Now().Add(5 * time.Second)
	for waitingGoroutines(t) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still wait with one terminal open", waitingGoroutines(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.Key(keyTab)
	c.Type("after")
	c.WaitFor(t, "Search: after", waitShort)
}
