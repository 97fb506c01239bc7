// Package mcpbridge is the MCP projection of sessions: every live session
// gets its own MCP server, reached at /sessions/<id>/mcp (Streamable HTTP)
// and /sessions/<id>/sse (HTTP+SSE), that drives the same model the
// human's terminal shows.
//
// What flows in: HTTP requests carrying the session's bearer token; the
// session's snapshots (component tree and model), the human's attention
// (focus, hover), recent actions and screen; tool calls and resource
// subscriptions from agents.
//
// What flows out: tools derived from the current tree ([Derive]: names
// <app>.<widget>.<action>, static descriptions, sanitised schemas), of
// which the focus lens advertises about fifteen; tool results answered
// after the dispatcher has folded the call's messages; resources (model
// projections, the tree, the screen, the context) with RFC 6902 JSON Patch
// updates to subscribers; the session's live view as an MCP App (a
// ui:// resource a chat host renders, kept live through raxol_show);
// presence of agents in the session.
//
// A session's MCP server is created on its first authenticated request
// and closed, with its clients, when the session ends.
//
// Every MCP server of the process, the sessions' and the server-level
// /mcp endpoint, is held to one authorization gate ([Gate]): every method
// classified or refused, the read policy on every path to resource
// content, tool answers and the context's parts included (readpolicy.go).
// [DenialResult] is the tool seam's refusal, for /mcp's tools.
//
// # Files
//
// The [Bridge] (bridge.go) routes HTTP requests to one sessionServer per
// session, the session's MCP server:
//
//   - session_server.go: the sessionServer type and its construction
//     (newSessionServer: the SDK server, its middlewares in order, its
//     transports) and close.
//   - wake.go: the session's changes (the dispatcher's snapshots, the
//     session's signals) start a goroutine that takes turns while they
//     come and ends: no goroutine while the session is quiet.
//   - watch.go: what each turn does, re-projecting the session: deriving
//     the tools of a snapshot (derivation), the focus lens and its memo
//     (lensMemo), the registered tool set.
//   - intern.go: tool definitions that are the same for every session
//     (widget specs, their cleaned schemas, the registered tools), made
//     once per process in a bounded table and shared read only.
//   - calls.go: a tools/call from the first middleware (meter) to the
//     answer: callDerived, the tool name parsed once (toolOf), the
//     arguments decoded once (argsOf), the activity log.
//   - errors.go: the ErrKind* error kinds, errorResult and the tool results
//     that refuse or fail (notSaved, providerFailed, DenialResult), the
//     protocol error of a refused read (readDenied), and the lookup errors
//     (errNoTool, shadowedError).
//   - session_tools.go: raxol_screenshot, raxol_send_key (keys and text,
//     into the primary terminal, or into a hosted program when no
//     terminal is attached), discover_tools; waitfor.go: raxol_wait_for,
//     which waits on the server until the screen shows a text or matches
//     a regular expression.
//   - mcpapp.go: the session's live view as an MCP App: the
//     io.modelcontextprotocol/ui extension, the resource [URIView] (the
//     page embedded from mcpapp/view.html) and [ToolShow], the view as
//     package web's HTML with a version, a long poll with "after".
//   - authorize.go, gate.go, readpolicy.go: the authorization gate, tool
//     approval by the human, and the read policy.
//   - clients.go, slots.go, order.go, resources.go, stdio.go: attached
//     clients and presence, MaxClients, tools/list order, resources and
//     their updates, stdio transports.
//   - scan.go, derive.go, resolve.go: a tree scanned once per snapshot, the
//     tools derived from it ([Derive]), a tool name resolved in it ([Lookup]).
//   - names.go and clean.go: tool names ([SplitName], a name parsed once
//     into a toolName, the id and action alphabets) and sanitising of what
//     app code hands to agents ([Clean], schemas); schema.go and
//     schema_fast.go validate arguments.
package mcpbridge
