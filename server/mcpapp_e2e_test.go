package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/browsertest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// mcpAppHost is the host side of an MCP App, as a chat host that renders
// MCP Apps plays it: a page that loads the App's HTML into a sandboxed
// iframe (srcdoc, scripts allowed, an opaque origin), answers its
// ui/initialize, sends it the result of the call that opened it
// (ui/notifications/tool-result) once it says it is initialized, and
// proxies its tools/call to the session's MCP server through a handler of
// its own origin, which calls the real MCP client.
type mcpAppHost struct {
	*httptest.Server
	calls atomic.Int64 // tools/call the App made
}

const mcpAppHostPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>test host</title>
<style>body { margin: 0; } iframe { width: 100%%; height: 780px; border: 1px solid #888; }</style></head>
<body>
<iframe id="app" title="raxol session view" sandbox="allow-scripts"></iframe>
<script>
"use strict";
const APP = %s;      // the resource's HTML
const OPENED = %s;   // the result of the tool call that opened the App
const frame = document.getElementById("app");
window.hostSeen = [];
function post(msg) { msg.jsonrpc = "2.0"; frame.contentWindow.postMessage(msg, "*"); }
window.addEventListener("message", async (e) => {
  if (e.source !== frame.contentWindow) return;
  const m = e.data;
  if (!m || m.jsonrpc !== "2.0") return;
  window.hostSeen.push(m.method || "response");
  switch (m.method) {
  case "ui/initialize":
    post({id: m.id, result: {protocolVersion: m.params.protocolVersion,
      hostInfo: {name: "raxol-test-host", version: "1"}, hostCapabilities: {serverTools: {}}, hostContext: {}}});
    return;
  case "ui/notifications/initialized":
    post({method: "ui/notifications/tool-result", params: OPENED});
    return;
  case "tools/call":
    try {
      const r = await fetch("/call", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(m.params)});
      const body = await r.json();
      if (r.ok) post({id: m.id, result: body});
      else post({id: m.id, error: {code: -32603, message: body.error}});
    } catch (err) {
      post({id: m.id, error: {code: -32603, message: String(err)}});
    }
    return;
  }
  if (m.id !== undefined && m.method !== undefined) post({id: m.id, error: {code: -32601, message: "method not found"}});
});
frame.srcdoc = APP;
</script>
</body></html>
`

// newMCPAppHost serves the host page for the App's html, opened by the
// result opened, proxying the App's tool calls to cs.
func newMCPAppHost(t *testing.T, cs *mcp.ClientSession, html string, opened *mcp.CallToolResult) *mcpAppHost {
	t.Helper()
	h := &mcpAppHost{}
	app, _ := json.Marshal(html) // escapes <, > and &: safe in a script
	res, err := json.Marshal(opened)
	if err != nil {
		t.Fatal(err)
	}
	pageHTML := fmt.Sprintf(mcpAppHostPage, app, res)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(pageHTML))
	})
	mux.HandleFunc("POST /call", func(w http.ResponseWriter, r *http.Request) {
		h.calls.Add(1)
		var p mcp.CallToolParams
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
		defer cancel()
		res, err := cs.CallTool(ctx, &p)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		_ = json.NewEncoder(w).Encode(res)
	})
	h.Server = httptest.NewServer(mux)
	t.Cleanup(h.Close)
	return h
}

// appFrame reads the App's view (#view) in the host page's iframe
// through the DevTools protocol: the sandboxed iframe has an opaque
// origin, so the host page's own script cannot read it, and Chromium
// runs it as a target of its own (an out-of-process iframe), which
// appFrame attaches to once it is there.
type appFrame struct {
	browser context.Context
	ctx     context.Context // the iframe's target, once attached
}

// html is the App's view now, or "" while the iframe is not there yet.
func (f *appFrame) html(t *testing.T) string {
	t.Helper()
	return f.eval(t, `(document.getElementById("view") || {innerHTML: ""}).innerHTML`)
}

// eval evaluates a JavaScript expression of a string in the App's
// frame; "" while the iframe is not there yet.
func (f *appFrame) eval(t *testing.T, expr string) string {
	t.Helper()
	if f.ctx == nil {
		targets, err := chromedp.Targets(f.browser)
		if err != nil {
			t.Fatalf("targets: %v", err)
		}
		for _, ti := range targets {
			if ti.Type == "iframe" {
				ctx, cancel := chromedp.NewContext(f.browser, chromedp.WithTargetID(ti.TargetID))
				t.Cleanup(cancel)
				// The first action attaches, and ties the attachment to
				// the context it runs with: one without a deadline.
				if err := chromedp.Do(ctx); err != nil {
					t.Fatalf("attach to the App's frame: %v", err)
				}
				f.ctx = ctx
				break
			}
		}
		if f.ctx == nil {
			return ""
		}
	}
	c, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("evaluate %s in the App's frame: %v", expr, err)
	}
	return v
}

// appScreenshot keeps a screenshot of the tab's viewport as the artefact
// name.png, and fails when it shows next to nothing. It captures the
// viewport (browsertest.Screenshot's full-page capture leaves an
// out-of-process iframe blank).
func appScreenshot(t *testing.T, browser context.Context, name string) {
	t.Helper()
	c, cancel := context.WithTimeout(browser, 30*time.Second)
	defer cancel()
	b, err := chromedp.Run(c, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(browsertest.ArtefactDir(t), name+".png")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(b))
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	dark := 0 // pixels of text, borders, highlights
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0xc000 {
				dark++
			}
		}
	}
	if dark < 5000 {
		t.Fatalf("the screenshot %s shows next to nothing (%d dark pixels)", path, dark)
	}
}

// latest prints the string it points to when the failure message is
// made: the last view read.
type latest struct{ s *string }

func (l latest) String() string { return *l.s }

// highlightedRow is the text of the table row marked data-highlighted in
// html, or "".
func highlightedRow(html string) string {
	i := strings.Index(html, `data-highlighted="true"`)
	if i < 0 {
		return ""
	}
	row := html[i:]
	if j := strings.Index(row, "</tr>"); j >= 0 {
		row = row[:j]
	}
	return row
}

// The session's live view as an MCP App, end to end: a real SSH session
// of the demo, a real go-sdk client over HTTP, and a real headless
// Chromium hosting the App's resource in a sandboxed iframe the way a chat
// host does. The iframe shows the demo's table, and follows the human's
// arrow keys over SSH and an agent's tool call, which its live region
// announces.
func TestMCPAppShowsTheLiveSession(t *testing.T) {
	srv := startServer(t, server.Options{}) // the demo, whose policy lets agents call raxol_show
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	se, _ := srv.Session(id)
	agent, err := agentAt(t, srv.HTTPAddr(), id, se.Token())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// What a host does: the tool's _meta.ui.resourceUri names the
	// resource, which it reads; the call's result opens the App.
	var uri string
	tools, err := agent.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == mcpbridge.ToolShow {
			ui, _ := tl.Meta["ui"].(map[string]any)
			uri, _ = ui["resourceUri"].(string)
		}
	}
	if uri != mcpbridge.URIView {
		t.Fatalf("%s links to %q, want %s", mcpbridge.ToolShow, uri, mcpbridge.URIView)
	}
	rr, err := agent.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != mcpbridge.MIMEApp {
		t.Fatalf("the App's resource: %+v", rr.Contents)
	}
	opened, err := agent.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolShow, Arguments: map[string]any{}})
	if err != nil || opened.IsError {
		t.Fatalf("%s: %v %+v", mcpbridge.ToolShow, err, opened)
	}
	host := newMCPAppHost(t, agent, rr.Contents[0].Text, opened)

	browser := browsertest.New(t)
	// The screenshot's viewport from the start: a resize just before it
	// would leave the out-of-process iframe to be painted again.
	browsertest.Run(t, browser, "open the host page", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(host.URL))

	// The demo's table, in the iframe.
	frame := &appFrame{browser: browser}
	var view string
	testkit.Eventually(t, waitLong, func() bool {
		view = frame.html(t)
		return strings.Contains(view, "<table") && strings.Contains(view, ">billing<") && strings.Contains(view, `<th scope="col"`)
	}, "the App to show the demo's table; its view:\n%s", latest{&view})
	if seen := browsertest.Eval[[]string](t, browser, "window.hostSeen"); len(seen) < 2 || seen[0] != "ui/initialize" || seen[1] != "ui/notifications/initialized" {
		t.Fatalf("the App's first messages to the host: %q", seen)
	}

	// The human's arrow key over SSH moves the highlighted row in the
	// iframe (the terminal's own state, through the session's attention).
	owner.Key(keyShiftTab) // from the tabs back to the services table
	owner.Key(keyDown)
	testkit.Eventually(t, waitLong, func() bool {
		view = frame.html(t)
		return strings.Contains(highlightedRow(view), ">auth<")
	}, "the highlighted row to follow the human's arrow key; the App's view:\n%s", latest{&view})

	// An agent's tool call changes the view in the iframe.
	testkit.MustCall(t, agent, "demo.search.type_into", map[string]any{"text": "seen-in-the-app"})
	testkit.Eventually(t, waitLong, func() bool {
		view = frame.html(t)
		return strings.Contains(view, `value="seen-in-the-app"`)
	}, "the agent's text in the App; its view:\n%s", latest{&view})
	if strings.Contains(view, "<script") {
		t.Fatalf("the view in the App holds a script")
	}
	// The App's live region says what the agent did.
	var said string
	testkit.Eventually(t, waitLong, func() bool {
		said = frame.eval(t, `document.getElementById("announce").textContent`)
		return strings.Contains(said, "agent snapshot-agent") && strings.Contains(said, "typed into Search")
	}, "the App's live region to say the agent typed; it says %q", latest{&said})

	appScreenshot(t, browser, "mcpapp-session-view-1280x800")

	// The App keeps itself live with long polls: a call per change, not
	// a stream of calls (three changes above; a poll answers at most every
	// 20 s otherwise).
	if n := host.calls.Load(); n < 2 || n > 20 {
		t.Fatalf("the App made %d tool calls through the host", n)
	}
}
