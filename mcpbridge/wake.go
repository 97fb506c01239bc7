package mcpbridge

import (
	"sync"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
)

// The watcher without a goroutine of its own while the session is quiet:
// the dispatcher (SubscribeFunc) and the session (WatchFunc) call wake on
// every snapshot and every change of what terminals and agents see, on
// their own goroutine and without blocking; wake starts a goroutine that
// re-projects the session (resync) until no change is pending, then
// ends. A quiet session with agents attached holds none (it held one
// waiting on both channels, for as long as it lived), and at most one
// runs at a time: sync is the watcher's alone, as it was.
//
// newSessionServer subscribes before its first sync, as the watcher's
// first turn (running is set): a change during it is pending when it
// ends (handOver), not missed.
type wakeups struct {
	mu      sync.Mutex // protects the following
	pending bool       // a change not yet re-projected
	running bool       // a goroutine (or newSessionServer's first sync) re-projects
	closed  bool       // the server closed: nothing more starts

	// Set by newSessionServer, ended by close.
	sub  *dispatcher.Subscription
	stop func() // the session's WatchFunc
}

// wake is the dispatcher's and the session's notify: it must not block or
// call into either. A change while a turn runs is pending, for one more
// turn; else a turn starts, which reads the session after the change.
func (c *sessionServer) wake() {
	w := &c.wakes
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
	case w.running:
		w.pending = true
	default:
		w.running = true
		c.wg.Add(1)
		go c.resync()
	}
}

// handOver ends a turn of re-projecting: when a change came meanwhile
// and the server is open, another turn follows (true), else the next
// wake starts one.
func (c *sessionServer) handOver() bool {
	w := &c.wakes
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.pending || w.closed {
		w.running = false
		return false
	}
	w.pending = false
	return true
}

// resync takes turns while changes come.
func (c *sessionServer) resync() {
	defer c.wg.Done()
	for {
		c.turn()
		if !c.handOver() {
			return
		}
	}
}

// turn does what the watcher did on each signal: after the human rotated
// the token, it revokes the grants made under the old one and disconnects
// the HTTP clients; then it syncs. A closed server, or a session whose
// dispatcher stopped (the watcher ended with it), is not synced.
func (c *sessionServer) turn() {
	select {
	case <-c.ctx.Done():
		return
	case <-c.sess.Dispatcher.Done():
		return
	default:
	}
	if tok := c.sess.TokenHash(); tok != c.token {
		c.token = tok
		c.revokeGrants()
		c.disconnectHTTP()
	}
	c.safeSync()
}

// startWatching subscribes to the session's changes and makes the first
// sync, as the watcher's first turn; a change meanwhile starts the next.
func (c *sessionServer) startWatching() {
	w := &c.wakes
	w.running = true // the first sync below; nothing else runs yet
	w.sub = c.sess.Dispatcher.SubscribeFunc(c.wake)
	_, w.stop = c.sess.WatchFunc(c.wake)
	c.safeSync()
	if c.handOver() { // a change came during it: the next turn is a goroutine's
		c.wg.Add(1)
		go c.resync()
	}
}

// stopWatching ends the subscriptions; no turn starts after it, and
// close waits (wg) for one running.
func (c *sessionServer) stopWatching() {
	w := &c.wakes
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	if w.sub != nil {
		w.sub.Close()
	}
	if w.stop != nil {
		w.stop()
	}
}
