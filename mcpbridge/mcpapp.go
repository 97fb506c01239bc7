package mcpbridge

import (
	"context"
	"crypto/sha256"
	_ "embed" // the App's page
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
	"github.com/raxol-ssh/raxol-ssh/web"
)

// The session's live view as an MCP App (the MCP Apps extension,
// SEP-1865, @modelcontextprotocol/ext-apps): a chat host that renders MCP
// Apps shows the session inside the conversation.
//
//   - The server advertises the extension ([ExtensionApps]) in its
//     capabilities.
//   - The resource [URIView] ([MIMEApp]) is a small self-contained page
//     (mcpapp/view.html, embedded): no framework, no build step, nothing
//     fetched from anywhere, so its _meta.ui.csp declares empty
//     connectDomains and resourceDomains. The host loads it in a sandboxed
//     iframe and speaks JSON-RPC with it over postMessage (ui/initialize,
//     ui/notifications/initialized, ui/notifications/tool-result, and the
//     app's tools/call, which the host proxies to this server).
//   - The read-only tool [ToolShow] links to it (_meta.ui.resourceUri) and
//     answers with the session's view as HTML (package web's, the same the
//     browser view shows: the human's focus and the row their terminal
//     highlights marked), its version, and the newest agent action for the
//     page's live region. With "after" it is a long poll:
//     while the view is still that version it waits, up to showMax, for it
//     to change. The page keeps itself live by calling it in a loop; it is
//     an observer, with no input wired.
//
// The answer carries the widgets' state, so it is governed by the read of
// URITree (answerRead), through the same withhold middleware as every tool
// answer: a client that may not read the tree gets a "withheld" object and
// no HTML, and never waits (when the view changed would say something of
// it). The announcement is the activity's, left out (and named in
// "withheld") for a client that may not read raxol://session/activity, as
// the context resource does. Whether the tool may be called at all is the
// tool policy's.
const (
	// ToolShow is the tool that answers with the session's live view.
	ToolShow = "raxol_show"
	// URIView is the App's resource: one stable URI for every session.
	URIView = "ui://raxol/session-view"
	// MIMEApp is the MIME type of an MCP App's HTML.
	MIMEApp = "text/html;profile=mcp-app"
	// ExtensionApps is the MCP Apps extension's id in the capabilities.
	ExtensionApps = "io.modelcontextprotocol/ui"
)

// showMax is the longest a raxol_show with "after" waits for a change.
const showMax = 20 * time.Second

//go:embed mcpapp/view.html
var viewPageSource string

// viewPage is the App's page with the stylesheet of a drawn screen's
// colours (web.ColorCSS: a hosted program's screen is styled text) in its
// own style element.
var viewPage = strings.Replace(viewPageSource, "</style>", web.ColorCSS()+"</style>", 1)

// appsExtension is the capabilities' extensions: MCP Apps, with no
// settings.
func appsExtension() map[string]any {
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(ExtensionApps, nil)
	return caps.Extensions
}

// viewUIMeta is the App resource's _meta: what its sandbox must allow
// (nothing outside the page: empty lists, said explicitly) and that it
// prefers a border.
func viewUIMeta() mcp.Meta {
	return mcp.Meta{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}},
		"prefersBorder": true,
	}}
}

// appView is the App's resource, its content and raxol_show's
// definition: the same for every session, built once per process and
// shared by every session's server, read only (the SDK keeps and lists
// the pointers it is given; a read's result is made anew each time and
// only its contents are shared, which the SDK marshals and never
// changes).
type appView struct {
	resource *mcp.Resource
	contents []*mcp.ResourceContents
	show     *mcp.Tool
}

