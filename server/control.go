package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// Tools of the server-level MCP endpoint /mcp.
const (
	ToolStart = "raxol_start"
	ToolStop  = "raxol_stop"
	ToolList  = "raxol_list"
)

const (
	// minAPIKeyLen keeps guessable keys out of the API keys file.
	minAPIKeyLen = 16
	// controlBodyLimit caps a request body on /mcp.
	controlBodyLimit = 1 << 20
)

// controlEndpoint is the control endpoint: the server-level MCP endpoint
// /mcp (raxol_start, raxol_stop, raxol_list) behind operator-issued API
// keys, for sessions started without an owner terminal (the options and
// the public names say "headless": Options.Headless, StartHeadless), with
// the idle reaper of the sessions it starts and one-time join codes.
type controlEndpoint struct {
	// Fixed at creation: what it uses of the server.
	host     controlHost
	opts     Options
	log      *slog.Logger
	metrics  *metrics.Metrics
	policy   authz.Policy
	proxies  trustedProxies      // whose X-Forwarded-For is believed
	life     *lifecycle          // owns the sessions it starts
	registry *session.Manager    // the live sessions
	keys     [][sha256.Size]byte // SHA-256 of each API key; nil: /mcp is off
	server   *mcp.Server         // nil when /mcp is off
	handler  http.Handler        // nil when /mcp is off
	// failures is the per-address budget of wrong API keys, its own: a
	// wrong key never spends the SSH failed-login budget.
	failures *failureBudget
	// clients is the cap of /mcp clients (Options.Headless.MaxClients), one
	// key: a request that may open a client takes a place before the SDK
	// sees it, and the client it opened keeps that place until it ends
	// (see limitClients).
	clients *slots[struct{}]

	// others answers for the sessions this node does not hold, and says
	// where a new one starts: alone on a single node, the cluster's
	// peers in a cluster (cluster_mcp.go). Set before anything is served.
	others others

	closed atomic.Bool
	// watchMu orders close against keepPlace: no watcher is added once
	// close has begun waiting for them.
	watchMu  sync.Mutex
	watchers sync.WaitGroup // one per client holding a place: gives it back when the client ends
}

// controlHost is what the control endpoint asks of the server: to start
// a session for an owner, a join code for it and the command that uses
// it, the URL clients reach the server at, and whether it is draining.
type controlHost interface {
	StartHeadless(owner session.Owner) (se *session.Session, end func(), err error)
	issueCode(id string) (string, error)
	joinCommand(id string) string
	publicURL(via net.Addr) string
	isDraining() bool
}

var _ controlHost = (*Server)(nil)

func (s *Server) newControlEndpoint() (*controlEndpoint, error) {
	h := &controlEndpoint{
		host: s, opts: s.opts, log: s.log, metrics: s.metrics, policy: s.policy,
		proxies: s.httpProxies, life: s.life, registry: s.sessions,
		failures: newFailureBudget(s.opts.Limits.MaxAuthFailures, s.opts.Limits.AuthFailureWindow),
		clients:  newSlots[struct{}](s.opts.Headless.MaxClients),
	}
	h.others = alone{h}
	if s.opts.Headless.APIKeysFile == "" {
		return h, nil
	}
	keys, err := loadAPIKeys(s.opts.Headless.APIKeysFile)
	if err != nil {
		return nil, s.opts.optionError("Options.Headless.APIKeysFile", err)
	}
	h.keys = keys
	h.server = mcp.NewServer(&mcp.Implementation{Name: "raxol-ssh", Title: "raxol-ssh sessions", Version: "dev"}, &mcp.ServerOptions{
		Instructions: "Start, list and stop headless sessions of the app this server serves. raxol_start returns the new session's own MCP endpoint and bearer token: connect to it to drive the app, and give the join command and code to a human who should see it.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	gate := &mcpbridge.Gate{
		Policy:  h.policy,
		Metrics: h.metrics,
		Context: controlContext,
		Call: func(_ context.Context, r *mcp.CallToolRequest, actx authz.Context) *mcp.CallToolResult {
			return h.authorizeCall(r, actx)
		},
		Listable: func(_ mcp.Request, name string, actx authz.Context) bool { return h.listable(name, actx) },
	}
	h.server.AddReceivingMiddleware(gate.Receiving)
	h.addTools()
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      30 * time.Minute,
		MaxRequestBodyBytes: controlBodyLimit,
		// Host is checked below, with the operator's allowed hosts.
		DisableLocalhostProtection: true,
	})
	h.handler = auth.RequireBearerToken(h.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h.readBody(h.limitClients(streamable)))
	return h, nil
}

