package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// hostileText carries visible markers (@1@, @2@, @3@; '@' is in no
// fingerprint or session id, which are base64) between an OSC 52
// clipboard write, CSI (a blinking, concealed SGR among them), DCS, APC
// and OSC 8 sequences, a bidi override and isolate, a C1 CSI, a bare CR
// LF, a combining grapheme joiner and an unassigned default-ignorable.
// Cleaned, it reads "@1@@2@\uFFFD  @3@".
const (
	hostileText  = "\x1b]52;c;UFdORUQ=\x07@1@\x1b[2J\x1b[31m\x1b[5;8m\u202e@2@\x9b\r\n@3@\u2066\u034f\U000E0FFF\x1bP+q6b64\x1b\\\x1b_Gf=1;QQ\x1b\\\x1b]8;;http://evil/\x1b\\"
	hostileShown = "@1@@2@\uFFFD  @3@"
)

// unsafeRune is what a terminal must never be sent as text, nor an
// activity entry hold.
func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7F && r < 0xA0) ||
		unicode.In(r, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp,
			unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) ||
		r == 0x2065 || (0xFFF0 <= r && r <= 0xFFF8) || (0xE0000 <= r && r <= 0xE0FFF)
}

// rawProblems scans what the server sent a terminal for what only outside
// text could have put there: string sequences (OSC, DCS, SOS, PM, APC)
// other than the window title, SGR attributes no theme draws (blink,
// conceal: the renderer passes an SGR in a drawn string on as it is), C1
// controls, and unsafe runes as text. Controls the renderer itself uses
// (CR, LF, BS, and other CSI/ESC sequences) pass: whether outside text
// moved the cursor is checked on the screen.
func rawProblems(raw []byte) []string {
	var out []string
	for i := 0; i < len(raw); {
		if raw[i] == 0x1b && i+1 < len(raw) {
			switch raw[i+1] {
			case ']', 'P', 'X', '^', '_':
				end := i + 2
				for end < len(raw) && raw[end] != 0x07 && !(raw[end] == 0x1b && end+1 < len(raw) && raw[end+1] == '\\') {
					end++
				}
				body := string(raw[i+1 : min(end, len(raw))])
				if !strings.HasPrefix(body, "]2;raxol-ssh · ") && !strings.HasPrefix(body, "]0;raxol-ssh · ") {
					out = append(out, "string sequence "+truncate(body, 60))
				}
				i = end + 1
				continue
			case '[':
				j := i + 2
				for j < len(raw) && raw[j] >= 0x20 && raw[j] <= 0x3f {
					j++
				}
				if j < len(raw) && raw[j] == 'm' && foreignSGR(string(raw[i+2:j])) {
					out = append(out, fmt.Sprintf("SGR %q", raw[i:j+1]))
				}
				i = j + 1
				continue
			}
			i += 2
			continue
		}
		r, n := utf8.DecodeRune(raw[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, "invalid UTF-8")
		case r == '\r' || r == '\n' || r == '\b' || r == 0x1b:
		case unsafeRune(r):
			out = append(out, fmt.Sprintf("rune %U", r))
		}
		i += n
	}
	return out
}

// foreignSGR reports whether the parameters of an SGR sequence set blink
// or conceal, which no theme of ours draws (colour parameters, where 5 and
// 8 are indexes, do not count).
func foreignSGR(params string) bool {
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		switch ps[i] {
		case "38", "48", "58": // extended colour: 5;n or 2;r;g;b follow
			if i+1 < len(ps) && ps[i+1] == "5" {
				i += 2
			} else if i+1 < len(ps) && ps[i+1] == "2" {
				i += 4
			}
		case "5", "6", "8":
			return true
		}
	}
	return false
}

// hostileAgent connects to se over Streamable HTTP with a client name and
// version of the caller's choosing.
func hostileAgent(t *testing.T, srv *testServer, se *session.Session, name, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, nil)
	hc := &http.Client{Transport: testkit.Bearer(nil, se.Token())}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + srv.HTTPAddr() + "/sessions/" + se.ID + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("agent connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// activityOf reads raxol://session/activity.
func activityOf(t testing.TB, cs *mcp.ClientSession) []session.Action {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: mcpbridge.URIActivity})
	if err != nil {
		t.Fatalf("read activity: %v", err)
	}
	var log struct{ Actions []session.Action }
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &log); err != nil {
		t.Fatal(err)
	}
	return log.Actions
}