var appViewDefs = sync.OnceValue(func() appView {
	return appView{
		resource: &mcp.Resource{
			URI:         URIView,
			Name:        "session-view",
			Title:       "Live view of the session",
			Description: "An MCP App: the session's live view as accessible HTML, kept current by calling " + ToolShow + ". Read only.",
			MIMEType:    MIMEApp,
			Meta:        viewUIMeta(),
		},
		contents: []*mcp.ResourceContents{{URI: URIView, MIMEType: MIMEApp, Text: viewPage, Meta: viewUIMeta()}},
		show: &mcp.Tool{
			Name:  ToolShow,
			Title: "Show the session",
			Description: "Show the human the live session: a host that supports MCP Apps displays it beside the conversation. " +
				"Answers {\"html\": <the view as HTML>, \"version\": n, \"announce\": <the newest agent action>}. With after (a version this returned), waits until the view " +
				"is no longer that version, or " + fmt.Sprint(showMax.Seconds()) + " seconds pass, and answers then. " +
				"For the screen as text, call " + ToolScreenshot + ".",
			InputSchema: ui.ObjectSchema(map[string]any{
				"after": map[string]any{"type": "integer", "minimum": 0, "maximum": maxShowVersion,
					"description": "A version this tool returned: wait for the view to change from it."},
			}),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
			Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": URIView}},
		},
	}
})

// readAppPage answers a read of the App's resource: the page, the same for
// every session and client.
func readAppPage(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: appViewDefs().contents}, nil
}

// addAppView registers the App's resource and raxol_show.
func (c *sessionServer) addAppView() {
	defs := appViewDefs()
	c.server.AddResource(defs.resource, readAppPage)
	c.server.AddTool(defs.show, c.show)
}

// maxShowVersion is the largest "after" taken: a whole number a JSON
// number holds exactly.
const maxShowVersion = 1<<53 - 1

// showArgs checks raxol_show's arguments: after, when given.
func showArgs(args map[string]any) (after uint64, wait bool, err error) {
	for k := range args {
		if k != "after" {
			return 0, false, fmt.Errorf("unknown argument %q: the only argument is after", k)
		}
	}
	v, ok := args["after"]
	if !ok {
		return 0, false, nil
	}
	f, isNum := v.(float64)
	if !isNum || f != math.Trunc(f) || f < 0 || f > maxShowVersion {
		return 0, false, errors.New("after must be a version this tool returned (a whole number from 0)")
	}
	return uint64(f), true, nil
}

// show serves raxol_show.
func (c *sessionServer) show(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := argsOf(ctx, req)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error()), nil
	}
	after, wait, err := showArgs(args)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error()), nil
	}
	v := c.readViewOf(req)
	html, version := c.viewNow()
	if !wait || version != after || !v.may(URITree) {
		// A client that may not read the tree does not wait: its answer
		// is withheld (withhold), and when it came would tell of a change.
		return c.showResult(html, version, v), nil
	}
	// A wait holds one of the client's wait slots, shared with
	// raxol_wait_for.
	release, ok := c.waits.take(req.Session)
	if !ok {
		return errorResult(ErrKindRateLimited, fmt.Sprintf("this client has %d calls waiting already (%s, %s with after), the most at once; "+
			"wait for one to answer first", maxWaitsPerClient, ToolWaitFor, ToolShow)), nil
	}
	defer release()
	wctx, stop := c.withdrawOnGone(ctx, req)
	defer stop()
	html, version, err = c.waitView(wctx, after)
	switch {
	case errors.Is(err, errWaitEnded) || (err != nil && c.ctx.Err() != nil):
		return errorResult(ErrKindSessionEnded, "the session has ended"), nil
	case err != nil:
		return errorResult(waitCancelled, "the wait was withdrawn: the request was cancelled or its client went away"), nil
	}
	return c.showResult(html, version, v), nil
}

// showResult is raxol_show's answer: the view and its version as
// structured content, the newest agent action for the App's live region
// ("announce", read like the activity: withheld from a client that may
// not read raxol://session/activity), and a sentence for a host that
// shows no App.
func (c *sessionServer) showResult(html []byte, version uint64, v *readView) *mcp.CallToolResult {
	fields := map[string]any{"html": string(html), "version": version}
	switch {
	case !v.may(URITree):
		// withhold leaves out every part.
	case !v.may(URIActivity):
		fields["withheld"] = map[string]any{"announce": withheldBecause(URIActivity)}
	default:
		if a, seq, ok := c.sess.LastAgentAction(); ok {
			fields["announce"] = map[string]any{"seq": seq, "text": announcement(a)}
		}
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return errorResult(ErrKindInternalError, "result could not be encoded: "+err.Error())
	}
	text := fmt.Sprintf("The live view of session %s (version %d) is shown to the human where the host displays MCP Apps. "+
		"For the screen as text, call %s.", c.sess.ID, version, ToolScreenshot)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(b)}
}

