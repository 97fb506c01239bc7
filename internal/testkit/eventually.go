package testkit

import (
	"fmt"
	"testing"
	"time"
)

// pollInterval is how often Eventually checks its condition. Inside a
// testing/synctest bubble the sleeps between checks are virtual: polling
// costs no wall-clock time there.
const pollInterval = 5 * time.Millisecond

// Eventually checks cond until it holds, or fails the test (t.Fatalf) with
// the formatted message once timeout has passed without it. The message
// should say what was awaited: "agent gone from presence", not "timeout".
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, fmt.Sprintf(format, args...))
		}
		time.Sleep(pollInterval)
	}
}
