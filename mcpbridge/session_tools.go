package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/keyname"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Session tools: always advertised, first, in this order.
const (
	ToolScreenshot = "raxol_screenshot"
	ToolWaitFor    = "raxol_wait_for"
	ToolSendKey    = "raxol_send_key"
	ToolDiscover   = "discover_tools"
)

// isSessionTool reports whether name is one of the session tools.
func isSessionTool(name string) bool {
	return name == ToolScreenshot || name == ToolWaitFor || name == ToolSendKey || name == ToolDiscover || name == ToolShow
}

// Bounds of raxol_send_key's arguments.
const (
	maxSendKeys = 64   // key names in keys
	maxSendText = 4096 // runes in text
)

// addSessionTools registers the tools every session has: their
// definitions are the process's (sessionToolDefs), only the handlers are
// the session's.
func (c *sessionServer) addSessionTools() {
	defs := sessionToolDefs()
	c.server.AddTool(defs.screenshot, c.screenshot)
	c.server.AddTool(defs.waitFor, c.waitFor)
	c.server.AddTool(defs.sendKey, c.sendKey)
	c.server.AddTool(defs.discover, c.discover)
}

// sessionTools are the session tools' definitions.
type sessionTools struct {
	screenshot, waitFor, sendKey, discover *mcp.Tool
}

// sessionToolDefs are the session tools' definitions, the same for every
// session: built once per process and shared by every session's server.
// They are read only: the SDK keeps the pointer it is given and lists it
// as it is (Server.AddTool validates the schema on a marshalled copy and
// stores the *Tool; tools/list hands out the same pointers), and order
// marks a copy, never the registered tool.
var sessionToolDefs = sync.OnceValue(func() sessionTools {
	readOnly := func() *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)}
	}
	return sessionTools{
		screenshot: &mcp.Tool{
			Name:        ToolScreenshot,
			Description: "Return the screen text exactly as the human's terminal shows it now.",
			InputSchema: ui.ObjectSchema(nil),
			Annotations: readOnly(),
		},
		waitFor: &mcp.Tool{
			Name: ToolWaitFor,
			Description: "Wait until the screen (the text raxol_screenshot returns) contains text, or matches regex (Go RE2 " +
				"syntax); give exactly one of them. The server re-checks on every change of the screen, so one call replaces " +
				"polling raxol_screenshot. Answers {\"matched\": true, \"screen\": ..., \"waited_ms\": n} as soon as it matches. " +
				"A timeout is not an error: when timeout_ms passes first the answer is {\"matched\": false, \"screen\": <the screen then>, " +
				"\"waited_ms\": n}. At most " + fmt.Sprint(maxWaitsPerClient) + " waits per client at a time.",
			InputSchema: ui.ObjectSchema(map[string]any{
				"text":  map[string]any{"type": "string", "minLength": 1, "maxLength": maxWaitPattern, "description": "Text the screen must contain (case-sensitive)."},
				"regex": map[string]any{"type": "string", "minLength": 1, "maxLength": maxWaitPattern, "description": "A Go RE2 regular expression the screen must match; (?m) makes ^ and $ match at each line."},
				"timeout_ms": map[string]any{"type": "integer", "minimum": 0, "maximum": waitMax.Milliseconds(), "default": waitDefault.Milliseconds(),
					"description": "How long to wait, in milliseconds (0 checks once)."},
			}),
			Annotations: readOnly(),
		},
		sendKey: &mcp.Tool{
			Name: ToolSendKey,
			Description: "Press keys in the human's terminal as if typed (or, in a session with no terminal that serves a whole " +
				"program, straight to the program). text is typed first, character by character, then keys are pressed in order: " +
				"{\"text\": \"hello\", \"keys\": [\"enter\"]} types hello and presses Enter. Give keys, text or both. Each key is a single character " +
				"or a name: " + strings.Join(keyname.Names(), ", ") + ".",
			InputSchema: ui.ObjectSchema(map[string]any{
				"keys": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1, "maxItems": maxSendKeys,
					"description": "The keys to press, in order, after text."},
				"text": map[string]any{"type": "string", "minLength": 1, "maxLength": maxSendText,
					"description": "Printable text to type, as if each character were a key press; no control characters (press enter or tab with keys)."},
			}),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)},
			Meta:        mcp.Meta{"sensitive": true},
		},
		discover: &mcp.Tool{
			Name:        ToolDiscover,
			Description: "List the tools of the current view that are not in the tool list (which follows the human's focus), matched case-insensitively on name and description. They can be called like any other tool.",
			InputSchema: ui.ObjectSchema(map[string]any{
				"query": ui.Prop("string", "Text to match; empty lists every tool not advertised."),
			}),
			Annotations: readOnly(),
		},
	}
})

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
	return c.rendered()
}

// screenNow is the screen as plain text as it is now, without waiting
// for the terminal to draw the latest model: the primary terminal's frame,
// or the tree rendered at 80x24 when no terminal has drawn. The terminal
// signals the session's watchers (session.Watch) when its frame changes.
func (c *sessionServer) screenNow() string {
	if s, _, ok := c.sess.Screen(); ok {
		return ansi.Strip(s)
	}
	return c.rendered()
}

