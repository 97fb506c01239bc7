package mcpbridge

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// errWithdrawn is the cause of a call's context when the request it came
// in on went away.
var errWithdrawn = errors.New("mcpbridge: the request went away")

// client is what a sessionServer keeps of one attached MCP client session, from
// its initialize until its session closes.
type client struct {
	// Fixed at creation.
	actx    authz.Context // what policies see of it
	name    string        // what presence shows of it
	ended   chan struct{} // closed when its session has closed
	closing chan struct{} // closed when the server starts closing it
	// pings is the context of its keepalive pings: cancelled with
	// closing, since the SDK's Close waits for a ping in flight.
	pings       context.Context
	cancelPings context.CancelFunc
	limiter     *rate.Limiter // its tool calls
	once        sync.Once     // closes closing
	// grants are the tools the human allowed for this client for the
	// rest of its session ("allow for the session"); never for another
	// client, and revoked when the token is rotated.
	grants authz.SessionGrants
	// slot is its place among the session's clients (slots), freed when
	// its session ends.
	slot *slot
	// end closes its session (sessionServer.closeClient); set before it is stored.
	end func()

	// What tells a client at work from one that is gone (atomics).
	lastActive atomic.Int64 // unix ns of its last request
	inFlight   atomic.Int32 // requests being served
	streams    atomic.Int32 // standalone GET streams open (Streamable)
	streamLost atomic.Int64 // unix ns its last standalone GET ended; 0 never
	acted      atomic.Bool  // asked for more than its handshake (see handshake)

	pmu sync.Mutex // protects the following
	// presence is its entry in the session's presence; nil while it is
	// not shown (a Streamable client whose stream went away, until it
	// shows a sign of life again) and once it has left for good.
	presence *session.Presence
	left     bool        // its session is over: never shown again
	hide     *time.Timer // pending hide after its stream went away
}

// show puts the client back in the session's presence if it is not there
// (it came back after its stream went away), cancelling a pending hide.
// It keeps one entry: a client is never shown twice.
func (cl *client) show(sess *session.Session) *session.Presence {
	cl.pmu.Lock()
	defer cl.pmu.Unlock()
	if cl.hide != nil {
		cl.hide.Stop()
		cl.hide = nil
	}
	if cl.presence == nil && !cl.left {
		cl.presence = sess.Join(session.KindAgent, cl.name)
	}
	return cl.presence
}

// hideAfter takes the client out of presence after d unless gone(),
// checked then, says it came back. A later show cancels it.
func (cl *client) hideAfter(d time.Duration, gone func() bool) {
	cl.pmu.Lock()
	defer cl.pmu.Unlock()
	if cl.left || cl.presence == nil {
		return
	}
	if cl.hide != nil {
		cl.hide.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		cl.pmu.Lock()
		if cl.hide != t || !gone() {
			cl.pmu.Unlock()
			return
		}
		p := cl.unshowLocked()
		cl.pmu.Unlock()
		detach(p)
	})
	cl.hide = t
}

// leave takes the client out of presence for good.
func (cl *client) leave() {
	cl.pmu.Lock()
	cl.left = true
	p := cl.unshowLocked()
	cl.pmu.Unlock()
	detach(p)
}

// unshowLocked takes the client's entry out of its fields, and a pending
// hide with it; the caller detaches the entry once cl.pmu is unlocked.
func (cl *client) unshowLocked() *session.Presence {
	if cl.hide != nil {
		cl.hide.Stop()
		cl.hide = nil
	}
	p := cl.presence
	cl.presence = nil
	return p
}

// detach takes p, if any, out of the session's presence.
func detach(p *session.Presence) {
	if p != nil {
		p.Detach()
	}
}

// handshake reports whether a method is part of opening a client (or a
// mere sign of life), not a request for anything: a client that has sent
// only these while holding a stream is not at work (probeIdle).
func handshake(method string) bool {
	switch method {
	case "initialize", "notifications/initialized", "ping":
		return true
	}
	return false
}

