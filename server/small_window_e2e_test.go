package server_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Nothing a user must copy is cut without notice: at any window width the
// attach panel shows each URL and the token whole, wrapped onto lines that
// each start at the left edge and join back into the value, or says the
// window is too narrow (or too short) and what it needs.
func TestAttachPanelSmallWindows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		public string // Options.PublicURL
		w, h   int
		notice string // "" when the values must be shown
	}{
		{name: "80x24", w: 80, h: 24},
		{name: "50x24", w: 50, h: 24},
		{name: "44x24", w: 44, h: 24},
		{name: "30x24", w: 30, h: 24},
		{name: "20x30", w: 20, h: 30},
		{name: "12x24", w: 12, h: 24, notice: "too narrow"},
		{name: "30x10", w: 30, h: 10, notice: "too short"},
		{name: "long public URL 80x24", public: "https://agents.raxol-ssh.example.com:8443/a/rather/long/proxy/prefix", w: 80, h: 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, server.Options{MCP: server.MCPOptions{PublicURL: tc.public}})
			c := connect(t, srv.SSHAddr(), clientOpts{w: tc.w, h: tc.h})
			c.WaitFor(t, "Overview", waitLong)
			testkit.Eventually(t, waitShort, func() bool { return srv.Sessions().Count() == 1 }, "no session")
			se := srv.Sessions().List()[0]
			id := se.ID
			base := tc.public
			if base == "" {
				base = "http://" + srv.HTTPAddr()
			}
			streamable, sse := tui.AttachURLs(base, id)
			values := []string{streamable, sse, se.Token()}

			c.Key(keyCtrlO)
			var lines []string
			c.WaitFor(t, func(s string) bool {
				lines = strings.Split(s, "\n")
				if tc.notice != "" {
					return strings.Contains(strings.Join(strings.Fields(s), " "), tc.notice)
				}
				joined := strings.Join(lines, "")
				for _, v := range values {
					if !strings.Contains(joined, v) {
						return false
					}
				}
				return true
			}, waitLong)
			screen := strings.Join(lines, "\n")
			if tc.notice != "" {
				if strings.Contains(screen, "/sessions/") || strings.Contains(screen, se.Token()[:6]) {
					t.Errorf("a part of a value is drawn beside the notice:\n%s", screen)
				}
				words := strings.Join(strings.Fields(screen), " ")
				if !strings.Contains(words, "ctrl+o closes") || !strings.Contains(words, "needs") {
					t.Errorf("the notice does not say what the window needs:\n%s", screen)
				}
				return
			}
			for _, v := range values {
				// The value's first line starts at the left edge with
				// the value itself, so a copied line is part of it.
				first := v[:min(len(v), tc.w)]
				found := false
				for _, l := range lines {
					if strings.HasPrefix(l, first) {
						found = true
					}
				}
				if !found {
					t.Errorf("no line starts with %q:\n%s", first, screen)
				}
			}
			if tc.w >= 80 {
				// Every line of the panel fits: nothing is cut.
				for _, want := range []string{
					"Attach an agent to this session (ctrl+o closes)",
					"MCP Streamable HTTP URL:",
					"MCP SSE URL:",
					"Bearer token (Authorization: Bearer <token>):",
					"ctrl+r makes a new token and disconnects the agents using this one.",
				} {
					if !strings.Contains(screen, want) {
						t.Errorf("%q is not on the screen whole:\n%s", want, screen)
					}
				}
			}
			for i, l := range lines {
				if n := len([]rune(l)); n > tc.w {
					t.Errorf("line %d is %d cells wide: %q", i, n, l)
				}
			}
		})
	}
}

// In a short window the table scrolls to keep the highlighted row in view
// and the line reporting the selection stays on the screen, as does the
// status bar's ctrl+o and ctrl+c.
func TestShortWindowKeepsHighlightInView(t *testing.T) {
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{w: 80, h: 10})
	c.WaitFor(t, "Overview", waitLong)
	// Tabs, search, Search (Restart… is disabled), then the table.
	for range 3 {
		c.Key(keyTab)
	}
	c.WaitFor(t, func(string) bool { return c.reversedAt("api-gateway") }, waitLong)
	for range 7 {
		c.Key(keyDown)
	}
	c.WaitFor(t, func(string) bool { return c.reversedAt("reports") }, waitLong)
	c.Key(keyEnter)
	screen := c.WaitFor(t, func(s string) bool {
		return strings.Contains(s, "› reports") && strings.Contains(s, "Selected reports")
	}, waitLong)
	lines := strings.Split(screen, "\n")
	if bar := lines[len(lines)-1]; !strings.Contains(bar, "ctrl+o") || !strings.Contains(bar, "ctrl+c") {
		t.Errorf("status bar %q lacks ctrl+o or ctrl+c", bar)
	}
	// And back to the top.
	for range 7 {
		c.Key(keyUp)
	}
	c.WaitFor(t, func(string) bool { return c.reversedAt("api-gateway") }, waitLong)
}

// A large window is used: the logs viewport grows with the window, and the
// compact table shows all its rows when there is room.
func TestLargeWindowIsUsed(t *testing.T) {
	srv := startServer(t, server.Options{})
	shownLogs := func(w, h int) int {
		c := connect(t, srv.SSHAddr(), clientOpts{w: w, h: h})
		id := waitDemo(t, c)
		se, _ := srv.Sessions().Get(id)
		if err := se.Dispatcher.Call(context.Background(), testOrigin, ui.TabChanged{ID: demo.IDTabs, Index: 2}); err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`1–(\d+) of 120`)
		screen := c.WaitFor(t, func(s string) bool { return re.MatchString(s) }, waitLong)
		n, _ := strconv.Atoi(re.FindStringSubmatch(screen)[1])
		if w >= 120 {
			// The compact table (4 rows asked) shows all 8 services.
			if err := se.Dispatcher.Call(context.Background(), testOrigin,
				ui.MenuSelected{ID: demo.IDActions, ItemID: "view_compact"}, ui.TabChanged{ID: demo.IDTabs, Index: 0}); err != nil {
				t.Fatal(err)
			}
			c.WaitFor(t, func(s string) bool {
				for _, name := range []string{"api-gateway", "auth", "billing", "search", "payments", "notifications", "inventory", "reports"} {
					if !strings.Contains(s, name+" ") {
						return false
					}
				}
				return true
			}, waitLong)
		}
		c.Close()
		return n
	}
	small, large := shownLogs(80, 24), shownLogs(120, 40)
	if large <= small || large < 30 {
		t.Errorf("the logs show %d lines at 120x40 and %d at 80x24; want more at 120x40, at least 30", large, small)
	}
}
