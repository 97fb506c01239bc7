package tui

import (
	"sync"
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
//
// When the model is woken (Model.SetSend) a tick holds no goroutine while
// it waits: it is a time.AfterFunc that sends its message when it fires.
// Otherwise it is a command whose goroutine waits out the time.
type timer struct {
	pending bool
	gen     uint64 // the generation of the pending tick, or of the last one
	// done ends a pending tick's goroutine when the model closes (nil: it
	// waits out its time, as tea.Tick's does). An agent's age ticks ten
	// seconds or a minute ahead; a session that ended must not keep their
	// goroutines that long.
	done <-chan struct{}
	// post, when set, gives the program's Send, or nil when the model is
	// not woken (SetSend): a tick is then sent from an AfterFunc.
	post func() func(tea.Msg)
	// after is the pending tick's AfterFunc, stopped when a tick replaces
	// it or the model closes. Guarded by afterMu: the model's Close runs
	// outside the program's loop.
	afterMu *sync.Mutex
	after   *time.Timer
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
	if t.post != nil {
		if send := t.post(); send != nil {
			t.afterMu.Lock()
			defer t.afterMu.Unlock()
			if t.after != nil {
				t.after.Stop() // replaced: had it fired, its tick arrives stale
			}
			done := t.done
			t.after = time.AfterFunc(d, func() {
				select {
				case <-done:
				default:
					send(msg(gen)) // returns when the program ends, too
				}
			})
			return nil
		}
	}
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

// stop stops a pending AfterFunc tick (the model closed).
func (t *timer) stop() {
	if t.afterMu == nil {
		return
	}
	t.afterMu.Lock()
	defer t.afterMu.Unlock()
	if t.after != nil {
		t.after.Stop()
		t.after = nil
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
