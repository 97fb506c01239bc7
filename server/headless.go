package server

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Tools of the server-level MCP endpoint /mcp.
const (
	ToolStart = "raxol_start"
	ToolStop  = "raxol_stop"
	ToolList  = "raxol_list"
)

const (
	// defaultHeadlessIdle ends a session started by raxol_start after this
	// long with nobody attached and no change.
	defaultHeadlessIdle = 30 * time.Minute
	// joinCodeLen and joinCodeAlphabet: 10 characters from 31 that cannot
	// be confused with one another (no 0/O, 1/I/L) are about 49 bits.
	joinCodeLen      = 10
	joinCodeAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
	// joinCodeTries wrong codes burn a session's join code.
	joinCodeTries = 5
	// minAPIKeyLen keeps guessable keys out of the API keys file.
	minAPIKeyLen = 16
	// controlBodyLimit caps a request body on /mcp.
	controlBodyLimit = 1 << 20
)

// headless holds what the server does for sessions without an owner
// terminal: the server-level MCP endpoint /mcp (raxol_start, raxol_stop,
// raxol_list) behind operator-issued API keys, the idle reaper of the
// sessions it starts, and one-time join codes.
type headless struct {
	// Fixed at creation.
	s       *Server
	keys    [][sha256.Size]byte // SHA-256 of each API key; nil: /mcp is off
	idle    time.Duration
	clients int          // cap on /mcp clients at once
	server  *mcp.Server  // nil when /mcp is off
	handler http.Handler // nil when /mcp is off
	// failures is the per-address budget of wrong API keys, its own: a
	// wrong key never spends the SSH failed-login budget.
	failures *failureBudget

	mu       sync.Mutex // protects the following
	sessions map[string]*headlessSession
	codes    map[string]*joinCode
	closed   bool
}

// headlessSession is a session raxol_start started.
type headlessSession struct {
	id       string
	identity string // the API key's owner key (session.Owner.Key: its fingerprint, not its display name)
	created  time.Time
	timer    *time.Timer
	// Activity as of the last check.
	active  time.Time
	version uint64
	input   time.Time
}

// joinCode is a session's one-time join code.
type joinCode struct {
	code  string
	tries int
}

