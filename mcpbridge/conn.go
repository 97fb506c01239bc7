package mcpbridge

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Session tools: always advertised, first.
const (
	ToolScreenshot = "raxol_screenshot"
	ToolSendKey    = "raxol_send_key"
	ToolDiscover   = "discover_tools"
)

// sessionServer is one session's MCP server and the state it projects.
type sessionServer struct {
	// Fixed at creation.
	b          *Bridge
	sess       *session.Session
	log        *slog.Logger
	server     *mcp.Server
	streamable *mcp.StreamableHTTPHandler
	sse        *mcp.SSEHandler
	ctx        context.Context
	cancel     context.CancelFunc
	gate       *Gate          // the authorization middleware
	slots      *slots         // the session's clients, held against MaxClients
	wg         sync.WaitGroup // the watcher and one presence waiter per client

	// Safe for concurrent use on their own.
	scans    atomic.Pointer[scanned] // the latest snapshot's tree scanned (scannedAt)
	clients  sync.Map                // *mcp.ServerSession -> *client: attached clients
	requests sync.Map                // requestHeader tag -> the POST's context, while it is served
	attachMu sync.Mutex              // serializes attach

	// The watcher's own (sync only: newSessionServer, then the watcher;
	// watch.go).
	token   [sha256.Size]byte // hash of the token HTTP clients authenticated with
	derived derivation        // the tools of the last snapshot synced
	memo    lensMemo          // what the last lens selection was made from
	want    map[string]bool   // scratch: the widget tools to register

	mu         sync.Mutex // protects the following
	advertised []string   // lens-selected names, session tools included
	synced     uint64     // snapshot version the registered tools come from
	registered map[string]bool
	warned     map[string]bool
	res        *resources
	// selected is the lens's last selection, in its order, and
	// selectedFocus the widget focused then: how tools/list orders and
	// marks the registered tools (order). The ranks are worked out when a
	// client lists, not at every focus move.
	selected      []lens.Tool
	selectedFocus string
}

func newSessionServer(b *Bridge, se *session.Session) *sessionServer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &sessionServer{
		b:          b,
		sess:       se,
		log:        b.log.With("session", se.ID),
		ctx:        ctx,
		cancel:     cancel,
		registered: map[string]bool{},
		warned:     map[string]bool{},
		token:      se.TokenHash(),
		slots:      newSlots(b.opts.MaxClients, b.probeIdle),
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
	// In order: count and rate-limit every call, authorize (and filter
	// tools/list per entry), hold tool answers to the read policy
	// (readpolicy.go), put tools/list in the lens's order with the
	// focused widget's tools marked, then serve derived tools.
	c.gate = &Gate{Policy: b.opts.Policy, Metrics: b.opts.Metrics, Context: c.clientContext, Call: c.authorizeCall, Listable: c.listable}
	c.server.AddReceivingMiddleware(c.meter, c.gate.Receiving, c.withhold, c.order, c.middleware)
	c.server.AddSendingMiddleware(c.gate.Sending, c.withholdUpdates)
	c.addSessionTools()
	c.res = newResources(c)
	c.res.register()
	c.streamable = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return c.server }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      b.opts.ClientIdleTimeout,
		MaxRequestBodyBytes: b.opts.MaxBodyBytes,
		Logger:              quiet(c.log),
		// The Bridge checks Host (HostAllowed, with the operator's
		// allowed hosts) before every request reaches this handler.
		DisableLocalhostProtection: true,
	})
	c.sse = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return c.server }, &mcp.SSEOptions{
		MaxRequestBodyBytes:        b.opts.MaxBodyBytes,
		DisableLocalhostProtection: true, // as above
	})
	c.safeSync()
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
// state changes, until the server closes or the session's dispatcher stops.
func (c *sessionServer) watch() {
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
			if tok := c.sess.TokenHash(); tok != c.token {
				c.token = tok
				c.revokeGrants()
				c.disconnectHTTP()
			}
		}
		c.safeSync()
	}
}

// safeSync is sync behind a last line of defence: the app code it runs is
// guarded where it is called, and anything that slips through costs this
// round of updates, not the process.
func (c *sessionServer) safeSync() { _ = c.sess.Guard().Do(metrics.HookOther, "", c.sync) }

