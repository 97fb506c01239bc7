package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// timer is one of the model's scheduled messages (the deferred frame, a
// prompt's countdown and arming, an agent's highlight, notice and ages):
// at most one tick of it is pending, and each tick carries the
// generation it was armed with, so that a tick replaced by an earlier one
// (rearm) arrives stale and is ignored. A tick is a goroutine and a
// message, and a message a frame to compose: a timer that is already
// pending adds none.
//
// The idle release is not one: it is reset on every frame drawn, which a
// tick would pay with a goroutine a frame, so it stays a time.Timer
// (Model.armIdle).
type timer struct {
	pending bool
	gen     uint64 // the generation of the pending tick, or of the last one
	// done ends a pending tick's goroutine when the model closes (nil: it
	// waits out its time, as tea.Tick's does). An agent's age ticks ten
	// seconds or a minute ahead; a session that ended must not keep their
	// goroutines that long.
	done <-chan struct{}
}

// arm returns a tick delivering msg(gen) after d, or nil when one is
// already pending.
func (t *timer) arm(d time.Duration, msg func(gen uint64) tea.Msg) tea.Cmd {
	if t.pending {
		return nil
	}
	return t.rearm(d, msg)
}

// rearm returns a tick delivering msg(gen) after d, which replaces the one
// pending, if any: that one arrives stale.
func (t *timer) rearm(d time.Duration, msg func(gen uint64) tea.Msg) tea.Cmd {
	t.pending = true
	t.gen++
	gen := t.gen
	// As tea.Tick: the time counts from now, not from when the program
	// runs the command.
	tm := time.NewTimer(d)
	done := t.done
	return func() tea.Msg {
		select {
		case <-tm.C:
			return msg(gen)
		case <-done:
			tm.Stop()
			return nil
		}
	}
}

// fire takes the arrival of a tick of generation gen. It reports whether
// that is the pending tick, which is then no longer pending; a stale tick
// changes nothing.
func (t *timer) fire(gen uint64) bool {
	if !t.pending || gen != t.gen {
		return false
	}
	t.pending = false
	return true
}
