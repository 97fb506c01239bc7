package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// webClient is a browser as the server sees one: a cookie jar that
// opened the owner's link, and the live channel it holds open.
type webClient struct {
	t      *testing.T
	http   *http.Client
	origin string // what its requests say they come from
	base   string // http://…/sessions/<id>/view
	events <-chan sseEvent
}

// openView has a browser open the owner's link and its live channel; the
// owner's prompt is up when it returns.
func openView(t *testing.T, srv *testServer, owner *client, id string) *webClient {
	t.Helper()
	link := viewLink(t, owner)
	jar, _ := cookiejar.New(nil)
	w := &webClient{t: t, http: &http.Client{Jar: jar, Timeout: waitLong}, origin: "http://" + srv.HTTPAddr(),
		base: "http://" + srv.HTTPAddr() + "/sessions/" + id + "/view"}
	if r, err := w.http.Get(link); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("the link: %v", err)
	}
	w.events = openEvents(t, jar, w.base+"/events")
	return w
}

// post sends body (JSON unless raw) to path under the view with the
// browser's cookie and origin, and returns the status and answer.
func (w *webClient) post(path string, body any, header ...string) (int, string) {
	w.t.Helper()
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	default:
		b, _ = json.Marshal(v)
	}
	req, _ := http.NewRequest(http.MethodPost, w.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", w.origin)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := w.http.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// A driver's keys and clicks reach the demo through its widgets, as a
// terminal's do: the owner's SSH screen shows the result, the activity log
// says the browser did it, and the page is sent patches of the widgets
// that changed, not whole frames. Every malformed or forged event is
// refused with a clear error and changes nothing.
func TestBrowserDriverActsThroughTheWidgets(t *testing.T) {
	srv := startServer(t, server.Options{})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	b := openView(t, srv, owner, id)
	admitBrowser(t, owner, "r")
	role := waitEvent(t, b.events, "role", func(d string) bool { return strings.Contains(d, `"role":"driver"`) })
	var r struct{ Name string }
	_ = json.Unmarshal([]byte(role.data), &r)
	if !strings.HasPrefix(r.Name, "browser-") {
		t.Fatalf("the role event names the browser %q", r.Name)
	}
	first := waitEvent(t, b.events, "frame", func(string) bool { return true })
	if strings.Contains(first.data, `readonly aria-readonly="true"`) {
		t.Errorf("a driver's view is read only")
	}

	for _, k := range []string{"b", "i", "l", "l"} {
		if code, body := b.post("/input", map[string]string{"id": demo.IDSearch, "kind": "key", "key": k}); code != http.StatusOK || !strings.Contains(body, `"taken":true`) {
			t.Fatalf("key %q: %d %s", k, code, body)
		}
	}
	if code, body := b.post("/input", map[string]string{"id": demo.IDSearch, "kind": "paste", "text": "ing"}); code != http.StatusOK {
		t.Fatalf("paste: %d %s", code, body)
	}
	owner.WaitFor(t, "Search: billing", waitLong)
	waitEvent(t, b.events, "patch", func(d string) bool { return strings.Contains(d, `value="billing"`) })
	if code, body := b.post("/input", map[string]string{"id": demo.IDSearchGo, "kind": "click"}); code != http.StatusOK || !strings.Contains(body, `"taken":true`) {
		t.Fatalf("click: %d %s", code, body)
	}
	owner.WaitFor(t, `Filter "billing"`, waitLong)
	se, _ := srv.Session(id)
	byBrowser := 0
	for _, a := range se.Activity() {
		if strings.Contains(a.Origin, r.Name) && !a.Agent {
			byBrowser++
		}
	}
	if byBrowser == 0 {
		t.Fatalf("the activity log does not name %s: %+v", r.Name, se.Activity())
	}

	// What is refused, and why.
	before := se.Dispatcher.Snapshot().Version
	for _, c := range []struct {
		name   string
		body   any
		header []string
		code   int
		says   string
	}{
		{"no Origin", map[string]string{"id": demo.IDSearch, "kind": "key", "key": "x"}, []string{"Origin", ""}, http.StatusForbidden, "cross-origin"},
		{"another Origin", map[string]string{"id": demo.IDSearch, "kind": "key", "key": "x"}, []string{"Origin", "http://evil.example"}, http.StatusForbidden, "cross-origin"},
		{"a form post", []byte("id=search&kind=key&key=x"), []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusBadRequest, "application/json"},
		{"not JSON", []byte("{"), nil, http.StatusBadRequest, "malformed"},
		{"two objects", []byte(`{"id":"search","kind":"key","key":"x"}{}`), nil, http.StatusBadRequest, "malformed"},
		{"an unknown field", map[string]any{"id": demo.IDSearch, "kind": "key", "key": "x", "x": 1}, nil, http.StatusBadRequest, "unknown field"},
		{"a wrong type", map[string]any{"id": 7, "kind": "key"}, nil, http.StatusBadRequest, "malformed"},
		{"no id", map[string]string{"kind": "click"}, nil, http.StatusBadRequest, "widget id"},
		{"an unknown kind", map[string]string{"id": demo.IDSearch, "kind": "drag"}, nil, http.StatusBadRequest, "kind must be"},
		{"an unknown key", map[string]string{"id": demo.IDSearch, "kind": "key", "key": "hyper+q"}, nil, http.StatusBadRequest, "malformed"},
		{"an empty paste", map[string]string{"id": demo.IDSearch, "kind": "paste"}, nil, http.StatusBadRequest, "paste"},
		{"an oversized body", map[string]string{"id": demo.IDSearch, "kind": "paste", "text": strings.Repeat("x", 8<<10)}, nil, http.StatusBadRequest, "malformed"},
		{"a paste over the bound", map[string]string{"id": demo.IDSearch, "kind": "paste", "text": strings.Repeat("y", 2000)}, nil, http.StatusBadRequest, "paste"},
	} {
		code, body := b.post("/input", c.body, c.header...)
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.name, code, body, c.code, c.says)
		}
	}
	if v := se.Dispatcher.Snapshot().Version; v != before {
		t.Errorf("refused events changed the model (version %d → %d)", before, v)
	}
	if req, _ := http.NewRequest(http.MethodGet, b.base+"/input", nil); true {
		if resp, err := b.http.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET of the input endpoint: %v %v", resp.StatusCode, err)
		}
	}

	// Too many events at once: some are refused 429, none breaks anything.
	limited := 0
	for range 120 {
		if code, _ := b.post("/input", map[string]string{"id": demo.IDTable, "kind": "key", "key": "down"}); code == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited == 0 {
		t.Errorf("120 events at once were all taken: no rate limit")
	}
	owner.WaitFor(t, "Search: billing", waitLong)
}

