package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

var viewLinkRe = regexp.MustCompile(`http://\S+/sessions/\S+/view\?link=[A-Za-z0-9_-]+`)

// viewLink opens the owner's attach panel and reads the browser link off it.
func viewLink(t *testing.T, owner *client) string {
	t.Helper()
	owner.Key(keyCtrlO)
	screen := owner.WaitFor(t, "Open in a browser", waitLong)
	link := viewLinkRe.FindString(screen)
	if link == "" {
		t.Fatalf("no browser link in the attach panel:\n%s", screen)
	}
	owner.Key(keyCtrlO)
	return link
}

// browserPrompt is what the owner's terminal shows when a browser that
// opened their link asks to come in.
const browserPrompt = "A browser asks to join your session"

// admitBrowser waits for the owner's prompt for a browser and answers it
// with key: "o" observer, "r" driver, "m" the owner, "n" refused.
func admitBrowser(t *testing.T, owner *client, key string) {
	t.Helper()
	owner.WaitFor(t, armedPrompt(browserPrompt), waitLong)
	owner.Type(key)
	owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, browserPrompt) }, waitLong)
}

// openEvents opens a browser's live channel (with jar's cookie) at url and
// reads its events until the test ends.
func openEvents(t *testing.T, jar http.CookieJar, url string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	stream, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("the live channel: %v", err)
	}
	t.Cleanup(func() { stream.Body.Close() })
	return readEvents(stream.Body)
}

// sseEvent is one server-sent event.
type sseEvent struct{ name, data string }

// readEvents reads the stream's events into a channel until it ends.
func readEvents(body io.Reader) <-chan sseEvent {
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			l := sc.Text()
			switch {
			case l == "":
				ev.data = strings.Join(data, "\n")
				out <- ev
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(l, "event: "):
				ev.name = strings.TrimPrefix(l, "event: ")
			case strings.HasPrefix(l, "data: "):
				data = append(data, strings.TrimPrefix(l, "data: "))
			}
		}
	}()
	return out
}

// viewChange names, for waitEvent, either event that changes the view: a
// whole "frame" or a "patch" of widgets.
const viewChange = "frame|patch"

// waitEvent waits for an event named name whose data satisfies ok.
func waitEvent(t *testing.T, events <-chan sseEvent, name string, ok func(string) bool) sseEvent {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case ev, open := <-events:
			if !open {
				t.Fatalf("the live channel closed before a %q event", name)
			}
			if ev.name == "patch" { // the widgets' new elements, one after another
				if strings.Contains(ev.data, `\u003c`) {
					t.Errorf("a patch's elements are HTML-escaped JSON (\\u003c for <): bytes for nothing")
				}
				var ps []struct{ ID, HTML string }
				if err := json.Unmarshal([]byte(ev.data), &ps); err != nil {
					t.Fatalf("a patch is not JSON: %v\n%s", err, ev.data)
				}
				var b strings.Builder
				for _, p := range ps {
					b.WriteString(p.HTML)
				}
				ev.data = b.String()
			}
			if (ev.name == name || name == viewChange && (ev.name == "frame" || ev.name == "patch")) && ok(ev.data) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %q event in %s", name, waitLong)
		}
	}
}

