package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

var testOrigin = dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "e2e-test"}

// onlySession returns the one live session, failing if there is not
// exactly one.
func onlySession(t testing.TB, srv *testServer) *session.Session {
	t.Helper()
	var list []*session.Session
	testkit.Eventually(t, waitShort, func() bool { list = srv.Sessions().List(); return len(list) == 1 },
		"want 1 live session, have %d", len(list))
	return list[0]
}

// searchValue returns the search input's value in sess's latest snapshot.
func searchValue(t testing.TB, sess *session.Session) string {
	t.Helper()
	w, ok := ui.Find(sess.Dispatcher.Snapshot().Tree, "search")
	if !ok {
		t.Fatalf("no search widget in the tree")
	}
	ti, ok := w.(ui.TextInput)
	if !ok {
		t.Fatalf("search widget is a %T, want ui.TextInput", w)
	}
	return ti.Value
}

// TestDemoAppears: a connection gets the demo and the status bar names its
// session.
func TestDemoAppears(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	id := waitDemo(t, c)
	s := c.Screen()
	for _, want := range []string{"Overview", "Services", "api-gateway"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	sess := onlySession(t, srv)
	if id != sess.ID {
		t.Errorf("status bar shows session %q, the live session is %q", id, sess.ID)
	}
	if sess.App != "demo" || sess.Owner.User != "tester" {
		t.Errorf("session app %q user %q, want demo, tester", sess.App, sess.Owner.User)
	}
}

// TestTypeInSearch: one Tab from the tabs reaches the search input.
func TestTypeInSearch(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, c)
	c.Key(keyTab)
	c.Type("hello")
	c.WaitFor(t, "Search: hello", waitShort)
	if got := searchValue(t, onlySession(t, srv)); got != "hello" {
		t.Errorf("search value %q, want %q", got, "hello")
	}
}

// topBorder returns the row and the line holding the services box's top
// border, or -1.
func topBorder(lines []string) (int, string) {
	for i, l := range lines {
		if strings.Contains(l, "╭─ Services (") {
			return i, l
		}
	}
	return -1, ""
}

// TestResize: a window change re-lays the screen out at the new size.
func TestResize(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{w: 100, h: 30})
	id := waitDemo(t, c)

	// At 100 columns the box spans the width and the status bar is on
	// row 30.
	laidOut := func(w, h int) func(string) bool {
		return func(string) bool {
			lines := c.Lines()
			if len(lines) != h || !strings.Contains(lines[h-1], "session "+id) {
				return false
			}
			_, top := topBorder(lines)
			col := cellCol(top, "╮")
			return col >= w-3 && col <= w-1
		}
	}
	c.WaitFor(t, laidOut(100, 30), waitShort)

	c.Resize(60, 20)
	c.WaitFor(t, laidOut(60, 20), waitShort)
	_, top := topBorder(c.Lines())
	if w := cellCol(top, "╮") + 1; w > 60 {
		t.Errorf("top border is %d wide after resizing to 60:\n%s", w, c.Screen())
	}
	// The old status bar row is gone: nothing below row 20, and the bar
	// is only on the last row.
	lines := c.Lines()
	for i, l := range lines[:len(lines)-1] {
		if strings.Contains(l, "session "+id) {
			t.Errorf("status bar also on row %d:\n%s", i+1, c.Screen())
		}
	}

	// And back: growing works too.
	c.Resize(90, 25)
	c.WaitFor(t, laidOut(90, 25), waitShort)
}

// TestSessionsIsolated: two connections have separate sessions and never
// see each other's input.
func TestSessionsIsolated(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	a := connect(t, srv.SSHAddr(), clientOpts{})
	b := connect(t, srv.SSHAddr(), clientOpts{})
	idA, idB := waitDemo(t, a), waitDemo(t, b)
	if idA == idB {
		t.Fatalf("both connections show session %s", idA)
	}
	if n := srv.Sessions().Count(); n != 2 {
		t.Fatalf("%d live sessions, want 2", n)
	}
	for _, id := range []string{idA, idB} {
		if _, ok := srv.Sessions().Get(id); !ok {
			t.Errorf("session %s shown on screen is not live", id)
		}
	}

	a.Key(keyTab)
	a.Type("alpha")
	a.WaitFor(t, "Search: alpha", waitShort)
	// B re-renders something of its own after A typed.
	b.Key(keyTab)
	b.Type("beta")
	sB := b.WaitFor(t, "Search: beta", waitShort)
	if strings.Contains(sB, "alpha") {
		t.Errorf("B's screen shows A's input:\n%s", sB)
	}
	if sA := a.Screen(); strings.Contains(sA, "beta") {
		t.Errorf("A's screen shows B's input:\n%s", sA)
	}
	sessA, _ := srv.Sessions().Get(idA)
	sessB, _ := srv.Sessions().Get(idB)
	if got := searchValue(t, sessA); got != "alpha" {
		t.Errorf("A's search value %q, want alpha", got)
	}
	if got := searchValue(t, sessB); got != "beta" {
		t.Errorf("B's search value %q, want beta", got)
	}
}

