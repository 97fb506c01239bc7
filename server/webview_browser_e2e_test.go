package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/browsertest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// The browser view, tried in a real headless Chromium against a real
// server, with the owner on a real SSH terminal: what a person in the
// browser sees, what their clicks and keys do, what is refused, and what
// a screen reader gets.

// chromiumView is one Chromium tab on a session's view, let in by the
// owner over SSH.
type chromiumView struct {
	srv   *testServer
	owner *client
	id    string
	se    *session.Session
	link  string
	ctx   context.Context // the tab
}

// roleOfKey is the role the page reports for the owner's answer key.
var roleOfKey = map[string]string{"o": "observer", "r": "driver", "m": "owner"}

// openInChromium starts a demo server with opts, connects its owner over
// SSH, opens the owner's one-time link in a new Chromium and lets it in
// with key ("o", "r" or "m"); it returns once the page says its role.
func openInChromium(t *testing.T, opts server.Options, key string) *chromiumView {
	t.Helper()
	srv := startServer(t, opts)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	se, ok := srv.Session(id)
	if !ok {
		t.Fatalf("session %s is not live", id)
	}
	link := viewLink(t, owner)
	ctx := browsertest.New(t)
	// The page shows the session at once (read only) and its live channel
	// asks the owner.
	browsertest.Run(t, ctx, "open the owner's link", chromedp.Navigate(link), chromedp.WaitVisible("#view table"))
	admitBrowser(t, owner, key)
	v := &chromiumView{srv: srv, owner: owner, id: id, se: se, link: link, ctx: ctx}
	v.waitJS(t, `document.getElementById("view").dataset.role === `+strconv.Quote(roleOfKey[key]), "the page to say its role is "+roleOfKey[key])
	return v
}

// waitJS polls the page until the JavaScript expression js is true.
func (v *chromiumView) waitJS(t *testing.T, js, what string) {
	t.Helper()
	waitInTab(t, v.ctx, js, what)
}

