package mcpbridge

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Defaults of [Options], each taken when its field is zero.
const (
	DefaultMaxBodyBytes       = 1 << 20
	DefaultCallTimeout        = 5 * time.Second
	DefaultClientIdleTimeout  = 30 * time.Minute
	DefaultMaxClients         = 8
	DefaultToolCallsPerSecond = 20
	DefaultToolCallBurst      = 40
	DefaultApprovalTimeout    = 45 * time.Second
	DefaultPresenceGrace      = 3 * time.Second
	DefaultBodyTimeout        = 10 * time.Second
	DefaultMaxBatch           = 16
)

// Options configures a [Bridge]. Zero values take the defaults.
type Options struct {
	// Namespace is the app's name, the first part of every derived tool
	// name and the scheme of its state resources.
	Namespace string
	// Projections are the app's model projections, served as
	// <Namespace>://state/<name>.
	Projections map[string]func(ui.Model) any
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes caps a request body; larger ones get 413. Default 1 MiB.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request's body may take to arrive,
	// from when its headers did (ReadBody); a slower one gets 408 and its
	// connection is closed. Default 10s.
	BodyTimeout time.Duration
	// MaxBatch caps the messages of one JSON-RPC batch (a body that is a
	// JSON array, which the SDK serves on Streamable HTTP to a client that
	// sends no MCP-Protocol-Version header); a larger one gets 400.
	// Default 16. The SDK keeps about 1 KiB live for each batched message
	// until every answer of the batch is written: one body under the 1
	// MiB cap could otherwise hold 20,000 of them.
	MaxBatch int
	// LensMode is the focus lens mode; default lens.ModeFocused.
	LensMode lens.Mode
	// MaxTools is how many tools the lens advertises; default 15.
	MaxTools int
	// CallTimeout bounds how long a tool call waits for its fold;
	// default 5s.
	CallTimeout time.Duration
	// ClientIdleTimeout closes an HTTP client session (Streamable or SSE)
	// that has made no request for this long; default 30m. Nothing else
	// ends a quiet client: not an unanswered ping, nor having no stream
	// open (both are allowed by MCP).
	ClientIdleTimeout time.Duration
	// Version is reported to clients as the server version.
	Version string
	// Metrics counts tool calls and clients; nil counts nothing.
	Metrics *metrics.Metrics
	// TrustedOrigins are origins (scheme://host[:port]) allowed to call
	// besides the server's own, e.g. a web client behind a proxy. A
	// request whose Origin is neither gets 403.
	TrustedOrigins []string
	// AllowedHosts are Host header values accepted on a loopback listener
	// besides loopback names (DNS-rebinding protection), e.g. the host of
	// a reverse proxy that forwards the public name.
	AllowedHosts []string
	// MaxClients caps the MCP clients attached to one session, counted
	// from the moment a client starts opening (a Streamable initialize
	// received, an SSE stream opened), so concurrent openings cannot pass
	// it together; default 8. At the cap, a new client ends the least
	// recently active one not at work: one with no stream open and nothing
	// in flight (a one-shot client that never sent DELETE), or one that
	// holds a stream but has asked for nothing since its handshake for 2s
	// (mcp-remote's transport probe, an SSE stream never initialized).
	// Only when every client is at work is it refused (429 with
	// Retry-After).
	MaxClients int
	// ToolCallsPerSecond and ToolCallBurst rate-limit each client's tool
	// calls; defaults 20 and 40.
	ToolCallsPerSecond float64
	ToolCallBurst      int
	// Policy decides every tools/call and read method. The zero Policy
	// allows everything but refuses sensitive tools (no tool authorizer).
	Policy authz.Policy
	// ApprovalTimeout is how long a call that needs the human's approval
	// waits for it before it is denied; default 45s (under the 60s request
	// timeout common clients use).
	ApprovalTimeout time.Duration
	// ProgressInterval is how often a waiting call sends progress; default
	// 5s.
	ProgressInterval time.Duration
	// KeepAlive is how often each client is pinged; default 20s. A ping
	// whose write fails ends an SSE client (its stream is broken); its
	// answer, or its having none, decides nothing. A Streamable client
	// that lost its standalone GET stream and has neither reconnected it
	// nor made a request for two intervals is taken to have vanished and
	// is closed.
	KeepAlive time.Duration
	// PresenceGrace is how long a Streamable client whose standalone GET
	// stream went away stays in the session's presence (the status bar,
	// the context resource) with no sign of life; default 3s. After it,
	// the client is no longer shown, though its MCP session lives on for
	// the two KeepAlive intervals above: one that comes back then (a
	// request, a new stream) is shown again, once.
	PresenceGrace time.Duration
	// TransportOnly makes a bridge that serves sessions only over
	// [Bridge.ServeTransport] (stdio): ServeHTTP answers 404, and the
	// network boot gate does not apply.
	TransportOnly bool
	// WriteTimeout bounds each write to a client; default 10s. A client
	// that stops reading its stream gets its writes failed instead of
	// blocking the session's notifications to every client.
	WriteTimeout time.Duration
}

