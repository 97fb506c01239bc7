package cluster

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnknownSession is wrapped by the error [Node.Lookup] returns when the
// session directory has no entry for the id, or has one whose home node is
// not live (its entry expired with its node's heartbeat).
var ErrUnknownSession = errors.New("unknown session")

// ErrUnavailable is wrapped by the error of any operation that needs NATS
// when NATS cannot be reached now (disconnected, a timeout, JetStream not
// ready). The cause is wrapped too, so both errors.Is(err, ErrUnavailable)
// and the NATS error are visible. Callers answer 503 or print a clear line;
// retrying later may succeed.
var ErrUnavailable = errors.New("cluster directory unavailable (NATS cannot be reached)")

// ErrClaimLost is wrapped by the error [Node.Claim] returns when another
// node changed the entry first (it claimed the session, or the entry was
// deleted), and by [Node.Announce] when another node has claimed a session
// this node announced: the session's home is elsewhere now.
var ErrClaimLost = errors.New("claim lost to another node")

// ErrForgedPeer is wrapped by the error [Node.VerifyRequest] returns when a
// request carries peer headers without valid proof of the cluster secret.
var ErrForgedPeer = errors.New("forged peer request")

// ErrClosed is wrapped by the error of an operation on a node after
// [Node.Close], and of a write (Announce, Claim) after [Node.Drain].
var ErrClosed = errors.New("cluster node closed")

// unavailable wraps a transport or JetStream failure so that it matches
// ErrUnavailable and still shows (and matches) its cause.
func unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// isNotFound reports whether err says a key has no live value.
func isNotFound(err error) bool {
	return errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted)
}

// isRevisionMismatch reports whether err is a lost compare-and-set. On a
// replicated bucket only ErrKeyRevisionMismatch matches, so that is what
// is tested (not ErrKeyExists).
func isRevisionMismatch(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}
