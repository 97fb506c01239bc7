package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
)

// StdioConnID is the connection id a policy sees for a client served over
// [Bridge.ServeTransport]: there is one client, the process that spawned
// the server.
const StdioConnID = "default"

// ErrNoSession is returned by [Bridge.ServeTransport] for a session that is
// not live (or a closed bridge).
var ErrNoSession = errors.New("mcpbridge: no such live session")

// declared maps the connection ids ServeTransport makes up to the
// authorization context the server declared for them. newContext looks
// here first, so that such a client goes through the very same seams as an
// HTTP one, with the transport the server (not the client) named.
var declared sync.Map // string -> authz.Context

// ServeTransport serves session sessionID's MCP server, the same one its
// HTTP endpoints serve (same tools, resources, middleware and
// authorization), to one client over t, e.g. mcp.StdioTransport. Policies
// see the client as authz.Context{ConnID: "default", Transport: transport}
// (transport is one of the authz.Transport constants, typically
// authz.TransportStdio). It returns when the client disconnects (nil), when
// ctx is done (ctx.Err()), or when the session ends or the bridge closes.
//
// Serving over a transport the process owns is what exempts it from the
// network boot gate (authz.Policy.CheckNetworkBoot), which is the caller's
// business; every other rule binds here as on HTTP.
func (b *Bridge) ServeTransport(ctx context.Context, sessionID string, t mcp.Transport, transport string) error {
	se, ok := b.sessions.Get(sessionID)
	if !ok {
		return ErrNoSession
	}
	c := b.sessionServer(se)
	if c == nil {
		return ErrNoSession
	}
	if transport == "" {
		transport = authz.TransportUnknown
	}
	id := "transport-" + randomID()
	declared.Store(id, authz.Context{ConnID: StdioConnID, Transport: transport})
	defer declared.Delete(id)
	ss, err := c.server.Connect(ctx, &namedTransport{t: t, id: id}, nil)
	if err != nil {
		return fmt.Errorf("mcpbridge: connect %s client: %w", transport, err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.ErrClosedPipe) {
			return nil
		}
		if _, live := b.sessions.Get(sessionID); !live {
			// The session ended and its end closed this connection; what the
			// read loop saw of that close (a closed pipe, a closed file) is
			// not the client's failure.
			return nil
		}
		return err
	case <-ctx.Done():
		_ = ss.Close()
		<-done
		return ctx.Err()
	}
}

// declaredContext returns the context the server declared for a
// connection made by ServeTransport.
func declaredContext(connID string) (authz.Context, bool) {
	v, ok := declared.Load(connID)
	if !ok {
		return authz.Context{}, false
	}
	return v.(authz.Context), true
}

// namedTransport gives the connections of t a session id of our own, by
// which newContext recognizes them.
type namedTransport struct {
	t  mcp.Transport
	id string
}

func (n *namedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := n.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return namedConn{Connection: c, id: n.id}, nil
}

type namedConn struct {
	mcp.Connection
	id string
}

func (n namedConn) SessionID() string { return n.id }
