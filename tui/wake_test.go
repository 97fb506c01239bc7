package tui

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// sends records what a model's SetSend delivers.
type sends struct {
	mu   sync.Mutex
	msgs []tea.Msg
	got  chan struct{}
}

func newSends() *sends { return &sends{got: make(chan struct{}, 100)} }

func (s *sends) send(msg tea.Msg) {
	s.mu.Lock()
	s.msgs = append(s.msgs, msg)
	s.mu.Unlock()
	s.got <- struct{}{}
}

func (s *sends) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

func (s *sends) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.got:
	case <-time.After(5 * time.Second):
		t.Fatalf("no wake for %s", what)
	}
}

// TestWokenModelFollowsSnapshots: a model given SetSend waits in no
// command; a snapshot (an agent's change) wakes it, once however many come
// before the wake is handled, and handling the wake shows the latest
// snapshot. A wake due before SetSend is delivered by it. In a synctest
// bubble: "no more wakes" is checked once every goroutine is blocked
// (synctest.Wait), not after a guessed sleep.
func TestWokenModelFollowsSnapshots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, s := newTerm(t)
		// Due before the program's Send is known: delivered by SetSend.
		if err := s.Dispatcher.Call(t.Context(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "a"}, ui.TextInputChanged{ID: "name", Text: "one"}); err != nil {
			t.Fatal(err)
		}
		rec := newSends()
		m.SetSend(rec.send)
		rec.wait(t, "a snapshot before SetSend")
		if m.waitSnapshot() != nil {
			t.Fatal("a woken model still waits for snapshots in a command")
		}
		m.Update(wakeMsg{})
		if got := m.snap.Model.(form).name; got != "one" {
			t.Fatalf("after the wake the model shows name %q, want %q", got, "one")
		}
		// Three snapshots before the wake is handled: one wake.
		for _, v := range []string{"a", "ab", "abc"} {
			if err := s.Dispatcher.Call(t.Context(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "a"}, ui.TextInputChanged{ID: "name", Text: v}); err != nil {
				t.Fatal(err)
			}
		}
		rec.wait(t, "three snapshots")
		synctest.Wait() // a second wake would have been sent by now
		if n := rec.count(); n != 2 {
			t.Fatalf("%d wakes sent in all, want 2 (one before SetSend, one for the three snapshots)", n)
		}
		m.Update(wakeMsg{})
		if got := m.snap.Model.(form).name; got != "abc" {
			t.Fatalf("after the second wake the model shows name %q, want %q", got, "abc")
		}
		// Handled: the next snapshot wakes again.
		if err := s.Dispatcher.Call(t.Context(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "a"}, ui.TextInputChanged{ID: "name", Text: "x"}); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, "a snapshot after a handled wake")
		// Closed: no more wakes.
		m.Close()
		_ = s.Dispatcher.Call(t.Context(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "a"}, ui.TextInputChanged{ID: "name", Text: "y"})
		synctest.Wait() // a wake of the closed model would have been sent by now
		if n := rec.count(); n != 3 {
			t.Fatalf("%d wakes, want 3: a closed model is not woken", n)
		}
	})
}