func (s *Server) newHeadless() (*headless, error) {
	h := &headless{
		s:        s,
		idle:     s.opts.Headless.IdleTimeout,
		sessions: map[string]*headlessSession{},
		codes:    map[string]*joinCode{},
		failures: newFailureBudget(s.opts.Limits.MaxAuthFailures, s.opts.Limits.AuthFailureWindow),
	}
	if h.idle <= 0 {
		h.idle = defaultHeadlessIdle
	}
	if h.clients = s.opts.Headless.MaxClients; h.clients <= 0 {
		h.clients = 64
	}
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
		Policy:  h.s.policy,
		Metrics: h.s.metrics,
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
	h.handler = auth.RequireBearerToken(h.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h.limitClients(streamable))
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
func (h *headless) check(token string) (sum [sha256.Size]byte, ok bool) {
	sum = sha256.Sum256([]byte(token))
	match := 0
	for _, k := range h.keys {
		match |= subtle.ConstantTimeCompare(sum[:], k[:])
	}
	return sum, match == 1
}

// verify is the bearer-token check of the go-sdk's middleware; wrong keys
// were counted by ServeHTTP before.
func (h *headless) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	sum, ok := h.check(token)
	if !ok {
		h.s.metrics.MCPRejected("unauthorized")
		return nil, auth.ErrInvalidToken
	}
	o := apiKeyOwner(sum)
	return &auth.TokenInfo{UserID: o.User, Extra: map[string]any{"owner": o}}, nil
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
func (h *headless) wrongKeyThrottled(r *http.Request) bool {
	token, ok := bearerToken(r)
	if !ok {
		return false
	}
	if _, right := h.check(token); right {
		return false
	}
	return !h.failures.spend(remoteIP(r))
}

// ServeHTTP serves /mcp: 404 without --api-keys, then Origin and Host
// checks, then the API key (a wrong one spends the address's budget of
// wrong keys, and is answered 429 once that is used up), then the MCP
// server.
func (h *headless) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.handler == nil || h.isClosed() {
		http.NotFound(w, r)
		return
	}
	if !mcpbridge.OriginAllowed(r, h.s.opts.MCP.TrustedOrigins) {
		h.s.metrics.MCPRejected("origin")
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	if !mcpbridge.HostAllowed(r, h.s.opts.MCP.AllowedHosts) {
		h.s.metrics.MCPRejected("host")
		http.Error(w, "Host not allowed on this listener (DNS rebinding protection)", http.StatusForbidden)
		return
	}
	if h.wrongKeyThrottled(r) {
		// Too many wrong API keys from this address (a budget of their
		// own: failed SSH logins are not counted here, nor these there).
		h.s.metrics.MCPRejected("rate_limited")
		http.Error(w, "too many failed authentications from your address; try again later", http.StatusTooManyRequests)
		return
	}
	if r.ContentLength > controlBodyLimit {
		h.s.metrics.MCPRejected("body_too_large")
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="raxol-ssh"`)
	r.Header.Set(hostHeader, r.Host)
	h.handler.ServeHTTP(w, r)
}

// limitClients refuses a new client (a POST without a session id, which
// starts one) beyond the cap; it runs after the API key is checked.
func (h *headless) limitClients(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && h.clientCount() >= h.clients {
			h.s.metrics.MCPRejected("too_many_clients")
			http.Error(w, fmt.Sprintf("too many clients attached to /mcp (limit %d); close one", h.clients), http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clientCount is the number of MCP clients attached to /mcp.
func (h *headless) clientCount() int { return mcpbridge.InitializedSessions(h.server) }

func (h *headless) posture() string {
	if h.handler == nil {
		return "off (no " + h.s.opts.setting("Options.Headless.APIKeysFile") + ")"
	}
	return fmt.Sprintf("/mcp with %d API keys from %s; idle sessions end after %s", len(h.keys), h.s.opts.Headless.APIKeysFile, h.idle)
}

func (h *headless) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// close stops the reaper and disconnects /mcp clients; the sessions
// themselves end with every other one at shutdown.
func (h *headless) close() {
	h.mu.Lock()
	h.closed = true
	for _, e := range h.sessions {
		e.timer.Stop()
	}
	h.mu.Unlock()
	if h.server != nil {
		for ss := range h.server.Sessions() {
			_ = ss.Close()
		}
	}
}

// ---- tools ----

func (h *headless) addTools() {
	h.server.AddTool(&mcp.Tool{
		Name:        ToolStart,
		Description: "Start a new session of the app with no terminal attached. Returns its id, its own MCP endpoints (mcp_url for Streamable HTTP, sse_url for SSE) with the bearer token to use on them, and a one-time join code with the SSH command a human runs to join it.",
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
		Description: "List the live sessions you started with raxol_start: id, when it started, and who is attached.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, h.list)
}

// hostHeader carries the request's Host to the tool handlers (the SDK
// passes them the headers, where Go does not keep Host). It is always set
// by ServeHTTP, never taken from the client as sent.
const hostHeader = "X-Raxol-Request-Host"

// baseFor is the base URL of the session endpoints for the caller of req:
// --public-url when set; else the host the caller reached /mcp by, which
// it can reach the sessions by too; else the listener's address.
func (h *headless) baseFor(req *mcp.CallToolRequest) string {
	if h.s.opts.MCP.PublicURL == "" && req.Extra != nil {
		if host := req.Extra.Header.Get(hostHeader); host != "" {
			return "http://" + host
		}
	}
	return strings.TrimRight(h.s.publicURL(nil), "/")
}

// callerOf is the API key owner of a request (set by verify).
func callerOf(req *mcp.CallToolRequest) (session.Owner, bool) {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return session.Owner{}, false
	}
	o, ok := req.Extra.TokenInfo.Extra["owner"].(session.Owner)
	return o, ok && o.User != ""
}

func (h *headless) start(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	owner, ok := callerOf(req)
	if !ok {
		return toolError("unauthorized", "no API key identity on this request"), nil
	}
	se, end, err := h.s.StartHeadless(owner)
	if err != nil {
		if errors.Is(err, ErrSessionLimit) {
			return toolError("limit", fmt.Sprintf("this API key already has %d live sessions (the limit); stop one with raxol_stop", h.s.opts.Limits.MaxSessionsPerUser)), nil
		}
		return toolError("start_failed", "could not start a session: "+err.Error()), nil
	}
	code, err := h.issueCode(se.ID)
	if err != nil {
		end()
		return toolError("start_failed", "could not start a session: "+err.Error()), nil
	}
	now := time.Now()
	e := &headlessSession{id: se.ID, identity: owner.Key(), created: se.Created, active: now,
		version: se.Dispatcher.Snapshot().Version, input: se.LastInput()}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		end()
		return toolError("start_failed", "the server is stopping"), nil
	}
	e.timer = time.AfterFunc(h.checkEvery(), func() { h.reap(se.ID) })
	h.sessions[se.ID] = e
	h.mu.Unlock()
	h.s.log.Info("headless session started", "session", se.ID, "owner", owner.User)
	base := h.baseFor(req) + "/sessions/" + se.ID
	return jsonToolResult(map[string]any{
		"id":           se.ID,
		"mcp_url":      base + "/mcp",
		"sse_url":      base + "/sse",
		"token":        se.Token(),
		"join_code":    code,
		"join_command": h.s.joinCommand(se.ID),
	}), nil
}

// errUnknownSession is the one answer for a session that does not exist,
// has ended, or is someone else's.
const errUnknownSession = "no such session among yours (it may have ended)"

func (h *headless) stop(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
	h.mu.Lock()
	e, ok := h.sessions[args.ID]
	if ok && e.identity == owner.Key() {
		h.forgetLocked(args.ID)
	}
	h.mu.Unlock()
	if !ok || e.identity != owner.Key() {
		return toolError("unknown_session", errUnknownSession), nil
	}
	if _, live := h.s.sessions.Get(args.ID); !live {
		return toolError("unknown_session", errUnknownSession), nil
	}
	h.s.sessions.End(args.ID)
	h.s.log.Info("headless session stopped", "session", args.ID, "owner", owner.User)
	return jsonToolResult(map[string]any{"stopped": args.ID}), nil
}

func (h *headless) list(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	owner, ok := callerOf(req)
	if !ok {
		return toolError("unauthorized", "no API key identity on this request"), nil
	}
	type attached struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	}
	type entry struct {
		ID       string     `json:"id"`
		Created  string     `json:"created"`
		MCPURL   string     `json:"mcp_url"`
		Attached []attached `json:"attached"`
	}
	h.mu.Lock()
	var mine []*headlessSession
	for _, e := range h.sessions {
		if e.identity == owner.Key() {
			mine = append(mine, e)
		}
	}
	h.mu.Unlock()
	slices.SortFunc(mine, func(a, b *headlessSession) int { return a.created.Compare(b.created) })
	out := []entry{}
	for _, e := range mine {
		se, live := h.s.sessions.Get(e.id)
		if !live {
			continue
		}
		en := entry{ID: e.id, Created: e.created.UTC().Format(time.RFC3339), Attached: []attached{},
			MCPURL: h.baseFor(req) + "/sessions/" + e.id + "/mcp"}
		for _, a := range se.Attached() {
			en.Attached = append(en.Attached, attached{Kind: a.Kind, Name: a.Name})
		}
		out = append(out, en)
	}
	return jsonToolResult(map[string]any{"sessions": out}), nil
}

// forgetLocked drops a headless session's entry and join code.
func (h *headless) forgetLocked(id string) {
	if e, ok := h.sessions[id]; ok {
		e.timer.Stop()
		delete(h.sessions, id)
	}
	delete(h.codes, id)
}

func (h *headless) checkEvery() time.Duration {
	return min(max(h.idle/4, 10*time.Millisecond), time.Minute)
}

// reap ends a headless session idle for the idle period: nobody attached
// (no MCP client, no terminal) and no change to its model or input.
func (h *headless) reap(id string) {
	h.mu.Lock()
	e, ok := h.sessions[id]
	if !ok || h.closed {
		h.mu.Unlock()
		return
	}
	se, live := h.s.sessions.Get(id)
	if !live {
		h.forgetLocked(id)
		h.mu.Unlock()
		return
	}
	now := time.Now()
	v, in := se.Dispatcher.Snapshot().Version, se.LastInput()
	if len(se.Attached()) > 0 || v != e.version || !in.Equal(e.input) {
		e.active, e.version, e.input = now, v, in
	}
	if now.Sub(e.active) < h.idle {
		e.timer.Reset(h.checkEvery())
		h.mu.Unlock()
		return
	}
	h.forgetLocked(id)
	h.mu.Unlock()
	h.s.log.Info("headless session idle; ending it", "session", id, "idle", h.idle)
	h.s.sessions.End(id)
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

func (h *headless) listable(name string, actx authz.Context) bool {
	p := h.s.policy
	sensitive, known := sensitiveControl(name)
	if !known || (sensitive && !p.ToolConfigured()) {
		return false
	}
	d, panicked := p.DecideTool(name, nil, actx)
	return !panicked && d.Kind == authz.KindAllow
}

func (h *headless) authorizeCall(r *mcp.CallToolRequest, actx authz.Context) *mcp.CallToolResult {
	p := h.s.policy
	name := r.Params.Name
	sensitive, known := sensitiveControl(name)
	if !known {
		return toolError("unknown_tool", fmt.Sprintf("unknown tool %q", name))
	}
	if sensitive && !p.ToolConfigured() {
		h.s.metrics.Authz("tool", "deny")
		return mcpbridge.DenialResult(name, authz.Deny("sensitive_tool_unguarded: a sensitive tool never runs without an authorizer"))
	}
	var args map[string]any
	if len(r.Params.Arguments) > 0 {
		_ = json.Unmarshal(r.Params.Arguments, &args)
	}
	d, panicked := p.DecideTool(name, args, actx)
	if panicked || d.Kind != authz.KindAllow {
		if panicked {
			h.s.metrics.Authz("tool", "error")
		} else {
			h.s.metrics.Authz("tool", d.Kind.String())
		}
		return mcpbridge.DenialResult(name, d) // an ask has no human to answer it here
	}
	h.s.metrics.Authz("tool", "allow")
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

// ---- join codes ----

// issueCode gives a session a fresh one-time join code.
func (h *headless) issueCode(id string) (string, error) {
	b := make([]byte, joinCodeLen)
	n := big.NewInt(int64(len(joinCodeAlphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, n)
		if err != nil {
			return "", fmt.Errorf("join code: %w", err)
		}
		b[i] = joinCodeAlphabet[k.Int64()]
	}
	code := string(b)
	h.mu.Lock()
	h.codes[id] = &joinCode{code: code}
	h.mu.Unlock()
	return code, nil
}

// normalizeCode forgives case, spaces and dashes in a typed code.
func normalizeCode(code string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '\t':
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, strings.TrimSpace(code))
}

var dummyJoinCode = strings.Repeat("2", joinCodeLen)

// claimJoinCode reports whether code is the live session's current join
// code, and if so uses it up: a code admits one human, once. A wrong code
// counts against the session's code, which is burned after 5 wrong tries
// (a used or burned code never matches again). Unknown sessions, ended
// sessions, sessions without a code and wrong codes all answer false, in
// the same time (the comparison is constant-time).
//
// The SSH join path calls it for a session no owner terminal can approve
// a join for (RequestJoin returned session.ErrNoTerminal): a session
// started by raxol_start, or the stdio session of `raxol-ssh mcp --stdio
// --ssh-addr ...`. True admits the human as the session's driver-owner.
func (s *Server) claimJoinCode(sessionID, code string) bool {
	return s.headless.claim(sessionID, code)
}

func (h *headless) claim(id, code string) bool {
	got := []byte(normalizeCode(code))
	h.mu.Lock()
	defer h.mu.Unlock()
	jc, ok := h.codes[id]
	want := dummyJoinCode
	if ok {
		want = jc.code
	}
	match := subtle.ConstantTimeCompare(got, []byte(want)) == 1
	if !ok {
		return false
	}
	if _, live := h.s.sessions.Get(id); !live {
		delete(h.codes, id)
		return false
	}
	if match {
		delete(h.codes, id)
		h.s.log.Info("join code used", "session", id)
		return true
	}
	jc.tries++
	if jc.tries >= joinCodeTries {
		delete(h.codes, id)
		h.s.log.Warn("join code burned after wrong tries", "session", id, "tries", jc.tries)
	}
	return false
}

// joinCommand is what a human runs to join session id.
func (s *Server) joinCommand(id string) string {
	addr := s.SSHAddr()
	if addr == "" {
		addr = s.opts.SSH.Addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "22"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
		if u, err := url.Parse(s.opts.MCP.PublicURL); err == nil && u.Hostname() != "" {
			host = u.Hostname()
		}
	}
	return fmt.Sprintf("ssh -p %s %s -t join %s", port, host, id)
}

// ---- stdio ----

// StdioSession describes the session [ServeStdio] serves.
type StdioSession struct {
	// ID is the session id.
	ID string
	// SSHAddr and HTTPAddr are the listeners' addresses, JoinCommand what
	// a human runs to join the session, and JoinCode the one-time code
	// that approves that join; all empty unless SSH is served too.
	SSHAddr, HTTPAddr     string
	JoinCommand, JoinCode string
}

// stdioOwner owns the stdio session: the local process. No SSH login is
// ever taken for it.
var stdioOwner = session.Owner{User: "stdio", KeyFingerprint: "local-process"}

// ServeStdio runs app headless in one session whose MCP server speaks
// over t (mcp.StdioTransport in a command) until the client disconnects
// (nil) or ctx is done, then ends the session. Policies see the client as
// transport "stdio", conn_id "default".
//
// Without withSSH nothing listens on the network, so the network boot gate
// (authz.Policy.CheckNetworkBoot) does not apply: a stdio client inherits
// the process boundary. Every other rule binds: the policy is resolved
// from the same options as [New] resolves it, and sensitive tools need a
// tool authorizer (CheckSensitiveBoot). With withSSH the server also
// serves SSH and HTTP exactly as [New] and [Server.Start] do (all their
// checks included), and a human joins the session with the join command,
// approved by the one-time join code. started, if not nil, is called once
// the session is served.
func ServeStdio(ctx context.Context, app App, opts Options, t mcp.Transport, withSSH bool, started func(StdioSession)) error {
	if started == nil {
		started = func(StdioSession) {}
	}
	if withSSH {
		return serveStdioWithSSH(ctx, app, opts, t, started)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	if err := checkApp(app); err != nil {
		return err
	}
	policy, err := resolvePolicy(app, opts)
	if err != nil {
		return err
	}
	mode, err := opts.lensMode()
	if err != nil {
		return err
	}
	var bridge *mcpbridge.Bridge
	panics := guard.New(opts.Logger, nil)
	mgr := session.NewManager(&session.Options{
		OnEnd:      func(se *session.Session) { bridge.SessionEnded(se.ID) },
		Dispatcher: &dispatcher.Options{Logger: opts.Logger},
		Panics:     panics,
	})
	bridge, err = mcpbridge.New(mgr, mcpbridge.Options{
		TransportOnly:      true, // no network: only the sensitive-tool gate applies
		Namespace:          app.Name,
		Projections:        app.Projections,
		Logger:             opts.Logger,
		LensMode:           mode,
		MaxTools:           opts.MCP.MaxTools,
		Metrics:            opts.Metrics,
		Policy:             policy,
		ToolCallsPerSecond: opts.MCP.ToolCallsPerSecond,
		ToolCallBurst:      opts.MCP.ToolCallBurst,
		ApprovalTimeout:    opts.MCP.ApprovalTimeout,
	})
	if err != nil {
		mgr.Close()
		return fmt.Errorf("server: %w", err)
	}
	defer func() {
		bridge.Close()
		mgr.Close()
	}()
	se, _, err := mgr.StartFunc(app.Name, stdioOwner, func(id string) (ui.Model, error) {
		return newModel(panics, app, ui.Identity{SessionID: id, User: stdioOwner.User, KeyFingerprint: stdioOwner.KeyFingerprint, Headless: true})
	}, 0)
	if err != nil {
		return fmt.Errorf("server: start session: %w", err)
	}
	opts.Logger.Info("raxol-ssh serving MCP over stdio",
		"app", app.Name, "env", opts.Env, "session", se.ID,
		"network", "none (stdio only; serve SSH too to let a human join)",
		"mcp_policy", policy.Describe)
	started(StdioSession{ID: se.ID})
	err = bridge.ServeTransport(ctx, se.ID, t, authz.TransportStdio)
	mgr.End(se.ID)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

func serveStdioWithSSH(ctx context.Context, app App, opts Options, t mcp.Transport, started func(StdioSession)) error {
	srv, err := New(app, opts)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	se, end, err := srv.StartHeadless(stdioOwner)
	if err != nil {
		return errors.Join(err, srv.Shutdown(context.Background()))
	}
	code, err := srv.headless.issueCode(se.ID)
	if err != nil {
		end()
		return errors.Join(err, srv.Shutdown(context.Background()))
	}
	srv.log.Info("raxol-ssh serving MCP over stdio", "session", se.ID, "join", srv.joinCommand(se.ID))
	started(StdioSession{ID: se.ID, SSHAddr: srv.SSHAddr(), HTTPAddr: srv.HTTPAddr(), JoinCommand: srv.joinCommand(se.ID), JoinCode: code})
	err = srv.bridge.ServeTransport(ctx, se.ID, t, authz.TransportStdio)
	end()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return errors.Join(err, srv.Shutdown(context.Background()))
}

// resolvePolicy resolves the authorization policy from the app and the
// options, with the same precedence as [New].
func resolvePolicy(app App, opts Options) (authz.Policy, error) {
	tool, read := app.ToolPolicy, app.ReadPolicy
	if opts.MCP.ToolAuthorizer != nil {
		tool = opts.MCP.ToolAuthorizer
	}
	if opts.MCP.ReadAuthorizer != nil {
		read = opts.MCP.ReadAuthorizer
	}
	policy, err := authz.Resolve(authz.Config{
		Env:          opts.Env,
		AllowedTools: opts.MCP.AllowedTools,
		AllowedReads: opts.MCP.AllowedReads,
		PolicyFile:   opts.MCP.PolicyFile,
		Tool:         tool,
		Read:         read,
		Names: authz.Settings{
			AllowedTools: opts.setting("Options.MCP.AllowedTools"),
			AllowedReads: opts.setting("Options.MCP.AllowedReads"),
			PolicyFile:   opts.setting("Options.MCP.PolicyFile"),
			Env:          opts.setting("Options.Env"),
			Tool:         opts.setting("App.ToolPolicy") + " or " + opts.setting("Options.MCP.ToolAuthorizer"),
			Read:         opts.setting("App.ReadPolicy") + " or " + opts.setting("Options.MCP.ReadAuthorizer"),
		},
	})
	if err != nil {
		return authz.Policy{}, fmt.Errorf("server: %w", err)
	}
	return policy, nil
}

// remoteIP is the host part of a request's remote address.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
