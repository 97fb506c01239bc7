package tui

import (
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/session"
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

// TestTicksEndWithTheModel: a pending tick's goroutine returns when the
// model closes, not when its time comes: an agent's age ticks ten seconds
// or a minute ahead, and a session that ended kept those goroutines (the
// leak checks of the server's tests found them).
func TestTicksEndWithTheModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSession(t)
		m := New(s, Options{Terminal: "u", Primary: true})
		a := s.Join(session.KindAgent, "claude-code")
		defer a.Detach()
		ticks := map[string]tea.Cmd{
			"age":   m.tickAges(),
			"frame": m.frameTimer.arm(time.Minute, newFrameMsg),
			"arm":   m.armTimer.arm(time.Minute, func(gen uint64) tea.Msg { return armedMsg{gen} }),
		}
		start := time.Now()
		m.Close()
		for name, cmd := range ticks {
			if cmd == nil {
				t.Fatalf("%s: no tick armed", name)
			}
			if msg := cmd(); msg != nil {
				t.Errorf("%s: the tick after Close delivered %T, want nil", name, msg)
			}
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("the ticks returned %s after Close, want at once", d)
		}
	})
}

// TestWokenModelsTicksHoldNoGoroutine: once the model is woken (SetSend,
// as every served terminal is), a tick is no command (no goroutine waits
// out an agent's age, ten seconds or a minute ahead, per session) but an
// AfterFunc that sends its message when due; a tick replaced by another is
// never sent, and none is sent once the model closed.
func TestWokenModelsTicksHoldNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSession(t)
		m := New(s, Options{Terminal: "u", Primary: true})
		rec := newSends()
		m.SetSend(rec.send)
		a := s.Join(session.KindAgent, "claude-code")
		defer a.Detach()
		synctest.Wait()
		base := rec.count() // the presence change's wake
		if cmd := m.tickAges(); cmd != nil {
			t.Fatal("a woken model's age tick is a command (a goroutine waiting for it)")
		}
		if !m.ageTimer.pending {
			t.Fatal("no age tick pending")
		}
		if cmd := m.frameTimer.rearm(time.Minute, newFrameMsg); cmd != nil {
			t.Fatal("a woken model's frame tick is a command")
		}
		if cmd := m.frameTimer.rearm(time.Second, newFrameMsg); cmd != nil {
			t.Fatal("a woken model's frame tick is a command")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		rec.mu.Lock()
		got := rec.msgs[base:]
		rec.mu.Unlock()
		if len(got) != 1 {
			t.Fatalf("after 1s %d messages sent (%v), want the rearmed frame tick alone", len(got), got)
		}
		if f, ok := got[0].(frameMsg); !ok || !m.frameTimer.fire(f.gen) {
			t.Fatalf("sent %#v, want the pending frame tick", got[0])
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		rec.mu.Lock()
		got = rec.msgs[base+1:]
		rec.mu.Unlock()
		if len(got) != 1 {
			t.Fatalf("a minute on, %d more messages (%v), want the age tick alone: the replaced frame tick must not come", len(got), got)
		}
		if _, ok := got[0].(ageMsg); !ok {
			t.Fatalf("sent %#v, want the age tick", got[0])
		}
		m.Update(got[0])
		if !m.ageTimer.pending {
			t.Fatal("no age tick after the first (an agent is still here)")
		}
		n := rec.count()
		m.Close()
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if rec.count() != n {
			t.Fatalf("a tick was sent after the model closed: %v", rec.msgs[n:])
		}
	})
}
