package mcpbridge

// HeldSlots is the number of client slots session id holds (attached
// clients and clients being opened).
func HeldSlots(b *Bridge, id string) int {
	b.mu.Lock()
	c := b.conns[id]
	b.mu.Unlock()
	if c == nil {
		return 0
	}
	return c.slots.len()
}

// ProbeIdle is how long a client that did nothing but open must be quiet
// before it can be ended to make room.
const ProbeIdle = probeIdle
