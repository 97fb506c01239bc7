package tui

import (
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
)

type testTickMsg struct{ gen uint64 }

func newTestTick(gen uint64) tea.Msg { return testTickMsg{gen} }

// TestTimerOneTickPendingAndStaleTicksIgnored: arm adds no tick while one
// is pending; rearm replaces the pending tick, whose arrival is then
// stale and changes nothing; the pending tick's arrival frees the timer.
func TestTimerOneTickPendingAndStaleTicksIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tm timer
		first := tm.arm(time.Minute, newTestTick)
		if first == nil || !tm.pending {
			t.Fatal("arm on an idle timer scheduled no tick")
		}
		if tm.arm(time.Second, newTestTick) != nil {
			t.Fatal("arm added a second tick while one was pending")
		}
		start := time.Now()
		second := tm.rearm(time.Second, newTestTick)
		msg := second().(testTickMsg)
		if d := time.Since(start); d != time.Second {
			t.Fatalf("the rearmed tick came after %v, want 1s", d)
		}
		stale := first().(testTickMsg)
		if tm.fire(stale.gen) || !tm.pending {
			t.Fatal("the replaced tick was taken as the pending one")
		}
		if !tm.fire(msg.gen) || tm.pending {
			t.Fatal("the pending tick did not free the timer")
		}
		if tm.fire(msg.gen) {
			t.Fatal("a tick was taken twice")
		}
		if tm.arm(time.Second, newTestTick) == nil {
			t.Fatal("no tick armed after the last one came")
		}
	})
}
