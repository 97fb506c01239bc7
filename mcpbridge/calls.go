package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

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
			began := time.Now().UnixNano()
			cl.inFlight.Add(1)
			defer func() { c.ended(cl, began) }()
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
		// call both (argsOf), and the tool's name parsed once for every
		// step (toolOf).
		cell := &argsCell{}
		r, _ := req.(*mcp.CallToolRequest)
		var tool toolName
		if r != nil && r.Params != nil {
			tool = c.parseTool(r.Params.Name)
			cell.tool, cell.parsed = tool, true
		}
		ctx = context.WithValue(ctx, argsKey{}, cell)
		if !c.allowCall(req) {
			res = errorResult(ErrKindRateLimited, fmt.Sprintf("too many tool calls: at most %g per second per client; slow down and retry", c.b.opts.ToolCallsPerSecond))
			c.b.opts.Metrics.MCPRejected("rate_limited")
		} else {
			res, err = next(ctx, method, req)
		}
		outcome := callOutcome(res, err)
		c.b.opts.Metrics.ToolCall(outcome, time.Since(start))
		if r != nil && r.Params != nil {
			// The widget's label comes from its State: app code.
			_ = c.sess.Guard().Do(metrics.HookOther, "", func() { c.recordCall(ctx, r, tool, outcome) })
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

// outcomeWait bounds how long a call whose result the fold completes
// (ui.Outcome) waits for the commands that fold started: the lines a
// hosted program prints in answer to it.
const outcomeWait = 500 * time.Millisecond

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

func (c *sessionServer) callDerived(ctx context.Context, r *mcp.CallToolRequest) *mcp.CallToolResult {
	t := c.toolOf(ctx, r)
	g := c.sess.Guard()
	widgetID, action := t.widgetID, t.action
	tp, spec, err := c.resolveNow(t)
	if err != nil {
		return c.unavailable(t)
	}
	args, err := argsOf(ctx, r)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error())
	}
	if err := c.b.schemas.validateFor(tp, action, spec.InputSchema, args); err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error())
	}
	args = providerArgs(spec.InputSchema, args)
	if cell, ok := ctx.Value(argsKey{}).(*argsCell); ok {
		cell.resolved, cell.readOnly = true, spec.ReadOnly
	}

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
		w, _, err := resolveIn(g, c.scannedAt(c.sess.Dispatcher.Snapshot()), t)
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
	if o, ok := result.(*ui.Outcome); ok {
		// The fold said what came of the call (package teaapp): the
		// lines the app printed because of it come with it.
		v, err := o.Result(outcomeWait)
		if err != nil {
			return errorResult(ErrKindNotApplied, err.Error())
		}
		result = v
		// The folds the call's commands led to (a printed line) are
		// published before it answers: an envelope after them is folded
		// only once they are, so a screenshot after the answer shows them.
		_ = c.sess.Dispatcher.CallFunc(cctx, origin, func(ui.Node) ([]tea.Msg, error) { return nil, nil })
	}
	c.sess.NoteAction(widgetID)
	if err := c.sess.Commit(ctx); err != nil {
		return notSaved(err)
	}
	out := map[string]any{"result": result}
	sc := c.scannedAt(c.sess.Dispatcher.Snapshot())
	// The widget's state, whether or not it still offers the tool: the
	// first widget of its id, as the tool resolves (its tools are not
	// asked for here; the watcher asks once per snapshot).
	var stateOf ui.ToolProvider
	if i := first(sc.es, widgetID); i >= 0 {
		stateOf, _ = sc.es[i].node.(ui.ToolProvider)
	}
	if stateOf != nil {
		// The change is applied: a State that panics costs the answer
		// its state only.
		if st, err := guard.Call(g, metrics.HookState, widgetID, stateOf.State); err == nil {
			out["state"] = st
			if cell, ok := ctx.Value(argsKey{}).(*argsCell); ok {
				cell.state, cell.stateOf = st, widgetID
			}
		} else {
			out["state_error"] = ErrKindProviderFailed
		}
	}
	return jsonResult(out)
}

