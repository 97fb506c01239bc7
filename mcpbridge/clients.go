package mcpbridge

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// errWithdrawn is the cause of a call's context when the request it came
// in on went away.
var errWithdrawn = errors.New("mcpbridge: the request went away")

// client is what a conn keeps of one attached MCP client session, from
// its initialize until its session closes.
type client struct {
	// Fixed at creation.
	actx    authz.Context // what policies see of it
	ended   chan struct{} // closed when its session has closed
	closing chan struct{} // closed when the server starts closing it
	limiter *rate.Limiter // its tool calls
	once    sync.Once     // closes closing
	// grants are the tools the human allowed for this client for the
	// rest of its session ("allow for the session"); never for another
	// client, and revoked when the token is rotated.
	grants authz.SessionGrants
}

// attach records an agent's presence in the session until its MCP session
// closes; once per client. It runs when the client's initialize has been
// answered (before its Connect returns), and again, as a no-op, on its
// notifications/initialized, which the SDK may handle much later.
func (c *conn) attach(ss *mcp.ServerSession, req mcp.Request) {
	if ss == nil {
		return
	}
	cl := &client{
		actx:    newContext(ss, req),
		ended:   make(chan struct{}),
		closing: make(chan struct{}),
		limiter: rate.NewLimiter(rate.Limit(c.b.opts.ToolCallsPerSecond), c.b.opts.ToolCallBurst),
	}
	if _, seen := c.clients.LoadOrStore(ss, cl); seen {
		return
	}
	_, detach := c.sess.Attach(session.KindAgent, clientName(ss))
	c.b.opts.Metrics.MCPClient(1)
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		_ = ss.Wait()
		close(cl.ended)
		detach()
		c.res.forget(ss)
		c.clients.Delete(ss)
		c.b.opts.Metrics.MCPClient(-1)
	}()
	go func() {
		defer c.wg.Done()
		c.keepAlive(ss, cl.ended)
	}()
}

// markClosing tells the client's waiting calls that its session is being
// closed: the SDK's Close waits for in-flight handlers, so a call waiting
// for the human must give up first.
func (cl *client) markClosing() { cl.once.Do(func() { close(cl.closing) }) }

// closeClient closes a client session, withdrawing what it waits for.
func (c *conn) closeClient(ss *mcp.ServerSession) {
	if v, ok := c.clients.Load(ss); ok {
		v.(*client).markClosing()
	}
	_ = ss.Close()
}

// closingByID marks the Streamable client with session id closing (its
// DELETE is being served).
func (c *conn) closingByID(id string) {
	if id == "" {
		return
	}
	c.clients.Range(func(k, v any) bool {
		if k.(*mcp.ServerSession).ID() == id {
			v.(*client).markClosing()
			return false
		}
		return true
	})
}

// client returns the attached client a request came from, or nil.
func (c *conn) client(req mcp.Request) *client {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return nil
	}
	v, ok := c.clients.Load(ss)
	if !ok {
		return nil
	}
	return v.(*client)
}

