package dispatcher

import "sync"

// Subscription signals new snapshots. Signals coalesce: C has room for
// one, so a reader that falls behind sees a single signal and then reads
// the newest snapshot with Latest; it never slows the dispatcher.
type Subscription struct {
	d      *Dispatcher
	c      chan struct{}
	notify func() // SubscribeFunc's, or nil
	once   sync.Once
}

// Subscribe registers a subscriber. C is signalled after each snapshot
// published from now on, not for the current one: read Latest first.
// Subscribing to a closed dispatcher works but is never signalled.
func (d *Dispatcher) Subscribe() *Subscription { return d.SubscribeFunc(nil) }

// SubscribeFunc is Subscribe, and notify (when not nil) is called after C
// is signalled, on the goroutine that published the snapshot: a
// subscriber can learn of snapshots without a goroutine waiting on C.
// notify must not block or call into the dispatcher; it is called for
// every snapshot, whether or not a signal was already pending.
func (d *Dispatcher) SubscribeFunc(notify func()) *Subscription {
	s := &Subscription{d: d, c: make(chan struct{}, 1), notify: notify}
	d.subMu.Lock()
	defer d.subMu.Unlock()
	var next []*Subscription
	if cur := d.subs.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, s)
	d.subs.Store(&next)
	return s
}

// C returns the signal channel (capacity 1). It is never closed; select on
// Done as well to notice the dispatcher stopping.
func (s *Subscription) C() <-chan struct{} { return s.c }

// Latest returns the dispatcher's latest snapshot.
func (s *Subscription) Latest() Snapshot { return s.d.Snapshot() }

// Done is closed once the dispatcher has stopped (the same channel as the
// dispatcher's Done).
func (s *Subscription) Done() <-chan struct{} { return s.d.done }

// Close unsubscribes. It is idempotent. A signal already pending in C may
// still be received.
func (s *Subscription) Close() {
	s.once.Do(func() {
		d := s.d
		d.subMu.Lock()
		defer d.subMu.Unlock()
		cur := d.subs.Load()
		if cur == nil {
			return
		}
		next := make([]*Subscription, 0, len(*cur))
		for _, x := range *cur {
			if x != s {
				next = append(next, x)
			}
		}
		d.subs.Store(&next)
	})
}
