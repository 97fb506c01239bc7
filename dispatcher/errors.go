package dispatcher

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
)

var (
	// ErrClosed is returned by Send, Call and their Func variants once the
	// dispatcher is closed, including to calls still waiting when Close
	// was called.
	ErrClosed = errors.New("dispatcher: closed")

	// ErrQueueFull is returned by Send and SendFunc when the queue has no
	// room. Nothing was enqueued; the caller may retry or drop the input.
	ErrQueueFull = errors.New("dispatcher: queue full")

	// ErrTimeout is returned by Call and CallFunc when the wait ended
	// before the fold did (the call's timeout or the caller's context).
	// It does not cancel anything: the messages may still be applied.
	ErrTimeout = errors.New("dispatcher: timed out waiting for the fold; the message may still be applied")

	// ErrUpdateFailed matches (with errors.Is) every *UpdateError.
	ErrUpdateFailed = errors.New("update_failed")
)

// UpdateError reports an envelope whose fold failed: an Update panicked or
// returned a nil model (or a resolver panicked). The model was restored to
// what it was before the envelope; none of its messages took effect.
//
// Error() names only the message's Go type, never its contents, which may
// hold a password. Msg and Panic are there for trusted code; do not show
// them to other clients.
type UpdateError struct {
	// Msg is the message whose Update failed (nil when a resolver panicked).
	Msg tea.Msg
	// Panic is the recovered panic value, or nil.
	Panic any
	// Reason is a short fixed description such as "Update panicked".
	Reason string
}

// Error returns "update_failed: <reason> (<message type>)".
func (e *UpdateError) Error() string {
	if e.Msg == nil {
		return "update_failed: " + e.Reason
	}
	return fmt.Sprintf("update_failed: %s (%T)", e.Reason, e.Msg)
}

// Is reports whether target is ErrUpdateFailed.
func (e *UpdateError) Is(target error) bool { return target == ErrUpdateFailed }

// timeoutError builds the error of a Call whose wait ended early. When the
// caller's context caused it, both ErrTimeout and ctxErr match.
func timeoutError(ctxErr error) error {
	if ctxErr == nil {
		return ErrTimeout
	}
	return fmt.Errorf("%w: %w", ErrTimeout, ctxErr)
}
