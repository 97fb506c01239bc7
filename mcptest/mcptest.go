package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// DefaultCallTimeout bounds every MCP call (and the connect) unless
// [WithCallTimeout] says otherwise.
const DefaultCallTimeout = 10 * time.Second

// KindProtocolError is the "error" of the result [Session.Call] returns
// when the call failed below the tool level (transport, JSON-RPC, a
// timeout): the tool never answered.
const KindProtocolError = "protocol_error"

// owner is the owner of the headless sessions Start creates.
var owner = session.Owner{User: "mcptest"}

type config struct {
	sse           bool
	serverOpts    []func(*server.Options)
	clientName    string
	clientVersion string
	timeout       time.Duration
}

// Option configures [Start].
type Option func(*config)

// WithSSE connects over the HTTP+SSE transport (/sessions/<id>/sse)
// instead of Streamable HTTP (/sessions/<id>/mcp).
func WithSSE() Option { return func(c *config) { c.sse = true } }

// WithServerOptions lets f change the server options after mcptest has
// filled in its own (loopback addresses on port 0, a temporary DataDir, a
// logger writing to t.Log). Several are applied in order.
func WithServerOptions(f func(*server.Options)) Option {
	return func(c *config) { c.serverOpts = append(c.serverOpts, f) }
}

// WithClientName sets the MCP client's name (default "mcptest"). The
// session sees the agent as "<name> <version>" (version "test"), the
// origin of its changes and its presence.
func WithClientName(name string) Option { return func(c *config) { c.clientName = name } }

// WithCallTimeout bounds each MCP call, and the connect, by d instead of
// [DefaultCallTimeout].
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// Session is one headless session of an app, driven over MCP by a go-sdk
// client. Create it with [Start]. It is not safe for concurrent use: use
// it from one goroutine, normally the test's.
type Session struct {
	t   testing.TB
	cfg config
	app string

	srv        *server.Server
	se         *session.Session
	end        func()
	cs         *mcp.ClientSession
	transport  *http.Transport
	cancelConn context.CancelFunc
	endpoint   string

	stopped bool
	last    map[string]any
}

// Start serves app with a real [server.Server] (SSH on 127.0.0.1:0 and
// HTTP on 127.0.0.1:0, DataDir t.TempDir(), logs to t.Log), starts a
// headless session ([server.Server.StartHeadless], owned by user
// "mcptest") and connects a go-sdk
// MCP client over Streamable HTTP (or SSE, [WithSSE]) to the session's
// endpoint with its bearer token. It returns once the session sees the
// client attached as an agent. t.Cleanup closes the client, ends the
// session and shuts the server down, in that order.
//
// Start fails the test with Fatalf when any step fails.
func Start(t testing.TB, app server.App, opts ...Option) *Session {
	t.Helper()
	cfg := config{clientName: "mcptest", clientVersion: "test", timeout: DefaultCallTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	s := &Session{t: t, cfg: cfg, app: app.Name, stopped: true}

	// Registered first, so it runs last: nothing logs to t after it.
	lw := testkit.NewLogWriter(t)
	so := server.Options{SSH: server.SSHOptions{Addr: "127.0.0.1:0"}, MCP: server.MCPOptions{Addr: "127.0.0.1:0"}, DataDir: t.TempDir(),
		Logger:       slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelInfo})),
		DrainTimeout: 5 * time.Second,
	}
	// Authorization is on, as for any agent. An app that declares no
	// policy of its own is tested under allow-all, chosen here as the
	// embedding code (which counts as configured); WithServerOptions can
	// set ToolAuthorizer, ReadAuthorizer or the operator settings instead.
	if app.ToolPolicy == nil {
		so.MCP.ToolAuthorizer = authz.AllowAll()
	}
	if app.ReadPolicy == nil {
		so.MCP.ReadAuthorizer = authz.AllowAll()
	}
	// Tests call faster than an agent should; the limit has its own tests.
	so.MCP.ToolCallsPerSecond, so.MCP.ToolCallBurst = 10_000, 10_000
	for _, f := range cfg.serverOpts {
		f(&so)
	}
	srv, err := server.New(app, so)
	if err != nil {
		t.Fatalf("mcptest: server.New: %v", err)
		return s
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("mcptest: server Start: %v", err)
		return s
	}
	s.srv = srv
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("mcptest: server Shutdown: %v", err)
		}
	})

	se, end, err := srv.StartHeadless(owner)
	if err != nil {
		t.Fatalf("mcptest: StartHeadless: %v", err)
		return s
	}
	s.se, s.end, s.stopped = se, end, false
	// Registered after the shutdown, so it runs before it.
	t.Cleanup(s.Stop)

	if err := s.connect(); err != nil {
		t.Fatalf("mcptest: connect an MCP client to %s: %v", s.endpoint, err)
		return s
	}
	// The server records the agent's presence when it handles the
	// client's notifications/initialized, after Connect has returned.
	for deadline := time.Now().Add(cfg.timeout); len(se.Agents()) == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("mcptest: the session did not see the MCP client attach within %v", cfg.timeout)
			return s
		}
	}
	return s
}