// sync derives the tools of the current tree, applies the focus lens,
// keeps the registered tools equal to the advertised set (the SDK sends
// notifications/tools/list_changed when that set changes), and pushes
// resource updates to subscribers.
func (c *sessionServer) sync() {
	snap := c.sess.Dispatcher.Snapshot()
	att := c.sess.Attention()
	// Screen, attention and presence changes wake sync too; the tools of
	// a tree are derived once per snapshot.
	d := &c.derived
	if d.version != snap.Version || d.tools == nil {
		sc := c.scannedAt(snap)
		d.tools = deriveIn(c.sess.Guard(), c.b.opts.Namespace, sc, c.warnOnce, &d.cache)
		d.lens = lensTools(d.tools)
		d.treeIDs, d.modal = c.widgetIDs(snap.Tree), modalIDs(sc)
		d.version = snap.Version
	}
	derived := d.tools
	in := lensInputs{tools: d.lens, tree: d.treeIDs, modal: d.modal, recent: c.sess.Recent()}
	same := c.memo.made(in)
	if same && c.memo.att == att {
		// Nothing the lens looks at changed (an agent typed into a
		// field, say): the advertised tools follow from what they
		// followed from last time.
		c.mu.Lock()
		c.synced = snap.Version
		c.mu.Unlock()
		c.res.update(snap)
		return
	}
	if !same || len(c.memo.picks) >= maxLensPicks {
		clear(c.memo.picks)
	}
	pick, ok := c.memo.picks[att]
	if !ok {
		pick.selected = lens.Select(in.tools, lens.Input{
			Mode:     c.b.opts.LensMode,
			MaxTools: c.b.opts.MaxTools,
			Tree:     in.tree,
			Focused:  att.Focus,
			Hover:    att.Hover,
			Recent:   in.recent,
			Modal:    in.modal,
		})
		pick.advertised = lens.Names(pick.selected)
	}
	selected, advertised := pick.selected, pick.advertised
	// What this selection was made from, once it is in place (a panic
	// before leaves neither, and the next sync selects again).
	done := func() {
		c.memo.remember(in, att, pick)
		c.res.update(snap)
	}

	c.mu.Lock()
	if slices.Equal(advertised, c.advertised) {
		// The same tools as now, in the same order (the focus moved
		// among widgets the lens keeps either way): nothing to register
		// or remove; tools/list orders by the new selection.
		c.selected, c.selectedFocus = selected, att.Focus
		c.synced = snap.Version
		c.mu.Unlock()
		done()
		return
	}
	want := c.want // sync only, so reused
	if want == nil {
		want = map[string]bool{}
		c.want = want
	}
	clear(want)
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
	c.selected, c.selectedFocus = selected, att.Focus
	c.mu.Unlock()
	if len(remove) > 0 {
		c.server.RemoveTools(remove...)
	}
	c.mu.Lock()
	c.synced = snap.Version
	c.mu.Unlock()
	done()
}

// derivation is the tools the watcher derived from snapshot version,
// and what the lens selects them by (sync only).
type derivation struct {
	version uint64
	tools   []Derived
	lens    []lens.Tool // lensTools(tools)
	cache   deriveCache // tools of unchanged widgets
	treeIDs []string    // widgetIDs of that snapshot's tree
	modal   []string    // modalIDs of it
}

// lensInputs is what a lens selection is made from besides the human's
// attention: the same for every sync of a snapshot (the human's focus
// moving, say); lens.Select reads it and never changes it.
type lensInputs struct {
	tools  []lens.Tool
	tree   []string
	modal  []string
	recent []string
}

// lensMemo is what the last lens selection was made from, and the
// selections made from those inputs, by attention (sync only). A sync with
// the same inputs and attention selects the same, whatever else the
// snapshot changed (a field's text); the human moving the focus back to a
// widget finds its selection in picks without selecting again.
type lensMemo struct {
	in   lensInputs
	att  session.Attention
	done bool // in and att hold a selection's inputs
	// picks is emptied when anything but the attention changes, and when
	// full (maxLensPicks).
	picks map[session.Attention]lensPick
}

// made reports whether the last selection was made from in (whatever the
// attention).
func (m *lensMemo) made(in lensInputs) bool {
	return m.done && slices.Equal(m.in.tools, in.tools) && slices.Equal(m.in.tree, in.tree) &&
		slices.Equal(m.in.modal, in.modal) && slices.Equal(m.in.recent, in.recent)
}

