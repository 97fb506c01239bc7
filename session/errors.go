package session

import (
	"context"
	"errors"
)

// ErrClosed is returned by operations on a manager that has been closed.
var ErrClosed = errors.New("session: manager closed")

// ErrExists is returned by Restore for a session id that is live.
var ErrExists = errors.New("session: a live session has that id")

// ErrEnded is the cause of every ended session's context
// ([Session.Context]): errors.Is(context.Cause(s.Context()), ErrEnded).
var ErrEnded = errors.New("the session ended")

// Ended is an end cause whose message is what the humans of the session
// are told, e.g. "the app ended the session". It matches [ErrEnded].
func Ended(reason string) error {
	if reason == "" {
		return ErrEnded
	}
	return &endedError{reason}
}

type endedError struct{ reason string }

func (e *endedError) Error() string        { return e.reason }
func (e *endedError) Is(target error) bool { return target == ErrEnded }

// EndReason is the user-visible reason a session ended, from its
// context's cause; "" while it is live.
func EndReason(s *Session) string {
	if s.ctx.Err() == nil {
		return ""
	}
	return context.Cause(s.ctx).Error()
}
