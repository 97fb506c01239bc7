package mcpbridge

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
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

// isSessionTool reports whether name is one of the session tools.
func isSessionTool(name string) bool {
	return name == ToolScreenshot || name == ToolSendKey || name == ToolDiscover
}

// addSessionTools registers the tools every session has.
func (c *sessionServer) addSessionTools() {
	c.server.AddTool(&mcp.Tool{
		Name:        ToolScreenshot,
		Description: "Return the screen text exactly as the human's terminal shows it now.",
		InputSchema: ui.ObjectSchema(nil),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, c.screenshot)
	c.server.AddTool(&mcp.Tool{
		Name: ToolSendKey,
		Description: "Press keys in the human's terminal as if typed, in order. Each key is a single character " +
			"or a name: enter, tab, shift+tab, esc, space, backspace, delete, up, down, left, right, home, end, pgup, pgdown, ctrl+a, ctrl+e, ctrl+o.",
		InputSchema: ui.ObjectSchema(map[string]any{
			"keys": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1, "maxItems": 64,
				"description": "The keys to press, in order."},
		}, "keys"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)},
		Meta:        mcp.Meta{"sensitive": true},
	}, c.sendKey)
	c.server.AddTool(&mcp.Tool{
		Name:        ToolDiscover,
		Description: "List the tools of the current view that are not in the tool list (which follows the human's focus), matched case-insensitively on name and description. They can be called like any other tool.",
		InputSchema: ui.ObjectSchema(map[string]any{
			"query": ui.Prop("string", "Text to match; empty lists every tool not advertised."),
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, c.discover)
}

// screenWait bounds how long a screenshot waits for the terminal to draw
// the latest model (it draws on its own goroutine, at most 60 times a
// second).
const screenWait = 250 * time.Millisecond

// screen returns the screen as plain text: the primary terminal's frame,
// once it shows the model as it is now (or after screenWait), or the tree
// rendered at 80x24 when no terminal has drawn.
func (c *sessionServer) screen() string {
	want := c.sess.Dispatcher.Snapshot().Version
	deadline := time.Now().Add(screenWait)
	for {
		s, version, ok := c.sess.Screen()
		if !ok {
			break
		}
		if version >= want || time.Now().After(deadline) {
			return ansi.Strip(s)
		}
		time.Sleep(2 * time.Millisecond)
	}
	var f ui.Frame
	g := c.sess.Guard()
	if err := g.Do(metrics.HookRender, "", func() {
		f = ui.Render(c.sess.Dispatcher.Snapshot().Tree, ui.RenderOptions{Width: 80, Height: 24,
			OnPanic: func(id string, v any, stack []byte) { g.Report(metrics.HookRender, id, v, stack) }})
	}); err != nil {
		return "⚠ the app failed to draw"
	}
	return ansi.Strip(f.Content)
}

// screenshot returns the screen resource's content: the tool policy lets
// an agent call it, and the read policy must let it read the screen.
func (c *sessionServer) screenshot(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := c.gate.MayRead(URIScreen, c.clientContext(req)); err != nil {
		return DenialResult(ToolScreenshot, authz.Deny("the read policy does not allow reading "+URIScreen)), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: c.screen()}}}, nil
}

func (c *sessionServer) sendKey(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := decodeArgs(req.Params.Arguments)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error()), nil
	}
	list, _ := args["keys"].([]any)
	if len(list) == 0 || len(list) > 64 {
		return errorResult(ErrKindInvalidArgs, "keys must be an array of 1 to 64 key names"), nil
	}
	keys := make([]string, len(list))
	for i, k := range list {
		s, ok := k.(string)
		if !ok {
			return errorResult(ErrKindInvalidArgs, "keys must hold strings"), nil
		}
		keys[i] = s
	}
	if err := c.sess.SendKeys(clientName(req.Session), keys); err != nil {
		if errors.Is(err, session.ErrNoTerminal) {
			return errorResult(ErrKindNoTerminal, "no terminal is attached to this session"), nil
		}
		return errorResult(ErrKindInvalidArgs, err.Error()), nil
	}
	screen := c.screen() // waits a moment for the keys' effect
	// What the keys changed by now is made durable; a key the terminal
	// folds later is the human's kind of change (saved within the
	// saver's interval).
	if err := c.sess.Commit(ctx); err != nil {
		return notSaved(err), nil
	}
	return jsonResult(map[string]any{"pressed": len(keys), "screen": screen}), nil
}

func (c *sessionServer) discover(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := decodeArgs(req.Params.Arguments)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error()), nil
	}
	q, _ := args["query"].(string)
	q = strings.ToLower(q)
	// Everything not in tools/list right now: the registered set.
	c.mu.Lock()
	advertised := maps.Clone(c.registered)
	c.mu.Unlock()
	// The tools of the tree as it is now, not as of the last sync.
	derived := derive(c.sess.Guard(), c.b.opts.Namespace, c.sess.Dispatcher.Snapshot().Tree, nil)
	type entry struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		ReadOnly    bool   `json:"readOnly"`
	}
	out := []entry{}
	actx := c.clientContext(req)
	for _, d := range derived {
		if advertised[d.Name] || !c.listable(req, d.Name, actx) {
			continue
		}
		if q == "" || strings.Contains(strings.ToLower(d.Name), q) || strings.Contains(strings.ToLower(d.Description), q) {
			out = append(out, entry{d.Name, d.Description, d.ReadOnly})
		}
	}
	return jsonResult(map[string]any{"tools": out}), nil
}
