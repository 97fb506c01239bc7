package session

import "errors"

// ErrClosed is returned by operations on a manager that has been closed.
var ErrClosed = errors.New("session: manager closed")
