package session

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// openCounter is what Options.Count moves in these tests: a gauge of
// live sessions, checked against the registry on every move.
type openCounter struct {
	mu   sync.Mutex
	open int
}

func (c *openCounter) add(delta int) {
	c.mu.Lock()
	c.open += delta
	c.mu.Unlock()
}

func (c *openCounter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// TestCountFollowsTheRegistry: every way into the registry (Start,
// StartFunc, Restore) counts a session once, every way out (End,
// EndCause, Close) counts it down once, and what is
// refused (a restore of a live id, a start after Close) counts nothing:
// the count equals Count() after each step.
func TestCountFollowsTheRegistry(t *testing.T) {
	c := &openCounter{}
	m := NewManager(&Options{Count: c.add})
	check := func(step string) {
		t.Helper()
		if got, want := c.get(), m.Count(); got != want {
			t.Fatalf("%s: counted %d open, the registry holds %d", step, got, want)
		}
	}
	owner := Owner{User: "alice", KeyFingerprint: "SHA256:abc"}
	a, _, err := m.Start("app", owner, app{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	check("started")
	b, _, err := m.StartFunc("app", owner, func(string) (ui.Model, error) { return app{}, nil }, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.StartFunc("app", owner, func(string) (ui.Model, error) { return nil, errors.New("no") }, 0); err == nil {
		t.Fatal("a failing factory started a session")
	}
	check("started twice, one refused")

	// Saved and ended, then restored as a restart or an adoption would.
	sv := a.Save()
	m.End(a.ID)
	check("ended")
	if _, err := m.Restore("app", sv, app{}, ui.Restored{At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	check("restored")
	if c.get() != 2 {
		t.Fatalf("counted %d open after a restore, want 2", c.get())
	}
	if _, err := m.Restore("app", sv, app{}, ui.Restored{}); !errors.Is(err, ErrExists) {
		t.Fatalf("restoring a live id: %v", err)
	}
	check("a second restore refused")
	m.EndCause(b.ID, Ended("bye"))
	m.EndCause(b.ID, Ended("again")) // already ended: nothing to count
	check("ended by cause, twice")

	m.Close()
	check("closed")
	if c.get() != 0 {
		t.Fatalf("counted %d open after Close, want 0", c.get())
	}
	if _, err := m.Restore("app", sv, app{}, ui.Restored{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("restore after Close: %v", err)
	}
	check("restore after Close")
}
