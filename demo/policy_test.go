package demo_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
)

// TestAgentsDocStatesTheDemoPolicy: the policy file docs/AGENTS.md gives
// as the demo's built-in policy decides every tool the demo offers, every
// session and /mcp tool and every read method as the code does.
func TestAgentsDocStatesTheDemoPolicy(t *testing.T) {
	doc, err := os.ReadFile("../docs/AGENTS.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "The demo's built-in\npolicy, written as a policy file"
	i := strings.Index(string(doc), marker)
	if i < 0 {
		t.Fatalf("docs/AGENTS.md no longer says %q", marker)
	}
	rest := string(doc[i:])
	start := strings.Index(rest, "```json\n") + len("```json\n")
	end := strings.Index(rest[start:], "```")
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, []byte(rest[start:start+end]), 0o600); err != nil {
		t.Fatal(err)
	}
	docTool, docRead, err := authz.LoadPolicyFile(path)
	if err != nil {
		t.Fatalf("the doc's policy file: %v", err)
	}
	tools := []string{mcpbridge.ToolSendKey, mcpbridge.ToolScreenshot, mcpbridge.ToolDiscover, mcpbridge.ToolShow, mcpbridge.ToolWaitFor, "raxol_start", "raxol_stop", "raxol_list", "other.x.click", "raxol_other"}
	for _, d := range mcpbridge.Derive(demo.Name, demo.New().View(), nil) {
		tools = append(tools, d.Name)
	}
	tools = append(tools, demo.Name+"."+demo.IDModal+".confirm", demo.Name+"."+demo.IDModal+".dismiss")
	code := demo.ToolPolicy()
	for _, name := range tools {
		if got, want := docTool(name, nil, authz.Context{}).Kind, code(name, nil, authz.Context{}).Kind; got != want {
			t.Errorf("%s: the doc says %v, the code %v", name, got, want)
		}
	}
	for _, m := range authz.ReadMethods() {
		if got, want := docRead(m, nil, authz.Context{}).Kind, demo.ReadPolicy()(m, nil, authz.Context{}).Kind; got != want {
			t.Errorf("read %s: the doc says %v, the code %v", m, got, want)
		}
	}
}

// The demo lets agents read its live view (the MCP App's raxol_show) as
// it lets them take a screenshot: both are reads.
func TestDemoPolicyAllowsTheLiveView(t *testing.T) {
	for _, name := range []string{mcpbridge.ToolShow, mcpbridge.ToolScreenshot} {
		if d := demo.ToolPolicy()(name, nil, authz.Context{}); d.Kind != authz.KindAllow {
			t.Errorf("%s: %v, want allow", name, d.Kind)
		}
	}
}
