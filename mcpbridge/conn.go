package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Session tools: always advertised, first.
const (
	ToolScreenshot = "raxol_screenshot"
	ToolSendKey    = "raxol_send_key"
	ToolDiscover   = "discover_tools"
)

// conn is one session's MCP server and the state it projects.
type conn struct {
	// Fixed at creation.
	b          *Bridge
	sess       *session.Session
	log        *slog.Logger
	server     *mcp.Server
	streamable *mcp.StreamableHTTPHandler
	sse        *mcp.SSEHandler
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup // the watcher and one presence waiter per client
	token      string         // the token HTTP clients authenticated with (watcher only)
	// The tools derived from snapshot derivedFor (sync only: newConn,
	// then the watcher).
	derivedTools []Derived
	derivedFor   uint64
	limiters     sync.Map            // *mcp.ServerSession -> *rate.Limiter
	present      sync.Map            // *mcp.ServerSession -> struct{}: presence recorded
	grants       authz.SessionGrants // tools the human allowed for the session
	sseStreams   atomic.Int32        // SSE streams open now

	mu         sync.Mutex // protects the following
	advertised []string   // lens-selected names, session tools included
	synced     uint64     // snapshot version the registered tools come from
	registered map[string]bool
	warned     map[string]bool
	res        *resources
}

func newConn(b *Bridge, se *session.Session) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		b:          b,
		sess:       se,
		log:        b.log.With("session", se.ID),
		ctx:        ctx,
		cancel:     cancel,
		registered: map[string]bool{},
		warned:     map[string]bool{},
		token:      se.Token(),
	}
	c.server = mcp.NewServer(&mcp.Implementation{Name: "raxol-ssh", Title: "raxol-ssh session", Version: b.opts.Version}, &mcp.ServerOptions{
		Instructions: "This server drives a live terminal app that a human is using at the same time. " +
			"Tools are derived from the app's widgets (<app>.<widget>.<action>) and follow the human's focus; " +
			"discover_tools finds the others, which can be called too. Resources hold the app state; subscribe to receive JSON Patch updates.",
		Logger: quiet(c.log),
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
		InitializedHandler:        c.initialized,
		SubscribeHandler:          c.subscribe,
		UnsubscribeHandler:        c.unsubscribe,
		SupportedProtocolVersions: handshakeVersions(),
	})
	// In order: count and rate-limit every call, authorize, then serve
	// derived tools.
	c.server.AddReceivingMiddleware(c.meter, c.authorize, c.middleware)
	c.addSessionTools()
	c.res = newResources(c)
	c.res.register()
	c.streamable = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return c.server }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      b.opts.ClientIdleTimeout,
		MaxRequestBodyBytes: b.opts.MaxBodyBytes,
		Logger:              quiet(c.log),
	})
	c.sse = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return c.server }, &mcp.SSEOptions{
		MaxRequestBodyBytes: b.opts.MaxBodyBytes,
	})
	c.sync()
	c.wg.Add(1)
	go c.watch()
	return c
}

// statelessProtocol is the first protocol version without initialize
// (SEP-2575).
const statelessProtocol = "2026-07-28"

// handshakeVersions are the protocol versions a session's server speaks:
// those with initialize, up to 2025-11-25. Presence, subscriptions and
// approvals are built on an initialized, long-lived client session, and a
// client must get the same server whichever transport it uses. Narrowing the
// server (not only a transport) matters: the SDK's SSE handler can answer a
// client's server/discover before it has narrowed the versions to what SSE
// serves, and a client that got 2026-07-28 then never sends initialize.
func handshakeVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < statelessProtocol {
			out = append(out, v)
		}
	}
	return out
}

// watch re-projects the session whenever its model or its terminal-side
// state changes, until the conn closes or the session's dispatcher stops.
func (c *conn) watch() {
	defer c.wg.Done()
	sub := c.sess.Dispatcher.Subscribe()
	defer sub.Close()
	changed, stop := c.sess.Watch()
	defer stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-sub.Done():
			return
		case <-sub.C():
		case <-changed:
			if tok := c.sess.Token(); tok != c.token {
				c.token = tok
				c.disconnectHTTP()
			}
		}
		c.sync()
	}
}