// clientContext is the authorization context of the client a request
// (received, or sent to it) belongs to: fixed when it initialized.
func (c *conn) clientContext(req mcp.Request) authz.Context {
	if cl := c.client(req); cl != nil {
		return cl.actx
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	return newContext(ss, req)
}

// newContext holds only what the server knows of a client session: the
// connection it is (its Streamable session id, a random id per SSE
// stream, or what ServeTransport declared) and its transport (Streamable
// HTTP requests carry their HTTP headers; SSE ones do not).
func newContext(ss *mcp.ServerSession, req mcp.Request) authz.Context {
	if ss == nil {
		return authz.Context{ConnID: "unknown", Transport: authz.TransportUnknown}
	}
	id := ss.ID()
	if d, ok := declaredContext(id); ok {
		return d // served by Bridge.ServeTransport (stdio)
	}
	if ex := req.GetExtra(); ex != nil && ex.Header != nil && id != "" {
		return authz.Context{ConnID: id, Transport: authz.TransportHTTP}
	}
	// The SDK gives SSE sessions no id (ServerSession.ID is ""): give each
	// stream its own, so that policies can tell SSE clients apart.
	return authz.Context{ConnID: "sse-" + randomID(), Transport: authz.TransportSSE}
}

// allowCall takes a token from the client's tool-call rate limiter.
func (c *conn) allowCall(req mcp.Request) bool {
	cl := c.client(req)
	return cl == nil || cl.limiter.Allow()
}

// granted reports whether the human allowed tool for the rest of the
// calling client's session, under the session's current token.
func (c *conn) granted(req mcp.Request, tool string) bool {
	cl := c.client(req)
	return cl != nil && cl.grants.Granted(c.grantKey(tool))
}

// grant allows tool for the rest of the calling client's session.
func (c *conn) grant(req mcp.Request, tool string) {
	if cl := c.client(req); cl != nil {
		cl.grants.Grant(c.grantKey(tool))
	}
}

// grantKey ties a grant to the token it was given under, so that a
// rotation revokes it at once, before the watcher has forgotten it.
func (c *conn) grantKey(tool string) string { return c.sess.Token() + "\x00" + tool }

// revokeGrants forgets every client's "allow for the session" (the token
// was rotated).
func (c *conn) revokeGrants() {
	c.clients.Range(func(_, v any) bool {
		v.(*client).grants.Revoke()
		return true
	})
}

// requestHeader tags each Streamable POST with a value the server sets,
// so that a tool handler can find the HTTP request its call came in on:
// the SDK passes a call the POST's headers (RequestExtra.Header), but its
// context is the one of the request that created the session.
const requestHeader = "X-Raxol-Request"

// sseStreamKey is the context key of an SSE client's stream (its GET
// request's context): the SDK's session context keeps the GET context's
// values, not its cancellation.
type sseStreamKey struct{}

// tagRequest prepares r for the SDK handler: a POST is tagged (any value
// the client sent is replaced) and registered until it ends, and an SSE
// stream's context is kept as a value. The returned func releases it.
func (c *conn) tagRequest(r *http.Request, sse bool) (*http.Request, func()) {
	if sse {
		if r.Method == http.MethodGet {
			r = r.WithContext(context.WithValue(r.Context(), sseStreamKey{}, r.Context()))
		}
		return r, func() {}
	}
	if r.Method != http.MethodPost {
		r.Header.Del(requestHeader)
		return r, func() {}
	}
	tag := randomID()
	r.Header.Set(requestHeader, tag)
	c.requests.Store(tag, r.Context())
	return r, func() { c.requests.Delete(tag) }
}

// lifelines are what a call lives on besides its own context: the HTTP
// request it came in on (Streamable) or its client's stream (SSE), and
// its client's session (closed, or being closed). When one ends, nobody
// is waiting for the answer.
func (c *conn) lifelines(ctx context.Context, req mcp.Request) (reqCtx context.Context, ended, closing <-chan struct{}) {
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		if v, ok := c.requests.Load(ex.Header.Get(requestHeader)); ok {
			reqCtx = v.(context.Context)
		}
	}
	if reqCtx == nil {
		reqCtx, _ = ctx.Value(sseStreamKey{}).(context.Context)
	}
	if cl := c.client(req); cl != nil {
		ended, closing = cl.ended, cl.closing
	}
	return reqCtx, ended, closing
}

// withdrawOnGone returns a context that ends when ctx does or, with
// [errWithdrawn] as its cause, when the call's HTTP request, stream or
// client session goes away, or the session's MCP server closes. stop releases it.
func (c *conn) withdrawOnGone(ctx context.Context, req mcp.Request) (context.Context, func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	reqCtx, ended, closing := c.lifelines(ctx, req)
	stops := []func() bool{context.AfterFunc(c.ctx, func() { cancel(errWithdrawn) })}
	if reqCtx != nil {
		stops = append(stops, context.AfterFunc(reqCtx, func() { cancel(errWithdrawn) }))
	}
	var wg sync.WaitGroup
	if ended != nil {
		wg.Add(1)
		go func() { // owned by this call: ends with wctx
			defer wg.Done()
			select {
			case <-ended:
				cancel(errWithdrawn)
			case <-closing:
				cancel(errWithdrawn)
			case <-wctx.Done():
			}
		}()
	}
	return wctx, func() {
		for _, s := range stops {
			s()
		}
		cancel(nil)
		wg.Wait()
	}
}

// keepAlive pings a client every KeepAlive; two failed pings in a row
// close its session, so an agent that vanished without closing leaves the
// session's presence. (The go-sdk's own keepalive races with Close in
// v1.8.0, hence this.)
func (c *conn) keepAlive(ss *mcp.ServerSession, ended <-chan struct{}) {
	t := time.NewTicker(c.b.opts.KeepAlive)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-ended:
			return
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.b.opts.KeepAlive)
		err := ss.Ping(ctx, nil)
		cancel()
		if err == nil {
			failures = 0
			continue
		}
		if failures++; failures >= 2 {
			c.closeClient(ss)
			return
		}
	}
}
