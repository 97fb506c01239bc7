package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// Agents that leave, as real clients we did not write leave: the official
// TypeScript SDK in a one-shot CLI that exits without DELETE (as the MCP
// Inspector's CLI does), and mcp-remote, the stdio-to-HTTP bridge desktop
// clients use, which opens a probe client beside the real one and never
// closes it. What the human sees is read from the status bar of a real
// SSH PTY.

// tsAgentDir is examples/ts-agent with its dependencies installed (.ci/run
// runs npm ci there), and node; the test is skipped without them.
func tsAgentDir(t *testing.T, module string) (node, dir string) {
	t.Helper()
	dir, err := filepath.Abs("../examples/ts-agent")
	if err != nil {
		t.Fatal(err)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; .ci/run installs what this test needs")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(module))); err != nil {
		t.Skipf("run `npm ci` in examples/ts-agent (.ci/run does) to run this test (%s is missing)", module)
	}
	return node, dir
}

// TestOneShotTypeScriptClientsLeaveTheStatusBar: three runs of a one-shot
// CLI on the TypeScript SDK (connect, one call, exit without DELETE) each
// leave the human's status bar within 5 s of the process ending, though
// the keepalive is the default 20 s.
func TestOneShotTypeScriptClientsLeaveTheStatusBar(t *testing.T) {
	node, dir := tsAgentDir(t, "@modelcontextprotocol/sdk")
	t.Parallel()
	srv := startServer(t, server.Options{})
	human := connect(t, srv.SSHAddr(), clientOpts{w: 200, h: 24})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)
	for i := range 3 {
		name := fmt.Sprintf("inspector-cli-%d", i)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, node, "oneshot.mjs", "http://"+srv.HTTPAddr()+"/sessions/"+id+"/mcp", se.Token(), name)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		exited := time.Now()
		if err != nil || !strings.Contains(string(out), "listed ") {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		human.WaitFor(t, func(string) bool { return strings.Contains(statusBar(human), "agents: none") }, 10*time.Second)
		if d := time.Since(exited); d > 5*time.Second {
			t.Fatalf("%s stayed on the status bar %s after it exited", name, d)
		}
	}
}

// mcpRemote runs mcp-remote against url as a desktop client would (its
// stdin and stdout are the client's), sends initialize and a tools/list
// through it, and returns a func that lists the tools through it (the
// answer's line, "" if none came) and one that ends it (closing its
// stdin, as the desktop client quitting does).
func mcpRemote(t *testing.T, node, dir, url, token, name string) (list func(id int) string, end func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, filepath.Join("node_modules", "mcp-remote", "dist", "proxy.js"), url,
		"--header", "Authorization: Bearer "+token, "--allow-http")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCP_REMOTE_CONFIG_DIR="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			out <- sc.Text()
		}
	}()
	send := func(s string) { _, _ = io.WriteString(stdin, s+"\n") }
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, name))
	select {
	case l := <-out:
		if !strings.Contains(l, `"id":1`) {
			t.Fatalf("mcp-remote's answer to initialize: %s", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("mcp-remote did not answer initialize:\n%s", stderr.String())
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	list = func(id int) string {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		want := fmt.Sprintf(`"id":%d`, id)
		deadline := time.After(waitShort)
		for {
			select {
			case l, ok := <-out:
				if !ok {
					return ""
				}
				if strings.Contains(l, want) {
					return l
				}
			case <-deadline:
				return ""
			}
		}
	}
	done := false
	end = func() {
		if done {
			return
		}
		done = true
		stdin.Close()
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cancel()
			<-exited
		}
		cancel()
	}
	t.Cleanup(end)
	return list, end
}

// TestMCPRemoteClientsDoNotLockOutAnAgent: two desktop clients through
// mcp-remote fill a session capped at 4 (each is its own client and the
// probe mcp-remote opens first and never closes). A third agent still
// gets in: a probe that asked for nothing makes room; the clients at work
// keep theirs. When the desktop clients quit, they leave the status bar
// within 5 s.
func TestMCPRemoteClientsDoNotLockOutAnAgent(t *testing.T) {
	node, dir := tsAgentDir(t, "mcp-remote/dist/proxy.js")
	t.Parallel()
	opts := server.Options{}
	opts.MCP.MaxClients = 4
	srv := startServer(t, opts)
	human := connect(t, srv.SSHAddr(), clientOpts{w: 300, h: 24})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)
	url := "http://" + srv.HTTPAddr() + "/sessions/" + id + "/mcp"

	var lists []func(int) string
	var ends []func()
	for i := range 2 {
		list, end := mcpRemote(t, node, dir, url, se.Token(), fmt.Sprintf("desk-%d", i))
		lists = append(lists, list)
		ends = append(ends, end)
	}
	shown := regexp.MustCompile(`agents \(4\): `)
	human.WaitFor(t, func(string) bool { return shown.MatchString(statusBar(human)) }, waitLong)

	var third *mcp.ClientSession
	start := time.Now()
	for {
		c := mcp.NewClient(&mcp.Implementation{Name: "third-agent", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url,
			HTTPClient: &http.Client{Transport: testkit.Bearer(nil, se.Token())}}, nil)
		if err == nil {
			third = cs
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("a third agent was locked out by two mcp-remote clients: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // poll interval: until the third agent gets a place
	}
	defer third.Close()
	if _, err := third.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// waitLong: the probe that made room leaves presence when its stream
	// closes, which under CI load took more than 5 s (failed twice).
	human.WaitFor(t, func(string) bool {
		bar := statusBar(human)
		return strings.Contains(bar, "third-agent 1") && strings.Contains(bar, "desk-0 (via mcp-remote") &&
			strings.Contains(bar, "desk-1 (via mcp-remote") && strings.Count(bar, "mcp-remote-fallback-test") == 1
	}, waitLong)
	// The desktop clients still work through their bridges.
	for i, list := range lists {
		if l := list(10 + i); !strings.Contains(l, "raxol_screenshot") {
			t.Fatalf("desktop client %d through mcp-remote after the third agent came: %q", i, l)
		}
	}
	for _, end := range ends {
		end()
	}
	quit := time.Now()
	human.WaitFor(t, func(string) bool {
		b := statusBar(human)
		return !strings.Contains(b, "mcp-remote") && strings.Contains(b, "agent: third-agent 1")
	}, 10*time.Second)
	if d := time.Since(quit); d > 5*time.Second {
		t.Fatalf("the mcp-remote clients stayed on the status bar %s after they quit", d)
	}
}