// An observer's page has no input: its events, forged by hand, are
// refused, as are approval answers; a refused browser's cookie opens
// nothing; browsers over the session's cap get 429.
func TestBrowserObserverAndRefusedCannotAct(t *testing.T) {
	srv := startServer(t, server.Options{Limits: server.Limits{MaxBrowsersPerSession: 2}})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	obs := openView(t, srv, owner, id)
	admitBrowser(t, owner, "o")
	waitEvent(t, obs.events, "role", func(d string) bool { return strings.Contains(d, `"role":"observer"`) })
	se, _ := srv.Session(id)
	before := se.Dispatcher.Snapshot().Version
	if code, body := obs.post("/input", map[string]string{"id": demo.IDSearchGo, "kind": "click"}); code != http.StatusForbidden || !strings.Contains(body, "watch") {
		t.Errorf("an observer's click: %d %s", code, body)
	}
	if code, body := obs.post("/answer", map[string]string{"prompt": "x", "answer": "once"}); code != http.StatusForbidden || !strings.Contains(body, "owner") {
		t.Errorf("an observer's approval answer: %d %s", code, body)
	}
	if v := se.Dispatcher.Snapshot().Version; v != before {
		t.Errorf("an observer changed the model")
	}

	// Refused: the channel ends, and the cookie opens nothing more.
	no := openView(t, srv, owner, id)
	admitBrowser(t, owner, "n")
	waitEvent(t, no.events, "end", func(d string) bool { return strings.Contains(d, "did not let you in") })
	if r, err := no.http.Get(no.base); err != nil || r.StatusCode != http.StatusForbidden {
		t.Errorf("a refused browser's page: %v %v", r.StatusCode, err)
	}

	// The cap: two browsers on the session; a third channel is refused.
	second := openView(t, srv, owner, id)
	admitBrowser(t, owner, "o")
	waitEvent(t, second.events, "role", func(string) bool { return true })
	link := viewLink(t, owner)
	jar, _ := cookiejar.New(nil)
	third := &http.Client{Jar: jar, Timeout: waitLong}
	if r, err := third.Get(link); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("the third link: %v", err)
	}
	r, err := third.Get(obs.base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "limit 2") {
		t.Errorf("a third browser: %d %s", r.StatusCode, body)
	}
}

