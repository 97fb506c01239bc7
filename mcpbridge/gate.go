package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/metrics"
)

// MethodClass is what the authorization gate does with a method.
type MethodClass int

// The method classes. Every method an MCP server answers is one of them;
// a method that is none (unknown, or added to the SDK later) is refused.
const (
	// MethodRefused: not classified, refused with method not found.
	MethodRefused MethodClass = iota
	// MethodOpen: never gated (the handshake, liveness, notifications
	// about the client's own requests, and the log level of its own
	// notifications). None of them carries server state.
	MethodOpen
	// MethodTool: tools/call, decided by the tool seam.
	MethodTool
	// MethodRead: decided by the read seam ([authz.ReadMethods]).
	MethodRead
)

// openMethods are the methods no policy decides.
var openMethods = map[string]bool{
	"initialize":                       true,
	"ping":                             true,
	"notifications/initialized":        true,
	"notifications/cancelled":          true,
	"notifications/progress":           true,
	"notifications/roots/list_changed": true,
	"logging/setLevel":                 true,
}

// readMethodSet are the methods the read seam decides.
var readMethodSet = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range authz.ReadMethods() {
		m[r] = true
	}
	return m
}()

// ClassifyMethod returns the class of an MCP method.
func ClassifyMethod(method string) MethodClass {
	switch {
	case method == "tools/call":
		return MethodTool
	case readMethodSet[method]:
		return MethodRead
	case openMethods[method]:
		return MethodOpen
	}
	return MethodRefused
}

// Gate is the authorization middleware of an MCP server, shared by every
// session's server and the server-level /mcp endpoint: one method table,
// one place where requests are classified and decided.
//
//   - tools/call goes to Call (the tool seam);
//   - a read method is decided by the read policy (JSON-RPC -32090 when
//     refused), and a tools/list result is filtered by Listable;
//   - initialize, ping and the client's notifications pass;
//   - anything else is refused (-32601), so a method the SDK starts
//     answering in a later version fails closed until it is classified.
//
// Resource content has more paths than resources/read: resources/subscribe
// and subscriptions/listen both end in the server's SubscribeHandler, and
// notifications/resources/updated carry patches of the content afterwards.
// [Gate.MayRead] is the per-URI decision for all of them; call it from the
// SubscribeHandler, and install [Gate.Sending] as a sending middleware.
//
// Every refusal is counted in raxol_authz_decisions_total.
type Gate struct {
	Policy  authz.Policy
	Metrics *metrics.Metrics
	// Context is the authorization context of the client session a
	// request (received or sent) belongs to; nil gives every request the
	// zero Context (transport "unknown").
	Context func(mcp.Request) authz.Context
	// Call applies the tool seam to a call; a nil result lets it run. Nil
	// decides by Policy.DecideTool alone, refusing what is not allowed.
	Call func(ctx context.Context, r *mcp.CallToolRequest, actx authz.Context) *mcp.CallToolResult
	// Listable reports whether tools/list shows a tool to the caller of
	// req; nil lists what Policy.DecideTool allows.
	Listable func(req mcp.Request, name string, actx authz.Context) bool
}

func (g *Gate) context(req mcp.Request) authz.Context {
	if g.Context == nil {
		return authz.Context{Transport: authz.TransportUnknown}
	}
	return g.Context(req)
}

func (g *Gate) call(ctx context.Context, r *mcp.CallToolRequest, actx authz.Context) *mcp.CallToolResult {
	if g.Call != nil {
		return g.Call(ctx, r, actx)
	}
	d, panicked := g.Policy.DecideTool(r.Params.Name, nil, actx)
	if panicked || d.Kind != authz.KindAllow {
		g.Metrics.Authz("tool", "deny")
		return DenialResult(r.Params.Name, d)
	}
	g.Metrics.Authz("tool", "allow")
	return nil
}

func (g *Gate) listable(req mcp.Request, name string, actx authz.Context) bool {
	if g.Listable != nil {
		return g.Listable(req, name, actx)
	}
	d, panicked := g.Policy.DecideTool(name, nil, actx)
	return !panicked && d.Kind == authz.KindAllow
}

// Receiving is the gate as a receiving middleware.
func (g *Gate) Receiving(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch ClassifyMethod(method) {
		case MethodOpen:
			return next(ctx, method, req)
		case MethodTool:
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				if denied := g.call(ctx, r, g.context(req)); denied != nil {
					return denied, nil
				}
			}
			return next(ctx, method, req)
		case MethodRead:
			actx := g.context(req)
			if err := g.decideRead(method, requestParams(req), actx); err != nil {
				return nil, err
			}
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			return filterTools(res, func(name string) bool { return g.listable(req, name, actx) }), nil
		}
		g.Metrics.Authz("method", "deny")
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q is not served", method)}
	}
}

// decideRead applies the read seam to one method with its params: nil
// when allowed, else the -32090 error to answer with.
func (g *Gate) decideRead(method string, params map[string]any, actx authz.Context) error {
	return g.decide(method, params, actx, true)
}

// decide is decideRead; countAllow false counts only refusals (the
// re-check of every resource update would drown the allows a client's
// requests got).
func (g *Gate) decide(method string, params map[string]any, actx authz.Context, countAllow bool) error {
	d, panicked := g.Policy.DecideRead(method, params, actx)
	switch {
	case panicked:
		g.Metrics.Authz("read", "error")
		return readDenied(method, d)
	case d.Kind != authz.KindAllow:
		g.Metrics.Authz("read", d.Kind.String())
		return readDenied(method, d)
	}
	if countAllow {
		g.Metrics.Authz("read", "allow")
	}
	return nil
}

// MayRead is the per-URI read decision: whether the caller may receive
// the content of uri by any path. It is decided as a resources/read of
// uri, and answers nil or the -32090 error.
func (g *Gate) MayRead(uri string, actx authz.Context) error {
	return g.decideRead("resources/read", map[string]any{"uri": uri}, actx)
}

// Sending is the gate as a sending middleware: a resource update (which
// carries a patch of the content) reaches a client only while it may
// read that resource. A withheld update is dropped for that client alone.
func (g *Gate) Sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "notifications/resources/updated" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		if !ok || p == nil || g.decide("resources/read", map[string]any{"uri": p.URI}, g.context(req), false) != nil {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// requestParams is req's params as plain data, for a read policy.
func requestParams(req mcp.Request) map[string]any {
	b, err := json.Marshal(req.GetParams())
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// filterTools returns res with only the tools keep accepts, marked
// cacheScope "private", when it is a tools/list result, and res itself
// otherwise. The server's own result and tools are never changed.
func filterTools(res mcp.Result, keep func(name string) bool) mcp.Result {
	lr, ok := res.(*mcp.ListToolsResult)
	if !ok {
		return res
	}
	filtered := *lr
	filtered.Tools = slices.DeleteFunc(slices.Clone(lr.Tools), func(t *mcp.Tool) bool { return !keep(t.Name) })
	// The list is this caller's (its policy decided it): no intermediary
	// may serve it to another.
	filtered.CacheScope = "private"
	return &filtered
}