// connect connects the MCP client within the call timeout. The context
// given to Connect is not a deadline one, because the SSE transport's
// stream lives as long as it; a timer cancels it instead, and Stop does
// once the client is closed.
func (s *Session) connect() error {
	base := "http://" + s.srv.HTTPAddr() + "/sessions/" + s.se.ID
	s.transport = http.DefaultTransport.(*http.Transport).Clone()
	hc := &http.Client{Transport: testkit.Bearer(s.transport, s.se.Token())}
	var tr mcp.Transport
	if s.cfg.sse {
		s.endpoint = base + "/sse"
		tr = &mcp.SSEClientTransport{Endpoint: s.endpoint, HTTPClient: hc}
	} else {
		s.endpoint = base + "/mcp"
		tr = &mcp.StreamableClientTransport{Endpoint: s.endpoint, HTTPClient: hc}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancelConn = cancel
	timer := time.AfterFunc(s.cfg.timeout, cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: s.cfg.clientName, Version: s.cfg.clientVersion}, nil)
	cs, err := client.Connect(ctx, tr, nil)
	inTime := timer.Stop()
	switch {
	case err != nil && !inTime:
		return fmt.Errorf("timed out after %v: %w", s.cfg.timeout, err)
	case err != nil:
		return err
	case !inTime:
		_ = cs.Close()
		return fmt.Errorf("timed out after %v", s.cfg.timeout)
	}
	s.cs = cs
	return nil
}

// Stop closes the MCP client and ends the session. It is idempotent, and
// t.Cleanup calls it too. Actions after Stop fail the test.
func (s *Session) Stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	if s.cs != nil {
		_ = s.cs.Close()
	}
	if s.cancelConn != nil {
		s.cancelConn()
	}
	if s.end != nil {
		s.end()
	}
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
}

// ID returns the session's id.
func (s *Session) ID() string {
	if s.se == nil {
		return ""
	}
	return s.se.ID
}

// Server returns the server serving the session.
func (s *Session) Server() *server.Server { return s.srv }

// Client returns the MCP client session, for calls the harness has no
// method for (resources/list, subscriptions, ...).
func (s *Session) Client() *mcp.ClientSession { return s.cs }

// Endpoint returns the URL the client is connected to.
func (s *Session) Endpoint() string { return s.endpoint }

// Model returns the model as the session's dispatcher last folded it
// (nil if the session never started). Tool calls answer after their fold,
// so it reflects every call that has returned.
func (s *Session) Model() ui.Model {
	if s.se == nil {
		return nil
	}
	return s.se.Dispatcher.Snapshot().Model
}

// Tree returns the component tree of the dispatcher's latest snapshot.
func (s *Session) Tree() ui.Node {
	if s.se == nil {
		return nil
	}
	return s.se.Dispatcher.Snapshot().Tree
}

// ---- actions ----

// Tool returns the full name of a widget's tool: <app>.<id>.<action>.
func (s *Session) Tool(id, action string) string { return s.app + "." + id + "." + action }

// TypeInto replaces the text of a text input, text area or password field
// (type_into).
func (s *Session) TypeInto(id, text string) *Session {
	s.t.Helper()
	return s.act(s.Tool(id, "type_into"), map[string]any{"text": text})
}

// Clear erases the text of a text field (clear).
func (s *Session) Clear(id string) *Session {
	s.t.Helper()
	return s.act(s.Tool(id, "clear"), nil)
}

// Click presses a button (click).
func (s *Session) Click(id string) *Session {
	s.t.Helper()
	return s.act(s.Tool(id, "click"), nil)
}

// Toggle flips a checkbox (toggle).
func (s *Session) Toggle(id string) *Session {
	s.t.Helper()
	return s.act(s.Tool(id, "toggle"), nil)
}

// selectActions are the index-taking choosing actions, by widget:
// Table, Tabs, SelectList.
var selectActions = []string{"select_row", "select_tab", "select"}

