package mcpbridge

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
)

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
	// ErrKindNotApplied: the app's Update received the change but did not
	// make it (a hosted program whose Update never passed the keys to the
	// component, say); what the app did with it stands.
	ErrKindNotApplied = "not_applied"
)

// errorResult is a tool error: {"error": kind, "message": msg} as JSON
// text and structured content.
func errorResult(kind, msg string) *mcp.CallToolResult {
	v := map[string]any{"error": kind, "message": msg}
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}
}

// notSaved answers a change that is in force but that sess.Commit could
// not make durable.
func notSaved(err error) *mcp.CallToolResult {
	return errorResult(ErrKindNotSaved, "the change is applied on this node but could not be saved where the session "+
		"would be restored from ("+err.Error()+"); it may be lost if the session moves to another node: read the "+
		"state before you retry")
}

// toolError wraps an error a widget returned from CallTool.
type toolError struct{ err error }

func (e toolError) Error() string { return e.err.Error() }

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

// errNoTool: the tree offers no such tool now.
var errNoTool = errors.New("no such tool in the current view")

// shadowedError: the tool's widget is behind the open modal.
type shadowedError struct{ widget, modal string }

func (e shadowedError) Error() string {
	return fmt.Sprintf("widget %q is behind the open modal %q; dismiss or confirm the modal first", e.widget, e.modal)
}

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
