package server

import (
	"errors"

	"github.com/raxol-ssh/raxol-ssh/metrics"
)

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

// errNotAPeer is wrapped by a bridge's error when the server reached did
// not prove it holds the cluster's peer key.
var errNotAPeer = errors.New("the server did not prove it is a node of this cluster")

// errUnknownSession is the one answer for a session that does not exist,
// has ended, or is someone else's.
var errUnknownSession = errors.New("no such session among yours (it may have ended)")

// Why a connection ends (endReason, its context's cause; conn.go), where
// more than one place ends one so or a caller branches on it: the outcome
// counted, then the line the client is told.
var (
	// errStopping: the server drains or has stopped.
	errStopping = endReason{metrics.OutcomeShutdown, "the server is stopping"}
	// errNoSuchSession: a join or resume that cannot go ahead, told the
	// same for an unknown, ended or someone else's session and for a
	// refused request, so that it never says whether the id exists.
	errNoSuchSession = endReason{metrics.OutcomeRejected, noSuchSession}
	// errTooManyJoins: a join over the rate limit.
	errTooManyJoins = endReason{metrics.OutcomeRejected, tooManyJoins}
	// errNoPTY: a client that asked for no terminal.
	errNoPTY = endReason{metrics.OutcomeNoPTY, "this server runs an interactive app and needs a terminal; connect with `ssh -t`"}
	// errUnknownCommand: a command handle does not serve.
	errUnknownCommand = endReason{metrics.OutcomeRejected, "unknown command; connect without one for a new session, or with `join <session-id> [code]` or `resume <session-id>`"}
	// errStartFailed: the app's model could not be made.
	errStartFailed = endReason{metrics.OutcomeError, "could not start a session"}
	// errProgramFailed: the terminal's program failed while the client
	// was there.
	errProgramFailed = endReason{metrics.OutcomeError, "the terminal program failed"}

	// What a bridged terminal is told when the bridge cannot go on
	// (cluster_ssh.go).
	errServerWentAway    = endReason{metrics.OutcomeError, "the session's server went away"}
	errServerUnreachable = endReason{metrics.OutcomeError, "the session's server cannot be reached; try again"}
	errDirectoryDown     = endReason{metrics.OutcomeError, "the cluster directory is unavailable; try again"}
	// How a bridged session ended at home: normally (errHomeEnded), or
	// otherwise with its own reason line already passed through its
	// stderr (errHomeRefused: the exit status is 1 again, nothing more
	// is told).
	errHomeEnded   = endReason{metrics.OutcomeOK, ""}
	errHomeRefused = endReason{metrics.OutcomeOther, ""}
)
