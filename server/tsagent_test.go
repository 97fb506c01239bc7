package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestTypeScriptSDKAgent runs examples/ts-agent/agent.mjs, an agent on the
// official TypeScript MCP SDK, against a live session that a human watches
// over SSH: interoperability with a client that is not ours.
//
// It needs Node.js and the example's dependencies (`npm ci` in
// examples/ts-agent), which .ci/run installs.
func TestTypeScriptSDKAgent(t *testing.T) {
	dir, err := filepath.Abs("../examples/ts-agent")
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; .ci/run installs what this test needs")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("run `npm ci` in examples/ts-agent (.ci/run does) to run this test")
	}
	t.Parallel()
	srv := startServer(t, server.Options{})
	human := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "agent.mjs", "http://"+srv.HTTPAddr()+"/sessions/"+id+"/mcp", se.Token())
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agent: %v\n%s", err, out)
	}
	for _, want := range []string{
		"tools the lens offers now:", "demo.search.type_into", "raxol_screenshot",
		// The human's focus (the tabs, the first focusable widget) comes first
		// after the session tools, marked _meta.focused.
		"discover_tools, raxol_show, demo.tabs.select_tab, demo.tabs.get_tabs, ", "the human is on: demo.tabs.select_tab, demo.tabs.get_tabs\n",
		`type_into -> {"result":{"ok":true},"state":{`, `"value":"bill"`,
		`Filter "bill": 1 of 8 services`, // the screenshot, after the click
		"update demo://state/services",   // a resource update with its patch
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("agent output lacks %q:\n%s", want, out)
		}
	}
	human.WaitFor(t, `Filter "bill": 1 of 8 services`, waitLong)
	human.WaitFor(t, "agents: none", waitLong) // the agent closed its session
}