// Select chooses the entry at a zero-based index with whichever of
// select_row (Table), select_tab (Tabs) or select (SelectList) the widget
// offers now. The action is picked the way the session's MCP server
// resolves a call, against the current tree; the call then goes over MCP.
// For a Menu, whose select takes an item id, use [Session.SelectItem].
func (s *Session) Select(id string, index int) *Session {
	s.t.Helper()
	if !s.usable("Select", s.Tool(id, "select*"), nil) {
		return s
	}
	for _, a := range selectActions {
		name := s.Tool(id, a)
		if _, spec, ok := mcpbridge.Lookup(s.app, s.Tree(), name); ok {
			if props, _ := spec.InputSchema["properties"].(map[string]any); props["index"] != nil {
				return s.act(name, map[string]any{"index": index})
			}
		}
	}
	s.t.Fatalf("mcptest: Select(%q, %d): widget %q offers none of %s taking an index now; is it in the current view (a tab's widgets show only while it is active), enabled, and a Table, Tabs or SelectList (for a Menu use SelectItem)?\n%s",
		id, index, id, strings.Join(selectActions, ", "), s.toolsReport())
	return s
}

// SelectItem chooses a menu item by its id (a Menu's select).
func (s *Session) SelectItem(id, itemID string) *Session {
	s.t.Helper()
	return s.act(s.Tool(id, "select"), map[string]any{"item_id": itemID})
}

// CallTool calls any tool by its full name, derived or session tool.
func (s *Session) CallTool(name string, args map[string]any) *Session {
	s.t.Helper()
	return s.act(name, args)
}

// noTerminal explains a no_terminal failure.
const noTerminal = "raxol_send_key presses keys in the terminal of a human attached over SSH, " +
	"and a headless session (which mcptest.Start creates) has no terminal, so it fails there with no_terminal " +
	"unless the app is a hosted Bubble Tea program (package teaapp); " +
	"drive the widgets with their tools instead (TypeInto, Click, Select, Toggle, CallTool)"

// PressKey calls raxol_send_key with keys. It needs a terminal attached
// to the session, or a hosted Bubble Tea program (package teaapp), which
// takes keys headless too: otherwise, with the headless session of
// [Start], it fails the test with no_terminal, and the message says so.
func (s *Session) PressKey(keys ...string) *Session {
	s.t.Helper()
	return s.act(mcpbridge.ToolSendKey, map[string]any{"keys": keys})
}

// usable fails the test when the session cannot take calls.
func (s *Session) usable(what, name string, args map[string]any) bool {
	s.t.Helper()
	if s.cs == nil || s.stopped {
		state := "was stopped"
		if s.cs == nil {
			state = "never connected"
		}
		s.t.Fatalf("mcptest: %s %s: the session %s", what, s.describe(name, args), state)
		return false
	}
	return true
}

// act calls a tool and fails the test on a protocol error or an error
// result.
func (s *Session) act(name string, args map[string]any) *Session {
	s.t.Helper()
	if !s.usable("call", name, args) {
		return s
	}
	res, isErr, err := s.call(name, args)
	if err != nil {
		s.last = protocolError(err)
		s.t.Fatalf("mcptest: call %s: protocol error: %v\n%s", s.describe(name, args), err, s.toolsReport())
		return s
	}
	s.last = res
	if isErr {
		kind, msg := res["error"], res["message"]
		if kind == mcpbridge.ErrKindNoTerminal {
			msg = fmt.Sprintf("%v: %s", msg, noTerminal)
		}
		s.t.Fatalf("mcptest: call %s failed: %v: %v\n%s", s.describe(name, args), kind, msg, s.toolsReport())
	}
	return s
}

// Call calls a tool and returns its decoded result and whether it is an
// error result, without failing the test. A derived tool's result is
// {"result": ..., "state": ...}; an error result {"error": kind, "message":
// ...} (kinds mcpbridge.ErrKind*); a protocol failure {"error":
// KindProtocolError, "message": ...} with isError true; a plain text result
// (raxol_screenshot) {"text": ...}. It fails the test only when the
// session was stopped.
func (s *Session) Call(name string, args map[string]any) (map[string]any, bool) {
	s.t.Helper()
	if !s.usable("Call", name, args) {
		return nil, false
	}
	res, isErr, err := s.call(name, args)
	if err != nil {
		res, isErr = protocolError(err), true
	}
	s.last = res
	return res, isErr
}

