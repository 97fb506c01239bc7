package server

import "sync"

// slots counts what a cap holds, per key, in one place: a place is taken
// (checked against the cap and counted under one lock) before the work it
// guards starts, and given back by the release func tryTake returns, which
// does it once however many times it is called. The clients attached to
// /mcp are counted here. The other server-side caps count their own the
// same way: SSH connections in total and per address (admission.reserve),
// session channels per SSH connection (channelCounts.take), HTTP
// connections per address (perIPListener) and requests through trusted
// proxies per client (proxiedRequests), sessions per owner
// (session.Manager.StartFunc).
type slots[K comparable] struct {
	max int // <= 0: no cap

	mu sync.Mutex
	n  map[K]int
}

func newSlots[K comparable](max int) *slots[K] {
	return &slots[K]{max: max, n: make(map[K]int)}
}

// tryTake takes one of k's places if it has one free, and returns the
// func that gives it back (idempotent); ok is false, and nothing taken,
// when k is at the cap.
func (s *slots[K]) tryTake(k K) (release func(), ok bool) {
	s.mu.Lock()
	if s.max > 0 && s.n[k] >= s.max {
		s.mu.Unlock()
		return func() {}, false
	}
	s.n[k]++
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { s.give(k) }) }, true
}

func (s *slots[K]) give(k K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[k]--; s.n[k] <= 0 {
		delete(s.n, k)
	}
}

// held is the number of k's places taken now.
func (s *slots[K]) held(k K) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[k]
}

// total is the number of places taken now, over every key.
func (s *slots[K]) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := 0
	for _, v := range s.n {
		t += v
	}
	return t
}