// Bridge serves the MCP endpoints of every live session of a manager.
// It is an http.Handler for the paths /sessions/{id}/mcp and
// /sessions/{id}/sse.
type Bridge struct {
	opts     Options
	log      *slog.Logger
	sessions *session.Manager
	mux      *http.ServeMux
	schemas  schemaCache
	// probeIdle is how long a client that only opened may hold a stream
	// before it can be ended to make room (the constant; tests lengthen
	// it to make a race's outcome exact).
	probeIdle time.Duration

	mu      sync.Mutex // protects the following
	servers map[string]*sessionServer
	closed  bool
}

// New returns a bridge for the sessions of m. Call [Bridge.SessionEnded]
// when a session ends (session.Options.OnEnd) and Close on shutdown.
//
// The boot gates hold here, wherever the bridge is mounted: every session
// offers raxol_send_key, a sensitive tool, so a tool authorizer is
// required ([authz.Policy.CheckSensitiveBoot]); and unless
// opts.TransportOnly, the bridge serves MCP over HTTP, so both seams must
// have been decided by someone ([authz.Policy.CheckNetworkBoot]). The
// error wraps [authz.ErrBootRefused].
func New(m *session.Manager, opts Options) (*Bridge, error) {
	if err := opts.Policy.CheckSensitiveBoot([]string{ToolSendKey}); err != nil {
		return nil, fmt.Errorf("mcpbridge: %w", err)
	}
	if !opts.TransportOnly {
		if err := opts.Policy.CheckNetworkBoot(); err != nil {
			return nil, fmt.Errorf("mcpbridge: HTTP endpoints: %w", err)
		}
	}
	return newBridge(m, opts), nil
}

// newBridge is New without the boot gates.
func newBridge(m *session.Manager, opts Options) *Bridge {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	orDefault(&opts.MaxBodyBytes, DefaultMaxBodyBytes)
	if opts.LensMode == "" {
		opts.LensMode = lens.ModeFocused
	}
	orDefault(&opts.MaxTools, lens.DefaultMaxTools)
	orDefault(&opts.CallTimeout, DefaultCallTimeout)
	orDefault(&opts.ClientIdleTimeout, DefaultClientIdleTimeout)
	if opts.Version == "" {
		opts.Version = "dev"
	}
	orDefault(&opts.MaxClients, DefaultMaxClients)
	orDefault(&opts.ToolCallsPerSecond, DefaultToolCallsPerSecond)
	orDefault(&opts.ToolCallBurst, DefaultToolCallBurst)
	orDefault(&opts.ApprovalTimeout, DefaultApprovalTimeout)
	orDefault(&opts.ProgressInterval, 5*time.Second)
	orDefault(&opts.KeepAlive, 20*time.Second)
	orDefault(&opts.WriteTimeout, 10*time.Second)
	orDefault(&opts.PresenceGrace, DefaultPresenceGrace)
	orDefault(&opts.BodyTimeout, DefaultBodyTimeout)
	orDefault(&opts.MaxBatch, DefaultMaxBatch)
	b := &Bridge{
		opts:      opts,
		log:       opts.Logger,
		sessions:  m,
		servers:   make(map[string]*sessionServer),
		mux:       http.NewServeMux(),
		probeIdle: probeIdle,
	}
	b.mux.HandleFunc("/sessions/{id}/mcp", b.serve(false))
	b.mux.HandleFunc("/sessions/{id}/sse", b.serve(true))
	return b
}

