package server_test

import (
	"strings"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/tui"
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
			srv := startServer(t, server.Options{PublicURL: tc.public})
			c := connect(t, srv.SSHAddr(), clientOpts{w: tc.w, h: tc.h})
			c.WaitFor(t, "Overview", waitLong)
			eventually(t, waitShort, func() bool { return srv.Sessions().Count() == 1 }, "no session")
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