// Result returns the decoded result of the last call, as [Session.Call]
// describes it (nil before any).
func (s *Session) Result() map[string]any { return s.last }

func protocolError(err error) map[string]any {
	return map[string]any{"error": KindProtocolError, "message": err.Error()}
}

// call performs one tools/call within the timeout.
func (s *Session) call(name string, args map[string]any) (map[string]any, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	r, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, false, err
	}
	return decodeResult(r), r.IsError, nil
}

// decodeResult prefers the structured content, then text content that is
// a JSON object, then {"text": text}.
func decodeResult(r *mcp.CallToolResult) map[string]any {
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			var m map[string]any
			if json.Unmarshal(b, &m) == nil && m != nil {
				return m
			}
		}
	}
	text := resultText(r)
	var m map[string]any
	if json.Unmarshal([]byte(text), &m) == nil && m != nil {
		return m
	}
	return map[string]any{"text": text}
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// describe names a call for failure messages: the tool and its arguments,
// with the strings of a sensitive tool's arguments (a password field's
// text) redacted.
func (s *Session) describe(name string, args map[string]any) string {
	if len(args) == 0 {
		return fmt.Sprintf("%s {}", name)
	}
	shown := args
	if s.sensitive(name) {
		shown = make(map[string]any, len(args))
		for k, v := range args {
			if _, ok := v.(string); ok {
				v = "<redacted>"
			}
			shown[k] = v
		}
	}
	b, err := json.Marshal(shown)
	if err != nil {
		return fmt.Sprintf("%s %v", name, shown)
	}
	return fmt.Sprintf("%s %s", name, b)
}

// sensitive reports whether name is a tool its widget annotates
// sensitive, or a tool of a password field.
func (s *Session) sensitive(name string) bool {
	tree := s.Tree()
	if tree == nil {
		return false
	}
	if _, spec, ok := mcpbridge.Lookup(s.app, tree, name); ok && spec.Annotations["sensitive"] == true {
		return true
	}
	if id, _, ok := mcpbridge.SplitName(s.app, name); ok {
		if w, ok := ui.Find(tree, id); ok {
			switch w.(type) {
			case ui.PasswordField, *ui.PasswordField:
				return true
			}
		}
	}
	return false
}

// ---- tools ----

// tools returns the names tools/list advertises and those discover_tools
// finds beyond them.
func (s *Session) tools() (listed, found []string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
	defer cancel()
	for tl, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("tools/list: %w", err)
		}
		listed = append(listed, tl.Name)
	}
	res, isErr, err := s.call(mcpbridge.ToolDiscover, nil)
	switch {
	case err != nil:
		return listed, nil, fmt.Errorf("%s: %w", mcpbridge.ToolDiscover, err)
	case isErr:
		return listed, nil, fmt.Errorf("%s: %v: %v", mcpbridge.ToolDiscover, res["error"], res["message"])
	}
	list, _ := res["tools"].([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				found = append(found, n)
			}
		}
	}
	return listed, found, nil
}

// Tools returns every tool the session offers now: those tools/list
// advertises (the focus lens's choice, session tools first) followed by
// those only discover_tools finds, once the server has caught up with the
// latest model version. It fails the test when listing fails.
func (s *Session) Tools() []string {
	s.t.Helper()
	if !s.usable("Tools", "tools/list", nil) {
		return nil
	}
	if err := s.waitSynced(); err != nil {
		s.t.Fatalf("mcptest: listing tools: %v", err)
		return nil
	}
	listed, found, err := s.tools()
	if err != nil {
		s.t.Fatalf("mcptest: listing tools: %v", err)
		return nil
	}
	return append(listed, found...)
}

