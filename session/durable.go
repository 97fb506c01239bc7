package session

import (
	"context"
	"errors"
	"fmt"
)

// ErrNotSaved wraps the error of a change that is in force but that the
// session's saver could not make durable (see [Session.SetSaver]): after a
// crash the session may come back without it, or not at all.
var ErrNotSaved = errors.New("session: the change is in force but was not saved")

// SetSaver installs save, which writes the session's record where it
// survives a crash of the process (the server's snapshot store) and
// returns once it is there; nil removes it. A change to what the record
// holds about who may act in the session and how (the token, Control) is
// saved with it before it is reported done: RotateToken and SetControl
// return only after save.
// save is called without the session's locks held.
func (s *Session) SetSaver(save func() error) {
	s.mu.Lock()
	s.saver = save
	s.mu.Unlock()
}

// SetCommitter installs commit, which makes the session's model (and
// activity) as of the dispatcher's snapshot version (or a later one)
// durable where the session would be restored from, and returns once it
// is there; nil removes it. An agent's change is answered only after
// Commit: the server installs one in a cluster, where a session can be
// adopted by another node from its last saved record.
func (s *Session) SetCommitter(commit func(ctx context.Context, version uint64) error) {
	s.mu.Lock()
	s.committer = commit
	s.mu.Unlock()
}

// Commit runs the committer, if any, for the dispatcher's current
// snapshot: what every change folded so far did is durable when it
// returns nil. The error wraps ErrNotSaved: the changes are in force
// here, but the session may come back elsewhere without them.
func (s *Session) Commit(ctx context.Context) error {
	s.mu.Lock()
	commit := s.committer
	s.mu.Unlock()
	if commit == nil {
		return nil
	}
	if err := commit(ctx, s.Dispatcher.Snapshot().Version); err != nil {
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	return nil
}

// Durable runs the saver, if any, and returns once the session's record
// holds its current token and control (the saver may skip a write when it
// does already): the owner's terminal calls it before it shows the token,
// so that an agent is never given a token a crash would forget along with
// the session. The error wraps ErrNotSaved.
func (s *Session) Durable() error { return s.saveNow() }

// saveNow runs the saver, if any; the error wraps ErrNotSaved.
func (s *Session) saveNow() error {
	s.mu.Lock()
	save := s.saver
	s.mu.Unlock()
	if save == nil {
		return nil
	}
	if err := save(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	return nil
}

// RotateToken replaces the session's bearer token and returns the new one.
// The old token stops working at once; watchers are signalled so that the
// MCP side can disconnect clients that used it. With a saver installed
// (SetSaver) the new token is saved before RotateToken returns, so that a
// crash after the human was shown it cannot bring the old one back; until
// then Token reports "" (the new token is shown to nobody before it is
// durable). When saving fails the new token is in force all the same and
// returned with an error wrapping ErrNotSaved. Rotations run one at a
// time.
func (s *Session) RotateToken() (string, error) {
	tok, err := randomString(32)
	if err != nil {
		return "", fmt.Errorf("session token: %w", err)
	}
	s.rotating.Lock()
	defer s.rotating.Unlock()
	nt := newToken(tok)
	s.token.Store(&token{hash: nt.hash}) // in force, not shown yet
	s.signal()
	err = s.saveNow()
	s.token.Store(nt)
	return tok, err
}
