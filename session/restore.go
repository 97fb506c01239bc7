package session

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"time"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Saved is what a session needs to come back, after a restart or on
// another node, as the same session: its id, its bearer token (as a hash:
// agents that had the token are let in again), who owns it, when it
// started, the recent activity log and what agents may do. The model is saved by the app's
// own codec, beside it.
type Saved struct {
	ID        string
	TokenHash [sha256.Size]byte
	Owner     Owner
	Created   time.Time
	// Activity is the log's most recent entries, oldest first (at most
	// MaxActivity are taken back).
	Activity []Action
	// Control is what the human let agents do: a session its owner
	// paused comes back paused.
	Control Control
}

// Save returns what [Manager.Restore] needs to bring s back.
func (s *Session) Save() Saved {
	return Saved{ID: s.ID, TokenHash: s.TokenHash(), Owner: s.Owner, Created: s.Created, Activity: s.Activity(), Control: s.Control()}
}

// validID is what Manager makes: 18 random bytes in URL-safe base64.
var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{24}$`)

// Restore brings back the session sv describes, around model (decoded by
// the app's codec), which folds restored (a ui.Restored) first instead of
// running Init. The session keeps its id, token hash, owner, start time
// and what agents may do (Control); its activity log is what was saved, cleaned again (a snapshot is
// outside text like any other). It counts against its owner's sessions
// but is never refused for the per-owner cap: it was within it when it
// was saved. It fails with ErrExists when a session with that id is live,
// with ErrClosed after Close, and for an id Manager would not make.
func (m *Manager) Restore(app string, sv Saved, model ui.Model, restored ui.Restored) (*Session, error) {
	if !validID.MatchString(sv.ID) {
		return nil, fmt.Errorf("session: restore %q: not a session id", safetext.Clean(sv.ID, maxField))
	}
	if model == nil {
		return nil, fmt.Errorf("session: restore %s: nil model", sv.ID)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	if _, ok := m.sessions[sv.ID]; ok {
		m.mu.Unlock()
		return nil, fmt.Errorf("session: restore %s: %w", sv.ID, ErrExists)
	}
	m.byOwner[sv.Owner.Key()]++
	m.mu.Unlock()

	created := sv.Created
	if created.IsZero() {
		created = m.now()
	}
	s := m.newSession(sv.ID, app, sv.Owner, created)
	s.lastInput.Store(m.now().UnixNano())
	s.token.Store(&token{hash: sv.TokenHash})
	s.activity.restore(sv.Activity, sv.Control)
	opts := s.dispatcherOptions(m.dispOpts, m.quit)
	opts.Restored = restored
	s.Dispatcher = dispatcher.New(model, opts)

	m.mu.Lock()
	if m.closed {
		m.releaseLocked(sv.Owner.Key())
		m.mu.Unlock()
		s.Dispatcher.Close()
		s.cancel(ErrClosed)
		return nil, ErrClosed
	}
	if _, ok := m.sessions[sv.ID]; ok { // restored twice at once
		m.releaseLocked(sv.Owner.Key())
		m.mu.Unlock()
		s.Dispatcher.Close()
		s.cancel(ErrExists)
		return nil, fmt.Errorf("session: restore %s: %w", sv.ID, ErrExists)
	}
	m.registerLocked(s)
	m.mu.Unlock()
	return s, nil
}
