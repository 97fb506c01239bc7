package mcpbridge_test

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// listsApp shows one of every built-in widget, with data in every list
// (Full) or none.
type listsApp struct{ Full bool }

type listsPressed struct{}

func (a listsApp) Init() tea.Cmd                      { return nil }
func (a listsApp) Update(tea.Msg) (ui.Model, tea.Cmd) { return a, nil }

func (a listsApp) View() ui.Node {
	pick := func(full, empty any) any {
		if a.Full {
			return full
		}
		return empty
	}
	return ui.Column{Items: []ui.Node{
		ui.TextInput{ID: "input", Label: "Input", Value: pick("text", "").(string)},
		ui.TextArea{ID: "area", Label: "Area", Value: pick("a\nb", "").(string)},
		ui.PasswordField{ID: "pw", Label: "Password"},
		ui.Checkbox{ID: "check", Label: "Check"},
		ui.Button{ID: "press", Label: "Press", OnClick: listsPressed{}},
		ui.SelectList{ID: "select", Label: "Select", Options: pick([]string{"a", "b"}, []string(nil)).([]string)},
		ui.Tabs{ID: "tabs", Tabs: pick([]string{"one", "two"}, []string(nil)).([]string)},
		ui.Menu{ID: "menu", Items: pick([]ui.MenuItem{{ID: "m", Label: "M", Children: []ui.MenuItem{{ID: "n", Label: "N"}}}}, []ui.MenuItem(nil)).([]ui.MenuItem)},
		ui.Table{ID: "table", Columns: pick([]ui.TableColumn{{Key: "k", Title: "K"}}, []ui.TableColumn(nil)).([]ui.TableColumn),
			Rows: pick([][]string{{"r"}}, [][]string(nil)).([][]string), Selected: -1},
		ui.Tree{ID: "tree", Nodes: pick([]ui.TreeNode{{ID: "t", Label: "T", Children: []ui.TreeNode{{ID: "u", Label: "U"}}}}, []ui.TreeNode(nil)).([]ui.TreeNode)},
		ui.Scrubber{ID: "scrub", Label: "Scrub", Max: 3},
		ui.Viewport{ID: "view", Lines: pick([]string{"l1", "l2"}, []string(nil)).([]string)},
		ui.BarChart{ID: "bars", Bars: pick([]ui.Bar{{Label: "b", Value: 1}}, []ui.Bar(nil)).([]ui.Bar)},
		ui.LineChart{ID: "lines", Series: pick([]ui.Series{{Name: "s", Values: []float64{1, 2}}}, []ui.Series(nil)).([]ui.Series)},
		ui.ScatterChart{ID: "scatter", Series: pick([]ui.ScatterSeries{{Name: "s", Points: []ui.Point{{X: 1, Y: 2}}}}, []ui.ScatterSeries(nil)).([]ui.ScatterSeries)},
	}}
}

// answers is every resource and every session tool's answer, and every
// widget read's, of a session of m as JSON, by where it came from; with
// act, after an agent's write (so that the activity and recent actions
// hold something).
func answers(t *testing.T, m ui.Model, act bool) map[string]any {
	t.Helper()
	e := &env{t: t, metrics: metrics.New()}
	e.mgr = session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
	e.bridge = newTestBridge(t, e.mgr, mcpbridge.Options{Namespace: "app", Metrics: e.metrics, ToolCallsPerSecond: 1e9, ToolCallBurst: 1e9})
	e.http = serveHTTP(t, e.bridge)
	t.Cleanup(func() { e.bridge.Close(); e.http.Close(); e.mgr.Close() })
	s, ok, err := e.mgr.Start("app", session.Owner{User: "u"}, m, 0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	e.session = s
	cs, _ := e.connect(false)
	ctx := context.Background()
	if act {
		if out, isErr := call(t, cs, "app.press.click", nil); isErr {
			t.Fatalf("click: %v", out)
		}
	}
	got := map[string]any{}
	decode := func(where, text string) {
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			return // plain text (the screen)
		}
		got[where] = v
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lr.Resources {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Fatalf("read %s: %v", r.URI, err)
		}
		decode("resource "+r.URI, res.Contents[0].Text)
	}
	var reads []string
	tl, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tl.Tools {
		if tool.Annotations != nil && tool.Annotations.ReadOnlyHint && !strings.HasPrefix(tool.Name, "raxol_") && tool.Name != mcpbridge.ToolDiscover {
			reads = append(reads, tool.Name)
		}
	}
	found, _ := call(t, cs, mcpbridge.ToolDiscover, nil)
	got["tool "+mcpbridge.ToolDiscover] = found
	for _, d := range found["tools"].([]any) {
		if d := d.(map[string]any); d["readOnly"] == true {
			reads = append(reads, d["name"].(string))
		}
	}
	for _, name := range []string{mcpbridge.ToolSendKey, mcpbridge.ToolScreenshot} {
		var args map[string]any
		if name == mcpbridge.ToolSendKey {
			args = map[string]any{"keys": []any{"end"}}
		}
		out, _ := call(t, cs, name, args)
		got["tool "+name] = out
	}
	for _, name := range reads {
		if strings.HasSuffix(name, ".get_point_at") {
			out, _ := call(t, cs, name, map[string]any{"x": 0})
			got["tool "+name] = out
			continue
		}
		out, _ := call(t, cs, name, nil)
		got["tool "+name] = out
	}
	return got
}