// atWork reports whether the client may not be ended to make room for
// another: it has a request in flight, or it holds a stream open and has
// asked for something (or opened less than idle, probeIdle, ago). A client with
// no stream and nothing in flight (a one-shot CLI that never sent
// DELETE), and one that only opened and holds a stream it never used
// (mcp-remote's transport probe), are not.
func (cl *client) atWork(now time.Time, idle time.Duration) bool {
	if cl.inFlight.Load() > 0 {
		return true
	}
	if !cl.streaming() {
		return false
	}
	return cl.acted.Load() || cl.idleFor(now) < idle
}

// evict ends the client to make room for another.
func (cl *client) evict() {
	cl.leave()
	cl.end()
}

// touch records a request of the client now, in its presence too if
// acted.
func (cl *client) touch(acted bool) {
	cl.lastActive.Store(time.Now().UnixNano())
	if acted {
		cl.pmu.Lock()
		p := cl.presence
		cl.pmu.Unlock()
		if p != nil {
			p.Touch()
		}
	}
}

// readsContext reports whether a request reads the session context, the
// resource that shows presence: that read is no act of its own, or every
// read would change what it reads.
func readsContext(method string, req mcp.Request) bool {
	r, ok := req.(*mcp.ReadResourceRequest)
	return ok && method == "resources/read" && r.Params != nil && r.Params.URI == URIContext
}

// idleFor is how long the client has made no request.
func (cl *client) idleFor(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, cl.lastActive.Load()))
}

// streaming reports whether the client holds a stream open: an SSE client
// always does (its stream is its session), a Streamable one while its
// standalone GET is connected; a stdio client is never reclaimed.
func (cl *client) streaming() bool {
	return cl.actx.Transport != authz.TransportHTTP || cl.streams.Load() > 0
}

// attach records an agent's presence in the session until its MCP session
// closes; once per client. It runs when the client's initialize has been
// answered (before its Connect returns), and again, as a no-op, on its
// notifications/initialized, which the SDK may handle much later.
//
// The client takes the slot its opening request reserved (ctx carries
// it: the SDK gives a session its creating request's context); a client
// opened another way (stdio) reserves one now, and one the session has
// no room for is closed.
//
// An SSE client ends with its stream (ctx, the request's context, carries
// it): the SDK closes its session when the GET returns, but that Close
// waits for a keepalive ping in flight, up to KeepAlive for a client that
// never answers pings. So the stream's end marks the client closing at
// once, which leaves presence and ends the ping.
func (c *sessionServer) attach(ctx context.Context, ss *mcp.ServerSession, req mcp.Request) {
	if ss == nil {
		return
	}
	cl := &client{
		actx:    newContext(ss, req),
		name:    clientName(ss),
		ended:   make(chan struct{}),
		closing: make(chan struct{}),
		limiter: rate.NewLimiter(rate.Limit(c.b.opts.ToolCallsPerSecond), c.b.opts.ToolCallBurst),
		end:     func() { c.closeClient(ss) },
	}
	cl.lastActive.Store(time.Now().UnixNano())
	c.attachMu.Lock() // once per client, stored with its presence
	if _, seen := c.clients.Load(ss); seen {
		c.attachMu.Unlock()
		return
	}
	sl, _ := ctx.Value(slotKey{}).(*slot)
	if sl == nil || !sl.claim(cl) {
		var err error
		if sl, err = c.slots.reserve(time.Now(), nil); err == nil && !sl.claim(cl) {
			err = errSessionFull // evicted at once: cannot happen while pending with no stream
		}
		if err != nil {
			c.attachMu.Unlock()
			c.log.Debug("MCP client refused: the session is full", "err", err)
			// Its own initialize is in flight, and Close waits for it.
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				_ = ss.Close()
			}()
			return
		}
	}
	cl.slot = sl
	cl.pings, cl.cancelPings = context.WithCancel(c.ctx)
	cl.show(c.sess)
	c.clients.Store(ss, cl)
	c.attachMu.Unlock()
	c.b.opts.Metrics.MCPClient(1)
	streamEnded := func() bool { return false }
	if stream, ok := ctx.Value(sseStreamKey{}).(context.Context); ok {
		streamEnded = context.AfterFunc(stream, func() {
			cl.markClosing()
			cl.leave()
		})
	}
	stopKeeper := c.keepAlive(ss, cl)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = ss.Wait()
		streamEnded()
		cl.cancelPings()
		stopKeeper()
		close(cl.ended)
		cl.leave()
		c.res.forget(ss)
		c.clients.Delete(ss)
		cl.slot.free()
		c.b.opts.Metrics.MCPClient(-1)
	}()
}