// rendered is the current tree drawn at 80x24, as plain text: the screen
// of a session no terminal has drawn.
func (c *sessionServer) rendered() string {
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

// sendKey presses an agent's keys: in the primary terminal, as if typed
// there, or, when no terminal is attached and the tree is a hosted
// program's (ui.Hosted), straight to the program through the dispatcher.
func (c *sessionServer) sendKey(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := argsOf(ctx, req)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error()), nil
	}
	keys, presses, err := sendKeyArgs(args)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error()), nil
	}
	err = c.sess.SendKeys(clientName(req.Session), keys)
	if errors.Is(err, session.ErrNoTerminal) && ui.IsHosted(c.sess.Dispatcher.Snapshot().Tree) {
		// No terminal took them: a hosted program gets them as a
		// terminal would pass them on.
		if res := c.pressHosted(ctx, req, presses); res != nil {
			return res, nil
		}
		err = nil
	}
	if err != nil {
		switch {
		case errors.Is(err, session.ErrNoTerminal):
			return errorResult(ErrKindNoTerminal, "no terminal is attached to this session"), nil
		case errors.Is(err, dispatcher.ErrUpdateFailed):
			// The terminal pressed them and the app's Update failed on
			// one: the keys before it were applied, it and those after not.
			return errorResult(ErrKindUpdateFailed, "the app failed to apply a key; the keys before it were applied, that key and those after it were not"), nil
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

// sendKeyArgs are raxol_send_key's key presses: text's characters, then
// keys, as key names (for a terminal) and as key presses (for a hosted
// program).
func sendKeyArgs(args map[string]any) (names []string, presses []tea.KeyPressMsg, err error) {
	for k := range args {
		if k != "keys" && k != "text" {
			return nil, nil, fmt.Errorf("unknown argument %q: give keys, text or both", k)
		}
	}
	text, isString := args["text"].(string)
	if _, ok := args["text"]; ok && !isString {
		return nil, nil, errors.New("text must be a string")
	}
	var list []any
	if v, ok := args["keys"]; ok {
		if list, ok = v.([]any); !ok || len(list) == 0 || len(list) > maxSendKeys {
			return nil, nil, fmt.Errorf("keys must be an array of 1 to %d key names", maxSendKeys)
		}
	}
	if text == "" && len(list) == 0 {
		return nil, nil, errors.New("give keys (an array of key names), text (a string to type), or both")
	}
	if !utf8.ValidString(text) {
		return nil, nil, errors.New("text must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(text); n > maxSendText {
		return nil, nil, fmt.Errorf("text holds %d characters; at most %d are typed in one call", n, maxSendText)
	}
	names = make([]string, 0, utf8.RuneCountInString(text)+len(list))
	presses = make([]tea.KeyPressMsg, 0, cap(names))
	i := 0
	for _, r := range text {
		if unicode.IsControl(r) {
			return nil, nil, fmt.Errorf("text holds a control character (U+%04X) at character %d: text is typed as printable "+
				"characters only; press enter, tab or esc with keys", r, i)
		}
		name := string(r)
		k, err := keyname.Parse(name)
		if err != nil {
			return nil, nil, fmt.Errorf("text holds %q (U+%04X) at character %d, which cannot be typed", name, r, i)
		}
		names, presses = append(names, name), append(presses, k)
		i++
	}
	for _, v := range list {
		name, ok := v.(string)
		if !ok {
			return nil, nil, errors.New("keys must hold strings")
		}
		k, err := keyname.Parse(name)
		if err != nil {
			return nil, nil, err
		}
		names, presses = append(names, name), append(presses, k)
	}
	return names, presses, nil
}

// pressHosted delivers key presses to a hosted program's model in one
// fold, with the agent as their origin, and records them in the activity
// log (a terminal records the keys it types); nil when they were folded,
// else the tool error to answer.
func (c *sessionServer) pressHosted(ctx context.Context, req *mcp.CallToolRequest, presses []tea.KeyPressMsg) *mcp.CallToolResult {
	msgs := make([]tea.Msg, len(presses))
	for i, k := range presses {
		if k.String() == "ctrl+c" {
			// As in a terminal: an agent's ctrl+c would end the program
			// for everyone.
			return errorResult(ErrKindInvalidArgs, `key "ctrl+c" is reserved to the human`)
		}
		msgs[i] = k
	}
	agent := clientName(req.Session)
	origin := dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: agent}
	cctx, cancel := context.WithTimeout(ctx, c.b.opts.CallTimeout)
	defer cancel()
	err := c.sess.Dispatcher.CallFunc(cctx, origin, func(tree ui.Node) ([]tea.Msg, error) {
		if !ui.IsHosted(tree) {
			return nil, session.ErrNoTerminal // the program left since
		}
		return msgs, nil
	})
	switch {
	case err == nil:
	case errors.Is(err, session.ErrNoTerminal):
		return errorResult(ErrKindNoTerminal, "no terminal is attached to this session")
	case errors.Is(err, dispatcher.ErrUpdateFailed):
		return errorResult(ErrKindUpdateFailed, "the app failed to apply the keys; its state is unchanged")
	case errors.Is(err, dispatcher.ErrTimeout):
		return errorResult(ErrKindTimeout, "timed out waiting for the app; the keys may still be applied: check the screen before retrying")
	case errors.Is(err, dispatcher.ErrClosed):
		return errorResult(ErrKindSessionEnded, "the session has ended")
	default:
		return errorResult(ErrKindInternalError, err.Error())
	}
	c.sess.Record(session.Action{Origin: origin.String(), Agent: true, Action: "keys", Summary: "pressed keys", Outcome: "ok"})
	return nil
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