// shape records, by path (object keys, "*" for any element), where a
// JSON value holds a list, and where it holds null.
func shape(v any, path string, lists, nulls map[string]bool) {
	switch v := v.(type) {
	case nil:
		nulls[path] = true
	case []any:
		lists[path] = true
		for _, x := range v {
			shape(x, path+"/*", lists, nulls)
		}
	case map[string]any:
		for k, x := range v {
			shape(x, path+"/"+k, lists, nulls)
		}
	}
}

// TestEveryListIsEmptyNotNull walks every resource, every session tool's
// answer and every widget read's answer of a fresh session whose widgets
// have no data, and of one whose widgets all have data and where an agent
// has acted: wherever the second holds a list, the first holds a list
// too, [] when empty, never null.
func TestEveryListIsEmptyNotNull(t *testing.T) {
	full := answers(t, listsApp{Full: true}, true)
	fresh := answers(t, listsApp{}, false)
	// Not vacuous: the lists of issue 24's report are lists in the full
	// session.
	fullLists, fullNulls := map[string]bool{}, map[string]bool{}
	for where, v := range full {
		shape(v, where, fullLists, fullNulls)
	}
	for _, p := range []string{
		"resource " + mcpbridge.URIActivity + "/actions",
		"resource " + mcpbridge.URIContext + "/activity",
		"resource " + mcpbridge.URIContext + "/recent",
		"resource " + mcpbridge.URIContext + "/widgets",
		"resource " + mcpbridge.URIContext + "/lens/advertised",
		"tool " + mcpbridge.ToolDiscover + "/tools",
		"tool app.table.get_rows/result/rows",
		"tool app.menu.get_items/result/items",
	} {
		if !fullLists[p] {
			t.Fatalf("the full session has no list at %s: the comparison would miss it", p)
		}
	}
	freshLists, freshNulls := map[string]bool{}, map[string]bool{}
	for where, v := range fresh {
		shape(v, where, freshLists, freshNulls)
	}
	var bad []string
	for p := range freshNulls {
		if fullLists[p] {
			bad = append(bad, p)
		}
	}
	for p := range fullLists {
		// A list in the full session that is missing altogether, or
		// is something else, in the fresh one (its parent present).
		parent := p[:strings.LastIndexByte(p, '/')]
		if !freshLists[p] && !freshNulls[p] && !strings.Contains(p, "/*") && present(fresh, parent) {
			bad = append(bad, p+" (missing)")
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Fatalf("lists that are null or missing when empty on a fresh session:\n%s", strings.Join(slices.Compact(bad), "\n"))
	}
}

// present reports whether path (as shape names them) leads to an object
// in got.
func present(got map[string]any, path string) bool {
	for where, v := range got {
		rest, ok := strings.CutPrefix(path, where)
		if !ok {
			continue
		}
		for _, k := range strings.Split(strings.TrimPrefix(rest, "/"), "/") {
			if k == "" {
				continue
			}
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			v = m[k]
		}
		_, ok = v.(map[string]any)
		return ok
	}
	return false
}