// unavailable is the error result for a tool the current view does not
// offer: behind the open modal, failed, disabled or hidden, or gone.
func (c *sessionServer) unavailable(t toolName) *mcp.CallToolResult {
	widgetID, action := t.widgetID, t.action
	if !t.derived {
		return errorResult(ErrKindUnknownTool, fmt.Sprintf("unknown tool %q", t.name))
	}
	sc := c.scannedAt(c.sess.Dispatcher.Snapshot())
	_, _, err := resolveIn(c.sess.Guard(), sc, t)
	if res := lookupError(err, widgetID, action); res != nil {
		return res
	}
	if first(sc.es, widgetID) >= 0 {
		return errorResult(ErrKindWidgetGone, fmt.Sprintf("widget %q does not offer %q now (it may be disabled or hidden)", widgetID, action))
	}
	return errorResult(ErrKindWidgetGone, fmt.Sprintf("no widget %q in the current view", widgetID))
}

// isReadAction reports whether t's widget in the current tree declares
// t's action read-only (ui.ToolSpec.ReadOnly), whatever its name.
// Anything else, a tool the tree does not offer included, is a write.
func (c *sessionServer) isReadAction(t toolName) bool {
	_, spec, err := c.resolveNow(t)
	return err == nil && spec.ReadOnly
}

// wasRead reports whether the call of t in ctx was a read: as its tool
// resolved for the call, or, when it did not get that far,
// isReadAction.
func (c *sessionServer) wasRead(ctx context.Context, t toolName) bool {
	if cell, ok := ctx.Value(argsKey{}).(*argsCell); ok && cell.resolved {
		return cell.readOnly
	}
	return c.isReadAction(t)
}

// labelAfter is widgetLabel(t) after the call in ctx, read from the
// state the call answered with when it has one (ui.Label reads the
// widget's State too).
func (c *sessionServer) labelAfter(ctx context.Context, t toolName) string {
	cell, ok := ctx.Value(argsKey{}).(*argsCell)
	if !ok || cell.state == nil || cell.stateOf != t.widgetID || !t.derived {
		return c.widgetLabel(t)
	}
	l := t.widgetID
	if st, ok := cell.state.(map[string]any); ok {
		for _, k := range []string{"label", "title"} {
			if s, ok := st[k].(string); ok && s != "" {
				l = s
				break
			}
		}
	}
	return cleanLabel(l, t.widgetID)
}

// jsonResult returns v as JSON text and structured content.
func jsonResult(v any) *mcp.CallToolResult {
	b, err := marshalJSON(v)
	if err != nil {
		return errorResult(ErrKindInternalError, "result could not be encoded: "+err.Error())
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
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
	// resolved is set once callDerived has resolved the call's tool, and
	// readOnly then is its spec's: the activity log tells reads by it,
	// without resolving the tool again in the tree the call left.
	resolved, readOnly bool
	// tool is the call's tool name as meter parsed it (when parsed).
	tool   toolName
	parsed bool
	// state is the state of widget stateOf that the call answered with:
	// the activity log's label is read from it, not from a second State.
	state   any
	stateOf string
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
	if args, ok := decodeFlatObject(raw); ok {
		return args, nil
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		return nil, errors.New("arguments must be a JSON object")
	}
	return args, nil
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
func (c *sessionServer) recordCall(ctx context.Context, r *mcp.CallToolRequest, t toolName, outcome string) {
	name, id, action, derived := t.name, t.widgetID, t.action, t.derived
	switch {
	case derived && c.wasRead(ctx, t):
		return
	case !derived && (name != ToolSendKey || outcome == "ok"):
		return
	}
	a := session.Action{Origin: "agent:" + clientName(r.Session), Agent: true, Action: action, Outcome: outcome}
	if derived {
		a.Widget, a.Label = id, c.labelAfter(ctx, t)
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

// toolOf is r's tool name parsed: the one meter parsed for the call, or,
// outside meter, parsed now.
func (c *sessionServer) toolOf(ctx context.Context, r *mcp.CallToolRequest) toolName {
	if cell, ok := ctx.Value(argsKey{}).(*argsCell); ok && cell.parsed && cell.tool.name == r.Params.Name {
		return cell.tool
	}
	return c.parseTool(r.Params.Name)
}
