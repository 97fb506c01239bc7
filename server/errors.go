package server

import "errors"

// The package's errors: the exported sentinels callers branch on with
// errors.Is, then the unexported ones its own code branches on.

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrShutdown: the server is draining or has stopped.
	ErrShutdown = errors.New("server: shutting down")
	// ErrSessionLimit: the owner already has Limits.MaxSessionsPerUser
	// live sessions.
	ErrSessionLimit = errors.New("too many sessions")
	// ErrStarted: Start, Serve or ListenAndServe was called a second time.
	ErrStarted = errors.New("server: already started")
	// ErrNoSession: no live session has that id.
	ErrNoSession = errors.New("server: no such live session")
)

// ErrSnapshotVersion is what [JSONCodec]'s Decode returns for a snapshot
// written with another version.
var ErrSnapshotVersion = errors.New("snapshot written with another model version")

// errSilentProxyConn is accept's error for a trusted proxy's connection
// that sent nothing at all before it closed or the timeout: a load
// balancer's TCP health check, typically, not worth a warning.
var errSilentProxyConn = errors.New("closed without sending a PROXY protocol header")

// errPeerFailed is wrapped by the error of a peer request that got no
// answer of the protocol's: the peer is unreachable, failed, or is not
// a node of this version.
var errPeerFailed = errors.New("the peer node gave no usable answer")

// errNotAPeer is wrapped by a bridge's error when the server reached did
// not prove it holds the cluster's peer key.
var errNotAPeer = errors.New("the server did not prove it is a node of this cluster")

// errFenced marks a write refused because the session is not this
// node's to write now.
var errFenced = errors.New("not this node's to write")

// errExpired and errHeldByPeer are decodeRecord's reasons not to restore
// a record that are no failure of the record.
var (
	errExpired    = errors.New("saved session older than the resume grace")
	errHeldByPeer = errors.New("a live peer holds the session")
)

// errAbandoned is what a change to a copy this node gave up is answered
// with.
var errAbandoned = errors.New("this node no longer holds the session: it moved to another node")

// errUnknownSession is the one answer for a session that does not exist,
// has ended, or is someone else's.
var errUnknownSession = errors.New("no such session among yours (it may have ended)")