// waitInTab polls the tab of ctx until the JavaScript expression js is
// true, or fails the test saying what it waited for.
func waitInTab(t *testing.T, ctx context.Context, js, what string) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !browsertest.Eval[bool](t, ctx, `!!(`+js+`)`) {
		if time.Now().After(deadline) {
			t.Fatalf("after %s the page did not show %s\n#state: %q\n#announce: %q\n#view: %.1500s", waitLong, what,
				browsertest.Eval[string](t, ctx, `document.getElementById("state") ? document.getElementById("state").textContent : ""`),
				browsertest.Eval[string](t, ctx, `document.getElementById("announce") ? document.getElementById("announce").textContent : ""`),
				browsertest.Eval[string](t, ctx, `document.getElementById("view") ? document.getElementById("view").innerHTML : document.body.innerText`))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// JavaScript that reads the page.
const (
	jsSearchInput = `document.querySelector('#view [data-id="search"] input')`
	// jsHighlighted is the index of the services table's highlighted row
	// (-1 for none).
	jsHighlighted = `[...document.querySelectorAll('#view [data-id="services"] tbody tr')].findIndex((r) => r.dataset.highlighted === "true")`
)

// highlightedIs is JavaScript: the services table's highlighted row is
// the row at index i, and it reads name.
func highlightedIs(i int, name string) string {
	return fmt.Sprintf(`(() => { const r = document.querySelectorAll('#view [data-id="services"] tbody tr[data-highlighted="true"]');
		return r.length === 1 && r[0].dataset.index === %q && r[0].cells[0].textContent.startsWith(%q); })()`, strconv.Itoa(i), name)
}

// forgeInput is JavaScript: the page's own script POSTs an input event
// to the view, as app.js would, with the page's cookie; it evaluates to
// the response's status.
const forgeInput = `fetch(location.pathname.replace(/\/+$/, "") + "/input", {method: "POST", credentials: "same-origin",
	headers: {"Content-Type": "application/json"}, body: JSON.stringify({id: "search", kind: "key", key: "x"})}).then((r) => r.status)`

// browserActions is the session's activity log entries done by a browser.
func browserActions(se *session.Session) []session.Action {
	var out []session.Action
	for _, a := range se.Activity() {
		if strings.Contains(a.Origin, "browser-") {
			out = append(out, a)
		}
	}
	return out
}

// searchText is the text of the demo's Search input in the session.
func searchText(t *testing.T, se *session.Session) string {
	t.Helper()
	w, ok := ui.Find(se.Dispatcher.Snapshot().Tree, demo.IDSearch)
	in, isInput := w.(ui.TextInput)
	if !ok || !isInput {
		t.Fatalf("the demo shows no Search input (%T)", w)
	}
	return in.Value
}

// browsersPresent counts the browsers in the session's presence.
func browsersPresent(se *session.Session) int {
	n := 0
	for _, a := range se.Attached() {
		if a.Kind == session.KindBrowser {
			n++
		}
	}
	return n
}

// An observer's Chromium shows the demo's services as a real table whose
// highlighted row follows the owner's arrow keys over SSH; an agent's
// typing shows in the page's Search input and is said in the live region;
// and the observer's own typing and a forged input event change nothing.
func TestBrowserInChromiumObserverWatches(t *testing.T) {
	testkit.EndToEnd(t)
	v := openInChromium(t, server.Options{}, "o")

	// The services as a <table> with its column headers, its rows from the
	// demo's data.
	headers := browsertest.Eval[[]string](t, v.ctx, `[...document.querySelectorAll('#view table th[scope="col"]')].map((th) => th.textContent)`)
	if want := []string{"Service", "Region", "Status"}; len(headers) < len(want) || strings.Join(headers[:3], ",") != strings.Join(want, ",") {
		t.Fatalf("the page's table headers are %q", headers)
	}
	if n := browsertest.Eval[int](t, v.ctx, `document.querySelectorAll('#view table tbody tr').length`); n != 8 {
		t.Fatalf("the page's table has %d rows, want the demo's 8", n)
	}
	if got := browsertest.Eval[int](t, v.ctx, jsHighlighted); got != -1 {
		t.Fatalf("a row is highlighted (%d) before the owner focused the table", got)
	}

	// The owner focuses the services table over SSH and moves down: the
	// page's highlighted row follows, key by key.
	v.owner.Key(keyShiftTab) // from the tabs back to the services table
	v.owner.Key(keyDown)
	v.waitJS(t, highlightedIs(1, "auth"), `the owner's highlighted row "auth"`)
	v.owner.Key(keyDown)
	v.waitJS(t, highlightedIs(2, "billing"), `the owner's highlighted row "billing"`)
	v.owner.Key(keyUp)
	v.waitJS(t, highlightedIs(1, "auth"), `the owner's highlighted row back on "auth"`)

	// An agent types into Search: the page's input shows the text, and
	// the live region says it was the agent.
	ag := attachAgent(t, v.srv, v.se, false)
	ag.call("demo.search.type_into", map[string]any{"text": "from-the-agent"})
	v.waitJS(t, jsSearchInput+`.value === "from-the-agent"`, "the agent's text in the Search input")
	v.waitJS(t, `/^agent e2e-agent\b.* typed into Search$/.test(document.getElementById("announce").textContent)`,
		"the live region saying the agent typed in Search")
	if live := browsertest.Eval[string](t, v.ctx, `document.getElementById("announce").getAttribute("aria-live")`); live != "polite" {
		t.Errorf("#announce has aria-live=%q", live)
	}
	v.owner.WaitFor(t, "from-the-agent", waitLong)

	// The observer's page is read only: typing into the Search input in
	// Chromium changes neither the page nor the session.
	if !browsertest.Eval[bool](t, v.ctx, jsSearchInput+`.readOnly`) {
		t.Fatal("the observer's Search input is not read only")
	}
	browsertest.Run(t, v.ctx, "type into the observer's Search input",
		chromedp.Click(`#view [data-id="search"] input`), chromedp.SendKeys(`#view [data-id="search"] input`, "zzz\b\b"))
	if got := browsertest.Eval[string](t, v.ctx, jsSearchInput+`.value`); got != "from-the-agent" {
		t.Fatalf("the observer's typing changed the page's input to %q", got)
	}
	// A forged event from the page's own script, with its cookie, is
	// refused.
	status, err := chromedp.Run(v.ctx, chromedp.Evaluate[int](forgeInput, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusForbidden {
		t.Fatalf("an observer's forged input event answered %d, want 403", status)
	}
	// The owner moves again; once the page shows it, the frames after the
	// observer's typing have come, and none of them has the typing.
	v.owner.Key(keyDown)
	v.waitJS(t, highlightedIs(2, "billing"), `the owner's highlighted row on "billing" again`)
	if got := searchText(t, v.se); got != "from-the-agent" {
		t.Fatalf("the session's search is %q after the observer typed", got)
	}
	if s := v.owner.Screen(); strings.Contains(s, "zzz") || strings.Contains(s, "from-the-agentx") || !strings.Contains(s, "from-the-agent") {
		t.Fatalf("the owner's screen changed after the observer typed:\n%s", s)
	}
	if got := browsertest.Eval[string](t, v.ctx, jsSearchInput+`.value`); got != "from-the-agent" {
		t.Fatalf("the page's input reads %q", got)
	}
	if acts := browserActions(v.se); len(acts) != 0 {
		t.Fatalf("the activity log has an observer's actions: %+v", acts)
	}
}

// A driver's Chromium types into the demo's Search input and clicks its
// Search button: the owner's SSH terminal shows the same text and the
// filter it applied, and the activity log names the browser.
func TestBrowserInChromiumDriverTypesAndClicks(t *testing.T) {
	testkit.EndToEnd(t)
	v := openInChromium(t, server.Options{}, "r")
	if browsertest.Eval[bool](t, v.ctx, jsSearchInput+`.readOnly`) {
		t.Fatal("the driver's Search input is read only")
	}
	name := browsertest.Eval[string](t, v.ctx, `document.getElementById("view").closest("body").querySelector("header").textContent.match(/browser-[0-9a-f]+/)[0]`)

	// Typed key by key in Chromium: each key goes to the server, and the
	// page's input shows what the server's frame says.
	browsertest.Run(t, v.ctx, "type hello into Search",
		chromedp.Click(`#view [data-id="search"] input`), chromedp.SendKeys(`#view [data-id="search"] input`, "hello"))
	v.waitJS(t, jsSearchInput+`.value === "hello"`, `"hello" in the Search input`)
	// Focus stayed in the input while frames replaced it.
	if !browsertest.Eval[bool](t, v.ctx, `document.activeElement === `+jsSearchInput) {
		t.Errorf("the Search input lost focus while typing (active: %s)", browsertest.Eval[string](t, v.ctx, `document.activeElement.outerHTML.slice(0, 200)`))
	}
	browsertest.Run(t, v.ctx, "click the Search button", chromedp.Click(`#view [data-id="search_btn"]`))

	// The owner's terminal: the text and the filter it applied.
	v.owner.WaitFor(t, `Filter "hello": 0 of 8 services`, waitLong)
	if s := v.owner.Screen(); !strings.Contains(s, "hello") {
		t.Fatalf("the owner's Search input lacks the browser's text:\n%s", s)
	}
	if search, filter := searchText(t, v.se), demo.ProjectServices(v.se.Dispatcher.Snapshot().Model.(demo.Model)).Filter; search != "hello" || filter != "hello" {
		t.Fatalf("the session's search is %q, filter %q", search, filter)
	}
	v.waitJS(t, `document.getElementById("view").textContent.includes('Filter "hello": 0 of 8 services')`, "the filter's status in the page")

	// The activity log attributes it to the browser: in the session, and
	// on the owner's terminal (ctrl+g).
	acts := browserActions(v.se)
	var typed, clicked bool
	for _, a := range acts {
		if !strings.Contains(a.Origin, name) || a.Agent {
			t.Errorf("an action of another browser or an agent: %+v", a)
		}
		typed = typed || a.Widget == "search"
		clicked = clicked || a.Widget == "search_btn"
	}
	if !typed || !clicked {
		t.Fatalf("the activity log lacks the browser's typing (%v) or click (%v): %+v", typed, clicked, v.se.Activity())
	}
	v.owner.Key("\x07") // ctrl+g: the activity panel
	v.owner.WaitFor(t, func(s string) bool { return strings.Contains(s, "Activity (") && strings.Contains(s, name) }, waitLong)
	v.owner.Key("\x07")

	// Enter on the focused Search button presses it once: the key is
	// sent, and the click the browser makes of it is not sent again.
	browsertest.Run(t, v.ctx, "press Enter on the Search button", chromedp.Focus(`#view [data-id="search_btn"]`), chromedp.KeyEvent("\r"))

	// A click on a tab is that tab (not the widget's first part), and a
	// click on a row selects that row.
	browsertest.Run(t, v.ctx, "click the Logs tab", chromedp.Click(`#view [role=tab][data-index="2"]`))
	v.owner.WaitFor(t, "Logs from 12:", waitLong)
	// The page sends its events one after the other: the Enter was taken
	// before the tab's keys.
	presses := 0
	for _, a := range browserActions(v.se) {
		if a.Widget == "search_btn" {
			presses += max(a.Count, 1)
		}
	}
	if presses != 2 {
		t.Errorf("the Search button was pressed %d times by a click and an Enter, want 2: %+v", presses, v.se.Activity())
	}
	v.waitJS(t, `document.querySelector('#view [role=tab][data-index="2"]').getAttribute("aria-selected") === "true"`, "the Logs tab selected")
	browsertest.Run(t, v.ctx, "click the Overview tab", chromedp.Click(`#view [role=tab][data-index="0"]`))
	v.waitJS(t, `document.querySelector('#view [role=tab][data-index="0"]').getAttribute("aria-selected") === "true"`, "the Overview tab selected")
	browsertest.Run(t, v.ctx, "clear the filter",
		chromedp.Click(`#view [data-id="search"] input`), chromedp.SendKeys(`#view [data-id="search"] input`, "\b\b\b\b\b"))
	v.waitJS(t, jsSearchInput+`.value === ""`, "an empty Search input")
	browsertest.Run(t, v.ctx, "click the Search button", chromedp.Click(`#view [data-id="search_btn"]`))
	v.waitJS(t, `document.querySelectorAll('#view [data-id="services"] tbody tr').length === 8`, "all 8 services again")
	browsertest.Run(t, v.ctx, "click the row of billing", chromedp.Click(`#view [data-id="services"] tbody tr[data-index="2"] td`))
	v.owner.WaitFor(t, "Selected billing", waitLong)
	v.waitJS(t, `document.querySelector('#view [data-id="services"] tbody tr[data-index="2"]').getAttribute("aria-selected") === "true"`,
		"billing's row selected")
}

// The owner in Chromium answers an agent's approval prompt: the page shows
// it with its buttons disabled until the prompt is armed, then "Allow
// once" lets the agent's call run, and the terminal's prompt goes away.
func TestBrowserInChromiumOwnerAnswersAnApproval(t *testing.T) {
	testkit.EndToEnd(t)
	const arming = 800 * time.Millisecond
	v := openInChromium(t, server.Options{SSH: server.SSHOptions{PromptArming: arming}}, "m")
	ag := attachAgent(t, v.srv, v.se, false)
	restarts := func() int {
		return demo.ProjectServices(v.se.Dispatcher.Snapshot().Model.(demo.Model)).Restarts["billing"]
	}
	ag.call("demo.services.select_row", map[string]any{"index": 2}) // billing
	ag.call("demo.restart.click", nil)
	v.owner.WaitFor(t, "Restart billing?", waitLong)
	v.waitJS(t, `document.querySelector('#view dialog[open]') !== null`, "the restart dialog")

	// The page itself notes when the prompt's buttons first appear and
	// when they are armed (a poll from here could come late).
	browsertest.Run(t, v.ctx, "watch the prompts", chromedp.Evaluate[chromedp.Void](`window.promptSeen = null; window.promptArmed = null;
		new MutationObserver(() => {
			const bs = [...document.querySelectorAll("#prompts button")];
			if (bs.length !== 3) { return; }
			if (!window.promptSeen) { window.promptSeen = {at: performance.now(), disabled: bs.map((b) => b.disabled), box: bs[0].parentElement}; }
			if (window.promptArmed === null && bs.every((b) => !b.disabled)) { window.promptArmed = performance.now() - window.promptSeen.at; }
		}).observe(document.getElementById("prompts"), {subtree: true, childList: true, attributes: true});`))

	done := make(chan *mcp.CallToolResult, 1)
	failed := make(chan error, 1)
	callCtx, cancelCall := context.WithCancel(context.Background())
	t.Cleanup(cancelCall) // before the server's shutdown, which would wait for it
	go func() {
		res, err := ag.cs.CallTool(callCtx, &mcp.CallToolParams{Name: "demo.confirm_restart.confirm", Arguments: map[string]any{}})
		if err != nil {
			failed <- err
			return
		}
		done <- res
	}()

	// The page shows the prompt, its answers disabled at first.
	v.waitJS(t, `window.promptSeen !== null && !document.getElementById("prompts").hidden`, "the approval prompt")
	if text := browsertest.Eval[string](t, v.ctx, `document.getElementById("prompts").textContent`); !strings.Contains(text, "e2e-agent") ||
		!strings.Contains(text, "demo.confirm_restart.confirm") {
		t.Fatalf("the page's prompt says %q", text)
	}
	if first := browsertest.Eval[[]bool](t, v.ctx, `window.promptSeen.disabled`); len(first) != 3 || !first[0] || !first[1] || !first[2] {
		t.Fatalf("the prompt's buttons were %v (disabled) when it appeared, want all disabled", first)
	}
	// A click while they are disabled does nothing (checked and clicked
	// in one step, so the arming cannot come in between).
	clicked := browsertest.Eval[string](t, v.ctx, `(() => { const b = document.querySelector('#prompts button[data-answer="once"]');
		if (!b.disabled) { return "armed already"; } b.click(); return "clicked"; })()`)
	v.owner.WaitFor(t, "wants to run demo.confirm_restart.confirm", waitLong)
	v.waitJS(t, `window.promptArmed !== null`, "the prompt's buttons armed")
	if ms := browsertest.Eval[float64](t, v.ctx, `window.promptArmed`); ms < float64((arming / 2).Milliseconds()) {
		t.Errorf("the buttons were armed %.0f ms after the prompt appeared, want about %s", ms, arming)
	}
	t.Logf("a click before the arming: %s", clicked)
	// The prompt's box is the one first shown, not rebuilt by the frames
	// that came while it armed (a rebuilt button under the pointer loses
	// the click).
	if !browsertest.Eval[bool](t, v.ctx, `document.querySelectorAll("#prompts .raxol-prompt").length === 1 && document.querySelector("#prompts .raxol-prompt") === window.promptSeen.box`) {
		t.Error("the page rebuilt the prompt while it armed")
	}
	select {
	case res := <-done:
		t.Fatalf("the agent's call finished before the owner answered: %+v", res)
	case err := <-failed:
		t.Fatal(err)
	default:
	}
	if restarts() != 0 {
		t.Fatal("the restart ran before the owner answered")
	}

	browsertest.Run(t, v.ctx, "click Allow once", chromedp.Click(`#prompts button[data-answer="once"]`))
	select {
	case res := <-done:
		var m map[string]any
		_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &m)
		if res.IsError || m["error"] != nil {
			t.Fatalf("the allowed call: %v", m)
		}
	case err := <-failed:
		t.Fatal(err)
	case <-time.After(waitLong):
		t.Fatal("the agent's call did not finish after the owner allowed it in the browser")
	}
	if restarts() != 1 {
		t.Fatalf("restarts of billing = %d, want 1", restarts())
	}
	v.owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, "wants to run") }, waitLong)
	v.owner.WaitFor(t, "Restarted billing", waitLong)
	v.waitJS(t, `document.getElementById("prompts").hidden`, "the prompt gone from the page")
	v.waitJS(t, `document.getElementById("view").textContent.includes("Restarted billing")`, "the restart in the page")

	// The owner's page lists another browser and removes it with a click.
	other := openView(t, v.srv, v.owner, v.id)
	admitBrowser(t, v.owner, "o")
	role := waitEvent(t, other.events, "role", func(string) bool { return true })
	var them struct{ Name string }
	_ = json.Unmarshal([]byte(role.data), &them)
	remove := `#browsers button[aria-label="Remove ` + them.Name + `"]`
	v.waitJS(t, `!!document.querySelector(`+strconv.Quote(remove)+`)`, "the other browser listed with a Remove button")
	browsertest.Run(t, v.ctx, "click Remove", chromedp.Click(remove))
	waitEvent(t, other.events, "end", func(d string) bool { return strings.Contains(d, "removed") })
	v.waitJS(t, `!document.getElementById("browsers").textContent.includes(`+strconv.Quote(them.Name)+`)`, "the removed browser gone from the list")
}

