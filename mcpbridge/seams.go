package mcpbridge

import (
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
)

// What an MCP server does at the authorization seams, shared by the
// session servers here and the server-level /mcp endpoint.

// DenialResult is the error result of a call of tool refused by d, with
// the payload of [authz.DenialFor] as text and as structured content.
func DenialResult(tool string, d authz.Decision) *mcp.CallToolResult {
	b, _ := json.Marshal(authz.DenialFor(tool, d))
	var v map[string]any
	_ = json.Unmarshal(b, &v)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}
}

// readDenied is the JSON-RPC error (-32090 authorization_required) for a
// read of method refused by d.
func readDenied(method string, d authz.Decision) error {
	data, _ := json.Marshal(authz.ReadDenialFor(method, d))
	return &jsonrpc.Error{Code: authz.ReadDeniedCode, Message: authz.ReadDeniedMessage(method), Data: data}
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