// markClosing tells the client's waiting calls that its session is being
// closed: the SDK's Close waits for in-flight handlers, so a call waiting
// for the human must give up first.
func (cl *client) markClosing() {
	cl.once.Do(func() {
		close(cl.closing)
		cl.cancelPings()
	})
}

// closeClient closes a client session, withdrawing what it waits for. It
// leaves the session's presence at once, before the SDK's Close has
// waited for its in-flight calls.
func (c *sessionServer) closeClient(ss *mcp.ServerSession) {
	if v, ok := c.clients.Load(ss); ok {
		cl := v.(*client)
		cl.markClosing()
		cl.leave()
	}
	_ = ss.Close()
}

// sessionByID returns the client session (initialized or not) whose
// Streamable session id is id, comparing in constant time: the id is the
// client's secret.
func (c *sessionServer) sessionByID(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	var found *mcp.ServerSession
	for ss := range c.server.Sessions() {
		if sid := ss.ID(); sid != "" && subtle.ConstantTimeCompare([]byte(sid), []byte(id)) == 1 {
			found = ss
		}
	}
	return found
}

// clientByID returns the attached Streamable client with session id, or nil.
func (c *sessionServer) clientByID(id string) *client {
	ss := c.sessionByID(id)
	if ss == nil {
		return nil
	}
	v, ok := c.clients.Load(ss)
	if !ok {
		return nil
	}
	return v.(*client)
}