// What a browser is refused: a used link in a second Chromium shows the
// refusal page; a page from another origin, in the Chromium that has the
// cookie, cannot open the live channel; and the session's end ends the
// page's channel.
func TestBrowserInChromiumRefusesAndEnds(t *testing.T) {
	testkit.EndToEnd(t)
	v := openInChromium(t, server.Options{}, "o")
	testkit.Eventually(t, waitLong, func() bool { return browsersPresent(v.se) == 1 }, "the browser in presence")

	// The used link, in another browser.
	other := browsertest.New(t)
	resp, err := chromedp.Run(other, chromedp.NavigateResponse(v.link))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusForbidden {
		t.Fatalf("a used link answered %d in a second browser, want 403", resp.Status)
	}
	if text := browsertest.Eval[string](t, other, `document.body.innerText`); !strings.Contains(text, "used already") {
		t.Fatalf("the refusal page says %q", text)
	}
	if n := browsertest.Eval[int](t, other, `document.querySelectorAll("#view, script").length`); n != 0 {
		t.Fatal("the refusal page holds the view or a script")
	}

	// Another origin's page, in a tab of the browser that holds the
	// cookie, opens an EventSource on the view's live channel.
	events := "http://" + v.srv.HTTPAddr() + "/sessions/" + v.id + "/view/events"
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><title>elsewhere</title><p>elsewhere</p><script src="/spy.js"></script>`)
		case "/spy.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, `window.spy = {events: 0, error: false, state: -1};
const es = new EventSource(%q, {withCredentials: true});
for (const name of ["state", "role", "frame", "announce", "end", "message"]) { es.addEventListener(name, () => { window.spy.events++; }); }
es.onerror = () => { window.spy.error = true; window.spy.state = es.readyState; };`, events)
		default:
			http.NotFound(w, r)
		}
	}))
	defer evil.Close()
	rejected := scrapeMetric(t, v.srv.HTTPAddr(), `raxol_mcp_rejections_total{reason="origin"}`)
	tab, cancel := chromedp.NewContext(v.ctx)
	defer cancel()
	// The tab's first action opens it, with no deadline: one would close it.
	if err := chromedp.Do(tab); err != nil {
		t.Fatal(err)
	}
	browsertest.Run(t, tab, "open the other origin's page", chromedp.Navigate(evil.URL))
	waitInTab(t, tab, `window.spy && window.spy.error && window.spy.state === EventSource.CLOSED`, "the other origin's live channel failing")
	if n := browsertest.Eval[int](t, tab, `window.spy.events`); n != 0 {
		t.Fatalf("the other origin's page got %d events of the session", n)
	}
	if got := scrapeMetric(t, v.srv.HTTPAddr(), `raxol_mcp_rejections_total{reason="origin"}`); got < rejected+1 {
		t.Fatalf("the server did not refuse the other origin (rejections %v, then %v)", rejected, got)
	}
	if n := browsersPresent(v.se); n != 1 {
		t.Fatalf("%d browsers in presence after the other origin's attempt, want the page alone", n)
	}
	cancel()

	// The page's own live channel is open until the session ends; then
	// its #state says so and the channel is closed (the browser's resource
	// timing has the request once it finished).
	const streamDone = `performance.getEntriesByType("resource").some((e) => e.name.endsWith("/view/events"))`
	if browsertest.Eval[bool](t, v.ctx, streamDone) {
		t.Fatal("the page's live channel finished before the session ended")
	}
	v.srv.Sessions().End(v.id)
	v.waitJS(t, `/ended/.test(document.getElementById("state").textContent)`, `"ended" in #state`)
	v.waitJS(t, `document.getElementById("view").dataset.role === "ended"`, "the page marked ended")
	v.waitJS(t, streamDone, "the live channel's request finished")
	testkit.Eventually(t, waitLong, func() bool { return browsersPresent(v.se) == 0 }, "the browser gone from presence")
}

