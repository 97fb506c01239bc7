package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// listTools is one tools/list of cs.
func listTools(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// toolNames are the names of tools, in order.
func toolNames(tools []*mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, tl := range tools {
		out[i] = tl.Name
	}
	return out
}

// marked are the names of the tools carrying _meta.focused, in order.
func marked(tools []*mcp.Tool) []string {
	var out []string
	for _, tl := range tools {
		if tl.Meta[mcpbridge.MetaFocused] == true {
			out = append(out, tl.Name)
		}
	}
	return out
}

// ofWidget are the names of the tools of widget id, in order.
func ofWidget(tools []*mcp.Tool, id string) []string {
	var out []string
	for _, tl := range tools {
		if strings.HasPrefix(tl.Name, "app."+id+".") {
			out = append(out, tl.Name)
		}
	}
	return out
}

// lensAdvertised is lens.advertised from raxol://session/context: the
// lens's order.
func lensAdvertised(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: mcpbridge.URIContext})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Lens struct {
			Advertised []string `json:"advertised"`
		} `json:"lens"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Lens.Advertised
}

// focusOn moves the human's focus to id and waits until cs's tools/list
// starts, after the session tools, with that widget's tools.
func focusOn(t *testing.T, e *env, cs *mcp.ClientSession, id string) []*mcp.Tool {
	t.Helper()
	e.session.SetAttention(session.Attention{Focus: id})
	var tools []*mcp.Tool
	testkit.Eventually(t, 5*time.Second, func() bool {
		tools = listTools(t, cs)
		// The order alone can look right before the focus move is
		// applied (with no focus, tree order puts the first widget
		// first): wait for the mark too.
		m := marked(tools)
		ns := len(sessionToolNames)
		return len(tools) > ns && strings.HasPrefix(tools[ns].Name, "app."+id+".") && len(m) > 0 && strings.HasPrefix(m[0], "app."+id+".")
	}, "focus on %s: tools/list is still %v", id, lastNames{&tools})
	return tools
}

// lastNames prints the names of the tools it points to when formatted,
// for a failure message that shows the last list seen.
type lastNames struct{ tools *[]*mcp.Tool }

func (l lastNames) String() string { return fmt.Sprintf("%q", toolNames(*l.tools)) }

var sessionToolNames = []string{mcpbridge.ToolScreenshot, mcpbridge.ToolWaitFor, mcpbridge.ToolSendKey, mcpbridge.ToolDiscover, mcpbridge.ToolShow}

// TestToolsListFollowsFocus: tools/list comes in the lens's order (the
// session tools, then the focused widget's tools, then the rest), the
// focused widget's tools alone carry _meta.focused, and a focus move moves
// both, without changing a description, the set, or sending
// notifications/tools/list_changed (the set is the same).
func TestToolsListFollowsFocus(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "streamable", true: "sse"}[sse], func(t *testing.T) { testToolsListFollowsFocus(t, sse) })
	}
}

func testToolsListFollowsFocus(t *testing.T, sse bool) {
	e := newEnv(t)
	cs, n := e.connect(sse)

	before := listTools(t, cs)
	if got := marked(before); got != nil {
		t.Fatalf("with no focus, tools %q are marked focused", got)
	}
	descs := map[string]string{}
	for _, tl := range before {
		descs[tl.Name] = tl.Description
	}

	for _, id := range []string{"agree", "name", "pw", "go"} {
		tools := focusOn(t, e, cs, id)
		got := toolNames(tools)
		if ns := len(sessionToolNames); !slices.Equal(got[:ns], sessionToolNames) {
			t.Fatalf("focus %s: tools/list starts %q, want the session tools %q first", id, got[:ns], sessionToolNames)
		}
		own := ofWidget(tools, id)
		if len(own) == 0 {
			t.Fatalf("focus %s: the widget has no tools in %q", id, got)
		}
		if ns := len(sessionToolNames); !slices.Equal(got[ns:ns+len(own)], own) {
			t.Fatalf("focus %s: tools/list %q does not put the widget's tools %q right after the session tools", id, got, own)
		}
		if m := marked(tools); !slices.Equal(m, own) {
			t.Fatalf("focus %s: marked focused %q, want exactly %q", id, m, own)
		}
		testkit.Eventually(t, 5*time.Second, func() bool { return slices.Equal(lensAdvertised(t, cs), toolNames(listTools(t, cs))) }, "tools/list in the lens's advertised order")
		if !lensSameSet(got, toolNames(before)) {
			t.Fatalf("focus %s: the advertised set changed: %q, was %q", id, got, toolNames(before))
		}
		for _, tl := range tools {
			if tl.Description != descs[tl.Name] {
				t.Fatalf("focus %s: %s's description changed: %q, was %q", id, tl.Name, tl.Description, descs[tl.Name])
			}
		}
		if id == "pw" {
			for _, tl := range tools {
				if strings.HasPrefix(tl.Name, "app.pw.") && tl.Meta["sensitive"] != true {
					t.Fatalf("the mark replaced %s's _meta: %v", tl.Name, tl.Meta)
				}
			}
		}
	}

	// No focus, no mark: the marks of earlier lists did not stay on the
	// server's tools.
	e.session.SetAttention(session.Attention{})
	testkit.Eventually(t, 5*time.Second, func() bool { return marked(listTools(t, cs)) == nil }, "a mark on tools/list with no focus")

	// Focus moves that keep the set send no list_changed.
	time.Sleep(50 * time.Millisecond) // negative check: longer than the SDK's 10ms list_changed debounce
	n.mu.Lock()
	chg := n.listChg
	n.mu.Unlock()
	if chg != 0 {
		t.Fatalf("focus moves within the advertised set sent %d notifications/tools/list_changed", chg)
	}
}

func lensSameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestFocusOrderComposesWithTheGate: the gate filters the ordered, marked
// list per entry and per client: a client whose policy denies one of the
// focused widget's tools does not see it and still gets the rest first,
// marked; another client sees its own full list; neither list changes the
// other's or the server's tools.
func TestFocusOrderComposesWithTheGate(t *testing.T) {
	var denied atomic.Value // the ConnID that may not use app.name.clear
	denied.Store("")
	policy := func(name string, _ map[string]any, actx authz.Context) authz.Decision {
		if name == "app.name.clear" && actx.ConnID != "" && actx.ConnID == denied.Load() {
			return authz.Deny("not for you")
		}
		return authz.Allow()
	}
	e := policyEnv(t, configured(policy, authz.AllowAll()))
	a, _ := e.connect(false)
	denied.Store(a.ID())
	b, _ := e.connect(false)

	for round := range 2 {
		ta := focusOn(t, e, a, "name")
		tb := listTools(t, b)
		want := []string{"app.name.type_into", "app.name.clear", "app.name.get_value"}
		wantA := []string{"app.name.type_into", "app.name.get_value"}
		if got := ofWidget(tb, "name"); !slices.Equal(got, want) {
			t.Fatalf("round %d: B's name tools %q, want %q", round, got, want)
		}
		if ns := len(sessionToolNames); !slices.Equal(toolNames(tb)[ns:ns+3], want) {
			t.Fatalf("round %d: B's list %q does not start with %q after the session tools", round, toolNames(tb), want)
		}
		if m := marked(tb); !slices.Equal(m, want) {
			t.Fatalf("round %d: B's marked tools %q, want %q", round, m, want)
		}
		if got := toolNames(ta); slices.Contains(got, "app.name.clear") {
			t.Fatalf("round %d: A's list %q shows the tool its policy denies", round, got)
		}
		if ns := len(sessionToolNames); !slices.Equal(toolNames(ta)[ns:ns+2], wantA) {
			t.Fatalf("round %d: A's list %q does not start with the focused widget's remaining tools %q", round, toolNames(ta), wantA)
		}
		if m := marked(ta); !slices.Equal(m, wantA) {
			t.Fatalf("round %d: A's marked tools %q, want %q", round, m, wantA)
		}
		// A's list less the denied tool is B's list, in the same order.
		if got, rest := toolNames(ta), slices.DeleteFunc(toolNames(tb), func(s string) bool { return s == "app.name.clear" }); !slices.Equal(got, rest) {
			t.Fatalf("round %d: A's list %q, want B's without the denied tool %q", round, got, rest)
		}

		// Focus elsewhere: no name tool keeps a mark, for either client.
		for _, cs := range []*mcp.ClientSession{a, b} {
			tools := focusOn(t, e, cs, "agree")
			if m := marked(tools); !slices.Equal(m, ofWidget(tools, "agree")) {
				t.Fatalf("round %d: after focus moved to agree, marked %q", round, m)
			}
		}
		if !slices.Contains(toolNames(listTools(t, b)), "app.name.clear") || slices.Contains(toolNames(listTools(t, a)), "app.name.clear") {
			t.Fatalf("round %d: the per-client filtering leaked between clients", round)
		}
	}
}

// TestFocusMarkWithHoverAndModal: in hover mode the hovered widget leads
// and the mark stays on the focused one, right after it; behind an open
// modal the focused widget has no tools to mark, and the modal's tools
// lead.
func TestFocusMarkWithHoverAndModal(t *testing.T) {
	e := policyEnv(t, configured(authz.AllowAll(), authz.AllowAll()), func(o *mcpbridge.Options) { o.LensMode = lens.ModeHover })
	cs, _ := e.connect(false)
	e.session.SetAttention(session.Attention{Focus: "name", Hover: "agree"})
	var tools []*mcp.Tool
	testkit.Eventually(t, 5*time.Second, func() bool {
		tools = listTools(t, cs)
		ns := len(sessionToolNames)
		return len(tools) > ns && strings.HasPrefix(tools[ns].Name, "app.agree.")
	}, "hover on agree: its tools after the session tools")
	hovered, focused := ofWidget(tools, "agree"), ofWidget(tools, "name")
	want := append(append(slices.Clone(sessionToolNames), hovered...), focused...)
	if got := toolNames(tools)[:len(want)]; !slices.Equal(got, want) {
		t.Fatalf("hover mode: tools/list %q, want it to start %q", toolNames(tools), want)
	}
	if m := marked(tools); !slices.Equal(m, focused) {
		t.Fatalf("hover mode: marked %q, want the focused widget's %q", m, focused)
	}

	call(t, cs, "app.open.click", nil) // opens the modal "dlg"
	testkit.Eventually(t, 5*time.Second, func() bool { return !slices.Contains(toolNames(listTools(t, cs)), "app.name.type_into") }, "the modal opened: tools/list still has the input behind it")
	if m := marked(listTools(t, cs)); m != nil {
		t.Fatalf("focus behind the modal: marked %q, want none", m)
	}
	e.session.SetAttention(session.Attention{Focus: "dlg"})
	testkit.Eventually(t, 5*time.Second, func() bool { return marked(listTools(t, cs)) != nil }, "no focus mark with the modal focused")
	tools = listTools(t, cs)
	if m, own := marked(tools), ofWidget(tools, "dlg"); len(own) == 0 || !slices.Equal(m, own) || !slices.Equal(toolNames(tools)[len(sessionToolNames):len(sessionToolNames)+len(own)], own) {
		t.Fatalf("focus on the modal: tools/list %q, marked %q", toolNames(tools), m)
	}
}
