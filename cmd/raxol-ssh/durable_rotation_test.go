package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// durableNode starts the binary on a fresh data directory and logs its
// owner in; it returns the args to start it again on the same directory.
func durableNode(t *testing.T) (n *node, args []string, owner *testkit.Term, key gossh.Signer) {
	t.Helper()
	dir := t.TempDir()
	args = []string{"--data-dir", filepath.Join(dir, "data"),
		"--ssh-addr", "127.0.0.1:" + freePort(t), "--http-addr", "127.0.0.1:" + freePort(t)}
	n = startBinary(t, args...)
	key = testkit.NewKey(t)
	owner = testkit.RunAs(t, args[3], "alice", key, "")
	owner.WaitFor("Services (")
	return n, args, owner, key
}

// waitSaved waits until the node started with args has written a
// snapshot (raxol_snapshots_saved_total on its --http-addr): its one
// session is on disk.
func waitSaved(t *testing.T, args []string) {
	t.Helper()
	addr := args[slices.Index(args, "--http-addr")+1]
	testkit.Eventually(t, 10*time.Second, func() bool { return snapshotsSaved(addr) >= 1 }, "the saver to write the session")
}

// snapshotsSaved reads raxol_snapshots_saved_total from the /metrics of
// the node on addr; 0 when it cannot.
func snapshotsSaved(addr string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, "raxol_snapshots_saved_total "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

// attachPanel opens the attach panel and returns the session's URL, id and
// token as the owner reads them; the panel stays open.
func attachPanel(t *testing.T, owner *testkit.Term) (url, id, token string) {
	t.Helper()
	owner.Type("\x0f") // ctrl+o
	owner.WaitFor("Bearer token (")
	screen := owner.Screen()
	u, tok := urlRe.FindStringSubmatch(screen), tokenRe.FindStringSubmatch(screen)
	if u == nil || tok == nil {
		t.Fatalf("no URL or token in the attach panel:\n%s", screen)
	}
	return u[1], u[2], tok[1]
}

// rotate presses ctrl+r in the open attach panel and returns the new token
// as soon as the owner's screen shows it.
func rotate(t *testing.T, owner *testkit.Term, old string) string {
	t.Helper()
	owner.Type("\x12") // ctrl+r
	var fresh string
	testkit.Eventually(t, 15*time.Second, func() bool {
		if m := tokenRe.FindStringSubmatch(owner.Screen()); m != nil && m[1] != old {
			fresh = m[1]
			return true
		}
		return false
	}, "no new token on the owner's screen:\n%s", owner.Screen())
	return fresh
}

// kill ends the process with SIGKILL: no drain, no last save.
func (n *node) kill(t *testing.T) {
	t.Helper()
	if err := n.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = n.cmd.Wait()
}

// wantToken checks over MCP that token opens url (and the session answers
// a tool call) or that it is refused.
func wantToken(t *testing.T, url, token string, works bool, what string) {
	t.Helper()
	cs, err := connectAgent(t, url, token)
	switch {
	case works && err != nil:
		t.Fatalf("%s is refused after the restart: %v", what, err)
	case !works && err == nil:
		t.Fatalf("%s works after the restart", what)
	case !works:
		if !strings.Contains(err.Error(), "Unauthorized") && !strings.Contains(err.Error(), "401") {
			t.Fatalf("%s: refused, but not for want of authorization: %v", what, err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "raxol_screenshot"})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s: raxol_screenshot: %v %+v", what, err, res)
	}
	if shot := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(shot, "Services (") {
		t.Fatalf("%s: the restored session's screen is not the demo's:\n%s", what, shot)
	}
}

// TestDurableRotationSurvivesKill: the owner rotates the session's token
// with ctrl+r and the process is killed with SIGKILL at 0, 100 and 300 ms
// after the new token is on the owner's screen. After a restart on the
// same data directory the session is there, the new token opens it and
// the old one stays refused. The rotation is done as soon as the owner
// can read the new token, so the session is never older than the saver's
// first tick: the 0 ms case is one that lost the whole session.
func TestDurableRotationSurvivesKill(t *testing.T) {
	t.Parallel()
	for _, delay := range []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond} {
		t.Run(fmt.Sprintf("kill_after_%s", delay), func(t *testing.T) {
			t.Parallel()
			n, args, owner, _ := durableNode(t)
			url, _, old := attachPanel(t, owner)
			fresh := rotate(t, owner, old)
			time.Sleep(delay) // the case's kill delay after the rotation
			n.kill(t)
			owner.Close()

			n2 := startBinary(t, args...)
			if !strings.Contains(n2.out.String(), "session restored") {
				t.Fatalf("no session restored:\n%s", n2.out)
			}
			wantToken(t, url, fresh, true, "the new token")
			wantToken(t, url, old, false, "the old token")
		})
	}
}