// maxAnnounce bounds an announcement, in bytes.
const maxAnnounce = 200

// announcement is the sentence a live region says for an agent's action:
// "agent <client> <summary>" ("agent claude typed into Search").
func announcement(a session.Action) string {
	text := "agent " + strings.TrimPrefix(a.Origin, "agent:") + " " + a.Summary
	if len(text) > maxAnnounce {
		cut := 0
		for i := range text { // at a character's start
			if i > maxAnnounce {
				break
			}
			cut = i
		}
		text = text[:cut]
	}
	return text
}

// waitView waits until the view's version is no longer after, or showMax
// passes, and returns the view then. It wakes on every snapshot and every
// change the session signals (the human's focus and highlighted row
// among them); it starts no goroutine. err is ctx's cause when ctx ends
// first, errWaitEnded when the session's dispatcher stops.
func (c *sessionServer) waitView(ctx context.Context, after uint64) (html []byte, version uint64, err error) {
	// Subscribed before the first look, so no change after it is missed.
	sub := c.sess.Dispatcher.Subscribe()
	defer sub.Close()
	changed, stopWatch := c.sess.Watch()
	defer stopWatch()
	deadline := time.NewTimer(showMax)
	defer deadline.Stop()
	for {
		html, version = c.viewNow()
		if version != after {
			return html, version, nil
		}
		select {
		case <-ctx.Done():
			return html, version, context.Cause(ctx)
		case <-sub.Done():
			return html, version, errWaitEnded
		case <-deadline.C:
			html, version = c.viewNow()
			return html, version, nil
		case <-sub.C():
		case <-changed:
		}
	}
}

// viewCache is the session's view as last rendered, and its version: a
// number that goes up by one each time the HTML changes. The HTML is a
// function of the snapshot and the human's focus and highlighted row
// (key): it is rendered again only when one of them changed.
type viewCache struct {
	mu      sync.Mutex
	key     viewKey
	html    []byte
	sum     [sha256.Size]byte
	version uint64 // 0 until the first render
}

type viewKey struct {
	snapshot uint64
	focus    string
	row      int
}

// viewNow is the session's view as it is now, and its version.
func (c *sessionServer) viewNow() ([]byte, uint64) {
	v := &c.view
	v.mu.Lock()
	defer v.mu.Unlock()
	// Read under the lock: a render of an older snapshot never follows
	// one of a newer (and gets a newer version).
	snap := c.sess.Dispatcher.Snapshot()
	att := c.sess.Attention()
	k := viewKey{snapshot: snap.Version, focus: att.Focus, row: att.Row}
	if v.version > 0 && k == v.key {
		return v.html, v.version
	}
	html := renderView(c.sess.Guard(), snap.Tree, att)
	if sum := sha256.Sum256(html); v.version == 0 || sum != v.sum {
		v.html, v.sum = html, sum
		v.version++
	}
	v.key = k
	return v.html, v.version
}

// ViewHTML is session se's tree as HTML (package web), the human's focus
// and the row their terminal highlights in the focused widget marked:
// what raxol_show answers with, and a browser view can show.
func ViewHTML(se *session.Session) []byte {
	return renderView(se.Guard(), se.Dispatcher.Snapshot().Tree, se.Attention())
}

// ViewOptions are the web render options of a session's view as the
// human's attention att shows it (their focus, and the row their terminal
// highlights in the focused widget), read only or not: the browser view's
// and the App's alike.
func ViewOptions(att session.Attention, readOnly bool) web.Options {
	return web.Options{Focus: att.Focus, ReadOnly: readOnly, Local: func(id string) *ui.LocalState {
		if id != "" && id == att.Focus {
			return &ui.LocalState{Row: att.Row}
		}
		return nil
	}}
}

// renderView renders tree as web.Render does for a browser that watches
// (read only: the App is an observer); an app's panic costs the view, not
// the request.
func renderView(g guard.Scope, tree ui.Node, att session.Attention) []byte {
	var out []byte
	if err := g.Do(metrics.HookRender, "", func() {
		out = web.Render(tree, ViewOptions(att, true))
	}); err != nil {
		return []byte(`<p role="alert">The app failed to draw its view.</p>`)
	}
	return out
}