// sync derives the tools of the current tree, applies the focus lens,
// keeps the registered tools equal to the advertised set (the SDK sends
// notifications/tools/list_changed when that set changes), and pushes
// resource updates to subscribers.
func (c *conn) sync() {
	snap := c.sess.Dispatcher.Snapshot()
	att := c.sess.Attention()
	// Screen, attention and presence changes wake sync too; the tools of
	// a tree are derived once per snapshot.
	if c.derivedFor != snap.Version || c.derivedTools == nil {
		c.derivedTools = Derive(c.b.opts.Namespace, snap.Tree, c.warnOnce)
		c.derivedFor = snap.Version
	}
	derived := c.derivedTools
	advertised := lens.Names(lens.Select(lensTools(derived), lens.Input{
		Mode:     c.b.opts.LensMode,
		MaxTools: c.b.opts.MaxTools,
		Tree:     widgetIDs(snap.Tree),
		Focused:  att.Focus,
		Hover:    att.Hover,
		Recent:   c.sess.Recent(),
		Modal:    modalIDs(snap.Tree),
	}))

	c.mu.Lock()
	want := map[string]bool{}
	for _, n := range advertised {
		if !isSessionTool(n) {
			want[n] = true
		}
	}
	var remove []string
	for n := range c.registered {
		if !want[n] {
			remove = append(remove, n)
			// Unmarked first: until RemoveTools runs, discover_tools lists
			// it as well, rather than neither list having it.
			delete(c.registered, n)
		}
	}
	var add []Derived
	for _, d := range derived {
		if want[d.Name] && !c.registered[d.Name] {
			add = append(add, d)
		}
	}
	c.mu.Unlock()

	for _, d := range add {
		// Calls never reach this handler: the middleware resolves every
		// derived tool against the tree current at call time.
		c.server.AddTool(toolDef(d), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return errorResult(ErrKindInternalError, "derived tool called outside the bridge"), nil
		})
	}
	// Marked only once listed, for the same reason.
	c.mu.Lock()
	for _, d := range add {
		c.registered[d.Name] = true
	}
	c.advertised = advertised
	c.mu.Unlock()
	if len(remove) > 0 {
		c.server.RemoveTools(remove...)
	}
	c.mu.Lock()
	c.synced = snap.Version
	c.mu.Unlock()
	c.res.update(snap)
}

// disconnectHTTP closes the clients that authenticated with a bearer token
// over HTTP, after the human rotated it; the old token no longer opens
// anything. Clients on a transport the process declared (stdio) did not
// use the token and stay.
func (c *conn) disconnectHTTP() {
	for ss := range c.server.Sessions() {
		if _, declared := declaredContext(ss.ID()); !declared {
			_ = ss.Close()
		}
	}
}

// warnOnce reports each distinct derivation warning once per session.
func (c *conn) warnOnce(msg string, args ...any) {
	key := fmt.Sprint(append([]any{msg}, args...)...)
	c.mu.Lock()
	seen := c.warned[key] || len(c.warned) >= 256
	c.warned[key] = true
	c.mu.Unlock()
	if !seen {
		c.log.Warn("mcp derivation: "+msg, args...)
	}
}

func lensTools(derived []Derived) []lens.Tool {
	tools := []lens.Tool{{Name: ToolScreenshot}, {Name: ToolSendKey}, {Name: ToolDiscover}}
	for _, d := range derived {
		tools = append(tools, lens.Tool{Name: d.Name, WidgetID: d.WidgetID})
	}
	return tools
}

func isSessionTool(name string) bool {
	return name == ToolScreenshot || name == ToolSendKey || name == ToolDiscover
}

// widgetIDs lists every widget id of tree in tree order.
func widgetIDs(tree ui.Node) []string {
	var ids []string
	ui.Walk(tree, func(n ui.Node) bool {
		if w, ok := n.(ui.Widget); ok {
			ids = append(ids, w.WidgetID())
		}
		return true
	})
	return ids
}