// waitSynced waits until the session's MCP server has re-derived its
// tools from the dispatcher's latest snapshot. Tool calls answer after the
// fold, but the server updates its tool list (and sends list_changed)
// asynchronously, so a listing right after a call can be stale. The sync
// is seen in the raxol://session/context resource: lens.version is the
// snapshot version the advertised tools were derived from.
func (s *Session) waitSynced() error {
	want := s.se.Dispatcher.Snapshot().Version
	deadline := time.Now().Add(s.cfg.timeout)
	var last uint64
	for {
		text, err := s.readResource(mcpbridge.URIContext)
		if err != nil {
			return fmt.Errorf("read %s: %w", mcpbridge.URIContext, err)
		}
		var ctx struct {
			Lens struct {
				Version uint64 `json:"version"`
			} `json:"lens"`
		}
		if err := json.Unmarshal([]byte(text), &ctx); err != nil {
			return fmt.Errorf("decode %s: %w", mcpbridge.URIContext, err)
		}
		last = ctx.Lens.Version
		if last >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the session's MCP server has projected version %d, not the latest %d, after %v", last, want, s.cfg.timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// toolsReport lists the tools for a failure message, or says why it
// cannot.
func (s *Session) toolsReport() string {
	_ = s.waitSynced() // best effort: a stale list is still useful
	listed, found, err := s.tools()
	if err != nil {
		return fmt.Sprintf("the available tools could not be listed: %v", err)
	}
	return formatTools(listed, found)
}

func formatTools(listed, found []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "available tools (%d):\n", len(listed)+len(found))
	fmt.Fprintf(&b, "  listed by tools/list (%d): %s\n", len(listed), joinOrNone(listed))
	fmt.Fprintf(&b, "  found by discover_tools (%d): %s", len(found), joinOrNone(found))
	return b.String()
}

func joinOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}

// ---- resources ----

// ReadResource reads a resource over MCP and returns its text. It fails
// the test when the read fails.
func (s *Session) ReadResource(uri string) string {
	s.t.Helper()
	if !s.usable("ReadResource", uri, nil) {
		return ""
	}
	text, err := s.readResource(uri)
	if err != nil {
		s.t.Fatalf("mcptest: read resource %s: %v", uri, err)
	}
	return text
}

func (s *Session) readResource(uri string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
	defer cancel()
	res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Contents {
		b.WriteString(c.Text)
	}
	return b.String(), nil
}

// Component returns the state of the widget with the given id from the
// raxol://session/tree resource, read over MCP. It fails the test when
// the read fails or no such widget is in the tree.
func (s *Session) Component(id string) map[string]any {
	s.t.Helper()
	if !s.usable("Component", id, nil) {
		return nil
	}
	st, ids, err := s.component(id)
	switch {
	case err != nil:
		s.t.Fatalf("mcptest: Component(%q): %v", id, err)
	case st == nil:
		s.t.Fatalf("mcptest: Component(%q): no widget %q in %s; its widgets are: %s", id, id, mcpbridge.URITree, joinOrNone(ids))
	}
	return st
}

// component reads the tree resource and finds the widget's state; ids
// lists every widget id seen when it is not found.
func (s *Session) component(id string) (state map[string]any, ids []string, err error) {
	text, err := s.readResource(mcpbridge.URITree)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", mcpbridge.URITree, err)
	}
	var tree any
	if err := json.Unmarshal([]byte(text), &tree); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", mcpbridge.URITree, err)
	}
	st := findComponent(tree, id, &ids)
	return st, ids, nil
}

// findComponent walks the tree resource's JSON through "children" only
// (a widget's own data, such as a tree's nodes or a menu's items, has ids
// of its own) and returns the state of the widget with the given id.
func findComponent(n any, id string, ids *[]string) map[string]any {
	m, ok := n.(map[string]any)
	if !ok {
		return nil
	}
	st := m
	if inner, ok := m["state"].(map[string]any); ok && m["id"] == nil {
		st = inner // a widget whose state is not an object-with-children
	}
	if wid, ok := st["id"].(string); ok {
		if wid == id {
			return st
		}
		*ids = append(*ids, wid)
	}
	kids, _ := m["children"].([]any)
	for _, k := range kids {
		if found := findComponent(k, id, ids); found != nil {
			return found
		}
	}
	return nil
}

// Screen returns the screen text from raxol_screenshot, called over MCP.
// It fails the test when the call fails.
func (s *Session) Screen() string {
	s.t.Helper()
	if !s.usable("Screen", mcpbridge.ToolScreenshot, nil) {
		return ""
	}
	text, err := s.screen()
	if err != nil {
		s.t.Fatalf("mcptest: call %s: %v", mcpbridge.ToolScreenshot, err)
	}
	return text
}

func (s *Session) screen() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
	defer cancel()
	r, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolScreenshot, Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	if r.IsError {
		return "", errors.New(resultText(r))
	}
	return resultText(r), nil
}

// ---- assertions ----