// ServeHTTP routes MCP requests to their session's server.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if b.opts.TransportOnly {
		writeError(w, http.StatusNotFound, "this server serves MCP over stdio only")
		return
	}
	b.mux.ServeHTTP(w, r)
}

// orDefault sets *v to d when *v is zero or negative (an Options field
// left unset).
func orDefault[T int | int64 | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// dummyToken is compared against when the session is unknown, so that an
// unknown id and a wrong token take the same time and get the same answer.
var dummyToken = strings.Repeat("x", 43)

func (b *Bridge) serve(sse bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		reject := func(code int, reason, msg string) {
			b.opts.Metrics.MCPRejected(reason)
			writeError(w, code, msg)
		}
		// A malformed Host is refused as such first: the Origin check
		// compares with it.
		if !HostWellFormed(r.Host) {
			reject(http.StatusBadRequest, "host", "malformed Host header")
			return
		}
		if !OriginAllowed(r, b.opts.TrustedOrigins) {
			reject(http.StatusForbidden, "origin", "cross-origin request refused")
			return
		}
		if !HostAllowed(r, b.opts.AllowedHosts) {
			reject(http.StatusForbidden, "host", "Host not allowed on this listener (DNS rebinding protection)")
			return
		}
		if r.ContentLength > b.opts.MaxBodyBytes {
			reject(http.StatusRequestEntityTooLarge, "body_too_large", "request body too large")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, b.opts.MaxBodyBytes)
		if !sse && r.Method == http.MethodDelete && b.endClient(w, r) {
			return
		}
		se := b.authenticate(r)
		var c *sessionServer
		if se != nil {
			c = b.sessionServer(se)
		}
		if c == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="raxol-ssh"`)
			reject(http.StatusUnauthorized, "unauthorized", "unauthorized: unknown session or wrong bearer token")
			return
		}
		if code, err := ReadBody(w, r, b.opts.BodyTimeout, b.opts.MaxBatch); err != nil {
			reject(code, BodyRejection(err), err.Error())
			return
		}
		if opensClient(r, sse) {
			// The client's slot is reserved before the SDK sees the
			// request (at the cap, one not at work makes room), and
			// passes to the client it opens.
			var endStream context.CancelFunc
			if sse {
				var ctx context.Context
				ctx, endStream = context.WithCancel(r.Context())
				defer endStream()
				r = r.WithContext(ctx)
			}
			sl, err := c.slots.reserve(time.Now(), endStream)
			if err != nil {
				w.Header().Set("Retry-After", retryAfter)
				reject(http.StatusTooManyRequests, "too_many_clients", fmt.Sprintf("too many agents attached to this session (limit %d), all of them at work", b.opts.MaxClients))
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), slotKey{}, sl))
			defer sl.freeUnclaimed()
		}
		dw := newDeadlineWriter(w, b.opts.WriteTimeout)
		defer dw.clear()
		r, release := c.tagRequest(r, sse)
		defer release()
		if sse {
			c.sse.ServeHTTP(dw, r)
			return
		}
		defer c.trackStream(r)()
		c.streamable.ServeHTTP(dw, r)
	}
}

// retryAfter is the Retry-After of a 429 for a session full of busy
// clients, in seconds.
const retryAfter = "5"

// endClient serves a Streamable DELETE whose Mcp-Session-Id names a live
// client session of this very session path: it ends that client, with or
// without the bearer token (some clients, mcp-go among them, send their
// DELETE without it; the id is the client's own secret, and a DELETE only
// ends that client). It reports whether it answered. Any other DELETE (a
// wrong id, another session's client id) ends nothing here and is served
// as any request: 401 without this session's token, else the SDK's 404.
func (b *Bridge) endClient(w http.ResponseWriter, r *http.Request) bool {
	b.mu.Lock()
	c := b.servers[r.PathValue("id")]
	b.mu.Unlock()
	if c == nil {
		return false
	}
	ss := c.sessionByID(r.Header.Get("Mcp-Session-Id"))
	if ss == nil {
		return false
	}
	// The SDK's Close waits for the client's in-flight calls: closeClient
	// first tells the ones waiting for the human to give up.
	c.closeClient(ss)
	w.WriteHeader(http.StatusNoContent)
	return true
}

// deadlineWriter bounds every write and flush to a client. The SDK writes
// a client's notifications from the goroutine that sends them (the
// session's watcher, a keepalive ping), so a client that stops reading its
// stream, or a link that died without a reset, would block that goroutine,
// and every other client's notifications behind it, until TCP gives up.
// With a deadline the write fails, the message is dropped for that client,
// and the failed write ends the client's stream (for SSE, its session).
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func newDeadlineWriter(w http.ResponseWriter, d time.Duration) *deadlineWriter {
	return &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d}
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.ResponseWriter.Write(p)
}

func (w *deadlineWriter) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController.Flush calls.
func (w *deadlineWriter) FlushError() error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// clear removes the deadline when the handler is done, so that a later
// request on the same keep-alive connection is not cut by it.
func (w *deadlineWriter) clear() { _ = w.rc.SetWriteDeadline(time.Time{}) }

// opensClient reports whether a request would start a new MCP client
// session: a Streamable POST without a session id, or an SSE stream.
func opensClient(r *http.Request, sse bool) bool {
	if sse {
		return r.Method == http.MethodGet
	}
	return r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == ""
}

// OriginAllowed refuses requests from another origin (a browser page
// elsewhere) unless trusted. Requests without Origin (non-browser
// clients) pass.
func OriginAllowed(r *http.Request, trusted []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || slices.Contains(trusted, origin) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// HostAllowed protects loopback listeners from DNS rebinding: a request
// that arrived on a loopback address must name a loopback host (localhost
// or a loopback IP) or one in allowed. It is the only Host check of the MCP
// endpoints: the SDK's own is disabled, as it admits no allowed hosts.
//
// Names are compared without case, IPv6 brackets and one trailing dot (the
// same DNS name), IPs in canonical form. The request's port is ignored
// unless the allowed entry has one. An empty Host (HTTP/1.0) names no host
// and is refused. Requests on other listeners pass.
func HostAllowed(r *http.Request, allowed []string) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	if !loopback(local) {
		return true
	}
	name, port := splitHost(r.Host)
	if name == "" {
		return false
	}
	if ip, err := netip.ParseAddr(name); name == "localhost" || (err == nil && ip.Unmap().IsLoopback()) {
		return true
	}
	return slices.ContainsFunc(allowed, func(a string) bool {
		an, ap := splitHost(a)
		return an == name && (ap == "" || ap == port)
	})
}

// loopback reports whether a listener's address is a loopback IP.
func loopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort().Addr().Unmap().IsLoopback() // without formatting and parsing it
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// splitHost splits a Host value (or an allowed entry) into its name,
// lowercased, without brackets and one trailing dot, IPs canonical, and
// its port ("" without one).
func splitHost(h string) (name, port string) {
	name = h
	if n, p, err := net.SplitHostPort(h); err == nil {
		name, port = n, p
	}
	name = strings.TrimSuffix(strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")), ".")
	if ip, err := netip.ParseAddr(name); err == nil {
		name = ip.String()
	}
	return name, port
}

// authenticate returns the session named by the path whose token the
// request carries, or nil.
func (b *Bridge) authenticate(r *http.Request) *session.Session {
	// RFC 6750: "Bearer" (any case), one space, the token.
	tok := ""
	if scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		tok = t
	}
	se, ok := b.sessions.Get(r.PathValue("id"))
	if !ok {
		subtle.ConstantTimeCompare([]byte(tok), []byte(dummyToken))
		return nil
	}
	if !se.CheckToken(tok) {
		return nil
	}
	return se
}

// sessionServer returns the session's MCP server, creating it on first
// use; nil if the session has ended or the bridge is closed.
func (b *Bridge) sessionServer(se *session.Session) *sessionServer {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	if c, ok := b.servers[se.ID]; ok {
		return c
	}
	if _, live := b.sessions.Get(se.ID); !live {
		return nil
	}
	c := newSessionServer(b, se)
	b.servers[se.ID] = c
	return c
}

// SessionEnded closes the session's MCP server and its clients.
func (b *Bridge) SessionEnded(id string) {
	b.mu.Lock()
	c, ok := b.servers[id]
	delete(b.servers, id)
	b.mu.Unlock()
	if ok {
		c.close()
	}
}

// Close closes every session's MCP server and refuses new ones.
func (b *Bridge) Close() {
	b.mu.Lock()
	b.closed = true
	servers := b.servers
	b.servers = map[string]*sessionServer{}
	b.mu.Unlock()
	for _, c := range servers {
		c.close()
	}
}

// Clients returns the number of MCP clients attached to a session: the
// client sessions that were initialized. (The go-sdk client's
// server/discover probe opens a Streamable session that is never
// initialized and is closed right after; it is no client.)
func (b *Bridge) Clients(id string) int {
	b.mu.Lock()
	c, ok := b.servers[id]
	b.mu.Unlock()
	if !ok {
		return 0
	}
	return InitializedSessions(c.server)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// ReadBody's errors that callers branch on.
var (
	// ErrBodyTimeout: the body did not arrive in time.
	ErrBodyTimeout = errors.New("request body not received in time")
	// ErrBatchTooLarge: the body is a JSON-RPC batch of more messages
	// than allowed.
	ErrBatchTooLarge = errors.New("JSON-RPC batch too large")
)

// ReadBody reads r's body whole within timeout of now (the body a client
// trickles byte by byte would otherwise hold its handler, and a slot of
// the server's connections, for as long as it likes) and puts it back as
// r.Body for the handlers after it; the read deadline is cleared after.
// With maxBatch > 0, a body that is a JSON array (a JSON-RPC batch) of
// more than maxBatch elements is refused. On failure it returns the
// status to answer: 408 for a body too slow (ErrBodyTimeout; its
// connection is closed), 413 for one over an http.MaxBytesReader's
// limit, 400 for a batch too large (ErrBatchTooLarge) or a body that
// broke off. A request without a body is left as it is.
func ReadBody(w http.ResponseWriter, r *http.Request, timeout time.Duration, maxBatch int) (int, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return 0, nil
	}
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, 1<<20)))
	}
	_, err := buf.ReadFrom(r.Body)
	if deadline {
		_ = rc.SetReadDeadline(time.Time{})
	}
	var tooLarge *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		if maxBatch > 0 && batchLonger(buf.Bytes(), maxBatch) {
			return http.StatusBadRequest, fmt.Errorf("%w: at most %d messages a batch", ErrBatchTooLarge, maxBatch)
		}
		r.Body = io.NopCloser(&buf)
		return 0, nil
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, fmt.Errorf("request body too large (limit %d bytes): %w", tooLarge.Limit, err)
	case errors.As(err, &ne) && ne.Timeout():
		w.Header().Set("Connection", "close")
		return http.StatusRequestTimeout, fmt.Errorf("%w: the whole body must arrive within %s", ErrBodyTimeout, timeout)
	default:
		w.Header().Set("Connection", "close")
		return http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err)
	}
}

// BodyRejection is the raxol_mcp_rejections_total reason of a ReadBody
// error.
func BodyRejection(err error) string {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, ErrBodyTimeout):
		return "body_timeout"
	case errors.Is(err, ErrBatchTooLarge):
		return "batch_too_large"
	case errors.As(err, &tooLarge):
		return "body_too_large"
	}
	return "other"
}

// batchLonger reports whether body is a JSON array of more than max
// elements. It stops reading at the one past max; a body that is not an
// array, or not JSON, is left to the SDK's own answer.
func batchLonger(body []byte, max int) bool {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '[' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return false
	}
	n := 0
	for dec.More() {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
		if n++; n > max {
			return true
		}
	}
	return false
}

// HostWellFormed reports whether a Host header value is a host name, an
// IPv4 address or a bracketed IPv6 address, with at most a port of 1 to
// 65535 after it: what a browser or an HTTP client sends. Values such as
// "localhost:80,evil.example" or "a b" are not, and are refused whatever
// the listener (no other check need make sense of them). An empty Host
// is left to HostAllowed.
func HostWellFormed(h string) bool {
	if h == "" {
		return true
	}
	name, port := h, ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return false
		}
		name, port = h[1:end], h[end+1:]
		if ip, err := netip.ParseAddr(name); err != nil || !ip.Is6() || ip.Zone() != "" {
			return false
		}
		if port != "" {
			if port[0] != ':' {
				return false
			}
			port = port[1:]
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
		name, port = h[:i], h[i+1:] // an empty port is allowed (RFC 3986)
	}
	if port != "" {
		if len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return false
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	if strings.HasPrefix(h, "[") {
		return true
	}
	if name == "" || len(name) > 253 {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
		default:
			return false
		}
	}
	return true
}