// remember records pick, selected from in for att, once it is in place.
func (m *lensMemo) remember(in lensInputs, att session.Attention, pick lensPick) {
	m.in, m.att, m.done = in, att, true
	if m.picks == nil {
		m.picks = map[session.Attention]lensPick{}
	}
	m.picks[att] = pick
}

// lensPick is one lens selection and the names it advertises.
type lensPick struct {
	selected   []lens.Tool
	advertised []string
}

// maxLensPicks bounds lensMemo.picks: a human's attention moves among a
// screen's widgets, and the hovered one changes it too.
const maxLensPicks = 64

// disconnectHTTP closes the clients that authenticated with a bearer token
// over HTTP, after the human rotated it; the old token no longer opens
// anything. Clients on a transport the process declared (stdio) did not
// use the token and stay.
func (c *sessionServer) disconnectHTTP() {
	for ss := range c.server.Sessions() {
		if _, declared := declaredContext(ss.ID()); !declared {
			c.closeClient(ss)
		}
	}
}

// warnOnce reports each distinct derivation warning once per session.
func (c *sessionServer) warnOnce(msg string, args ...any) {
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

// widgetIDs lists every widget id of tree in tree order, hidden overlays'
// content included.
func (c *sessionServer) widgetIDs(tree ui.Node) []string {
	var ids []string
	g := c.sess.Guard()
	var walk func(n ui.Node)
	walk = func(n ui.Node) {
		if n == nil {
			return
		}
		id := ""
		if w, ok := n.(ui.Widget); ok {
			id, _ = guard.Call(g, metrics.HookWidgetID, "", w.WidgetID)
			ids = append(ids, id)
		}
		kids, _ := guard.Call(g, metrics.HookChildren, id, n.Children)
		for _, k := range kids {
			walk(k)
		}
	}
	walk(tree)
	return ids
}

// scannedAt is snap's tree scanned, once per snapshot for the calls and
// the watcher together.
func (c *sessionServer) scannedAt(snap dispatcher.Snapshot) *scanned {
	if s := c.scans.Load(); s != nil && s.version == snap.Version {
		return s
	}
	s := newScanned(c.sess.Guard(), snap.Version, snap.Tree)
	c.scans.Store(s)
	return s
}

// resolveNow is resolve in the session's current tree.
func (c *sessionServer) resolveNow(name string) (ui.ToolProvider, ui.ToolSpec, error) {
	return resolveIn(c.sess.Guard(), c.b.opts.Namespace, c.scannedAt(c.sess.Dispatcher.Snapshot()), name)
}

// modalIDs lists the open modal and every widget in it, or nil when no
// modal is open.
func modalIDs(s *scanned) []string {
	es, rc := s.es, s.rc
	if !rc.open {
		return nil
	}
	ids := []string{}
	for _, e := range es[rc.lo:rc.hi] {
		if e.widget != nil {
			ids = append(ids, e.id)
		}
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

// close ends every client session and waits for the server's goroutines.
func (c *sessionServer) close() {
	c.cancel()
	for ss := range c.server.Sessions() {
		c.closeClient(ss)
	}
	c.wg.Wait()
}

// meter times and counts every tools/call, and rate-limits each client.
// It is the first middleware, so it also contains what app code the
// others run (labels, states) without a guard of their own: a panic there
// costs that request, never the process.
func (c *sessionServer) meter(next mcp.MethodHandler) mcp.MethodHandler {
	next = c.contain(next)
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				c.sess.Guard().Report(metrics.HookOther, "", v, debug.Stack())
				res, err = failed(method)
			}
		}()
		if cl := c.client(req); cl != nil {
			// Any request or notification is a sign of life; a client
			// with one in flight is at work.
			cl.show(c.sess) // back, if its stream went away
			if !handshake(method) {
				cl.acted.Store(true)
			}
			cl.touch(!readsContext(method, req))
			cl.inFlight.Add(1)
			defer func() { cl.inFlight.Add(-1); cl.touch(false) }()
		}
		if method == "initialize" {
			res, err := next(ctx, method, req)
			if err == nil {
				ss, _ := req.GetSession().(*mcp.ServerSession)
				c.attach(ctx, ss, req)
			}
			return res, err
		}
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		start := time.Now()
		// The arguments are decoded once, for the authorization and the
		// call both (argsOf).
		ctx = context.WithValue(ctx, argsKey{}, &argsCell{})
		if !c.allowCall(req) {
			res = errorResult(ErrKindRateLimited, fmt.Sprintf("too many tool calls: at most %g per second per client; slow down and retry", c.b.opts.ToolCallsPerSecond))
			c.b.opts.Metrics.MCPRejected("rate_limited")
		} else {
			res, err = next(ctx, method, req)
		}
		outcome := callOutcome(res, err)
		c.b.opts.Metrics.ToolCall(outcome, time.Since(start))
		if r, _ := req.(*mcp.CallToolRequest); r != nil && r.Params != nil {
			// The widget's label comes from its State: app code.
			_ = c.sess.Guard().Do(metrics.HookOther, "", func() { c.recordCall(r, outcome) })
		}
		return res, err
	}
}