// modalIDs lists the open modal and every widget in it, or nil when no
// modal is open.
func modalIDs(tree ui.Node) []string {
	o, ok := ui.ActiveOverlay(tree)
	if !ok {
		return nil
	}
	ids := widgetIDs(o)
	if ids == nil {
		ids = []string{}
	}
	return ids
}

func toolDef(d Derived) *mcp.Tool {
	read := d.ReadOnly
	ann := &mcp.ToolAnnotations{ReadOnlyHint: read, IdempotentHint: read, OpenWorldHint: new(false)}
	if d.Destructive {
		ann.DestructiveHint = new(true)
	} else if read {
		ann.DestructiveHint = new(false)
	}
	t := &mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.Schema, Annotations: ann}
	if d.Sensitive {
		t.Meta = mcp.Meta{"sensitive": true}
	}
	return t
}

// initialized records an agent's presence (if initialize did not).
func (c *conn) initialized(_ context.Context, req *mcp.InitializedRequest) {
	c.attach(req.Session)
}

// attach records an agent's presence in the session until its MCP session
// closes; once per client. It runs when the client's initialize has been
// answered (before its Connect returns), and again, as a no-op, on its
// notifications/initialized, which the SDK may handle much later.
func (c *conn) attach(ss *mcp.ServerSession) {
	if ss == nil {
		return
	}
	if _, seen := c.present.LoadOrStore(ss, struct{}{}); seen {
		return
	}
	_, detach := c.sess.Attach(session.KindAgent, clientName(ss))
	c.b.opts.Metrics.MCPClient(1)
	ended := make(chan struct{})
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		_ = ss.Wait()
		close(ended)
		detach()
		c.res.forget(ss)
		c.limiters.Delete(ss)
		c.present.Delete(ss)
		c.b.opts.Metrics.MCPClient(-1)
	}()
	go func() {
		defer c.wg.Done()
		c.keepAlive(ss, ended)
	}()
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
			_ = ss.Close()
			return
		}
	}
}

// clientName is "<name> <version>" from the client's initialize, or
// "agent" when it gave none.
func clientName(ss *mcp.ServerSession) string {
	if ss == nil {
		return "agent"
	}
	p := ss.InitializeParams()
	if p == nil || p.ClientInfo == nil || strings.TrimSpace(p.ClientInfo.Name) == "" {
		return "agent"
	}
	name := ui.Truncate(Clean(p.ClientInfo.Name), 64)
	if v := Clean(p.ClientInfo.Version); v != "" {
		name += " " + ui.Truncate(v, 32)
	}
	return name
}

// close ends every client session and waits for the conn's goroutines.
func (c *conn) close() {
	c.cancel()
	for ss := range c.server.Sessions() {
		_ = ss.Close()
	}
	c.wg.Wait()
}

// meter times and counts every tools/call, and rate-limits each client.
func (c *conn) meter(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			res, err := next(ctx, method, req)
			if err == nil {
				ss, _ := req.GetSession().(*mcp.ServerSession)
				c.attach(ss)
			}
			return res, err
		}
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		start := time.Now()
		var res mcp.Result
		var err error
		if r, _ := req.(*mcp.CallToolRequest); r != nil && !c.allowCall(r.Session) {
			res = errorResult(ErrKindRateLimited, fmt.Sprintf("too many tool calls: at most %g per second per client; slow down and retry", c.b.opts.ToolCallsPerSecond))
			c.b.opts.Metrics.MCPRejected("rate_limited")
		} else {
			res, err = next(ctx, method, req)
		}
		outcome := callOutcome(res, err)
		c.b.opts.Metrics.ToolCall(outcome, time.Since(start))
		if r, _ := req.(*mcp.CallToolRequest); r != nil && r.Params != nil {
			c.recordCall(r, outcome)
		}
		return res, err
	}
}

// middleware serves tools/call for every derived tool, advertised or not,
// resolving it against the tree current at call time.
func (c *conn) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil && !isSessionTool(r.Params.Name) {
			return c.callDerived(ctx, r), nil
		}
		return next(ctx, method, req)
	}
}

