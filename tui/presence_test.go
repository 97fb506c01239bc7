package tui

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/raxol-ssh/raxol-ssh/session"
)

// TestWhoIsHereTellsWhenEachAgentLastActed: the status bar names each
// agent with how long ago it last acted, shows idle ones as idle, and
// forgets the ones that left.
func TestWhoIsHereTellsWhenEachAgentLastActed(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	mgr := session.NewManager(&session.Options{Now: clock, AgentIdleAfter: 2 * time.Minute})
	t.Cleanup(mgr.Close)
	s, _, err := mgr.Start("test", session.Owner{User: "u"}, form{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := New(s, Options{Terminal: "u", Primary: true})
	t.Cleanup(m.Close)

	a := s.Join(session.KindAgent, "claude-code")
	b := s.Join(session.KindAgent, "cursor")
	advance(90 * time.Second)
	b.Touch()
	// whoIsHere measures against the wall clock: LastActive is the fake
	// clock's, so compare the rendering of the attachments directly too.
	at := s.Attached()
	if len(at) != 2 || at[0].Idle || at[1].Idle {
		t.Fatalf("attached %+v", at)
	}
	ref := at[1].LastActive
	if got := lastActed(at[0], ref); got != "1m ago" {
		t.Errorf("claude-code after 90s: %q", got)
	}
	if got := lastActed(at[1], ref.Add(12*time.Second)); got != "10s ago" {
		t.Errorf("cursor 12s after acting: %q", got)
	}
	if got := lastActed(at[1], ref.Add(9*time.Second)); got != "now" {
		t.Errorf("cursor 9s after acting: %q", got)
	}
	if got := lastActed(at[1], ref.Add(59*time.Second)); got != "50s ago" {
		t.Errorf("cursor 59s after acting: %q", got)
	}
	if got := lastActed(at[1], ref); got != "now" {
		t.Errorf("cursor just after acting: %q", got)
	}
	advance(45 * time.Second) // claude-code quiet 135s: idle; cursor 45s: not
	at = s.Attached()
	if !at[0].Idle || at[1].Idle {
		t.Fatalf("idle flags after 135s and 45s: %+v", at)
	}
	if got := lastActed(at[0], now); got != "idle 2m" {
		t.Errorf("idle claude-code: %q", got)
	}
	a.Touch()
	if s.Attached()[0].Idle {
		t.Fatal("an agent that acted is still shown idle")
	}

	// The status bar line itself: both agents, one line, short.
	line := m.whoIsHere()
	if !strings.HasPrefix(line, "agents (2): claude-code · ") || !strings.Contains(line, ", cursor · ") {
		t.Fatalf("whoIsHere = %q", line)
	}
	b.Detach()
	if line := m.whoIsHere(); !strings.HasPrefix(line, "agent: claude-code · ") || strings.Contains(line, "cursor") {
		t.Fatalf("after cursor left: %q", line)
	}
	a.Detach()
	if line := m.whoIsHere(); line != "agents: none" {
		t.Fatalf("after both left: %q", line)
	}
}

// TestAgentAgesAreRedrawnAsTheyChange: while an agent is attached the
// terminal schedules a redraw for when its age in the status bar would
// change, one at a time, so "10s ago" never freezes; none without agents.
// It runs on synctest's virtual clock, so the redraw's time is exact: just
// after the next ten seconds (ageStep), or the next whole minute once the
// age is counted in minutes.
func TestAgentAgesAreRedrawnAsTheyChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSession(t)
		m := New(s, Options{Terminal: "u", Primary: true})
		t.Cleanup(m.Close)
		if m.tickAges() != nil {
			t.Fatal("an age tick with no agent attached")
		}
		a := s.Join(session.KindAgent, "claude-code")
		defer a.Detach()
		cmd := m.tickAges()
		if cmd == nil {
			t.Fatal("no age tick with an agent attached")
		}
		if m.tickAges() != nil {
			t.Fatal("a second age tick while one is scheduled")
		}
		start := time.Now()
		msg, ok := cmd().(ageMsg)
		if !ok {
			t.Fatal("the tick does not deliver an ageMsg")
		}
		if d := time.Since(start); d != ageStep+10*time.Millisecond {
			t.Fatalf("the first age change was redrawn after %s, want 10.01s (\"now\" becomes \"10s ago\")", d)
		}
		m.Update(msg)
		if m.ageTimer.pending != true {
			t.Fatal("no next age tick after one was delivered")
		}
		// 90s after it acted, the age reads "1m ago" until the next minute.
		time.Sleep(90*time.Second - time.Since(start))
		m.ageTimer.pending = false
		start = time.Now()
		if _, ok := m.tickAges()().(ageMsg); !ok {
			t.Fatal("the tick does not deliver an ageMsg")
		}
		if d := time.Since(start); d != 30*time.Second+10*time.Millisecond {
			t.Fatalf("at 90s the next age change was redrawn after %s, want 30.01s (\"1m ago\" becomes \"2m ago\")", d)
		}
	})
}

// TestAgentAgeRedrawnAfterItActs: an agent that acts while the next age
// redraw is a minute away (its age was counted in minutes) is redrawn a
// step later, "now" becoming "10s ago", not at that minute; the tick it
// replaced starts no second series of redraws when it comes.
func TestAgentAgeRedrawnAfterItActs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSession(t)
		m := New(s, Options{Terminal: "u", Primary: true})
		t.Cleanup(m.Close)
		a := s.Join(session.KindAgent, "claude-code")
		defer a.Detach()
		time.Sleep(90 * time.Second)
		long := m.tickAges() // "1m ago" until 2m, 30s away
		if long == nil {
			t.Fatal("no age tick with an agent attached")
		}
		a.Touch() // it acts: the terminal is told of presence
		m.Update(presenceMsg{})
		if !strings.Contains(lastLine(m), "claude-code · now") {
			t.Fatalf("status bar %q after the agent acted", lastLine(m))
		}
		short := m.tickAges()
		if short == nil {
			t.Fatal("the next age redraw is still the one a minute away")
		}
		start := time.Now()
		msg := short()
		if d := time.Since(start); d != ageStep+10*time.Millisecond {
			t.Fatalf("redrawn %s after the agent acted, want 10.01s", d)
		}
		m.Update(msg)
		if !strings.Contains(lastLine(m), "claude-code · 10s") {
			t.Fatalf("status bar %q a second after the agent acted", lastLine(m))
		}
		if !m.ageTimer.pending || m.tickAges() != nil {
			t.Fatal("no single next age tick after one was delivered")
		}
		m.Update(long()) // stale
		if !m.ageTimer.pending || m.tickAges() != nil {
			t.Fatal("the replaced tick started another series")
		}
	})
}
