package mcpbridge

import "time"

// HeldSlots is the number of client slots session id holds (attached
// clients and clients being opened).
func HeldSlots(b *Bridge, id string) int {
	b.mu.Lock()
	c := b.servers[id]
	b.mu.Unlock()
	if c == nil {
		return 0
	}
	return c.slots.len()
}

// ProbeIdle is how long a client that did nothing but open must be quiet
// before it can be ended to make room.
const ProbeIdle = probeIdle

// SetProbeIdle sets how long a client that only opened may hold a stream
// before it can be ended to make room, for the sessions b serves from now
// on: a test of exact counts under a race sets it long, so that a slow
// machine cannot turn a pending stream into one that makes room.
func SetProbeIdle(b *Bridge, d time.Duration) { b.probeIdle = d }
