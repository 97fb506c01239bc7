package session

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Attention is where the human's attention is in a terminal: the focused
// widget and the widget under the mouse. The focus lens follows it.
type Attention struct {
	Focus string
	Hover string
}

// maxRecent is how many recently acted-on widgets a session remembers.
const maxRecent = 16

// ErrNoTerminal is returned when keys are sent to a session with no
// terminal attached to receive them.
var ErrNoTerminal = errors.New("session: no terminal attached")

// KeySink delivers key presses into a terminal as if typed, on behalf of
// the named agent. It returns an error when a key cannot be delivered.
type KeySink func(agent string, keys []string) error

// shared is the terminal-side state the MCP projection reads. Its fields
// are protected by Session.mu.
type shared struct {
	attention Attention
	recent    []string
	screen    string
	hasScreen bool
	keys      KeySink
	watchers  map[int]chan struct{}
	presence  map[int]chan struct{}
	nextWatch int
}

// SetAttention records the human's attention; watchers are signalled when
// it changed.
func (s *Session) SetAttention(a Attention) {
	s.mu.Lock()
	changed := s.shared.attention != a
	s.shared.attention = a
	s.mu.Unlock()
	if changed {
		s.signal()
	}
}

// Attention returns the human's attention.
func (s *Session) Attention() Attention {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shared.attention
}

// NoteAction records that someone acted on widget id, most recent first.
func (s *Session) NoteAction(id string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	r := slices.DeleteFunc(s.shared.recent, func(x string) bool { return x == id })
	r = slices.Insert(r, 0, id)
	if len(r) > maxRecent {
		r = r[:maxRecent]
	}
	changed := !slices.Equal(r, s.shared.recent)
	s.shared.recent = r
	s.mu.Unlock()
	if changed {
		s.signal()
	}
}

// Recent returns the widgets recently acted on, most recent first.
func (s *Session) Recent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.shared.recent)
}

// SetScreen records what the owner's terminal shows now (styled text).
func (s *Session) SetScreen(text string) {
	s.mu.Lock()
	changed := !s.shared.hasScreen || s.shared.screen != text
	s.shared.screen, s.shared.hasScreen = text, true
	s.mu.Unlock()
	if changed {
		s.signal()
	}
}

// Screen returns what the owner's terminal shows now, and whether a
// terminal has drawn anything.
func (s *Session) Screen() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shared.screen, s.shared.hasScreen
}

// SetKeySink installs where agent key presses go (the owner's terminal);
// nil removes it.
func (s *Session) SetKeySink(k KeySink) {
	s.mu.Lock()
	s.shared.keys = k
	s.mu.Unlock()
}

// SendKeys delivers key presses into the owner's terminal as if typed.
func (s *Session) SendKeys(agent string, keys []string) error {
	s.mu.Lock()
	k := s.shared.keys
	s.mu.Unlock()
	if k == nil {
		return ErrNoTerminal
	}
	return k(agent, keys)
}

// Watch returns a channel signalled (coalescing, never blocking the
// sender) whenever the attention, the recent actions, the screen or the
// presence change, and a function that stops watching.
func (s *Session) Watch() (<-chan struct{}, func()) { return s.watch(&s.shared.watchers) }

// WatchPresence is like Watch, for presence changes only.
func (s *Session) WatchPresence() (<-chan struct{}, func()) { return s.watch(&s.shared.presence) }

func (s *Session) watch(set *map[int]chan struct{}) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if *set == nil {
		*set = make(map[int]chan struct{})
	}
	id := s.shared.nextWatch
	s.shared.nextWatch++
	(*set)[id] = ch
	s.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.mu.Lock()
			delete(*set, id)
			s.mu.Unlock()
		})
	}
}

func (s *Session) signal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	notifyLocked(s.shared.watchers)
}

func (s *Session) signalPresence() {
	s.mu.Lock()
	defer s.mu.Unlock()
	notifyLocked(s.shared.presence)
	notifyLocked(s.shared.watchers)
}

// notifyLocked signals every channel of set without blocking; s.mu is held.
func notifyLocked(set map[int]chan struct{}) {
	for _, ch := range set {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// RotateToken replaces the session's bearer token and returns the new one.
// The old token stops working at once; watchers are signalled so that the
// MCP side can disconnect clients that used it.
func (s *Session) RotateToken() (string, error) {
	tok, err := randomString(32)
	if err != nil {
		return "", fmt.Errorf("session token: %w", err)
	}
	s.token.Store(&tok)
	s.signal()
	return tok, nil
}