// TestDurableRotationTwiceSurvivesKill: two rotations in a row, the
// process killed at once after the second: only the last token works.
func TestDurableRotationTwiceSurvivesKill(t *testing.T) {
	t.Parallel()
	n, args, owner, _ := durableNode(t)
	// Let the saver write the session once, with its first token.
	url, _, first := attachPanel(t, owner)
	waitSaved(t, args)
	second := rotate(t, owner, first)
	third := rotate(t, owner, second)
	n.kill(t)
	owner.Close()

	startBinary(t, args...)
	wantToken(t, url, third, true, "the last token")
	wantToken(t, url, second, false, "the second token")
	wantToken(t, url, first, false, "the first token")
}

// TestDurableQuitSurvivesKill: the owner quits (ctrl+c) a session the
// saver has written, and the process is killed with SIGKILL as soon as
// the owner's connection has closed. After a restart the session is not
// restored and its token opens nothing: ending a session revokes it, and
// the revocation was on disk before the owner saw the session end.
func TestDurableQuitSurvivesKill(t *testing.T) {
	t.Parallel()
	n, args, owner, _ := durableNode(t)
	url, _, token := attachPanel(t, owner)
	waitSaved(t, args) // the saver's tick has written it, fix or not
	owner.Type("\x03") // ctrl+c
	owner.WaitExit()
	n.kill(t)

	n2 := startBinary(t, args...)
	if strings.Contains(n2.out.String(), "session restored") {
		t.Fatalf("the session its owner quit was restored:\n%s", n2.out)
	}
	if _, err := connectAgent(t, url, token); err == nil {
		t.Fatal("the token of the session its owner quit works after the restart")
	}
}

// TestDurablePauseSurvivesKill: the owner pauses the agents (ctrl+p) and
// the process is killed with SIGKILL as soon as the status bar says so.
// After a restart the session is there, still paused: its agent's write
// is refused and the owner's resume shows the pause.
func TestDurablePauseSurvivesKill(t *testing.T) {
	t.Parallel()
	n, args, owner, key := durableNode(t)
	url, id, token := attachPanel(t, owner)
	owner.Type("\x0f") // ctrl+o closes the panel: the status bar shows
	waitSaved(t, args) // the saver's tick has written it unpaused, fix or not
	owner.Type("\x10") // ctrl+p
	owner.WaitFor("AGENTS PAUSED")
	n.kill(t)
	owner.Close()

	startBinary(t, args...)
	ag, err := connectAgent(t, url, token)
	if err != nil {
		t.Fatalf("the session's token after the restart: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := ag.CallTool(ctx, &mcp.CallToolParams{Name: "demo.services.select_row", Arguments: map[string]any{"index": 1}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "paused") {
		t.Fatalf("an agent's write after the restart of a paused session: %v %+v", err, res)
	}
	back := testkit.RunAs(t, args[3], "alice", key, "resume "+id)
	back.WaitFor("AGENTS PAUSED")
}

// TestDurableAttachPanelSurvivesKill: the process is killed with SIGKILL
// as soon as the attach panel shows a fresh session's token (the session
// is younger than the saver's first tick). After a restart the session is
// there and the token the owner read opens it.
func TestDurableAttachPanelSurvivesKill(t *testing.T) {
	t.Parallel()
	n, args, owner, _ := durableNode(t)
	url, _, token := attachPanel(t, owner)
	n.kill(t)
	owner.Close()

	startBinary(t, args...)
	wantToken(t, url, token, true, "the token the attach panel showed")
}