// The owner's own browser ("it is me") answers an agent's approval prompt
// with the terminal's arming rule: an answer before the prompt was shown
// for the arming delay is refused; after it, it decides the agent's call
// and the terminal's prompt goes away. ctrl+x in the owner's attach panel
// then removes every browser: its channel ends at once and its cookie
// opens nothing more.
func TestBrowserOwnerAnswersApprovalsAndIsRemoved(t *testing.T) {
	const arming = 700 * time.Millisecond
	srv := startServer(t, server.Options{MCP: server.MCPOptions{ApprovalTimeout: 30 * time.Second}, SSH: server.SSHOptions{PromptArming: arming}})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	me := openView(t, srv, owner, id)
	admitBrowser(t, owner, "m")
	waitEvent(t, me.events, "role", func(d string) bool { return strings.Contains(d, `"role":"owner"`) })

	se, _ := srv.Session(id)
	ag := attachAgent(t, srv, se, false)
	ag.call("demo.services.select_row", map[string]any{"index": 2}) // billing
	ag.call("demo.restart.click", nil)
	owner.WaitFor(t, "Restart billing?", waitLong)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "demo.confirm_restart.confirm", Arguments: map[string]any{}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true}
		}
		done <- res
	}()
	ev := waitEvent(t, me.events, "prompts", func(d string) bool { return strings.Contains(d, "demo.confirm_restart.confirm") })
	var ps []struct {
		ID      string
		ArmedMS int64 `json:"armed_in_ms"`
	}
	if err := json.Unmarshal([]byte(ev.data), &ps); err != nil || len(ps) != 1 {
		t.Fatalf("prompts: %v %s", err, ev.data)
	}
	if ps[0].ArmedMS <= 0 || ps[0].ArmedMS > arming.Milliseconds() {
		t.Errorf("the prompt arms in %d ms, want (0, %d]", ps[0].ArmedMS, arming.Milliseconds())
	}
	if code, body := me.post("/answer", map[string]string{"prompt": ps[0].ID, "answer": "once"}); code != http.StatusConflict || !strings.Contains(body, "not armed") {
		t.Fatalf("an answer before the prompt armed: %d %s", code, body)
	}
	if code, body := me.post("/answer", map[string]string{"prompt": ps[0].ID, "answer": "maybe"}); code != http.StatusBadRequest {
		t.Fatalf("a malformed answer: %d %s", code, body)
	}
	time.Sleep(arming) // the arming delay itself: what is tested
	if code, body := me.post("/answer", map[string]string{"prompt": ps[0].ID, "answer": "once"}); code != http.StatusOK {
		t.Fatalf("an armed answer: %d %s", code, body)
	}
	select {
	case res := <-done:
		if res.IsError {
			t.Fatalf("the approved call failed: %+v", res)
		}
	case <-time.After(waitLong):
		t.Fatal("the approved call did not finish")
	}
	owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, "wants to run") }, waitLong)
	waitEvent(t, me.events, "prompts", func(d string) bool { return d == "[]" })
	if code, _ := me.post("/answer", map[string]string{"prompt": ps[0].ID, "answer": "deny"}); code != http.StatusNotFound {
		t.Errorf("a second answer to the same prompt: %d", code)
	}

	// Removal by the owner.
	inPresence := func() int {
		n := 0
		for _, a := range se.Attached() {
			if a.Kind == session.KindBrowser {
				n++
			}
		}
		return n
	}
	testkit.Eventually(t, waitLong, func() bool { return inPresence() == 1 }, "the browser in presence")

	// The owner's page lists the browsers and removes one of them.
	other := openView(t, srv, owner, id)
	admitBrowser(t, owner, "r")
	role := waitEvent(t, other.events, "role", func(string) bool { return true })
	var them struct{ Name string }
	_ = json.Unmarshal([]byte(role.data), &them)
	waitEvent(t, me.events, "browsers", func(d string) bool { return strings.Contains(d, them.Name) && strings.Contains(d, `"you":true`) })
	if code, body := other.post("/remove", map[string]string{"name": them.Name}); code != http.StatusForbidden {
		t.Errorf("a driver removing a browser: %d %s", code, body)
	}
	if code, body := me.post("/remove", map[string]string{"name": "browser-none"}); code != http.StatusNotFound {
		t.Errorf("removing no such browser: %d %s", code, body)
	}
	if code, body := me.post("/remove", map[string]string{"name": them.Name}); code != http.StatusOK {
		t.Fatalf("the owner's page removing %s: %d %s", them.Name, code, body)
	}
	waitEvent(t, other.events, "end", func(d string) bool { return strings.Contains(d, "removed") })
	waitEvent(t, me.events, "browsers", func(d string) bool { return !strings.Contains(d, them.Name) })
	testkit.Eventually(t, waitLong, func() bool { return inPresence() == 1 }, "the removed browser out of presence")

	owner.Key(keyCtrlO)
	owner.WaitFor(t, "Browsers: browser-", waitLong)
	owner.Key(keyCtrlX)
	waitEvent(t, me.events, "end", func(d string) bool { return strings.Contains(d, "removed") })
	owner.WaitFor(t, "removed 1 browser", waitLong)
	testkit.Eventually(t, waitLong, func() bool { return inPresence() == 0 }, "the removed browser out of presence")
	if r, err := me.http.Get(me.base); err != nil || r.StatusCode != http.StatusForbidden {
		t.Errorf("a removed browser's page: %v %v", r.StatusCode, err)
	}
}