// The owner's one-time link opens a read-only page of the session in a
// browser: exchanged once for a cookie scoped to the view, under a strict
// CSP, kept live (an agent's change and the announcement of it), refused
// to another origin or without the cookie, and closed when the session
// ends.
func TestBrowserViewWatchesTheSession(t *testing.T) {
	srv := startServer(t, server.Options{})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	link := viewLink(t, owner)
	base := "http://" + srv.HTTPAddr() + "/sessions/" + id + "/view"

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: waitLong, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/sessions/"+id+"/view" {
		t.Fatalf("the link answered %d to %q, want 303 to the page without the code", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookie := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/sessions/" + id + "/view"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("the cookie %q lacks %s", cookie, want)
		}
	}

	// A used link does not work twice, not even for the same browser.
	again, err := (&http.Client{Timeout: waitLong, CheckRedirect: browser.CheckRedirect}).Get(link)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusForbidden {
		t.Fatalf("a used link answered %d, want 403", again.StatusCode)
	}

	// The page: the demo's table as a table, under a strict CSP.
	page, err := browser.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Fatalf("the page answered %d: %s", page.StatusCode, body)
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
		t.Errorf("the page's CSP is %q", csp)
	}
	for _, want := range []string{"<table", "<th scope=\"col\"", "aria-live=\"polite\"", "<script src=\"view/app.js\"></script>"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(string(body), "<script>") || strings.Contains(string(body), "link=") {
		t.Errorf("the page holds an inline script or the link's code")
	}

	// Without the cookie, or from another origin, nothing.
	if r, err := http.Get(base + "/events"); err != nil || r.StatusCode != http.StatusForbidden {
		t.Fatalf("the live channel without the cookie: %v %v", r.StatusCode, err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/events", nil)
	req.Header.Set("Origin", "http://evil.example")
	if r, err := browser.Do(req); err != nil || r.StatusCode != http.StatusForbidden {
		t.Fatalf("the live channel from another origin: %v %v", r.StatusCode, err)
	}

	// The live channel: the first frame, then an agent's change and the
	// sentence that announces it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
	stream, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("the live channel: %v %v", stream.StatusCode, err)
	}
	defer stream.Body.Close()
	events := readEvents(stream.Body)
	waitEvent(t, events, "state", func(d string) bool { return strings.Contains(d, "Asking") })
	admitBrowser(t, owner, "o")
	waitEvent(t, events, "role", func(d string) bool { return strings.Contains(d, `"role":"observer"`) })
	first := waitEvent(t, events, "frame", func(d string) bool { return strings.Contains(d, "<table") })
	if !strings.Contains(first.data, `readonly aria-readonly="true"`) {
		t.Errorf("an observer's view has inputs that are not read only")
	}

	se, _ := srv.Session(id)
	ag, err := agentAt(t, srv.HTTPAddr(), id, se.Token())
	if err != nil {
		t.Fatal(err)
	}
	testkit.MustCall(t, ag, "demo.search.type_into", map[string]any{"text": "seen-in-browser"})
	waitEvent(t, events, viewChange, func(d string) bool { return strings.Contains(d, `value="seen-in-browser"`) })
	waitEvent(t, events, "announce", func(d string) bool { return strings.Contains(d, "agent") && strings.Contains(d, "typed") })

	// The watching browser is in the session's presence while its channel
	// is open; a second one that leaves is gone from it.
	watching := func() int {
		n := 0
		for _, a := range se.Attached() {
			if a.Kind == session.KindBrowser {
				n++
			}
		}
		return n
	}
	testkit.Eventually(t, waitLong, func() bool { return watching() == 1 }, "the browser in presence (%d)", watching())
	ctx2, cancel2 := context.WithCancel(context.Background())
	req2, _ := http.NewRequestWithContext(ctx2, http.MethodGet, base+"/events", nil)
	second, err := (&http.Client{Jar: jar}).Do(req2)
	if err != nil || second.StatusCode != http.StatusOK {
		t.Fatalf("a second live channel: %v", err)
	}
	testkit.Eventually(t, waitLong, func() bool { return watching() == 2 }, "two browsers in presence")
	cancel2()
	second.Body.Close()
	testkit.Eventually(t, waitLong, func() bool { return watching() == 1 }, "the browser that left to leave presence")

	// The row the human's arrow keys highlight in the focused table (the
	// terminal's own state, not the app's) is the page's highlighted row.
	owner.Key(keyShiftTab) // from the tabs back to the services table
	owner.Key(keyDown)
	// Only the table's element changed: a patch, not the whole frame.
	waitEvent(t, events, "patch", func(d string) bool {
		i := strings.Index(d, `data-highlighted="true"`)
		if i < 0 {
			return false
		}
		row := d[i:]
		if j := strings.Index(row, "</tr>"); j >= 0 {
			row = row[:j]
		}
		return strings.Contains(row, ">auth<")
	})

	// The session's end closes the page's channel.
	srv.Sessions().End(id)
	waitEvent(t, events, "end", func(d string) bool { return strings.Contains(d, "ended") })
	for range events {
	}
}

// A new token (ctrl+r) revokes every browser's access to the session, as
// it disconnects the agents using the old one: an open page's channel
// ends at once, and a link made before it no longer works.
func TestBrowserViewRevokedByANewToken(t *testing.T) {
	srv := startServer(t, server.Options{})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	link, unused := viewLink(t, owner), viewLink(t, owner)
	base := "http://" + srv.HTTPAddr() + "/sessions/" + id + "/view"
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: waitLong}
	if r, err := browser.Get(link); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("the link: %v %v", r.StatusCode, err)
	}
	events := openEvents(t, jar, base+"/events")
	admitBrowser(t, owner, "r")
	waitEvent(t, events, "frame", func(string) bool { return true })

	se, _ := srv.Session(id)
	if _, err := se.RotateToken(); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, "end", func(d string) bool { return strings.Contains(d, "access") })
	if r, err := browser.Get(base); err != nil || r.StatusCode != http.StatusForbidden {
		t.Fatalf("the page after a new token: %v %v", r.StatusCode, err)
	}
	if r, err := (&http.Client{Timeout: waitLong}).Get(unused); err != nil || r.StatusCode != http.StatusForbidden {
		t.Fatalf("a link made before the new token: %v %v", r.StatusCode, err)
	}
}