// axWant is one node a screen reader must get: a role (any of roles) and
// a name.
type axWant struct {
	roles []string
	name  string
	of    string // the widget it stands for
}

// axExpected is what the accessibility tree must hold for the widgets
// tree shows: every widget (outside a hidden overlay) with its role and
// name, and its parts (tabs, column headers, options, menu items, tree
// items, a scrubber's slider and button, a dialog's buttons). A widget
// kind it does not know fails the test, so a new kind in the demo cannot
// go unchecked.
func axExpected(t *testing.T, tree ui.Node) []axWant {
	t.Helper()
	var out []axWant
	add := func(of, name string, roles ...string) { out = append(out, axWant{roles: roles, name: name, of: of}) }
	var walk func(n ui.Node, box string)
	walk = func(n ui.Node, box string) {
		if n == nil {
			return
		}
		if o, ok := n.(ui.Overlay); ok && !o.Shown() {
			return
		}
		if b, ok := n.(ui.Box); ok {
			walk(b.Child, b.Title)
			return
		}
		w, ok := n.(ui.Widget)
		if !ok {
			for _, c := range n.Children() {
				walk(c, "")
			}
			return
		}
		// The name: the widget's own label, else the title of the box it
		// is in.
		id := w.WidgetID()
		name := ui.Label(w)
		if name == id && box != "" {
			name = box
		}
		switch w := w.(type) {
		case ui.Button:
			add(id, w.Label, "button")
		case ui.TextInput:
			add(id, w.Label, "textbox", "searchbox")
		case ui.PasswordField:
			add(id, w.Label, "textbox")
		case ui.TextArea:
			add(id, w.Label, "textbox")
		case ui.Checkbox:
			add(id, w.Label, "checkbox")
		case ui.SelectList:
			add(id, w.Label, "listbox")
			for _, o := range w.Options {
				add(id, o, "option")
			}
		case ui.Tabs:
			add(id, name, "tablist") // named like any widget: its label, its box, or its id
			for _, tab := range w.Tabs {
				add(id, tab, "tab")
			}
		case ui.Menu:
			add(id, name, "menu")
			for _, it := range w.Flatten() {
				add(id, it.Label, "menuitem")
			}
		case ui.Table:
			add(id, name, "grid", "table")
			for _, c := range w.Columns {
				add(id, c.Title, "columnheader")
			}
		case ui.Tree:
			add(id, name, "tree")
			var items func(ns []ui.TreeNode)
			items = func(ns []ui.TreeNode) {
				for _, tn := range ns {
					add(id, tn.Label, "treeitem")
					if tn.Expanded {
						items(tn.Children)
					}
				}
			}
			items(w.Nodes)
		case ui.Viewport:
			add(id, name, "region")
		case ui.Scrubber:
			add(id, w.Label, "slider")
			play := "Play"
			if w.Playing {
				play = "Pause"
			}
			add(id, play, "button")
		case ui.Modal:
			add(id, w.Title, "dialog")
			add(id, w.ConfirmLabel, "button")
			add(id, w.DismissLabel, "button")
			walk(w.Body, "")
		case ui.BarChart:
			add(id, w.Title, "figure")
		case ui.LineChart:
			add(id, w.Title, "figure")
		case ui.ScatterChart:
			add(id, w.Title, "figure")
		default:
			t.Fatalf("the demo shows a %T (%s) this test has no expectation for", w, id)
		}
	}
	walk(tree, "")
	return out
}