// A browser with no link asks the owner from the page it is refused: a
// form (the page has no script) that posts to view/ask from the view's
// own origin; the owner's answer lets it in. From another origin, or
// without one, the ask is refused.
func TestBrowserAsksWithoutALink(t *testing.T) {
	srv := startServer(t, server.Options{})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	base := "http://" + srv.HTTPAddr() + "/sessions/" + id + "/view"
	jar, _ := cookiejar.New(nil)
	b := &webClient{t: t, http: &http.Client{Jar: jar, Timeout: waitLong, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		origin: "http://" + srv.HTTPAddr(), base: base}

	r, err := b.http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden || !strings.Contains(string(page), `action="/sessions/`+id+`/view/ask"`) ||
		!strings.Contains(r.Header.Get("Content-Security-Policy"), "form-action 'self'") {
		t.Fatalf("the page without access: %d %s (CSP %q)", r.StatusCode, page, r.Header.Get("Content-Security-Policy"))
	}
	for _, origin := range []string{"", "http://evil.example"} {
		if code, _ := b.post("/ask", []byte{}, "Origin", origin, "Content-Type", "application/x-www-form-urlencoded"); code != http.StatusForbidden {
			t.Errorf("an ask from origin %q: %d, want 403", origin, code)
		}
	}
	if code, _ := b.post("/ask", []byte{}, "Content-Type", "application/x-www-form-urlencoded"); code != http.StatusSeeOther {
		t.Fatalf("the ask: %d, want 303 to the page", code)
	}
	events := openEvents(t, jar, base+"/events")
	waitEvent(t, events, "state", func(d string) bool { return strings.Contains(d, "Asking") })
	admitBrowser(t, owner, "r")
	waitEvent(t, events, "role", func(d string) bool { return strings.Contains(d, `"role":"driver"`) })

	// Asking is bounded: more asks than a session may have waiting (and
	// than one address may make) are refused.
	refused := 0
	for range 12 {
		if code, _ := b.post("/ask", []byte{}, "Content-Type", "application/x-www-form-urlencoded"); code == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("12 asks at once were all taken")
	}
}

// Two tabs of one browser: the first asks the owner, the second waits for
// that answer; when the first tab closes before the owner answers, the
// second asks in its place and the owner's answer lets it in.
func TestBrowserSecondTabAsksWhenTheFirstLeaves(t *testing.T) {
	srv := startServer(t, server.Options{})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	link := viewLink(t, owner)
	jar, _ := cookiejar.New(nil)
	if r, err := (&http.Client{Jar: jar, Timeout: waitLong}).Get(link); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("the link: %v", err)
	}
	base := "http://" + srv.HTTPAddr() + "/sessions/" + id + "/view"
	ctx, closeFirst := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
	first, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil || first.StatusCode != http.StatusOK {
		t.Fatalf("the first tab's channel: %v", err)
	}
	waitEvent(t, readEvents(first.Body), "state", func(d string) bool { return strings.Contains(d, "Asking") })
	owner.WaitFor(t, browserPrompt, waitLong)
	second := openEvents(t, jar, base+"/events")
	waitEvent(t, second, "state", func(d string) bool { return strings.Contains(d, "Asking") })
	se, _ := srv.Session(id)
	asking := func() string { // the pending join's id, "" for none
		for _, p := range se.Pending() {
			if p.Kind == session.PendingJoin {
				return p.ID
			}
		}
		return ""
	}
	was := asking()
	closeFirst()
	first.Body.Close()
	testkit.Eventually(t, waitLong, func() bool { now := asking(); return now != "" && now != was }, "the second tab to ask in the first's place")
	admitBrowser(t, owner, "o")
	waitEvent(t, second, "role", func(d string) bool { return strings.Contains(d, `"role":"observer"`) })
}