// filterBilling types "bill" into the search and presses the Search
// button; focus is left on the button.
func filterBilling(t testing.TB, c *client) {
	t.Helper()
	c.Key(keyTab) // tabs -> search
	c.Type("bill")
	c.WaitFor(t, "Search: bill", waitShort)
	c.Key(keyTab) // search -> search_btn
	c.Key(keyEnter)
	c.WaitFor(t, `Filter "bill": 1 of 8`, waitShort)
}

// TestSearchButtonFilters: Enter on the Search button applies the filter.
func TestSearchButtonFilters(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, c)
	if s := c.Screen(); !strings.Contains(s, "api-gateway") {
		t.Fatalf("unfiltered table lacks api-gateway:\n%s", s)
	}
	filterBilling(t, c)
	s := c.WaitFor(t, func(s string) bool { return !strings.Contains(s, "api-gateway") }, waitShort)
	for _, want := range []string{"billing", "1 of 8", "Services (1)"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
}

// TestModalTrapsFocus: while the restart confirmation is open, Tab cannot
// leave it; Enter confirms and Esc dismisses.
func TestModalTrapsFocus(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, c)
	filterBilling(t, c)

	// Focus order: tabs, search, search_btn, [restart once a row is
	// selected], services. Restart is disabled, so Tab goes to the table.
	c.Key(keyTab)
	c.Key(keyEnter) // select the highlighted (first) row
	c.WaitFor(t, "Selected billing", waitShort)
	c.Key(keyShiftTab) // services -> restart, now enabled
	c.Key(keyEnter)
	c.WaitFor(t, "Restart service", waitShort)
	c.WaitFor(t, "Restart billing?", waitShort)

	for range 5 {
		c.Key(keyTab)
	}
	c.Key(keyShiftTab)
	c.Key(keyEnter)
	s := c.WaitFor(t, "Restarted billing", waitShort)
	if strings.Contains(s, "Restart service") {
		t.Errorf("modal still shown after confirming:\n%s", s)
	}
	if !strings.Contains(s, "billing ↻1") {
		t.Errorf("table does not show the restart:\n%s", s)
	}

	// The modal closed, so focus is back on the first widget (tabs).
	// The row stays selected, so Restart is third after tabs.
	c.Key(keyTab) // search
	c.Key(keyTab) // search_btn
	c.Key(keyTab) // restart
	c.Key(keyEnter)
	c.WaitFor(t, "Restart service", waitShort)
	c.Key(keyEsc)
	s = c.WaitFor(t, "Restart of billing cancelled", waitShort)
	if strings.Contains(s, "Restart service") {
		t.Errorf("modal still shown after Esc:\n%s", s)
	}
	if !strings.Contains(s, "billing ↻1") || strings.Contains(s, "↻2") {
		t.Errorf("Esc restarted the service:\n%s", s)
	}
}

// TestNoPTY: a shell without a terminal is refused with a reason.
func TestNoPTY(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{noPty: true})
	err, stderr := c.WaitExit(t, waitLong)
	requireNonZeroExit(t, err)
	if !strings.Contains(stderr, "raxol-ssh: ") || !strings.Contains(stderr, "terminal") {
		t.Errorf("stderr %q, want a raxol-ssh: reason mentioning a terminal", stderr)
	}
	if n := srv.Sessions().Count(); n != 0 {
		t.Errorf("%d live sessions after a refused shell, want 0", n)
	}
}

// TestDrainNoLeaks: Shutdown tells every terminal, ends every session in
// time and leaves no goroutine behind. Not parallel: goleak looks at the
// whole process.
func TestDrainNoLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	srv := startServer(t, server.Options{DrainTimeout: 5 * time.Second})
	a := connect(t, srv.SSHAddr(), clientOpts{})
	b := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, a)
	waitDemo(t, b)

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second+time.Second {
		t.Errorf("Shutdown took %v, drain timeout 5s", d)
	}
	told := 0
	for name, c := range map[string]*client{"A": a, "B": b} {
		err, stderr := c.WaitExit(t, waitShort)
		if strings.Contains(stderr, "server is stopping") || strings.Contains(c.Screen(), "server is stopping") {
			told++
		}
		t.Logf("client %s: exit %v, stderr %q", name, err, stderr)
	}
	if told == 0 {
		t.Errorf("no client was told the server is stopping")
	}
	if n := srv.Sessions().Count(); n != 0 {
		t.Errorf("%d live sessions after Shutdown", n)
	}
	a.Close()
	b.Close()
	goleak.VerifyNone(t, ignore)
}