// checkAXTree compares Chromium's accessibility tree of the page with
// what the session's tree shows now.
func checkAXTree(t *testing.T, v *chromiumView, what string) {
	t.Helper()
	want := axExpected(t, v.se.Dispatcher.Snapshot().Tree)
	got := map[string]bool{}
	var saw []string
	for _, n := range browsertest.AXTree(t, v.ctx) {
		name := n.Name
		got[n.Role+"|"+name] = true
		if n.Role != "StaticText" && n.Role != "InlineTextBox" && n.Role != "gridcell" && n.Role != "cell" {
			saw = append(saw, n.Role+" "+strconv.Quote(name))
		}
	}
	missing := 0
	for _, w := range want {
		found := false
		for _, r := range w.roles {
			found = found || got[r+"|"+w.name]
		}
		if !found {
			missing++
			t.Errorf("%s: no %s named %q (widget %s) in Chromium's accessibility tree", what, strings.Join(w.roles, " or "), w.name, w.of)
		}
	}
	if missing > 0 {
		t.Logf("%s: the accessibility tree has:\n%s", what, strings.Join(saw, "\n"))
	}
	if len(want) < 5 {
		t.Fatalf("%s: only %d widgets expected: %+v", what, len(want), want)
	}
}

// Chromium's accessibility tree names every widget of the demo, on each of
// its tabs, with its role and label, as the session's own widget tree
// says; and the page is legible on a desktop and on a phone (screenshots
// kept as artefacts).
func TestBrowserInChromiumIsAccessibleAndLegible(t *testing.T) {
	testkit.EndToEnd(t)
	v := openInChromium(t, server.Options{}, "r")
	ag := attachAgent(t, v.srv, v.se, false)
	ag.call("demo.services.select_row", map[string]any{"index": 2}) // the Restart button is enabled
	v.waitJS(t, `!document.querySelector('#view [data-id="restart"]').disabled`, "the Restart button enabled")
	checkAXTree(t, v, "Overview")

	// The other tabs, clicked in Chromium.
	for i, tab := range []string{"Metrics", "Logs", "Config"} {
		sel := fmt.Sprintf(`#view [role=tab][data-index="%d"]`, i+1)
		browsertest.Run(t, v.ctx, "click the "+tab+" tab", chromedp.Click(sel))
		v.waitJS(t, `document.querySelector('`+sel+`').getAttribute("aria-selected") === "true"`, "the "+tab+" tab selected")
		checkAXTree(t, v, tab)
		browsertest.Screenshot(t, v.ctx, "browser-view-"+strings.ToLower(tab)+"-1280x800", 1280, 800, false)
	}
	// The dialog, opened by the agent.
	browsertest.Run(t, v.ctx, "click the Overview tab", chromedp.Click(`#view [role=tab][data-index="0"]`))
	v.waitJS(t, `document.querySelector('#view [data-id="services"]') !== null`, "the Overview tab")
	ag.call("demo.services.select_row", map[string]any{"index": 2})
	ag.call("demo.restart.click", nil)
	v.waitJS(t, `document.querySelector('#view dialog[open]') !== null`, "the restart dialog")
	checkAXTree(t, v, "Overview with the dialog")
	// Its Cancel button, clicked in Chromium, closes it.
	browsertest.Run(t, v.ctx, "click Cancel", chromedp.Click(`#view dialog[open] button[data-action="dismiss"]`))
	v.waitJS(t, `document.querySelector('#view dialog[open]') === null`, "the dialog closed")
	v.owner.WaitFor(t, "Restart of billing cancelled", waitLong)

	// Legible at 1280x800 and on a phone: the page does not scroll
	// sideways (a wide table scrolls inside its own box), and the text is
	// not tiny.
	for _, size := range []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"browser-view-1280x800", 1280, 800, false}, {"browser-view-390x844", 390, 844, true}} {
		browsertest.Screenshot(t, v.ctx, size.name, size.w, size.h, size.mobile)
		if over := browsertest.Eval[int](t, v.ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 1 {
			t.Errorf("%s: the page is %dpx wider than the screen", size.name, over)
		}
		for _, sel := range []string{"#view td", "#view th", "#view input", "#view button", "header"} {
			px := browsertest.Eval[float64](t, v.ctx, `parseFloat(getComputedStyle(document.querySelector('`+sel+`')).fontSize)`)
			if px < 12 {
				t.Errorf("%s: %s is %.1fpx, too small to read", size.name, sel, px)
			}
		}
		// Every header of the table is on the page (in its box, which may
		// scroll), none cut off outside it.
		if n := browsertest.Eval[int](t, v.ctx, `(() => { const box = document.querySelector('#view [data-id="services"]').getBoundingClientRect();
			return [...document.querySelectorAll('#view [data-id="services"] th')].filter((th) => th.getBoundingClientRect().left < box.left - 1).length; })()`); n != 0 {
			t.Errorf("%s: %d table headers start left of the table's box", size.name, n)
		}
	}
}
