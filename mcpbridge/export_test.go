package mcpbridge

// NewUnchecked is New without the boot gates, for the tests of the checks
// behind them (defence in depth: a sensitive tool is refused at call time
// too when there is no tool authorizer).
var NewUnchecked = newBridge

// OpenStreams counts the attached clients of session id that hold a stream
// open (an SSE stream, or a Streamable standalone GET).
func OpenStreams(b *Bridge, id string) int {
	b.mu.Lock()
	c := b.servers[id]
	b.mu.Unlock()
	if c == nil {
		return 0
	}
	n := 0
	c.clients.Range(func(_, v any) bool {
		if v.(*client).streaming() {
			n++
		}
		return true
	})
	return n
}