// client returns the attached client a request came from, or nil.
func (c *sessionServer) client(req mcp.Request) *client {
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
func (c *sessionServer) clientContext(req mcp.Request) authz.Context {
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
func (c *sessionServer) allowCall(req mcp.Request) bool {
	cl := c.client(req)
	return cl == nil || cl.limiter.Allow()
}

// granted reports whether the human allowed tool for the rest of the
// calling client's session, under the session's current token.
func (c *sessionServer) granted(req mcp.Request, tool string) bool {
	cl := c.client(req)
	return cl != nil && cl.grants.Granted(c.grantKey(tool))
}

// grant allows tool for the rest of the calling client's session.
func (c *sessionServer) grant(req mcp.Request, tool string) {
	if cl := c.client(req); cl != nil {
		cl.grants.Grant(c.grantKey(tool))
	}
}

// grantKey ties a grant to the token it was given under, so that a
// rotation revokes it at once, before the watcher has forgotten it.
func (c *sessionServer) grantKey(tool string) string {
	h := c.sess.TokenHash()
	return string(h[:]) + "\x00" + tool
}

// revokeGrants forgets every client's "allow for the session" after the
// token was rotated. The grants were already void (grantKey names the
// old token); this frees them.
func (c *sessionServer) revokeGrants() {
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

// requestTags numbers the tags of requestHeader.
var requestTags atomic.Uint64

// sseStreamKey is the context key of an SSE client's stream (its GET
// request's context): the SDK's session context keeps the GET context's
// values, not its cancellation.
type sseStreamKey struct{}

// tagRequest prepares r for the SDK handler: a POST is tagged (any value
// the client sent is replaced) and registered until it ends, and an SSE
// stream's context is kept as a value. The returned func releases it.
func (c *sessionServer) tagRequest(r *http.Request, sse bool) (*http.Request, func()) {
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
	// Unique within the process is enough: the server sets it, whatever
	// the client sent.
	tag := strconv.FormatUint(requestTags.Add(1), 36)
	r.Header.Set(requestHeader, tag)
	c.requests.Store(tag, r.Context())
	return r, func() { c.requests.Delete(tag) }
}

// lifelines are what a call lives on besides its own context: the HTTP
// request it came in on (Streamable) or its client's stream (SSE), and
// its client's session (closed, or being closed). When one ends, nobody
// is waiting for the answer.
func (c *sessionServer) lifelines(ctx context.Context, req mcp.Request) (reqCtx context.Context, ended, closing <-chan struct{}) {
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
func (c *sessionServer) withdrawOnGone(ctx context.Context, req mcp.Request) (context.Context, func()) {
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

// keepAlive watches a client until its session ends, on a timer rather
// than a goroutine of its own (an attached agent costs one goroutine, the
// one waiting for its session's end, which stops the timer). It pings the
// client every KeepAlive, but only to make its stream carry something: an
// SSE stream whose write fails is broken ([deadlineWriter] then ends its
// request, which ends the session), while a ping that goes unanswered, or
// cannot be sent for want of a stream, ends nothing (clients need not
// answer pings nor open a standalone GET). What ends a client here:
//
//   - no request for ClientIdleTimeout (HTTP and SSE clients; the SDK's
//     SessionTimeout does it too for Streamable ones);
//   - a Streamable client that had a standalone GET, lost it, and has made
//     no request nor reconnected it for two KeepAlive intervals since: it
//     vanished (a live go-sdk client reconnects at once).
//
// The returned stop is called once the client's session has ended; a
// round in progress then finishes on its own (its ping's context is
// cancelled first) and arms nothing.
func (c *sessionServer) keepAlive(ss *mcp.ServerSession, cl *client) (stop func()) {
	k := &keeper{}
	now := time.Now()
	k.nextPing = now.Add(c.b.opts.KeepAlive)
	k.nextIdle = now.Add(c.b.opts.ClientIdleTimeout)
	k.mu.Lock()
	k.t = time.AfterFunc(k.wait(now), func() { c.keepRound(ss, cl, k) })
	k.mu.Unlock()
	return k.stop
}

// keeper is a client's keepalive timer: the next ping and the next look
// at its idleness, one timer set for whichever comes first.
type keeper struct {
	nextPing, nextIdle time.Time // touched only by the round in progress

	mu      sync.Mutex // protects the following
	t       *time.Timer
	stopped bool
}

func (k *keeper) wait(now time.Time) time.Duration {
	next := k.nextPing
	if k.nextIdle.Before(next) {
		next = k.nextIdle
	}
	return max(next.Sub(now), 0)
}

func (k *keeper) stop() {
	k.mu.Lock()
	k.stopped = true
	k.t.Stop()
	k.mu.Unlock()
}

// keepRound is one firing of a client's keeper: the idle look and the
// ping that are due, then the timer set for the next. It holds the
// session server's WaitGroup while it runs, so close waits for it.
func (c *sessionServer) keepRound(ss *mcp.ServerSession, cl *client, k *keeper) {
	k.mu.Lock()
	if k.stopped {
		k.mu.Unlock()
		return
	}
	// The client's end-waiter holds the group until it has stopped k, so
	// this Add never races a Wait at zero.
	c.wg.Add(1)
	k.mu.Unlock()
	defer c.wg.Done()
	if c.ctx.Err() != nil {
		return
	}
	timed := cl.actx.Transport == authz.TransportHTTP || cl.actx.Transport == authz.TransportSSE
	now := time.Now()
	if !now.Before(k.nextIdle) {
		left := c.b.opts.ClientIdleTimeout - cl.idleFor(now)
		if timed && left <= 0 && cl.inFlight.Load() == 0 {
			c.log.Debug("MCP client idle too long; closing it", "client", cl.actx.ConnID)
			c.closeClient(ss)
			return
		}
		k.nextIdle = now.Add(max(left, c.b.opts.KeepAlive))
	}
	if !now.Before(k.nextPing) {
		if c.vanished(cl, now) {
			c.log.Debug("MCP client lost its stream and did not come back; closing it", "client", cl.actx.ConnID)
			c.closeClient(ss)
			return
		}
		ctx, cancel := context.WithTimeout(cl.pings, c.b.opts.KeepAlive)
		_ = ss.Ping(ctx, nil) // see keepAlive: its answer decides nothing
		cancel()
		// As a ticker does, a round that overran its interval drops the
		// ticks it missed.
		k.nextPing = k.nextPing.Add(c.b.opts.KeepAlive)
		if now := time.Now(); k.nextPing.Before(now) {
			k.nextPing = now.Add(c.b.opts.KeepAlive)
		}
	}
	k.mu.Lock()
	if !k.stopped {
		k.t.Reset(k.wait(time.Now()))
	}
	k.mu.Unlock()
}

// vanished reports whether a Streamable client lost its standalone GET
// more than two KeepAlive intervals ago and has shown no sign of life
// since (no request, no new stream, nothing in flight).
func (c *sessionServer) vanished(cl *client, now time.Time) bool {
	if cl.actx.Transport != authz.TransportHTTP || cl.streams.Load() > 0 || cl.inFlight.Load() > 0 {
		return false
	}
	lost := cl.streamLost.Load()
	return lost != 0 && cl.lastActive.Load() < lost && now.Sub(time.Unix(0, lost)) >= 2*c.b.opts.KeepAlive
}

// trackStream counts a Streamable client's standalone GET stream while it
// is served; the returned func ends it. A GET for no attached client
// counts nothing.
func (c *sessionServer) trackStream(r *http.Request) func() {
	if r.Method != http.MethodGet {
		return func() {}
	}
	cl := c.clientByID(r.Header.Get("Mcp-Session-Id"))
	if cl == nil {
		return func() {}
	}
	cl.streams.Add(1)
	cl.show(c.sess)
	return func() {
		cl.streamLost.Store(time.Now().UnixNano())
		if cl.streams.Add(-1) == 0 {
			// It may have gone (a one-shot CLI that exited) or be about
			// to reconnect: shown until PresenceGrace says which.
			cl.hideAfter(c.b.opts.PresenceGrace, func() bool { return c.departed(cl) })
		}
	}
}

// ended records the end of a request of cl that began (after its touch)
// at began, unix ns. A request that was running when the client's
// standalone stream went away is no sign of life at its end (a client
// killed in the middle of a call loses both at once, and a call may run
// for long: raxol_wait_for, an approval): its end is not recorded as
// activity, and once nothing else runs the client is hidden after
// PresenceGrace unless it shows one (the grace the stream's end began
// found it at work, and did nothing).
func (c *sessionServer) ended(cl *client, began int64) {
	n := cl.inFlight.Add(-1)
	if cl.streams.Load() > 0 || cl.streamLost.Load() < began {
		cl.touch(false)
		return
	}
	if n == 0 {
		cl.hideAfter(c.b.opts.PresenceGrace, func() bool { return c.departed(cl) })
	}
}

// departed reports whether a Streamable client whose stream went away has
// shown no sign of life since: no stream, nothing in flight, no request.
func (c *sessionServer) departed(cl *client) bool {
	return cl.streams.Load() == 0 && cl.inFlight.Load() == 0 && cl.lastActive.Load() <= cl.streamLost.Load()
}

// initialized records an agent's presence (if initialize did not).
func (c *sessionServer) initialized(ctx context.Context, req *mcp.InitializedRequest) {
	c.attach(ctx, req.Session, req)
}

// clientName is "<name> <version>" from the client's initialize, or
// "agent" when it gave none.
func clientName(ss *mcp.ServerSession) string {
	if ss == nil {
		return "agent"
	}
	p := ss.InitializeParams()
	if p == nil || p.ClientInfo == nil {
		return "agent"
	}
	// Whole escape sequences go, not only their ESC: the name is drawn.
	name := strings.TrimSpace(safetext.Clean(p.ClientInfo.Name, 64))
	if name == "" {
		return "agent"
	}
	if v := safetext.Clean(p.ClientInfo.Version, 32); v != "" {
		name += " " + v
	}
	return name
}

// InitializedSessions counts the initialized client sessions of server.
func InitializedSessions(server *mcp.Server) int {
	n := 0
	for ss := range server.Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}
