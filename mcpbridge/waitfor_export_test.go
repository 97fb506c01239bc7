package mcpbridge

// WaitFallback is how long a raxol_wait_for goes without a look at the
// screen when nothing changes.
const WaitFallback = waitFallback

// MaxWaitsPerClient is how many raxol_wait_for calls a client may have
// waiting at once.
const MaxWaitsPerClient = maxWaitsPerClient

// Waiting counts the raxol_wait_for calls session id has waiting.
func Waiting(b *Bridge, id string) int {
	b.mu.Lock()
	c := b.servers[id]
	b.mu.Unlock()
	if c == nil {
		return 0
	}
	c.waits.mu.Lock()
	defer c.waits.mu.Unlock()
	n := 0
	for _, k := range c.waits.n {
		n += k
	}
	return n
}
