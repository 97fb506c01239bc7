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
// updates to subscribers; presence of agents in the session.
//
// A session's MCP server is created on its first authenticated request
// and closed, with its clients, when the session ends.
//
// Every MCP server of the process, the sessions' and the server-level
// /mcp endpoint, is held to one authorization gate ([Gate]): every method
// classified or refused, the read policy on every path to resource
// content, tool answers and the context's parts included (readpolicy.go).
// [DenialResult] is the tool seam's refusal, for /mcp's tools.
package mcpbridge
