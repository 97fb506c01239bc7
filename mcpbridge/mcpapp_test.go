package mcpbridge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// showMax is how long a raxol_show with after waits at most.
const showMax = 20 * time.Second

// shown is a raxol_show answer: its structured content, its text, and
// whether it is an error.
type shown struct {
	fields map[string]any
	text   string
	isErr  bool
}

func (s shown) html() string {
	h, _ := s.fields["html"].(string)
	return h
}

func (s shown) version() float64 {
	v, _ := s.fields["version"].(float64)
	return v
}

// callShow calls raxol_show with args and ctx, which outlasts the longest
// wait.
func callShow(t *testing.T, ctx context.Context, cs *mcp.ClientSession, args map[string]any) shown {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolShow, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", mcpbridge.ToolShow, err)
	}
	return shownOf(t, res)
}

func shownOf(t *testing.T, res *mcp.CallToolResult) shown {
	t.Helper()
	s := shown{isErr: res.IsError}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			s.text = tc.Text
		}
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(b, &s.fields)
	return s
}

// TestMCPAppIsAdvertised: the server advertises the MCP Apps extension;
// the App's resource is listed with its MIME type and a CSP that allows
// nothing outside the page (empty lists, said explicitly); raxol_show is
// listed, read only, linked to the resource; and reading the resource
// returns the page.
func TestMCPAppIsAdvertised(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(false)
	ctx := context.Background()

	caps := cs.InitializeResult().Capabilities
	if _, ok := caps.Extensions[mcpbridge.ExtensionApps]; !ok {
		t.Fatalf("capabilities %+v lack the extension %s", caps, mcpbridge.ExtensionApps)
	}

	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res *mcp.Resource
	for _, r := range lr.Resources {
		if r.URI == mcpbridge.URIView {
			res = r
		}
	}
	if res == nil {
		t.Fatalf("resources/list lacks %s", mcpbridge.URIView)
	}
	if res.MIMEType != mcpbridge.MIMEApp || mcpbridge.MIMEApp != "text/html;profile=mcp-app" || !strings.HasPrefix(res.URI, "ui://") {
		t.Fatalf("the App's resource is %s of type %q", res.URI, res.MIMEType)
	}
	checkUIMeta := func(where string, meta mcp.Meta) {
		t.Helper()
		b, _ := json.Marshal(meta)
		var m struct {
			UI struct {
				CSP struct {
					ConnectDomains  *[]string `json:"connectDomains"`
					ResourceDomains *[]string `json:"resourceDomains"`
				} `json:"csp"`
				PrefersBorder *bool `json:"prefersBorder"`
			} `json:"ui"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		c := m.UI.CSP
		if c.ConnectDomains == nil || len(*c.ConnectDomains) != 0 || c.ResourceDomains == nil || len(*c.ResourceDomains) != 0 ||
			m.UI.PrefersBorder == nil || !*m.UI.PrefersBorder {
			t.Fatalf("%s: _meta %s, want ui.csp with empty connectDomains and resourceDomains, and prefersBorder", where, b)
		}
	}
	checkUIMeta("resources/list", res.Meta)

	var tool *mcp.Tool
	for _, tl := range listTools(t, cs) {
		if tl.Name == mcpbridge.ToolShow {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatalf("tools/list lacks %s", mcpbridge.ToolShow)
	}
	ui, _ := tool.Meta["ui"].(map[string]any)
	if ui["resourceUri"] != mcpbridge.URIView {
		t.Fatalf("%s _meta = %v, want ui.resourceUri %s", mcpbridge.ToolShow, tool.Meta, mcpbridge.URIView)
	}
	if a := tool.Annotations; a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
		t.Fatalf("%s annotations %+v, want read only", mcpbridge.ToolShow, a)
	}

	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpbridge.URIView})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 {
		t.Fatalf("%d contents", len(rr.Contents))
	}
	c := rr.Contents[0]
	if c.URI != mcpbridge.URIView || c.MIMEType != mcpbridge.MIMEApp {
		t.Fatalf("content %s of type %q", c.URI, c.MIMEType)
	}
	checkUIMeta("resources/read", c.Meta)
	for _, want := range []string{"<!doctype html>", "<script>", `"ui/initialize"`, `"ui/notifications/initialized"`,
		`"tools/call"`, `"` + mcpbridge.ToolShow + `"`, `id="view"`,
		".f203{color:#ff5f5f}", // a hosted screen's colours: classes of its own stylesheet
	} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// Self-contained: nothing loaded from anywhere.
	for _, bad := range []string{"<script src", "<link", "http://", "https://", "eval(", "new Function"} {
		if strings.Contains(c.Text, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
}

// TestShowAnswersTheView: raxol_show answers with the session's tree as
// package web's HTML (the human's focus marked), a version, and a sentence
// as text; asked again with nothing changed, the same version.
func TestShowAnswersTheView(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(false)
	testkit.MustCall(t, cs, "app.name.type_into", map[string]any{"text": "ada"})
	s := callShow(t, context.Background(), cs, nil)
	if s.isErr || s.version() < 1 {
		t.Fatalf("raxol_show = %+v", s)
	}
	for _, want := range []string{`<input`, `value="ada"`, `<button`, ">Go<", `type="checkbox"`, `data-id="name"`} {
		if !strings.Contains(s.html(), want) {
			t.Errorf("the view lacks %s:\n%s", want, s.html())
		}
	}
	if strings.Contains(s.html(), "<script") {
		t.Errorf("the view holds a script")
	}
	if got := string(mcpbridge.ViewHTML(e.session)); got != s.html() {
		t.Errorf("ViewHTML, what a browser view shows, differs from raxol_show's view:\n%s\n%s", got, s.html())
	}
	if !strings.Contains(s.text, e.session.ID) || strings.Contains(s.text, "<") {
		t.Errorf("the text is %q, want a sentence naming the session", s.text)
	}
	// The newest agent action, for the App's live region.
	an, _ := s.fields["announce"].(map[string]any)
	if an["text"] != "agent test-agent 1.0 typed into Name" || an["seq"] == nil {
		t.Errorf("announce = %v, want the agent's type_into", s.fields["announce"])
	}
	if again := callShow(t, context.Background(), cs, nil); again.version() != s.version() || again.html() != s.html() {
		t.Fatalf("nothing changed, yet version %v became %v", s.version(), again.version())
	}
	// The human's focus is marked, and is a change of the view.
	e.session.SetAttention(session.Attention{Focus: "agree"})
	f := callShow(t, context.Background(), cs, nil)
	if f.version() <= s.version() || !strings.Contains(f.html(), `data-focused="true"`) {
		t.Fatalf("after a focus move: version %v (was %v), focus marked: %v", f.version(), s.version(), strings.Contains(f.html(), `data-focused="true"`))
	}
}

// TestShowWaitsForAChange: with after, raxol_show answers when the view
// changes (an agent's tool call, the human's focus), not before; at
// once when the view is no longer that version.
func TestShowWaitsForAChange(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := appEnv(t, form{}, nil)
		cs, _ := e.connect(false)
		writer, _ := e.connect(false)
		first := callShow(t, context.Background(), cs, nil)
		v := first.version()

		// An agent's call changes the view.
		done := make(chan shown, 1)
		go func() { done <- callShow(t, context.Background(), cs, map[string]any{"after": v}) }()
		synctest.Wait()
		select {
		case s := <-done:
			t.Fatalf("answered before any change: %+v", s)
		default:
		}
		if n := mcpbridge.Waiting(e.bridge, e.session.ID); n != 1 {
			t.Fatalf("%d waits, want 1", n)
		}
		start := time.Now()
		testkit.MustCall(t, writer, "app.name.type_into", map[string]any{"text": "grace"})
		s := <-done
		if s.isErr || s.version() <= v || !strings.Contains(s.html(), `value="grace"`) {
			t.Fatalf("after a change: %+v", s)
		}
		if took := time.Since(start); took != 0 {
			t.Fatalf("answered %v after the change, want at once", took)
		}

		// The human's focus moving changes it too.
		v = s.version()
		go func() { done <- callShow(t, context.Background(), cs, map[string]any{"after": v}) }()
		synctest.Wait()
		e.session.SetAttention(session.Attention{Focus: "go"})
		if s = <-done; s.version() <= v || !strings.Contains(s.html(), `data-focused="true"`) {
			t.Fatalf("after a focus move: %+v", s)
		}

		// An older version is answered at once.
		start = time.Now()
		if old := callShow(t, context.Background(), cs, map[string]any{"after": first.version()}); old.version() != s.version() || time.Since(start) != 0 {
			t.Fatalf("after an old version: %+v after %v", old, time.Since(start))
		}
		synctest.Wait()
		if n := mcpbridge.Waiting(e.bridge, e.session.ID); n != 0 {
			t.Fatalf("%d waits left", n)
		}
	})
}

// TestShowWaitIsCapped: with nothing changing, a raxol_show with after
// answers at showMax with the same version; a fold that leaves the view
// as it was does not end the wait.
func TestShowWaitIsCapped(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := appEnv(t, form{}, nil)
		cs, _ := e.connect(false)
		writer, _ := e.connect(false)
		v := callShow(t, context.Background(), cs, nil).version()
		done := make(chan shown, 1)
		start := time.Now()
		go func() { done <- callShow(t, context.Background(), cs, map[string]any{"after": v}) }()
		synctest.Wait()
		// Typing the same text again folds, and draws the same view.
		testkit.MustCall(t, writer, "app.name.type_into", map[string]any{"text": ""})
		synctest.Wait()
		select {
		case s := <-done:
			t.Fatalf("a fold that changed nothing shown ended the wait: %+v", s)
		default:
		}
		s := <-done
		if s.isErr || s.version() != v {
			t.Fatalf("at the cap: %+v, want version %v", s, v)
		}
		if took := time.Since(start); took != showMax {
			t.Fatalf("answered after %v, want %v", took, showMax)
		}
	})
}

// TestShowWaitEndsWithItsCall: a wait whose call is cancelled ends at
// once and gives its slot back; the slots are raxol_wait_for's, so a
// client with MaxWaitsPerClient waits of either kind gets no more.
func TestShowWaitEndsWithItsCall(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := appEnv(t, form{}, nil)
		cs, _ := e.connect(false)
		v := callShow(t, context.Background(), cs, nil).version()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, mcpbridge.MaxWaitsPerClient)
		for i := range mcpbridge.MaxWaitsPerClient {
			go func() {
				var err error
				if i%2 == 0 {
					_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolShow, Arguments: map[string]any{"after": v}})
				} else {
					_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolWaitFor, Arguments: map[string]any{"text": "never drawn", "timeout_ms": 30000}})
				}
				done <- err
			}()
		}
		synctest.Wait()
		if n := mcpbridge.Waiting(e.bridge, e.session.ID); n != mcpbridge.MaxWaitsPerClient {
			t.Fatalf("%d waits, want %d", n, mcpbridge.MaxWaitsPerClient)
		}
		if s := callShow(t, context.Background(), cs, map[string]any{"after": v}); !s.isErr || s.fields["error"] != mcpbridge.ErrKindRateLimited {
			t.Fatalf("one wait too many: %+v", s)
		}
		// Without after nothing waits, and nothing is refused.
		if s := callShow(t, context.Background(), cs, nil); s.isErr || s.version() != v {
			t.Fatalf("raxol_show without after, with every slot taken: %+v", s)
		}
		start := time.Now()
		cancel()
		for range mcpbridge.MaxWaitsPerClient {
			if err := <-done; err == nil {
				t.Fatalf("a cancelled call was answered")
			}
		}
		testkit.Eventually(t, time.Second, func() bool { return mcpbridge.Waiting(e.bridge, e.session.ID) == 0 }, "the waits to end")
		if took := time.Since(start); took >= time.Second {
			t.Fatalf("the waits ended %v after their calls", took)
		}
		synctest.Wait()
		if n := testkit.Goroutines(t, "mcpbridge.(*sessionServer).waitView"); n != 0 {
			t.Fatalf("%d waits still running", n)
		}
	})
}

// TestShowRefusesBadArguments: after must be a whole number from 0.
func TestShowRefusesBadArguments(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(false)
	for _, args := range []map[string]any{
		{"after": -1}, {"after": 1.5}, {"after": "3"}, {"after": nil}, {"after": float64(1 << 54)}, {"version": 1},
	} {
		if s := callShow(t, context.Background(), cs, args); !s.isErr || s.fields["error"] != mcpbridge.ErrKindInvalidArgs {
			t.Errorf("raxol_show %v = %+v, want invalid_arguments", args, s)
		}
	}
}

// TestShowAnnouncesLikeTheActivity: a client that may read the tree but
// not the activity gets the view without the announcement of the newest
// agent action, named in "withheld".
func TestShowAnnouncesLikeTheActivity(t *testing.T) {
	noActivity := func(method string, args map[string]any, _ authz.Context) authz.Decision {
		if method == "resources/read" && args["uri"] == mcpbridge.URIActivity {
			return authz.Deny("not the activity")
		}
		return authz.Allow()
	}
	e := policyEnv(t, configured(authz.AllowAll(), noActivity))
	cs, _ := e.connect(false)
	testkit.MustCall(t, cs, "app.name.type_into", map[string]any{"text": "ada"})
	s := callShow(t, context.Background(), cs, nil)
	w, _ := s.fields["withheld"].(map[string]any)
	if s.isErr || !strings.Contains(s.html(), `value="ada"`) || s.fields["announce"] != nil || w["announce"] == nil || len(w) != 1 {
		t.Fatalf("raxol_show without the activity = %+v", s)
	}
}

// TestShowIsReadLikeTheTree: a client whose read policy refuses the tree
// gets raxol_show's answer without the view and its version, named in
// "withheld", and does not wait; one whose tool policy refuses raxol_show
// is neither offered nor served it.
func TestShowIsReadLikeTheTree(t *testing.T) {
	noTree := func(method string, args map[string]any, _ authz.Context) authz.Decision {
		if method == "resources/read" && args["uri"] == mcpbridge.URITree {
			return authz.Deny("not the tree")
		}
		return authz.Allow()
	}
	bubble(t, func(t *testing.T) {
		p := configured(authz.AllowAll(), noTree)
		e := appEnv(t, form{}, &p)
		cs, _ := e.connect(false)
		testkit.MustCall(t, cs, "app.name.type_into", map[string]any{"text": "secret-value"})
		for _, args := range []map[string]any{nil, {"after": 1}, {"after": 0}} {
			start := time.Now()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpbridge.ToolShow, Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			s := shownOf(t, res)
			if time.Since(start) != 0 {
				t.Fatalf("%v: a client that may not read the tree waited %v", args, time.Since(start))
			}
			w, _ := s.fields["withheld"].(map[string]any)
			if s.isErr || s.fields["html"] != nil || s.fields["version"] != nil || w["html"] == nil || w["version"] == nil {
				t.Fatalf("%v: answer %+v, want the view and version withheld", args, s)
			}
			b, _ := json.Marshal(res)
			if strings.Contains(string(b), "secret-value") || strings.Contains(string(b), "<input") {
				t.Fatalf("%v: the withheld answer carries the view: %s", args, b)
			}
		}
		if n := mcpbridge.Waiting(e.bridge, e.session.ID); n != 0 {
			t.Fatalf("%d waits", n)
		}
	})

	// The tool policy decides whether it may be called at all.
	noShow := func(name string, _ map[string]any, _ authz.Context) authz.Decision {
		if name == mcpbridge.ToolShow {
			return authz.Deny("not this one")
		}
		return authz.Allow()
	}
	e := policyEnv(t, configured(noShow, authz.AllowAll()))
	cs, _ := e.connect(false)
	if contains(listNames(t, cs), mcpbridge.ToolShow) {
		t.Fatalf("a tool the policy refuses is listed")
	}
	if s := callShow(t, context.Background(), cs, nil); !s.isErr || s.html() != "" {
		t.Fatalf("a refused raxol_show answered %+v", s)
	}
}
