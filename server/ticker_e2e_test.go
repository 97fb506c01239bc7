package server_test

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/server"
)

// tickerGoroutines counts Bubble Tea render tickers running in the
// process.
func tickerGoroutines(t *testing.T) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	return strings.Count(b.String(), "bubbletea/v2.(*Program).startRenderer.func1")
}

// TestTerminalStopsBubbleTeasTicker: a terminal's program runs no render
// ticker once it has started (Bubble Tea starts one in every program,
// waking it every second to flush output this program does not have),
// and the terminal still takes keys and draws afterwards. Not parallel:
// it counts the process's goroutines.
func TestTerminalStopsBubbleTeasTicker(t *testing.T) {
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, c)
	deadline := time.Now().Add(5 * time.Second)
	for tickerGoroutines(t) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d render tickers still run with one terminal open", tickerGoroutines(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.Key(keyTab)
	c.Type("after")
	c.WaitFor(t, "Search: after", waitShort)
}
