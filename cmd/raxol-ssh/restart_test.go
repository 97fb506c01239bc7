package main

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// freePort returns a loopback port nobody listened on a moment ago, so
// that a restarted server comes back at the same address (the agent's
// URL names it).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// node is one run of the binary.
type node struct {
	cmd *exec.Cmd
	out *testkit.SyncBuffer
}

func startBinary(t *testing.T, args ...string) *node {
	t.Helper()
	n := &node{cmd: exec.Command(buildBinary(t), args...), out: &testkit.SyncBuffer{}}
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n.cmd.ProcessState == nil {
			_ = n.cmd.Process.Kill()
			_ = n.cmd.Wait()
		}
	})
	testkit.Eventually(t, 15*time.Second, func() bool { return strings.Contains(n.out.String(), "raxol-ssh serving") },
		"the server to start:\n%s", n.out)
	return n
}

func (n *node) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the server did not stop on %v:\n%s", sig, n.out)
	}
}

var (
	urlRe   = regexp.MustCompile(`(http://\S+/sessions/([A-Za-z0-9_-]{24})/mcp)`)
	tokenRe = regexp.MustCompile(`(?m)Bearer token \(Authorization: Bearer <token>\):\s*\n\s*([A-Za-z0-9_-]{43})`)
)

func connectAgent(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "restart-agent", Version: "0.1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: testkit.Bearer(nil, token)}}, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, nil
}

func selectRow(t *testing.T, cs *mcp.ClientSession, i int) {
	t.Helper()
	if out, isErr := callJSON(t, cs, "demo.services.select_row", map[string]any{"index": i}); isErr {
		t.Fatalf("select_row: %v", out)
	}
}

// restartCase types into the demo over SSH, attaches an agent, stops the
// binary with sig and starts it again on the same data directory: resume
// shows the typed text and the agent's change, and the agent's URL and
// token work. settle is how long the test waits after the last change
// before stopping (a kill -9 loses at most the last second).
func restartCase(t *testing.T, sig syscall.Signal, settle time.Duration) {
	dir := t.TempDir()
	sshAddr := "127.0.0.1:" + freePort(t)
	httpAddr := "127.0.0.1:" + freePort(t)
	args := []string{"--data-dir", filepath.Join(dir, "data"), "--ssh-addr", sshAddr, "--http-addr", httpAddr}
	n := startBinary(t, args...)
	key := testkit.NewKey(t)
	owner := testkit.RunAs(t, sshAddr, "alice", key, "")
	owner.WaitFor("Services (")
	owner.Type("\t")
	owner.Type("typed-before-restart")
	owner.WaitFor("Search: typed-before-restart")
	owner.Type("\x0f") // ctrl+o: the attach panel
	owner.WaitFor("Bearer token")
	screen := owner.Screen()
	u, tok := urlRe.FindStringSubmatch(screen), tokenRe.FindStringSubmatch(screen)
	if u == nil || tok == nil {
		t.Fatalf("no URL or token in the attach panel:\n%s", screen)
	}
	url, id, token := u[1], u[2], tok[1]
	owner.Type("\x0f")
	ag, err := connectAgent(t, url, token)
	if err != nil {
		t.Fatal(err)
	}
	selectRow(t, ag, 1)
	owner.WaitFor("Selected auth")
	time.Sleep(settle) // the case's delay between the last change and the stop
	n.stop(t, sig)
	owner.Close()

	n2 := startBinary(t, args...)
	if !strings.Contains(n2.out.String(), "session restored") {
		t.Fatalf("no session restored:\n%s", n2.out)
	}
	back := testkit.RunAs(t, sshAddr, "alice", key, "resume "+id)
	back.WaitFor("Search: typed-before-restart")
	back.WaitFor("Selected auth")
	ag2, err := connectAgent(t, url, token)
	if err != nil {
		t.Fatalf("the agent's URL and token after the restart: %v", err)
	}
	selectRow(t, ag2, 2)
	back.WaitFor("Selected billing")
	// Someone else's key cannot resume it.
	other := testkit.RunAs(t, sshAddr, "alice", testkit.NewKey(t), "resume "+id)
	other.WaitExit()
	if !strings.Contains(other.Stderr(), "no such session") {
		t.Errorf("resume with another key: stderr %q", other.Stderr())
	}
}

func TestRestartKeepsSessions(t *testing.T) {
	t.Parallel()
	restartCase(t, syscall.SIGTERM, 0)
}

func TestKillNineKeepsSessions(t *testing.T) {
	t.Parallel()
	// The saver writes a changed session within a second: wait a little
	// more than that, then kill without a drain.
	restartCase(t, syscall.SIGKILL, 1500*time.Millisecond)
}