// actionVerbs put agents' actions in words for the activity log.
var actionVerbs = map[string]string{
	"type_into": "typed into", "clear": "cleared", "click": "clicked", "toggle": "toggled",
	"select": "selected in", "select_tab": "switched tabs in", "select_row": "selected a row in",
	"sort": "sorted", "expand": "expanded a node in", "collapse": "collapsed a node in",
	"select_node": "selected a node in", "seek": "moved", "play": "played", "pause": "paused",
	"scroll_to": "scrolled", "confirm": "confirmed", "dismiss": "dismissed",
}

// recordCall puts an agent's write (or its refusal) in the activity log;
// reads are not actions. Keys pressed through raxol_send_key are recorded
// by the terminal that received them, widget by widget.
func (c *conn) recordCall(r *mcp.CallToolRequest, outcome string) {
	name := r.Params.Name
	id, action, derived := SplitName(c.b.opts.Namespace, name)
	switch {
	case derived && c.isReadAction(id, action):
		return
	case !derived && (name != ToolSendKey || outcome == "ok"):
		return
	}
	a := session.Action{Origin: "agent:" + clientName(r.Session), Agent: true, Action: action, Outcome: outcome}
	if derived {
		a.Widget, a.Label = id, c.widgetLabel(name)
		verb := actionVerbs[action]
		if verb == "" {
			verb = "used " + action + " on"
		}
		a.Summary = verb + " " + a.Label
	} else {
		a.Action, a.Summary = "keys", "pressed keys"
	}
	c.sess.Record(a)
}

// unavailable is the error result for a tool the current view does not
// offer.
func (c *conn) unavailable(name string) *mcp.CallToolResult {
	widgetID, action, ok := SplitName(c.b.opts.Namespace, name)
	if !ok {
		return errorResult(ErrKindUnknownTool, fmt.Sprintf("unknown tool %q", name))
	}
	if _, exists := ui.Find(c.sess.Dispatcher.Snapshot().Tree, widgetID); exists {
		return errorResult(ErrKindWidgetGone, fmt.Sprintf("widget %q does not offer %q now (it may be disabled or hidden)", widgetID, action))
	}
	return errorResult(ErrKindWidgetGone, fmt.Sprintf("no widget %q in the current view", widgetID))
}

// isReadAction reports whether the widget widgetID of the current tree
// declares action read-only (ui.ToolSpec.ReadOnly), whatever its name.
// Anything else, a tool the tree does not offer included, is a write.
func (c *conn) isReadAction(widgetID, action string) bool {
	name := c.b.opts.Namespace + "." + widgetID + "." + action
	_, spec, ok := Lookup(c.b.opts.Namespace, c.sess.Dispatcher.Snapshot().Tree, name)
	return ok && spec.ReadOnly
}

// callOutcome is "ok" or the error kind of a tools/call result.
func callOutcome(res mcp.Result, err error) string {
	if err != nil {
		return ErrKindInternalError
	}
	r, ok := res.(*mcp.CallToolResult)
	if !ok || !r.IsError {
		return "ok"
	}
	if m, ok := r.StructuredContent.(map[string]any); ok {
		if k, ok := m["error"].(string); ok {
			return k
		}
	}
	return ErrKindToolError
}

// Error kinds of tool error results.
const (
	ErrKindUnknownTool   = "unknown_tool"
	ErrKindWidgetGone    = "widget_gone"
	ErrKindInvalidArgs   = "invalid_arguments"
	ErrKindToolError     = "tool_error"
	ErrKindUpdateFailed  = "update_failed"
	ErrKindTimeout       = "timeout"
	ErrKindSessionEnded  = "session_ended"
	ErrKindNoTerminal    = "no_terminal"
	ErrKindInternalError = "internal"
	ErrKindRateLimited   = "rate_limited"
	ErrKindPaused        = "paused"
	ErrKindNotFocused    = "not_focused"
)