// counterValue reads a counter or gauge of our own metrics.
func counterValue(t testing.TB, c interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetCounter().GetValue()
}

// TestStuckClientBlocksNobody: a client that stops reading stalls only its
// own terminal: its session's dispatcher keeps folding and other clients
// are served.
func TestStuckClientBlocksNobody(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	srv := startServer(t, server.Options{Metrics: m})
	// A never reads its output, and its TCP connection stops carrying the
	// server's bytes too, like a suspended ssh process.
	a := connect(t, srv.SSHAddr(), clientOpts{w: 220, h: 70, noRead: true, proxy: true})
	// Wait until A's session is fully started (the gauge goes up after
	// session.Manager.Start returns) and has written its first frame.
	testkit.Eventually(t, waitLong, func() bool {
		return counterValue(t, m.SessionsOpen) == 1 && counterValue(t, m.BytesWritten) > 0
	}, "A's session did not start")
	sessA := onlySession(t, srv)
	a.proxy.stall()

	const calls = 2000
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for i := range calls {
			if err := sessA.Dispatcher.Call(ctx, testOrigin, ui.TabChanged{ID: "tabs", Index: i % 4}); err != nil {
				done <- fmt.Errorf("call %d: %w", i, err)
				return
			}
		}
		done <- nil
	}()
	b := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, b)
	b.Key(keyTab)
	b.Type("ok")
	b.WaitFor(t, "Search: ok", waitLong)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dispatcher calls on the stuck client's session: %v", err)
		}
	case <-time.After(25 * time.Second):
		t.Fatalf("%d dispatcher calls did not finish in 25s", calls)
	}
	if v := sessA.Dispatcher.Snapshot().Version; v < calls {
		t.Errorf("A's snapshot version %d after %d calls", v, calls)
	}
	if a.Exited() {
		t.Errorf("the stuck client's session ended")
	}
	t.Logf("server wrote %.0f bytes to terminals; A's proxy forwarded %d before it stalled",
		counterValue(t, m.BytesWritten), a.proxy.forwarded())
}

// TestBadInput: random bytes, unknown escape sequences and a huge paste
// never kill the session, and a pasted search value is capped.
func TestBadInput(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	id := waitDemo(t, c)
	sess := onlySession(t, srv)

	for _, seq := range []string{"\x1b[999;999~", "\x1b]1337;garbage\x07", "\x1bOZ", "\x1b[", "\x1bP\x1b\\", "\xff\xfe\xc3"} {
		c.send(seq)
	}
	// Random bytes, except ctrl+c, which rightly quits, and ctrl+o, which
	// toggles the attach panel that marks where each chunk ends. The fixed
	// seed makes the junk (and what it does to the app: it types, filters,
	// switches tabs and plays the timeline) the same on every run.
	r := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 3<<10)
	for i := range junk {
		for {
			junk[i] = byte(r.UintN(256))
			if junk[i] != 0x03 && junk[i] != 0x0f {
				break
			}
		}
	}
	attachOpen := func(open bool) func(string) bool {
		return func(s string) bool { return strings.Contains(s, "Attach an agent") == open }
	}
	for chunk := range slicesChunk(junk, 256) {
		c.send(string(chunk))
		// End any string sequence or bracketed paste the junk began.
		c.send("\x07\x1b\\\x1b[201~")
		// Keys are handled in order: once ctrl+o has toggled the attach
		// panel, the whole chunk has been handled.
		c.Key(keyCtrlO)
		c.WaitFor(t, attachOpen(true), waitLong)
		c.Key(keyCtrlO)
		c.WaitFor(t, attachOpen(false), waitLong)
		// A playing timeline re-renders the expensive charts four times
		// a second; keep the test fast.
		if err := sess.Dispatcher.Call(context.Background(), testOrigin, ui.ScrubberPaused{ID: "timeline"}); err != nil {
			t.Fatal(err)
		}
	}

	// Still the same session, still running.
	if c.Exited() {
		_, stderr := c.WaitExit(t, waitShort)
		t.Fatalf("session ended after bad input; stderr %q", stderr)
	}
	if got, ok := srv.Sessions().Get(id); !ok || got != sess {
		t.Fatalf("session %s is gone after bad input", id)
	}

	// Bring the app back to a known state: no modal, Overview tab, empty
	// search. Going through the Config tab resets the terminal's focus to
	// the tabs widget, whatever the junk focused.
	if err := sess.Dispatcher.Call(context.Background(), testOrigin,
		ui.ModalDismissed{ID: "confirm_restart"}, ui.TabChanged{ID: "tabs", Index: 3}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(t, "Infrastructure", waitShort)
	if err := sess.Dispatcher.Call(context.Background(), testOrigin,
		ui.TabChanged{ID: "tabs", Index: 0}, ui.TextInputChanged{ID: "search", Text: ""}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(t, "Search: name, region or status", waitShort)

	// Typing still works.
	c.Key(keyTab)
	c.Type("still works")
	c.WaitFor(t, "Search: still works", waitShort)

	// A 10,000-byte paste is capped at 4096 runes.
	c.send("\x1b[200~" + strings.Repeat("x", 10000) + "\x1b[201~")
	testkit.Eventually(t, waitShort, func() bool { return utf8.RuneCountInString(searchValue(t, sess)) == 4096 },
		"search value has %d runes, want 4096", utf8.RuneCountInString(searchValue(t, sess)))
	if v := searchValue(t, sess); !strings.HasPrefix(v, "still works") || strings.Trim(v[len("still works"):], "x") != "" {
		t.Errorf("search value %q… is not the typed text followed by the paste", truncate(v, 30))
	}
	c.WaitFor(t, "xxxxxxxxxx", waitShort)

	// And the session still answers keys.
	c.Key(keyCtrlO)
	c.WaitFor(t, "Attach an agent", waitShort)
	c.Key(keyCtrlO)
	c.WaitFor(t, func(s string) bool { return !strings.Contains(s, "Attach an agent") }, waitShort)
	if c.Exited() || srv.Sessions().Count() != 1 {
		t.Fatalf("session ended")
	}
}

// slicesChunk yields consecutive chunks of b of at most n bytes.
func slicesChunk(b []byte, n int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			k := min(n, len(b))
			if !yield(b[:k]) {
				return
			}
			b = b[k:]
		}
	}
}

