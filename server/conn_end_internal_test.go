package server

import (
	"context"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/metrics"
)

// newEndingConn is a conn with only what its end uses: a context under
// parent whose cancel takes a cause.
func newEndingConn(parent context.Context) *conn {
	c := &conn{}
	c.ctx, c.cancel = context.WithCancelCause(parent)
	return c
}

// TestConnEndFirstCauseWins: why a connection ends is the first reason
// given; a later one neither replaces it nor claims it won, and the
// context ends with the first.
func TestConnEndFirstCauseWins(t *testing.T) {
	c := newEndingConn(context.Background())
	if got := c.ended(); got != (endReason{}) {
		t.Fatalf("a running connection's end is %+v, want none", got)
	}
	idle := endWith(metrics.OutcomeIdleTimeout, "no input for 1s; disconnected")
	if !c.end(idle) {
		t.Fatal("the first reason given is not the cause")
	}
	if c.ctx.Err() == nil {
		t.Fatal("the connection's context is not cancelled by its end")
	}
	if c.end(errStopping) {
		t.Fatal("a second reason claims to be the cause")
	}
	if got := c.ended(); got != idle {
		t.Fatalf("ended() = %+v, want the first reason %+v", got, idle)
	}
	c.stopAll() // the handler's own cancel keeps the cause
	if got := c.ended(); got != idle {
		t.Fatalf("after stopAll ended() = %+v, want %+v", got, idle)
	}
}

// TestConnEndAfterTheClientLeft: a client whose connection closed first
// cancelled the context without a reason; nothing given after is the
// cause (it could not be told), and the end counts as ok.
func TestConnEndAfterTheClientLeft(t *testing.T) {
	parent, hangUp := context.WithCancel(context.Background())
	c := newEndingConn(parent)
	hangUp()
	if c.end(errServerWentAway) {
		t.Fatal("a reason given after the client left claims to be the cause")
	}
	if got := c.ended(); got != (endReason{}) {
		t.Fatalf("ended() = %+v after the client left first, want none (ok, nothing told)", got)
	}
}

// TestConnEndReasonsAreErrors: an end reason is the error the context's
// cause is, found with errors.Is by value.
func TestConnEndReasonsAreErrors(t *testing.T) {
	c := newEndingConn(context.Background())
	c.end(errNoSuchSession)
	if cause := context.Cause(c.ctx); cause != error(errNoSuchSession) {
		t.Fatalf("context.Cause = %v, want %v", cause, errNoSuchSession)
	}
	if got := errNoSuchSession.Error(); got != "connection ended: rejected: "+noSuchSession {
		t.Fatalf("Error() = %q", got)
	}
}
