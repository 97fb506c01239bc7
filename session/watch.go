package session

import (
	"sync"
	"time"
)

// hub is what a session's parts share: the session's one lock, its clock
// and its watchers. Session embeds it, and each part (roster, share,
// activity) holds a pointer to it, so that every change, whichever part
// makes it, is made under the same lock and signals the same watchers in
// the same order as when the parts were one struct.
type hub struct {
	now func() time.Time // the clock; fixed at creation

	mu sync.Mutex // the session's lock: protects the following, the parts' state and Session's saver and committer
	// watchers are signalled on every change terminals and agents see
	// (Watch); presence only on what terminals show besides the model
	// (WatchPresence), which signals watchers too.
	watchers  map[int]watcher
	presence  map[int]watcher
	nextWatch int
}

// Watch returns a channel signalled (coalescing, never blocking the
// sender) whenever the attention, the recent actions, the screen or the
// presence change, and a function that stops watching.
func (h *hub) Watch() (<-chan struct{}, func()) { return h.watch(&h.watchers, nil) }

// WatchFunc is Watch, and notify (when not nil) is called after the
// channel is signalled, as WatchPresenceFunc's is.
func (h *hub) WatchFunc(notify func()) (<-chan struct{}, func()) {
	return h.watch(&h.watchers, notify)
}

// WatchPresence is like Watch, for what terminals show besides the model:
// presence, recorded actions and agent control.
func (h *hub) WatchPresence() (<-chan struct{}, func()) {
	return h.watch(&h.presence, nil)
}

// WatchPresenceFunc is WatchPresence, and notify (when not nil) is called
// after the channel is signalled, by the goroutine that changed the
// presence, with the session's lock held: it must not block or call into
// the session.
func (h *hub) WatchPresenceFunc(notify func()) (<-chan struct{}, func()) {
	return h.watch(&h.presence, notify)
}

// watcher is one Watch or WatchPresence.
type watcher struct {
	ch     chan struct{}
	notify func()
}

func (h *hub) watch(set *map[int]watcher, notify func()) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if *set == nil {
		*set = make(map[int]watcher)
	}
	id := h.nextWatch
	h.nextWatch++
	(*set)[id] = watcher{ch: ch, notify: notify}
	h.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(*set, id)
			h.mu.Unlock()
		})
	}
}

// signal tells the watchers (Watch) of a change.
func (h *hub) signal() {
	h.mu.Lock()
	defer h.mu.Unlock()
	notifyLocked(h.watchers)
}

// signalPresence tells the presence watchers (WatchPresence), then the
// watchers (Watch), of a change.
func (h *hub) signalPresence() {
	h.mu.Lock()
	defer h.mu.Unlock()
	notifyLocked(h.presence)
	notifyLocked(h.watchers)
}

// notifyLocked signals every channel of set without blocking; h.mu is held.
func notifyLocked(set map[int]watcher) {
	for _, w := range set {
		select {
		case w.ch <- struct{}{}:
		default:
		}
		if w.notify != nil {
			w.notify()
		}
	}
}