// contain runs the rest of the middlewares and the handlers, turning a
// panic of app code into the request's failure.
func (c *sessionServer) contain(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				c.sess.Guard().Report(metrics.HookOther, "", v, debug.Stack())
				res, err = failed(method)
			}
		}()
		return next(ctx, method, req)
	}
}

// failed answers a request during which app code panicked.
func failed(method string) (mcp.Result, error) {
	if method == "tools/call" {
		return errorResult(ErrKindProviderFailed, "the app's code failed while handling this call"), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the app's code failed while handling " + method}
}

// middleware serves tools/call for every derived tool, advertised or not,
// resolving it against the tree current at call time.
func (c *sessionServer) middleware(next mcp.MethodHandler) mcp.MethodHandler {
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
func (c *sessionServer) recordCall(r *mcp.CallToolRequest, outcome string) {
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
// offer: behind the open modal, failed, disabled or hidden, or gone.
func (c *sessionServer) unavailable(name string) *mcp.CallToolResult {
	widgetID, action, ok := SplitName(c.b.opts.Namespace, name)
	if !ok {
		return errorResult(ErrKindUnknownTool, fmt.Sprintf("unknown tool %q", name))
	}
	sc := c.scannedAt(c.sess.Dispatcher.Snapshot())
	_, _, err := resolveIn(c.sess.Guard(), c.b.opts.Namespace, sc, name)
	if res := lookupError(err, widgetID, action); res != nil {
		return res
	}
	if first(sc.es, widgetID) >= 0 {
		return errorResult(ErrKindWidgetGone, fmt.Sprintf("widget %q does not offer %q now (it may be disabled or hidden)", widgetID, action))
	}
	return errorResult(ErrKindWidgetGone, fmt.Sprintf("no widget %q in the current view", widgetID))
}

// isReadAction reports whether the widget widgetID of the current tree
// declares action read-only (ui.ToolSpec.ReadOnly), whatever its name.
// Anything else, a tool the tree does not offer included, is a write.
func (c *sessionServer) isReadAction(widgetID, action string) bool {
	name := c.b.opts.Namespace + "." + widgetID + "." + action
	_, spec, err := c.resolveNow(name)
	return err == nil && spec.ReadOnly
}

// lookupError is the result for a shadowed tool or one whose widget's
// code panicked, else nil.
func lookupError(err error, widgetID, action string) *mcp.CallToolResult {
	var sh shadowedError
	var p *guard.Panic
	switch {
	case errors.As(err, &sh):
		return errorResult(ErrKindShadowed, sh.Error())
	case errors.As(err, &p):
		return providerFailed(p, widgetID, action)
	}
	return nil
}

// providerFailed is the result of a call during which the widget's own
// code panicked.
func providerFailed(p *guard.Panic, widgetID, action string) *mcp.CallToolResult {
	return errorResult(ErrKindProviderFailed, fmt.Sprintf("widget %q failed (its %s panicked) handling %q; nothing was applied", widgetID, p.Hook, action))
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
	// ErrKindShadowed: the tool's widget is behind the open modal, out of
	// the human's reach as well.
	ErrKindShadowed = "shadowed"
	// ErrKindProviderFailed: the app's code (the widget's Tools, CallTool
	// or State) panicked; nothing was folded.
	ErrKindProviderFailed = "provider_failed"
	// ErrKindNotSaved: the change is applied on this node, but the session's
	// store (a cluster's snapshot bucket) could not be made to hold it, so
	// the session may come back elsewhere without it (session.ErrNotSaved).
	ErrKindNotSaved = "not_saved"
)

// notSaved answers a change that is in force but that sess.Commit could
// not make durable.
func notSaved(err error) *mcp.CallToolResult {
	return errorResult(ErrKindNotSaved, "the change is applied on this node but could not be saved where the session "+
		"would be restored from ("+err.Error()+"); it may be lost if the session moves to another node: read the "+
		"state before you retry")
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

// toolError wraps an error a widget returned from CallTool.
type toolError struct{ err error }

func (e toolError) Error() string { return e.err.Error() }

func (c *sessionServer) callDerived(ctx context.Context, r *mcp.CallToolRequest) *mcp.CallToolResult {
	name := r.Params.Name
	ns := c.b.opts.Namespace
	g := c.sess.Guard()
	widgetID, action, _ := SplitName(ns, name)
	tp, spec, err := c.resolveNow(name)
	if err != nil {
		return c.unavailable(name)
	}
	args, err := argsOf(ctx, r)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error())
	}
	if err := c.b.schemas.validate(fmt.Sprintf("%T.%s", tp, action), spec.InputSchema, args); err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error())
	}
	args = providerArgs(spec.InputSchema, args)

	if spec.ReadOnly {
		var result, state any
		var err error
		perr := g.Do(metrics.HookCallTool, widgetID, func() { result, _, err = tp.CallTool(action, args) })
		if perr == nil && err == nil {
			state, perr = guard.Call(g, metrics.HookState, widgetID, tp.State)
		}
		var p *guard.Panic
		switch {
		case errors.As(perr, &p):
			return providerFailed(p, widgetID, action)
		case err != nil:
			return errorResult(ErrKindToolError, err.Error())
		}
		return jsonResult(map[string]any{"result": result, "state": state})
	}

	origin := dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: clientName(r.Session)}
	var result any
	cctx, cancel := context.WithTimeout(ctx, c.b.opts.CallTimeout)
	defer cancel()
	err = c.sess.Dispatcher.CallFunc(cctx, origin, func(ui.Node) ([]tea.Msg, error) {
		// The tree is the latest snapshot's (dispatcher.Resolver), whose
		// scan the call was resolved in above and the watcher derived
		// from: shared, not made again for every call.
		w, _, err := resolveIn(g, ns, c.scannedAt(c.sess.Dispatcher.Snapshot()), name)
		if err != nil {
			return nil, err
		}
		var res any
		var msgs []tea.Msg
		var terr error
		if err := g.Do(metrics.HookCallTool, widgetID, func() { res, msgs, terr = w.CallTool(action, args) }); err != nil {
			return nil, err // a *guard.Panic: nothing is folded
		}
		if terr != nil {
			return nil, toolError{terr}
		}
		result = res
		return msgs, nil
	})
	var te toolError
	if res := lookupError(err, widgetID, action); res != nil {
		return res
	}
	switch {
	case err == nil:
	case errors.As(err, &te):
		return errorResult(ErrKindToolError, te.Error())
	case errors.Is(err, errNoTool):
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
	if err := c.sess.Commit(ctx); err != nil {
		return notSaved(err)
	}
	out := map[string]any{"result": result}
	sc := c.scannedAt(c.sess.Dispatcher.Snapshot())
	var stateOf ui.ToolProvider
	if w, _, err := resolveIn(g, ns, sc, name); err == nil {
		stateOf = w
	} else if i := first(sc.es, widgetID); i >= 0 {
		stateOf, _ = sc.es[i].node.(ui.ToolProvider)
	}
	if stateOf != nil {
		// The change is applied: a State that panics costs the answer
		// its state only.
		if st, err := guard.Call(g, metrics.HookState, widgetID, stateOf.State); err == nil {
			out["state"] = st
		} else {
			out["state_error"] = ErrKindProviderFailed
		}
	}
	return jsonResult(out)
}

// argsKey is the context key of a tools/call's argsCell.
type argsKey struct{}

// argsCell holds a tools/call's arguments once decoded (meter puts one in
// the call's context; the gate and the call run one after the other on
// that request's goroutine).
type argsCell struct {
	done bool
	args map[string]any
	err  error
}

// argsOf is decodeArgs of r's arguments, decoded once per call.
func argsOf(ctx context.Context, r *mcp.CallToolRequest) (map[string]any, error) {
	cell, ok := ctx.Value(argsKey{}).(*argsCell)
	if !ok {
		return decodeArgs(r.Params.Arguments)
	}
	if !cell.done {
		cell.args, cell.err = decodeArgs(r.Params.Arguments)
		cell.done = true
	}
	return cell.args, cell.err
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