// TestHTTPMetrics: /healthz answers ok and /metrics counts the session and
// the bytes written to its terminal.
func TestHTTPMetrics(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	code, body := httpGet(t, srv.HTTPAddr(), "/healthz")
	if code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("GET /healthz = %d %q, want 200 ok", code, body)
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), "raxol_sessions_open"); v != 0 {
		t.Errorf("raxol_sessions_open = %v before any client, want 0", v)
	}

	c := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, c)
	if v := scrapeMetric(t, srv.HTTPAddr(), "raxol_sessions_open"); v != 1 {
		t.Errorf("raxol_sessions_open = %v with one client, want 1", v)
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), "raxol_terminal_bytes_written_total"); v <= 0 {
		t.Errorf("raxol_terminal_bytes_written_total = %v, want > 0", v)
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), "raxol_terminal_frames_total"); v <= 0 {
		t.Errorf("raxol_terminal_frames_total = %v, want > 0", v)
	}

	// A client that quits leaves the gauge at 0 and counts an ok outcome.
	c.Key(keyCtrlC)
	err, _ := c.WaitExit(t, waitShort)
	if err != nil {
		t.Errorf("ctrl+c exit: %v, want status 0", err)
	}
	testkit.Eventually(t, waitShort, func() bool {
		return scrapeMetric(t, srv.HTTPAddr(), "raxol_sessions_open") == 0 &&
			scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_connections_total{outcome="ok"}`) == 1
	}, "sessions_open back to 0 and one ok connection")
}

// TestSessionListedOnceStarted: a session that Sessions() lists or finds
// is ready to use: its Dispatcher is set. (Regression: Start used to
// register the session before creating its dispatcher, a data race.)
func TestSessionListedOnceStarted(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	stop := make(chan struct{})
	var nilSeen atomic.Bool
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, s := range srv.Sessions().List() {
				if s.Dispatcher == nil {
					nilSeen.Store(true)
					continue
				}
				_ = s.Dispatcher.Snapshot()
			}
		}
	}()
	for range 5 {
		c := connect(t, srv.SSHAddr(), clientOpts{})
		waitDemo(t, c)
	}
	close(stop)
	<-watcherDone
	if nilSeen.Load() {
		t.Errorf("Sessions().List() returned a session without a Dispatcher")
	}
}

// TestAttachPanelURLOnAWildcardListener: with HTTP on every interface and
// no public URL, the attach panel shows the address the SSH client reached
// the server on, with the HTTP port, and that URL answers.
func TestAttachPanelURLOnAWildcardListener(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{MCP: server.MCPOptions{Addr: "0.0.0.0:0"}})
	_, port, err := net.SplitHostPort(srv.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, srv.SSHAddr(), clientOpts{})
	id := waitDemo(t, c)
	c.Key(keyCtrlO)
	want := "http://127.0.0.1:" + port + "/sessions/" + id + "/mcp"
	c.WaitFor(t, want, waitShort)
	if code, _ := httpGet(t, "127.0.0.1:"+port, "/healthz"); code != http.StatusOK {
		t.Fatalf("the URL's host does not answer: %d", code)
	}
}
