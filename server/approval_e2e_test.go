package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestHumanAnswersApprovalsOverSSH: the demo asks before confirming a
// restart. The human, over a real SSH terminal, denies, lets a request time
// out, and allows for the session; each outcome is what the agent gets.
func TestHumanAnswersApprovalsOverSSH(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{MCP: server.MCPOptions{ApprovalTimeout: 1500 * time.Millisecond}})
	human := connect(t, srv.SSHAddr(), clientOpts{})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)

	restarts := func() int {
		return demo.ProjectServices(se.Dispatcher.Snapshot().Model.(demo.Model)).Restarts["billing"]
	}
	openConfirm := func() {
		t.Helper()
		ag.call("demo.services.select_row", map[string]any{"index": 2}) // billing
		ag.call("demo.restart.click", nil)
		human.WaitFor(t, "Restart billing?", waitLong)
	}
	confirm := func() chan map[string]any {
		out := make(chan map[string]any, 1)
		go func() {
			res, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "demo.confirm_restart.confirm", Arguments: map[string]any{}})
			if err != nil {
				out <- map[string]any{"transport_error": err.Error()}
				return
			}
			var m map[string]any
			_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &m)
			out <- m
		}()
		return out
	}
	wait := func(c chan map[string]any) map[string]any {
		t.Helper()
		select {
		case m := <-c:
			return m
		case <-time.After(waitLong):
			t.Fatal("the call did not finish")
			return nil
		}
	}

	// Denied by the human: the call does not run.
	openConfirm()
	res := confirm()
	human.WaitFor(t, "e2e-agent 0.1 wants to run demo.confirm_restart.confirm", waitLong)
	human.WaitFor(t, "Restart the selected service?", waitLong) // the policy's prompt
	human.WaitFor(t, armedPrompt("wants to run"), waitLong)
	human.Type("d")
	if m := wait(res); m["error"] != "authorization_required" || !strings.Contains(m["detail"].(string), "refused") {
		t.Fatalf("denied: %v", m)
	}
	if restarts() != 0 {
		t.Fatal("a denied restart ran")
	}
	human.WaitFor(t, func(s string) bool { return !strings.Contains(s, "wants to run") }, waitLong)

	// No answer: denied after the timeout, and the prompt goes away.
	res = confirm()
	human.WaitFor(t, "wants to run demo.confirm_restart.confirm", waitLong)
	if m := wait(res); m["error"] != "authorization_required" || !strings.Contains(m["detail"].(string), "no answer") {
		t.Fatalf("timed out: %v", m)
	}
	human.WaitFor(t, func(s string) bool { return !strings.Contains(s, "wants to run") }, waitLong)
	if restarts() != 0 {
		t.Fatal("a timed-out restart ran")
	}

	// Allowed for the session: it runs, and the next one is not asked.
	res = confirm()
	human.WaitFor(t, armedPrompt("wants to run demo.confirm_restart.confirm"), waitLong)
	human.Type("s")
	if m := wait(res); m["error"] != nil {
		t.Fatalf("approved: %v", m)
	}
	// Let the screen catch up, so a stale prompt is not mistaken below.
	human.WaitFor(t, func(s string) bool { return !strings.Contains(s, "wants to run") }, waitLong)
	if restarts() != 1 {
		t.Fatalf("restarts after approval = %d", restarts())
	}
	openConfirm()
	if m := wait(confirm()); m["error"] != nil {
		t.Fatalf("second confirm: %v", m)
	}
	if restarts() != 2 {
		t.Fatalf("restarts after the session grant = %d", restarts())
	}
	if strings.Contains(human.Screen(), "wants to run") {
		t.Fatal("a tool allowed for the session prompted again")
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_authz_decisions_total{decision="refused",seam="tool"}`); v != 1 {
		t.Errorf("refused decisions = %v", v)
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_authz_decisions_total{decision="timeout",seam="tool"}`); v != 1 {
		t.Errorf("timeout decisions = %v", v)
	}
}

// TestPromptLeftOpenWhenTheTerminalLeavesIsRefused: the human disconnects
// with a prompt open; the agent's call is refused at once, not after the
// timeout.
func TestPromptLeftOpenWhenTheTerminalLeavesIsRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{MCP: server.MCPOptions{ApprovalTimeout: 30 * time.Second}})
	human := connect(t, srv.SSHAddr(), clientOpts{})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)
	got := make(chan error, 1)
	go func() {
		_, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "raxol_send_key", Arguments: map[string]any{"keys": []any{"tab"}}})
		got <- err
	}()
	human.WaitFor(t, "wants to run raxol_send_key", waitLong)
	start := time.Now()
	human.Close()
	select {
	case <-got:
		if time.Since(start) > 10*time.Second {
			t.Fatalf("refusal took %s", time.Since(start))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call kept waiting after the terminal left")
	}
}