// AssertComponent checks that the widget with the given id is in the
// raxol://session/tree resource (read over MCP) and, when pred is not
// nil, that pred holds for its state (the widget's State() as JSON data,
// e.g. "value", "checked", "rows", "visible"). It reports a failure with
// Errorf, including the state, and returns s.
func (s *Session) AssertComponent(id string, pred func(state map[string]any) bool) *Session {
	s.t.Helper()
	if !s.usable("AssertComponent", id, nil) {
		return s
	}
	st, ids, err := s.component(id)
	switch {
	case err != nil:
		s.t.Errorf("mcptest: AssertComponent(%q): %v", id, err)
	case st == nil:
		s.t.Errorf("mcptest: AssertComponent(%q): no widget %q in %s (a tab's widgets show only while it is active); its widgets are: %s",
			id, id, mcpbridge.URITree, joinOrNone(ids))
	case pred != nil:
		if ok, panicked := check(func() bool { return pred(st) }); !ok {
			s.t.Errorf("mcptest: AssertComponent(%q): predicate %s for state %s", id, failed(panicked), brief(st))
		}
	}
	return s
}

// AssertModel checks pred against the dispatcher's latest model and
// reports a failure with Errorf.
func (s *Session) AssertModel(pred func(m ui.Model) bool) *Session {
	s.t.Helper()
	m := s.Model()
	if ok, panicked := check(func() bool { return pred(m) }); !ok {
		s.t.Errorf("mcptest: AssertModel: predicate %s for model %s", failed(panicked), truncate(fmt.Sprintf("%+v", m), 2000))
	}
	return s
}

// AssertScreen checks that the screen (raxol_screenshot, over MCP)
// contains substr and reports a failure with Errorf, showing the screen.
func (s *Session) AssertScreen(substr string) *Session {
	s.t.Helper()
	if !s.usable("AssertScreen", mcpbridge.ToolScreenshot, nil) {
		return s
	}
	text, err := s.screen()
	switch {
	case err != nil:
		s.t.Errorf("mcptest: AssertScreen(%q): call %s: %v", substr, mcpbridge.ToolScreenshot, err)
	case !strings.Contains(text, substr):
		s.t.Errorf("mcptest: AssertScreen(%q): not on the screen:\n%s", substr, text)
	}
	return s
}

// toolSettle is how long a tool assertion waits, after the server has
// caught up with the latest snapshot, for its answer to settle. A
// variable only so that the tests of failing assertions need not wait it
// out (export_test.go).
var toolSettle = 500 * time.Millisecond

// AssertToolAvailable checks that the session offers the tool now: listed
// by tools/list or found by discover_tools. The server updates its tool
// list asynchronously after a change, so this first waits until it has
// caught up with the model's latest version (see raxol://session/context).
func (s *Session) AssertToolAvailable(name string) *Session {
	s.t.Helper()
	return s.assertTool(name, true)
}

// RefuteToolAvailable checks that the session does not offer the tool
// now: neither listed by tools/list nor found by discover_tools. Like
// AssertToolAvailable, it first waits for the server to catch up.
func (s *Session) RefuteToolAvailable(name string) *Session {
	s.t.Helper()
	return s.assertTool(name, false)
}

func (s *Session) assertTool(name string, want bool) *Session {
	s.t.Helper()
	what := "AssertToolAvailable"
	if !want {
		what = "RefuteToolAvailable"
	}
	if !s.usable(what, name, nil) {
		return s
	}
	if err := s.waitSynced(); err != nil {
		s.t.Errorf("mcptest: %s(%q): %v", what, name, err)
		return s
	}
	// Once synced, the server's registrations can still trail its lens by
	// a moment: give the answer a short grace period to settle.
	var listed, found []string
	var has bool
	for deadline := time.Now().Add(toolSettle); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if listed, found, err = s.tools(); err != nil {
			s.t.Errorf("mcptest: %s(%q): %v", what, name, err)
			return s
		}
		has = slices.Contains(listed, name) || slices.Contains(found, name)
		if has == want || time.Now().After(deadline) {
			break
		}
	}
	switch {
	case want && !has:
		s.t.Errorf("mcptest: %s(%q): the session does not offer it\n%s", what, name, formatTools(listed, found))
	case !want && has:
		s.t.Errorf("mcptest: %s(%q): the session offers it\n%s", what, name, formatTools(listed, found))
	}
	return s
}

// check runs a predicate, turning a panic (a failed type assertion, say)
// into a failure.
func check(pred func() bool) (ok bool, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			ok, panicked = false, p
		}
	}()
	return pred(), nil
}

func failed(panicked any) string {
	if panicked != nil {
		return fmt.Sprintf("panicked (%v)", panicked)
	}
	return "is false"
}

// brief returns v as JSON, truncated.
func brief(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return truncate(fmt.Sprintf("%v", v), 2000)
	}
	return truncate(string(b), 2000)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
