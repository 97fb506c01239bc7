package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// reversedAt reports whether the first cell of the first occurrence of
// text on the screen is drawn in reverse video.
func (c *client) reversedAt(text string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for y, line := range strings.Split(c.em.String(), "\n") {
		if x := strings.Index(line, text); x >= 0 {
			col := len([]rune(line[:x]))
			cell := c.em.CellAt(col, y)
			return cell != nil && cell.Style.Attrs&uv.AttrReverse != 0
		}
	}
	return false
}

// TestPresenceActivityAndHighlight: over real SSH and MCP, the human sees
// the agent arrive and leave by name, sees what it did in words with the
// widget highlighted, and the activity resource records human and agent
// actions with their origins, in order.
func TestPresenceActivityAndHighlight(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	human := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)
	human.WaitFor(t, "agent: e2e-agent 0.1", waitLong)

	human.Key("\t") // focus the search input
	human.Type("hi")
	human.WaitFor(t, "Search: hi", waitLong)

	ag.call("demo.search_btn.click", nil)
	human.WaitFor(t, "e2e-agent 0.1 clicked Search", waitLong)
	if !human.reversedAt("[ Search ]") {
		// The highlight lasts about a second; it must be visible now.
		t.Fatalf("the clicked button is not highlighted:\n%s", human.Screen())
	}
	testkit.Eventually(t, 3*time.Second, func() bool { return !human.reversedAt("[ Search ]") }, "the highlight to end")

	ag.call("demo.search.type_into", map[string]any{"text": "bill"})
	human.WaitFor(t, "e2e-agent 0.1 typed into Search", waitLong)
	if !human.reversedAt("Search: bill") {
		t.Fatalf("the input the agent typed into is not highlighted:\n%s", human.Screen())
	}

	res, err := ag.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: mcpbridge.URIActivity})
	if err != nil {
		t.Fatal(err)
	}
	var log struct{ Actions []session.Action }
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &log); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range log.Actions {
		got = append(got, a.Origin+" "+a.Summary)
	}
	want := []string{
		"human:alice typed into Search", // two keys, one entry
		"agent:e2e-agent 0.1 clicked Search", "agent:e2e-agent 0.1 typed into Search",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("activity log\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if log.Actions[0].Count != 2 {
		t.Fatalf("the human's two keys were counted %d times", log.Actions[0].Count)
	}
	for i := 1; i < len(log.Actions); i++ {
		if log.Actions[i].At.Before(log.Actions[i-1].At) {
			t.Fatal("activity out of order")
		}
	}

	// The human opens the log panel.
	human.Key("\x07") // ctrl+g
	human.WaitFor(t, "Activity (3", waitLong)

	// The agent leaves: presence updates.
	_ = ag.cs.Close()
	human.WaitFor(t, "agents: none", waitLong)
}

// TestPauseAndHandBack: the human pauses agents; writes are refused with a
// clear error, reads work, and after hand-back the same write succeeds.
// Focus-only mode lets the agent act only on the human's focused widget.
func TestPauseAndHandBack(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	human := connect(t, srv.SSHAddr(), clientOpts{})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)
	raw := func(name string, args map[string]any) (map[string]any, bool) {
		res, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &m)
		return m, res.IsError
	}

	human.Key("\x10") // ctrl+p
	human.WaitFor(t, "AGENTS PAUSED", waitLong)
	out, isErr := raw("demo.search.type_into", map[string]any{"text": "nope"})
	if !isErr || out["error"] != "paused" || !strings.Contains(out["message"].(string), "paused by the human") {
		t.Fatalf("write while paused: %v", out)
	}
	if _, isErr := raw("demo.search.get_value", nil); isErr {
		t.Fatal("a read was refused while paused")
	}
	ctxRes, err := ag.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: mcpbridge.URIContext})
	if err != nil || !strings.Contains(ctxRes.Contents[0].Text, `"paused":true`) {
		t.Fatalf("context while paused: %v %v", err, ctxRes)
	}
	human.Key("\x10") // hand back
	human.WaitFor(t, func(s string) bool { return !strings.Contains(s, "AGENTS PAUSED") }, waitLong)
	if out, isErr := raw("demo.search.type_into", map[string]any{"text": "now"}); isErr {
		t.Fatalf("write after hand-back: %v", out)
	}
	human.WaitFor(t, "Search: now", waitLong)

	// Focus-only: the focus is on the tabs; the search input is refused.
	human.Key("\x06") // ctrl+f
	human.WaitFor(t, "focused widget only", waitLong)
	if out, isErr := raw("demo.search.clear", nil); !isErr || out["error"] != "not_focused" {
		t.Fatalf("write beside the focus: %v", out)
	}
	if _, isErr := raw("demo.tabs.select_tab", map[string]any{"index": 0}); isErr {
		t.Fatal("a write on the focused widget was refused")
	}
}

// TestScreenshotShowsTheLatestAction: a screenshot taken right after a
// call shows that call's effect, although the terminal draws on its own.
func TestScreenshotShowsTheLatestAction(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	human := connect(t, srv.SSHAddr(), clientOpts{})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)
	for i, q := range []string{"bill", "pay", "auth", "search", "eu-west"} {
		ag.call("demo.search.type_into", map[string]any{"text": q})
		ag.call("demo.search_btn.click", nil)
		res, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "raxol_screenshot"})
		if err != nil {
			t.Fatal(err)
		}
		if shot := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(shot, `Filter "`+q+`"`) {
			t.Fatalf("round %d: the screenshot does not show the filter %q:\n%s", i, q, shot)
		}
	}
}
