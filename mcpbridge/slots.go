package mcpbridge

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errSessionFull is why a new client is refused: every slot of the
// session is held by a client at work.
var errSessionFull = errors.New("mcpbridge: every client slot of the session is held by a client at work")

// probeIdle is how long a client that has done nothing but its handshake
// (initialize, initialized, a stream) must have been quiet before it may
// be ended to make room for another, though it holds a stream: what
// mcp-remote's transport probe and an SSE stream never initialized look
// like. A client that has asked for anything (a list, a call, a read, a
// subscription) while holding its stream is at work and stays.
const probeIdle = 2 * time.Second

// slots is the one count of a session's MCP clients, held against
// Options.MaxClients. A slot is reserved before the request that would
// open a client reaches the SDK (a Streamable initialize, an SSE stream),
// so concurrent openings are counted as they start, not once they have
// attached; it passes to the client the request opens (claim) and is
// freed exactly once: when that client's session ends, or when the
// request ends without having opened one. At the cap the least recently
// active slot that is not at work is ended to make room, and its place
// passes to the newcomer (the count never rises above the cap, even while
// the old client closes).
type slots struct {
	max  int
	idle time.Duration // probeIdle, but for tests

	mu   sync.Mutex // protects the following
	held map[*slot]struct{}
}

// slot is one reservation.
type slot struct {
	s     *slots
	since time.Time
	// stream is the context of the request that reserved it, for an SSE
	// stream (ended to evict a stream that never initialized).
	endStream context.CancelFunc

	// Under s.mu.
	cl      *client // the client that claimed it; nil while pending
	evicted bool    // ended to make room: its place was passed on
	freed   bool
}

func newSlots(max int, idle time.Duration) *slots {
	return &slots{max: max, idle: idle, held: map[*slot]struct{}{}}
}

// len is the number of slots held.
func (s *slots) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// reserve holds a slot for a client about to open, ending an idle one at
// the cap to make room (its end runs before reserve returns). endStream,
// if not nil, ends the request holding the new slot should it be evicted
// before it claims it (an SSE stream never initialized).
func (s *slots) reserve(now time.Time, endStream context.CancelFunc) (*slot, error) {
	s.mu.Lock()
	n := &slot{s: s, since: now, endStream: endStream}
	if len(s.held) < s.max {
		s.held[n] = struct{}{}
		s.mu.Unlock()
		return n, nil
	}
	victim := s.victimLocked(now)
	if victim == nil {
		s.mu.Unlock()
		return nil, errSessionFull
	}
	victim.evicted = true
	delete(s.held, victim)
	s.held[n] = struct{}{}
	end := victim.endLocked()
	s.mu.Unlock()
	end()
	return n, nil
}

// victimLocked is the least recently active slot that may be ended, or nil.
func (s *slots) victimLocked(now time.Time) *slot {
	var victim *slot
	var oldest time.Time
	for sl := range s.held {
		at, ok := sl.evictable(now, s.idle)
		if ok && (victim == nil || at.Before(oldest)) {
			victim, oldest = sl, at
		}
	}
	return victim
}

// evictable reports whether the slot may be ended to make room, and since
// when it has been idle. A pending Streamable initialize is in flight, so
// never; a pending SSE stream only once it has been open idle (probeIdle)
// without initializing; a client when it is not at work (client.atWork).
func (sl *slot) evictable(now time.Time, idle time.Duration) (time.Time, bool) {
	if sl.cl == nil {
		return sl.since, sl.endStream != nil && now.Sub(sl.since) >= idle
	}
	at := time.Unix(0, sl.cl.lastActive.Load())
	return at, !sl.cl.atWork(now, idle)
}

// endLocked returns what ends the slot's holder.
func (sl *slot) endLocked() func() {
	if sl.cl != nil {
		cl := sl.cl
		return func() { cl.evict() }
	}
	return sl.endStream
}

// claim passes a pending slot to the client it opened; false if it was
// evicted or freed meanwhile (the client must then not stay).
func (sl *slot) claim(cl *client) bool {
	sl.s.mu.Lock()
	defer sl.s.mu.Unlock()
	if sl.evicted || sl.freed || sl.cl != nil {
		return false
	}
	sl.cl = cl
	return true
}

// free releases the slot; once, and not at all if it was evicted (its
// place already passed on).
func (sl *slot) free() {
	sl.s.mu.Lock()
	defer sl.s.mu.Unlock()
	if sl.freed {
		return
	}
	sl.freed = true
	if !sl.evicted {
		delete(sl.s.held, sl)
	}
}

// freeUnclaimed releases the slot if no client claimed it: the request
// that reserved it is over.
func (sl *slot) freeUnclaimed() {
	sl.s.mu.Lock()
	claimed := sl.cl != nil
	sl.s.mu.Unlock()
	if !claimed {
		sl.free()
	}
}

// slotKey is the context key of the slot the request that opened a client
// session reserved: the SDK gives a session the context of the request
// that created it, so initialize finds it there.
type slotKey struct{}