// checkActivity fails when an entry holds an unsafe rune or a piece of an
// escape sequence's payload.
func checkActivity(t testing.TB, acts []session.Action, payloads ...string) {
	t.Helper()
	for _, a := range acts {
		for _, f := range []string{a.Origin, a.Widget, a.Label, a.Action, a.Summary, a.Outcome} {
			for _, r := range f {
				if unsafeRune(r) {
					t.Fatalf("activity entry %+v holds %U", a, r)
				}
			}
			for _, p := range payloads {
				if p != "" && strings.Contains(f, p) {
					t.Fatalf("activity entry %+v holds %q", a, p)
				}
			}
		}
	}
}

// checkScreen fails when the hostile text moved the cursor or left its
// payload on the screen: @3@ never starts a line, and every @1@ is followed
// by the rest of the cleaned text.
func checkScreen(t testing.TB, scr string) {
	t.Helper()
	for _, line := range strings.Split(scr, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " │┃"), "@2@") || strings.HasPrefix(strings.TrimLeft(line, " │┃"), "@3@") {
			t.Fatalf("outside text broke a line:\n%s", scr)
		}
	}
	if strings.Count(scr, "@1@") != strings.Count(scr, "@1@@2@") {
		t.Fatalf("outside text split on the screen:\n%s", scr)
	}
	for _, p := range []string{"UFdORUQ", "52;c", "evil/", "6b64", "Gf=1", "\u202e", "\u2066"} {
		if strings.Contains(scr, p) {
			t.Fatalf("the screen shows %q:\n%s", p, scr)
		}
	}
}

// TestOutsideTextNeverReachesATerminalRaw: a stranger whose SSH user name
// is hostile asks to join, an agent whose client name is hostile attaches,
// calls hostile tool names and asks to press a hostile key. The owner's
// terminal (its raw byte stream and its screen through x/vt: status bar,
// join and approval prompts, activity log) and the activity resource get
// only the cleaned text.
func TestOutsideTextNeverReachesATerminalRaw(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{MCP: server.MCPOptions{ApprovalTimeout: 20 * time.Second}})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", keepRaw: true, w: 140}) // wide: the status bar keeps room for its keys
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)

	// The stranger's name in the join prompt.
	stranger := joinAs(t, srv, hostileText, newKey(t), id, 0, 0)
	owner.WaitFor(t, func(s string) bool { return armedPrompt(joinPrompt)(s) && strings.Contains(s, hostileShown) }, waitLong)
	checkScreen(t, owner.Screen())
	owner.Type("r")
	waitDemo(t, stranger)
	owner.WaitFor(t, "humans (2): alice, "+hostileShown, waitLong)

	// The agent's name in the status bar, its refused tools in the
	// status bar and the activity log.
	cs := hostileAgent(t, srv, se, hostileText, "1\x1b[5m\u202e")
	owner.WaitFor(t, "agent: "+hostileShown+" 1", waitLong)
	for _, name := range []string{"demo." + hostileText + ".click", "demo.search." + hostileText, hostileText} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}); err != nil {
			t.Logf("calling %q: %v", name, err) // refused as a JSON-RPC error: fine, if nothing leaks
		}
	}
	owner.WaitFor(t, "refused", waitLong)
	checkScreen(t, owner.Screen())

	// The approval prompt: agent name, tool and arguments.
	res := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpbridge.ToolSendKey, Arguments: map[string]any{"keys": []any{"x\u202eK1\u2066\r"}}})
		res <- err
	}()
	owner.WaitFor(t, armedPrompt(hostileShown+" 1 wants to run raxol_send_key"), waitLong)
	checkScreen(t, owner.Screen())
	owner.Type("d")
	select {
	case <-res:
	case <-time.After(waitLong):
		t.Fatal("the refused call did not return")
	}

	// The activity log.
	owner.Key("\x07") // ctrl+g
	owner.WaitFor(t, "Activity (", waitLong)
	owner.WaitFor(t, "agent:"+hostileShown, waitLong)
	checkScreen(t, owner.Screen())

	acts := activityOf(t, cs)
	checkActivity(t, acts, "UFdORUQ", "52;c", "6b64", "evil/")
	var sawName, sawTool bool
	for _, a := range acts {
		sawName = sawName || strings.HasPrefix(a.Origin, "agent:"+hostileShown)
		sawTool = sawTool || strings.Contains(a.Summary, hostileShown)
	}
	if !sawName || !sawTool {
		t.Fatalf("the activity log does not show the cleaned agent and tool names: %+v", acts)
	}
	for _, a := range se.Attached() {
		if strings.ContainsAny(a.Name, "\x1b\r\n\u202e") {
			t.Fatalf("attached as %q", a.Name)
		}
	}
	if p := rawProblems(owner.Raw()); len(p) > 0 {
		t.Fatalf("the owner's terminal was sent: %q", p)
	}
	if !bytes.Contains(owner.Raw(), []byte("@1@@2@")) {
		t.Fatal("the cleaned name never reached the terminal (the raw check saw nothing)")
	}
}