// allowCall takes a token from the client's tool-call rate limiter.
func (c *conn) allowCall(ss *mcp.ServerSession) bool {
	if ss == nil {
		return true
	}
	l, ok := c.limiters.Load(ss)
	if !ok {
		l, _ = c.limiters.LoadOrStore(ss, rate.NewLimiter(rate.Limit(c.b.opts.ToolCallsPerSecond), c.b.opts.ToolCallBurst))
	}
	return l.(*rate.Limiter).Allow()
}

// errorResult is a tool error: {"error": kind, "message": msg} as JSON
// text and structured content.
func errorResult(kind, msg string) *mcp.CallToolResult {
	v := map[string]any{"error": kind, "message": msg}
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}
}

// jsonResult returns v as JSON text and structured content.
func jsonResult(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return errorResult(ErrKindInternalError, "result could not be encoded: "+err.Error())
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

// errWidgetGone is returned by the resolver when the tool's widget is no
// longer in the tree (or no longer offers the action).
var errWidgetGone = errors.New("widget gone")

// toolError wraps an error a widget returned from CallTool.
type toolError struct{ err error }

func (e toolError) Error() string { return e.err.Error() }

func (c *conn) callDerived(ctx context.Context, r *mcp.CallToolRequest) *mcp.CallToolResult {
	name := r.Params.Name
	ns := c.b.opts.Namespace
	widgetID, action, _ := SplitName(ns, name)
	tp, spec, ok := Lookup(ns, c.sess.Dispatcher.Snapshot().Tree, name)
	if !ok {
		return c.unavailable(name)
	}
	args, err := decodeArgs(r.Params.Arguments)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error())
	}
	if err := c.b.schemas.validate(fmt.Sprintf("%T.%s", tp, action), spec.InputSchema, args); err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error())
	}
	args = providerArgs(spec.InputSchema, args)

	if spec.ReadOnly {
		result, _, err := tp.CallTool(action, args)
		if err != nil {
			return errorResult(ErrKindToolError, err.Error())
		}
		return jsonResult(map[string]any{"result": result, "state": tp.State()})
	}

	origin := dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: clientName(r.Session)}
	var result any
	cctx, cancel := context.WithTimeout(ctx, c.b.opts.CallTimeout)
	defer cancel()
	err = c.sess.Dispatcher.CallFunc(cctx, origin, func(tree ui.Node) ([]tea.Msg, error) {
		w, _, ok := Lookup(ns, tree, name)
		if !ok {
			return nil, errWidgetGone
		}
		res, msgs, err := w.CallTool(action, args)
		if err != nil {
			return nil, toolError{err}
		}
		result = res
		return msgs, nil
	})
	var te toolError
	switch {
	case err == nil:
	case errors.As(err, &te):
		return errorResult(ErrKindToolError, te.Error())
	case errors.Is(err, errWidgetGone):
		return errorResult(ErrKindWidgetGone, fmt.Sprintf("widget %q no longer offers %q", widgetID, action))
	case errors.Is(err, dispatcher.ErrUpdateFailed):
		return errorResult(ErrKindUpdateFailed, "the app failed to apply the change; its state is unchanged")
	case errors.Is(err, dispatcher.ErrTimeout):
		return errorResult(ErrKindTimeout, "timed out waiting for the app; the change may still be applied: check the state before retrying")
	case errors.Is(err, dispatcher.ErrClosed):
		return errorResult(ErrKindSessionEnded, "the session has ended")
	default:
		return errorResult(ErrKindInternalError, err.Error())
	}
	c.sess.NoteAction(widgetID)
	out := map[string]any{"result": result}
	if w, _, ok := Lookup(ns, c.sess.Dispatcher.Snapshot().Tree, name); ok {
		out["state"] = w.State()
	} else if w, ok := ui.Find(c.sess.Dispatcher.Snapshot().Tree, widgetID); ok {
		if tp, ok := w.(ui.ToolProvider); ok {
			out["state"] = tp.State()
		}
	}
	return jsonResult(out)
}

// decodeArgs decodes tool arguments, which must be a JSON object (or
// absent).
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		return nil, errors.New("arguments must be a JSON object")
	}
	return args, nil
}

// quiet passes on only warnings and errors: the SDK logs every connection
// at info level, which at scale is noise.
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{l.Handler(), slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(a), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }

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