// loadAPIKeys reads one key per line; blank lines and lines starting with
// '#' are skipped. It keeps only the keys' SHA-256.
func loadAPIKeys(path string) ([][sha256.Size]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var keys [][sha256.Size]byte
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(line) < minAPIKeyLen || strings.ContainsAny(line, " \t") {
			return nil, fmt.Errorf("%s:%d: an API key is one word of at least %d characters (e.g. `openssl rand -hex 32`)", path, n, minAPIKeyLen)
		}
		keys = append(keys, sha256.Sum256([]byte(line)))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no API keys", path)
	}
	return keys, nil
}

// apiKeyOwner is the identity of an API key: the session owner of what it
// starts. The fingerprint can never equal an SSH key's ("SHA256:..."), so
// no SSH login is ever taken for the key's owner.
func apiKeyOwner(sum [sha256.Size]byte) session.Owner {
	h := hex.EncodeToString(sum[:])
	return session.Owner{User: "api:" + h[:8], KeyFingerprint: "api-key:" + h[:16]}
}

// check reports whether token is one of the API keys, comparing its
// SHA-256 with every key's in constant time, and returns the key's sum.
func (h *controlEndpoint) check(token string) (sum [sha256.Size]byte, ok bool) {
	sum = sha256.Sum256([]byte(token))
	match := 0
	for _, k := range h.keys {
		match |= subtle.ConstantTimeCompare(sum[:], k[:])
	}
	return sum, match == 1
}

// verify is the bearer-token check of the go-sdk's middleware; wrong keys
// were counted by ServeHTTP before. The identity it returns carries the
// request's client address, for the logs of what the request does.
func (h *controlEndpoint) verify(_ context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	sum, ok := h.check(token)
	if !ok {
		h.metrics.MCPRejected("unauthorized")
		return nil, auth.ErrInvalidToken
	}
	o := apiKeyOwner(sum)
	return &auth.TokenInfo{UserID: o.User, Extra: map[string]any{"owner": o, "remote": h.proxies.clientIP(r)}}, nil
}

// remoteOf is the client address of the request a call came in on, as
// verify recorded it ("" if unknown).
func remoteOf(req *mcp.CallToolRequest) string {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return ""
	}
	s, _ := req.Extra.TokenInfo.Extra["remote"].(string)
	return s
}

// bearerToken is the request's bearer token, read as the go-sdk's
// auth.RequireBearerToken reads it.
func bearerToken(r *http.Request) (string, bool) {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}

// wrongKeyThrottled spends the address's budget of wrong API keys when r
// carries a wrong one, and reports whether that budget was already used
// up. A right key never touches the budget, so guesses from the same
// address never lock it out; a request without a key guesses nothing.
func (h *controlEndpoint) wrongKeyThrottled(r *http.Request) bool {
	token, ok := bearerToken(r)
	if !ok {
		return false
	}
	if _, right := h.check(token); right {
		return false
	}
	ip := h.proxies.clientIP(r)
	throttled := !h.failures.spend(ip)
	h.log.Info("wrong /mcp API key", "remote", ip, "throttled", throttled)
	return throttled
}

