package server

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// authTrace is what one connection's authentication did, as far as the
// server can see it, so that a failed handshake can be told apart: a
// failed login, or a client that went away.
//
// x/crypto/ssh does not report everything to one place. A refused
// attempt (a key the server does not take, queried or signed, a wrong
// password) reaches ServerConfig.AuthLogCallback with its error; a key
// query the server takes gets its "pk ok" and reaches neither callback
// again. But a signed public key request whose signature does not verify
// never reaches AuthLogCallback: serverAuthenticate returns the verify
// error ("ssh: signature did not verify", crypto/rsa's verification
// error, ...) and the handshake fails with it. So that case is known by
// elimination: a key was offered (the PublicKeyHandler ran), nothing
// succeeded, and the handshake failed for another reason than the client
// leaving.
type authTrace struct {
	mu      sync.Mutex
	offered bool // a public key reached the PublicKeyHandler
	refused bool // an attempt other than "none" was refused
	passed  bool // an attempt succeeded
}

// offer records that the client offered a public key (a query or a
// signed request: the handler cannot tell them apart).
func (t *authTrace) offer() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.offered = true
	t.mu.Unlock()
}

// logAttempt is the connection's AuthLogCallback.
func (t *authTrace) logAttempt(_ gossh.ConnMetadata, method string, err error) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err == nil:
		t.passed = true
	case method != "none":
		// "none" is every client's first probe for the methods on offer.
		var partial *gossh.PartialSuccessError
		if !errors.As(err, &partial) {
			t.refused = true
		}
	}
}

// failedLogin reports whether a handshake that failed with err was a
// failed login: the client was refused, or proved nothing with what it
// offered (a signature that did not verify, a malformed request), rather
// than leaving or timing out before it tried.
func (t *authTrace) failedLogin(err error) bool {
	msg := err.Error()
	if strings.Contains(msg, "no auth passed yet") || strings.Contains(msg, "permission denied") ||
		strings.Contains(msg, "unable to authenticate") {
		return true // the authentication loop ended without a success
	}
	if t == nil {
		return false
	}
	t.mu.Lock()
	offered, refused, passed := t.offered, t.refused, t.passed
	t.mu.Unlock()
	switch {
	case passed:
		return false
	case refused:
		// However the client left after it: OpenSSH, for one, sends a
		// disconnect message rather than closing.
		return true
	}
	return offered && !clientLeft(err)
}

// clientLeft reports whether err is the connection ending or timing out,
// or the client disconnecting, rather than something it sent failing.
func clientLeft(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &ne) || strings.HasPrefix(err.Error(), "ssh: disconnect")
}

type authTraceKeyType struct{}

// authTraceKey holds a connection's *authTrace in its context.
var authTraceKey authTraceKeyType

// traceOf returns the connection's trace, or nil.
func traceOf(ctx ssh.Context) *authTrace {
	t, _ := ctx.Value(authTraceKey).(*authTrace)
	return t
}

// authTraces finds a connection's trace from ConnectionFailedCallback,
// which gets the connection but not its context, by remote address:
// unique among open TCP connections to one listener.
type authTraces struct {
	mu sync.Mutex
	m  map[string]*authTrace
}

// open starts the trace of a connection just admitted.
func (a *authTraces) open(ctx ssh.Context, remote net.Addr) {
	t := &authTrace{}
	ctx.SetValue(authTraceKey, t)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = make(map[string]*authTrace)
	}
	a.m[remote.String()] = t
}

// get returns the trace of the open connection from remote, or nil.
func (a *authTraces) get(remote net.Addr) *authTrace {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m[remote.String()]
}

// close forgets the trace of a connection that closed.
func (a *authTraces) close(remote net.Addr) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, remote.String())
}
