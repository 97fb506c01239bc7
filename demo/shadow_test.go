package demo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
)

// Agents can do only what the human can reach: while the restart dialog
// is open, the tools of the widgets behind it are neither listed nor
// discovered, and a call to one is refused as shadowed.
func TestTheOpenModalShadowsTheToolsBehindIt(t *testing.T) {
	s := start(t)
	s.TypeInto(demo.IDSearch, "bill").Click(demo.IDSearchGo).Select(demo.IDTable, 0).
		AssertToolAvailable("demo.tabs.select_tab").
		Click(demo.IDRestart).
		AssertComponent(demo.IDModal, visible)

	all := s.Tools() // tools/list, then discover_tools, once synced
	var mine []string
	for _, n := range all {
		if strings.HasPrefix(n, "demo.") {
			mine = append(mine, n)
		}
		if strings.HasPrefix(n, "demo.") && !strings.HasPrefix(n, "demo."+demo.IDModal+".") {
			t.Errorf("%s is offered behind the open modal", n)
		}
	}
	if len(mine) == 0 {
		t.Fatalf("the modal's own tools are not offered: %v", all)
	}
	for _, n := range []string{mcpbridge.ToolScreenshot, mcpbridge.ToolSendKey, mcpbridge.ToolDiscover} {
		if !contains(all, n) {
			t.Errorf("session tool %s is gone: %v", n, all)
		}
	}
	res, err := s.Client().ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if strings.HasPrefix(tl.Name, "demo.tabs.") {
			t.Errorf("tools/list has %s behind the modal", tl.Name)
		}
	}

	for name, args := range map[string]map[string]any{
		"demo.tabs.select_tab":   {"index": 1},
		"demo.tabs.get_tabs":     nil,
		"demo.services.get_rows": nil,
		"demo.search.type_into":  {"text": "x"},
	} {
		out, isErr := s.Call(name, args)
		msg, _ := out["message"].(string)
		if !isErr || out["error"] != mcpbridge.ErrKindShadowed || !strings.Contains(msg, demo.IDModal) {
			t.Errorf("%s behind the modal: %v (isError %v), want a shadowed error naming %q", name, out, isErr, demo.IDModal)
		}
	}
	active := func(i int) func(map[string]any) bool {
		return func(st map[string]any) bool { return st["active"] == float64(i) }
	}
	s.AssertComponent(demo.IDTabs, active(tabOverview)).
		// Dismissed, the tools behind it come back.
		CallTool("demo."+demo.IDModal+".dismiss", nil).
		AssertComponent(demo.IDModal, hidden).
		AssertToolAvailable("demo.tabs.select_tab").
		CallTool("demo.tabs.select_tab", map[string]any{"index": tabLogs}).
		AssertComponent(demo.IDTabs, active(tabLogs))
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