// ServeHTTP serves /mcp: 404 without Options.Headless.APIKeysFile, then Origin and Host
// checks, then the API key (a wrong one spends the address's budget of
// wrong keys, and is answered 429 once that is used up), then the MCP
// server.
func (h *controlEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.handler == nil || h.isClosed() {
		http.NotFound(w, r)
		return
	}
	// A malformed Host is refused before the Origin check, which compares
	// the Origin with it.
	if !mcpbridge.HostWellFormed(r.Host) {
		h.metrics.MCPRejected("host")
		http.Error(w, "malformed Host header", http.StatusBadRequest)
		return
	}
	if !mcpbridge.OriginAllowed(r, h.opts.MCP.TrustedOrigins) {
		h.metrics.MCPRejected("origin")
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	if !mcpbridge.HostAllowed(r, h.opts.MCP.AllowedHosts) {
		h.metrics.MCPRejected("host")
		http.Error(w, "Host not allowed on this listener (DNS rebinding protection)", http.StatusForbidden)
		return
	}
	if h.wrongKeyThrottled(r) {
		// Too many wrong API keys from this address (a budget of their
		// own: failed SSH logins are not counted here, nor these there).
		h.metrics.MCPRejected("rate_limited")
		http.Error(w, "too many failed authentications from your address; try again later", http.StatusTooManyRequests)
		return
	}
	if r.ContentLength > controlBodyLimit {
		h.metrics.MCPRejected("body_too_large")
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="raxol-ssh"`)
	r.Header.Set(hostHeader, r.Host)
	h.handler.ServeHTTP(w, r)
}

// readBody reads a request's body within Options.MCP.BodyTimeout, once
// the API key has passed (an unknown caller is not waited for): a body
// trickled a byte at a time would hold its handler for as long as the
// client likes. A JSON-RPC batch of more than Options.MCP.MaxBatch
// messages is refused.
func (h *controlEndpoint) readBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, controlBodyLimit)
		if code, err := mcpbridge.ReadBody(w, r, h.opts.MCP.BodyTimeout, h.opts.MCP.MaxBatch); err != nil {
			h.metrics.MCPRejected(mcpbridge.BodyRejection(err))
			http.Error(w, err.Error(), code)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limitClients holds /mcp to Options.Headless.MaxClients clients at any
// instant; it runs after the API key is checked. A POST without a session
// id is the only request that opens a client, so it takes a place before
// the SDK serves it: concurrent ones are counted one by one under the
// cap, never all compared with the same count. The place stays with the
// client the request opened, until that client ends (keepPlace), and is
// given back as the request ends when it opened none (a failed
// initialize, whose session the SDK closes at once; any other error; a
// panic).
func (h *controlEndpoint) limitClients(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		release, ok := h.clients.tryTake(struct{}{})
		if !ok {
			h.metrics.MCPRejected("too_many_clients")
			http.Error(w, fmt.Sprintf("too many clients attached to /mcp (limit %d); close one", h.opts.Headless.MaxClients), http.StatusTooManyRequests)
			return
		}
		kept := false
		defer func() {
			if !kept {
				release()
			}
		}()
		next.ServeHTTP(w, r)
		kept = h.keepPlace(w.Header().Get("Mcp-Session-Id"), release)
	})
}

// keepPlace hands the place an opening request took to the client session
// it opened (id, from the answer's Mcp-Session-Id), which gives it back
// when it ends. It reports false when there is no such live session (the
// request opened none, or it ended already), or /mcp is closing (the
// session is closed then: close may have looked for sessions before this
// one was there).
func (h *controlEndpoint) keepPlace(id string, release func()) bool {
	if id == "" {
		return false
	}
	var ss *mcp.ServerSession
	for c := range h.server.Sessions() {
		if c.ID() == id {
			ss = c
			break
		}
	}
	if ss == nil {
		return false
	}
	h.watchMu.Lock()
	if h.isClosed() {
		h.watchMu.Unlock()
		_ = ss.Close()
		return false
	}
	h.watchers.Add(1)
	h.watchMu.Unlock()
	// Owned by the client session: it ends when the session does (DELETE,
	// its idle timeout, a failed keepalive, close).
	go func() {
		defer h.watchers.Done()
		_ = ss.Wait()
		release()
	}()
	return true
}

// clientCount is the number of /mcp clients holding a place now: the
// clients attached, and requests that may open one in flight.
func (h *controlEndpoint) clientCount() int { return h.clients.held(struct{}{}) }

func (h *controlEndpoint) posture() string {
	if h.handler == nil {
		return "off (no " + h.opts.setting("Options.Headless.APIKeysFile") + ")"
	}
	return fmt.Sprintf("/mcp with %d API keys from %s; idle sessions end after %s", len(h.keys), h.opts.Headless.APIKeysFile, h.opts.Headless.IdleTimeout)
}

func (h *controlEndpoint) isClosed() bool { return h.closed.Load() }

// close disconnects /mcp clients; the sessions themselves end with every
// other one at shutdown (the lifecycle stops their reapers).
func (h *controlEndpoint) close() {
	h.watchMu.Lock()
	h.closed.Store(true)
	h.watchMu.Unlock()
	if h.server != nil {
		for ss := range h.server.Sessions() {
			_ = ss.Close()
		}
	}
	h.watchers.Wait()
}

// ---- tools ----

func (h *controlEndpoint) addTools() {
	h.server.AddTool(&mcp.Tool{
		Name:        ToolStart,
		Description: "Start a new session of the app with no terminal attached (in a cluster, on the least-loaded node; its URLs are of the node you called, which passes requests on). Returns its id, its own MCP endpoints (mcp_url for Streamable HTTP, sse_url for SSE) with the bearer token to use on them, and a one-time join code with the SSH command a human runs to join it.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)},
		Meta:        mcp.Meta{"sensitive": true},
	}, h.start)
	h.server.AddTool(&mcp.Tool{
		Name:        ToolStop,
		Description: "End one of the sessions you started with raxol_start. Its MCP clients and any human who joined it are disconnected.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The session id raxol_start returned."}},"required":["id"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)},
		Meta:        mcp.Meta{"sensitive": true},
	}, h.stop)
	h.server.AddTool(&mcp.Tool{
		Name:        ToolList,
		Description: "List the live sessions you started with raxol_start: id, when it started, and who is attached. In a cluster, those on every node, each with the node holding it (and, for one another node holds, its agent count instead of who is attached); when the cluster directory cannot be reached, only this node's, with a note saying so.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, h.list)
}

// hostHeader carries the request's Host to the tool handlers (the SDK
// passes them the headers, where Go does not keep Host). It is always set
// by ServeHTTP, never taken from the client as sent.
const hostHeader = "X-Raxol-Request-Host"

// baseFor is the base URL of the session endpoints for the caller of req:
// Options.MCP.PublicURL when set; else the host the caller reached /mcp by, which
// it can reach the sessions by too; else the listener's address.
func (h *controlEndpoint) baseFor(req *mcp.CallToolRequest) string {
	if h.opts.MCP.PublicURL == "" && req.Extra != nil {
		if host := req.Extra.Header.Get(hostHeader); host != "" {
			return "http://" + host
		}
	}
	return strings.TrimRight(h.host.publicURL(nil), "/")
}

// callerOf is the API key owner of a request (set by verify).
func callerOf(req *mcp.CallToolRequest) (session.Owner, bool) {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return session.Owner{}, false
	}
	o, ok := req.Extra.TokenInfo.Extra["owner"].(session.Owner)
	return o, ok && o.User != ""
}

func (h *controlEndpoint) start(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	owner, ok := callerOf(req)
	if !ok {
		return toolError("unauthorized", "no API key identity on this request"), nil
	}
	a, fail := h.others.place(ctx, owner, remoteOf(req)) // here, or in a cluster on the least-loaded node
	if fail != nil {
		return fail.result(), nil
	}
	// The URLs name the node the caller reached (it can reach it; it
	// passes requests for a session another node holds to that node).
	base := h.baseFor(req) + "/sessions/" + a.ID
	out := map[string]any{
		"id":           a.ID,
		"mcp_url":      base + "/mcp",
		"sse_url":      base + "/sse",
		"token":        a.Token,
		"join_code":    a.JoinCode,
		"join_command": a.JoinCommand,
	}
	if a.Node != "" {
		out["node"] = a.Node
	}
	return jsonToolResult(out), nil
}

// others is what the control endpoint asks about sessions this node
// does not hold: where to start a new one (here, or on another node),
// how to stop or list the caller's on other nodes, how to make a change
// known to the other nodes, and this node's name. A single node is alone;
// a cluster node's peers (clusterPeers, cluster_mcp.go) are the other.
type others interface {
	place(ctx context.Context, owner session.Owner, remote string) (startAnswer, *toolFailure)
	stop(ctx context.Context, id string, owner session.Owner, remote string) *toolFailure
	list(ctx context.Context, owner session.Owner, base string, local []listItem) (all []listItem, note string)
	announceNow(ctx context.Context)
	nodeID() string
}

// alone is a single node: every session starts here, and none is
// anywhere else.
type alone struct{ h *controlEndpoint }

var _ others = alone{}

func (a alone) place(ctx context.Context, owner session.Owner, remote string) (startAnswer, *toolFailure) {
	return a.h.startLocal(ctx, owner, remote, "")
}
func (alone) stop(context.Context, string, session.Owner, string) *toolFailure {
	return &toolFailure{Kind: "unknown_session", Message: errUnknownSession.Error()}
}
func (alone) list(_ context.Context, _ session.Owner, _ string, local []listItem) ([]listItem, string) {
	return local, ""
}
func (alone) announceNow(context.Context) {}
func (alone) nodeID() string              { return "" }

// startAnswer is what starting a session gives raxol_start, but the
// URLs: the node the caller reached makes those.
type startAnswer struct {
	ID          string `json:"id"`
	Token       string `json:"token"`
	JoinCode    string `json:"join_code"`
	JoinCommand string `json:"join_command"`
	Node        string `json:"node,omitempty"` // the home node's id, in a cluster
}

// toolFailure is a tool's error result (toolError). elsewhere marks a
// failure of this node that another node may not have (it is stopping).
type toolFailure struct {
	Kind, Message string
	elsewhere     bool
}

func (f *toolFailure) result() *mcp.CallToolResult { return toolError(f.Kind, f.Message) }

// startLocal starts a session on this node for owner, as raxol_start
// does: under the owner's cap, reaped when idle, with a one-time join
// code. remote is the client's address and peer the node that asked
// ("" when the client called this node), for the log.
func (h *controlEndpoint) startLocal(ctx context.Context, owner session.Owner, remote, peer string) (startAnswer, *toolFailure) {
	stopping := &toolFailure{Kind: "start_failed", Message: "the server is stopping", elsewhere: true}
	se, end, err := h.host.StartHeadless(owner)
	switch {
	case errors.Is(err, ErrSessionLimit):
		return startAnswer{}, &toolFailure{Kind: "limit", Message: fmt.Sprintf("this API key already has %d live sessions (the limit); stop one with raxol_stop", h.opts.Limits.MaxSessionsPerUser)}
	case errors.Is(err, ErrShutdown):
		return startAnswer{}, stopping
	case err != nil:
		return startAnswer{}, &toolFailure{Kind: "start_failed", Message: "could not start a session: " + err.Error()}
	}
	if h.isClosed() || !h.life.addStarted(se, owner.Key()) {
		end()
		return startAnswer{}, stopping
	}
	code, err := h.host.issueCode(se.ID)
	if err != nil {
		end()
		return startAnswer{}, &toolFailure{Kind: "start_failed", Message: "could not start a session: " + err.Error()}
	}
	if peer != "" {
		h.log.Info("headless session started", "session", se.ID, "owner", owner.User, "remote", remote, "for_peer", peer)
	} else {
		h.log.Info("headless session started", "session", se.ID, "owner", owner.User, "remote", remote)
	}
	// In a cluster, the directory knows it before the caller does, so
	// that its URL works through every node at once.
	h.others.announceNow(ctx)
	return startAnswer{ID: se.ID, Token: se.Token(), JoinCode: code, JoinCommand: h.host.joinCommand(se.ID), Node: h.others.nodeID()}, nil
}

func (h *controlEndpoint) stop(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	owner, ok := callerOf(req)
	if !ok {
		return toolError("unauthorized", "no API key identity on this request"), nil
	}
	var args struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.ID == "" {
		return toolError("invalid_arguments", `want {"id": "<session id>"}`), nil
	}
	if !h.life.stopStarted(args.ID, owner.Key()) {
		// On the node holding it, or unknown_session.
		if fail := h.others.stop(ctx, args.ID, owner, remoteOf(req)); fail != nil {
			return fail.result(), nil
		}
		return jsonToolResult(map[string]any{"stopped": args.ID}), nil
	}
	h.log.Info("headless session stopped", "session", args.ID, "owner", owner.User, "remote", remoteOf(req))
	h.others.announceNow(ctx)
	return jsonToolResult(map[string]any{"stopped": args.ID}), nil
}

// listItem is one of the caller's sessions in raxol_list's answer: one
// this node holds, with who is attached (Attached, never nil for it), or
// one another node holds, as the directory tells it (Agents, never nil
// for it; Created when the directory knows it).
type listItem struct {
	ID       string     `json:"id"`
	Node     string     `json:"node,omitempty"` // in a cluster
	Created  string     `json:"created,omitempty"`
	MCPURL   string     `json:"mcp_url"`
	Attached []attached `json:"attached,omitzero"`
	Agents   *int       `json:"agents,omitempty"`
}

type attached struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

func (h *controlEndpoint) list(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	owner, ok := callerOf(req)
	if !ok {
		return toolError("unauthorized", "no API key identity on this request"), nil
	}
	out := []listItem{}
	for _, se := range h.life.startedFor(owner.Key()) {
		en := listItem{ID: se.ID, Node: h.others.nodeID(), Created: se.Created.UTC().Format(time.RFC3339), Attached: []attached{},
			MCPURL: h.baseFor(req) + "/sessions/" + se.ID + "/mcp"}
		for _, a := range se.Attached() {
			en.Attached = append(en.Attached, attached{Kind: a.Kind, Name: a.Name})
		}
		out = append(out, en)
	}
	// The caller's sessions on the other nodes, in a cluster.
	out, note := h.others.list(ctx, owner, h.baseFor(req), out)
	res := map[string]any{"sessions": out}
	if note != "" {
		res["partial"], res["note"] = true, note
	}
	return jsonToolResult(res), nil
}

// ---- authorization: the same seams as a session's endpoint ----

// The /mcp server is held to the same gate as a session's server
// (mcpbridge.Gate): every method classified, reads decided by the read
// policy, tools/list filtered. Nobody can approve an "ask" here: it is
// denied.

// sensitiveControl classifies the /mcp tools.
func sensitiveControl(name string) (sensitive, known bool) {
	switch name {
	case ToolStart, ToolStop:
		return true, true
	case ToolList:
		return false, true
	}
	return false, false
}

func (h *controlEndpoint) listable(name string, actx authz.Context) bool {
	p := h.policy
	sensitive, known := sensitiveControl(name)
	if !known || (sensitive && !p.ToolConfigured()) {
		return false
	}
	d, panicked := p.DecideTool(name, nil, actx)
	return !panicked && d.Kind == authz.KindAllow
}

func (h *controlEndpoint) authorizeCall(r *mcp.CallToolRequest, actx authz.Context) *mcp.CallToolResult {
	p := h.policy
	name := r.Params.Name
	sensitive, known := sensitiveControl(name)
	if !known {
		return toolError("unknown_tool", fmt.Sprintf("unknown tool %q", name))
	}
	if sensitive && !p.ToolConfigured() {
		h.metrics.Authz("tool", "deny")
		return mcpbridge.DenialResult(name, authz.Deny("sensitive_tool_unguarded: a sensitive tool never runs without an authorizer"))
	}
	var args map[string]any
	if len(r.Params.Arguments) > 0 {
		_ = json.Unmarshal(r.Params.Arguments, &args)
	}
	d, panicked := p.DecideTool(name, args, actx)
	if panicked || d.Kind != authz.KindAllow {
		if panicked {
			h.metrics.Authz("tool", "error")
		} else {
			h.metrics.Authz("tool", d.Kind.String())
		}
		return mcpbridge.DenialResult(name, d) // an ask has no human to answer it here
	}
	h.metrics.Authz("tool", "allow")
	return nil
}

// controlContext is what the server knows of a /mcp request: its MCP
// session and that it came over Streamable HTTP.
func controlContext(req mcp.Request) authz.Context {
	c := authz.Context{ConnID: "unknown", Transport: authz.TransportHTTP}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
		c.ConnID = ss.ID()
	}
	return c
}

func toolError(kind, msg string) *mcp.CallToolResult {
	v := map[string]any{"error": kind, "message": msg}
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}
}

func jsonToolResult(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}