// anyBytes is arbitrary bytes, often mixed with the pieces escape
// sequences are made of.
var anyBytes = rapid.OneOf(
	rapid.Map(rapid.SliceOfN(rapid.Byte(), 1, 64), func(b []byte) string { return string(b) }),
	rapid.Map(rapid.SliceOfN(rapid.OneOf(
		rapid.SampledFrom([]string{"\x1b", "\x1b[", "\x1b]", "\x1bP", "\x1b_", "\x1b\\", "\x07", "\x9b", "\u009b", "\u009d", "\r", "\n", "\u202e", "\u2066", "\u034f", "\U000E0FFF", "\u2065", "52;c;",
			"\x1b[5m", "\x1b[8m", "\x1b[5;8m", "\x1b[2J", "\x1b[H"}),
		rapid.StringN(1, 8, -1),
		rapid.Map(rapid.SliceOfN(rapid.Byte(), 1, 8), func(b []byte) string { return string(b) }),
	), 1, 10), func(p []string) string { return strings.Join(p, "") }),
)

// TestArbitraryNamesNeverReachATerminalRaw: arbitrary bytes as the SSH
// user name (the owner's second terminal lists it), the MCP client name
// and a tool name, over a real server, SSH PTY client and go-sdk client:
// nothing of theirs that is a control or an escape reaches the owner's
// terminal or the activity resource. 20 examples drawn by rapid (each is
// a real login and agent, so not rapid's default 100).
func TestArbitraryNamesNeverReachATerminalRaw(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	seed := int(time.Now().UnixNano() % 1_000_000)
	for i := range 20 {
		user, client, tool := anyBytes.Example(seed+3*i), anyBytes.Example(seed+3*i+1), anyBytes.Example(seed+3*i+2)
		t.Logf("example %d (seed %d): user %q client %q tool %q", i, seed+3*i, user, client, tool)
		key := newKey(t)
		owner := connect(t, srv.SSHAddr(), clientOpts{user: user, key: key, keepRaw: true, w: 140}) // wide: the status bar keeps room for its keys
		id := waitDemo(t, owner)
		se, _ := srv.Sessions().Get(id)
		second := joinAs(t, srv, user, key, id, 0, 0) // the owner's key: no prompt
		owner.WaitFor(t, "humans (2)", waitLong)
		cs := hostileAgent(t, srv, se, client, client)
		owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, "agents: none") }, waitLong)
		// A refused call is recorded when its name splits into
		// <app>.<widget>.<action>; "demo.search.x." does not.
		recorded := 0
		for _, name := range []string{"demo." + tool + ".click", "demo.search." + tool} {
			_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			if _, _, ok := mcpbridge.SplitName("demo", name); ok {
				recorded++
			}
		}
		owner.Key("\x07") // ctrl+g: the activity log
		owner.WaitFor(t, "Activity (", waitLong)
		testkit.Eventually(t, waitLong, func() bool { return len(se.Activity()) >= recorded }, "the refused calls to be recorded")
		time.Sleep(50 * time.Millisecond) // a frame interval or three for the last draw

		checkActivity(t, activityOf(t, cs))
		if p := rawProblems(owner.Raw()); len(p) > 0 {
			t.Fatalf("example %d: the owner's terminal was sent %q", i, p)
		}
		_ = cs.Close()
		second.Close()
		owner.Close()
		srv.Sessions().End(id)
	}
}
