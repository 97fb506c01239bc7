package demo_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/mcptest"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// These tests drive the demo the way an agent does: over MCP, through a
// real server, the session's bearer-authenticated endpoint and its
// dispatcher (see package mcptest).

// Tab indices of the console.
const (
	tabOverview = iota
	tabMetrics
	tabLogs
	tabConfig
)

func start(t *testing.T, opts ...mcptest.Option) *mcptest.Session {
	t.Helper()
	return mcptest.Start(t, server.App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, Projections: demo.Projections()}, opts...)
}

func services(m ui.Model) demo.ServicesState { return demo.ProjectServices(m.(demo.Model)) }
func config(m ui.Model) demo.ConfigState     { return demo.ProjectConfig(m.(demo.Model)) }
func timeline(m ui.Model) demo.TimelineState { return demo.ProjectTimeline(m.(demo.Model)) }

func visible(st map[string]any) bool { return st["visible"] == true }
func hidden(st map[string]any) bool  { return st["visible"] == false }

// rows returns the first cell of each row of a table's state.
func rows(st map[string]any) []string {
	var out []string
	for _, r := range st["rows"].([]any) {
		out = append(out, r.([]any)[0].(string))
	}
	return out
}

// result returns the "result" object of the last call.
func result(t *testing.T, s *mcptest.Session) map[string]any {
	t.Helper()
	r, ok := s.Result()["result"].(map[string]any)
	if !ok {
		t.Fatalf("%s: last result has no result object: %v", t.Name(), s.Result())
	}
	return r
}

// readJSON reads a resource over MCP and decodes it into v.
func readJSON(t *testing.T, s *mcptest.Session, uri string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s.ReadResource(uri)), v); err != nil {
		t.Fatalf("decode %s: %v", uri, err)
	}
}

func TestSearchSelectAndRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []mcptest.Option
	}{{"streamable", nil}, {"sse", []mcptest.Option{mcptest.WithSSE()}}} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, tc.opts...)
			s.AssertComponent(demo.IDRestart, func(st map[string]any) bool { return st["disabled"] == true }).
				RefuteToolAvailable("demo.restart.click"). // nothing selected yet
				TypeInto(demo.IDSearch, "bill").
				AssertComponent(demo.IDTable, func(st map[string]any) bool { return len(rows(st)) == 8 }). // typing alone filters nothing
				Click(demo.IDSearchGo).
				AssertComponent(demo.IDTable, func(st map[string]any) bool {
					return slices.Equal(rows(st), []string{"billing"})
				}).
				AssertScreen(`Filter "bill": 1 of 8 services`).
				Select(demo.IDTable, 0).
				AssertModel(func(m ui.Model) bool { return services(m).Selected == "billing" }).
				AssertToolAvailable("demo.restart.click").
				Click(demo.IDRestart).
				AssertComponent(demo.IDModal, visible).
				AssertToolAvailable("demo.confirm_restart.confirm").
				AssertScreen("Restart billing?").
				// Dismissing cancels.
				CallTool("demo.confirm_restart.dismiss", nil).
				AssertComponent(demo.IDModal, hidden).
				AssertModel(func(m ui.Model) bool { return services(m).Restarts["billing"] == 0 }).
				AssertScreen("Restart of billing cancelled").
				// Confirming restarts.
				Click(demo.IDRestart).
				CallTool("demo.confirm_restart.confirm", nil).
				AssertComponent(demo.IDModal, hidden).
				RefuteToolAvailable("demo.confirm_restart.confirm").
				AssertModel(func(m ui.Model) bool { return services(m).Restarts["billing"] == 1 }).
				AssertComponent(demo.IDTable, func(st map[string]any) bool {
					return slices.Equal(rows(st), []string{"billing ↻1"})
				}).
				AssertScreen("Restarted billing (restart #1)")

			// Clear the filter, then sort by CPU, descending.
			s.Clear(demo.IDSearch).
				Click(demo.IDSearchGo).
				CallTool("demo.services.sort", map[string]any{"column": "cpu", "direction": "desc"}).
				AssertModel(func(m ui.Model) bool {
					st := services(m)
					return st.Sort == "cpu desc" && len(st.Visible) == 8 && st.Visible[0].Name == "billing" && st.Visible[7].Name == "inventory"
				}).
				CallTool("demo.services.get_rows", nil)
			if r := result(t, s); len(r["rows"].([]any)) != 8 || r["sort_column"] != "cpu" || r["sort_direction"] != "desc" {
				t.Fatalf("get_rows after sort: %v", r)
			}

			// Sorting dropped the selection, so Restart is disabled again:
			// its tool is gone and a call to it fails without effect.
			out, isErr := s.Call("demo.restart.click", nil)
			if !isErr || out["error"] != mcpbridge.ErrKindWidgetGone {
				t.Fatalf("restart with nothing selected: %v (isError %v)", out, isErr)
			}
			s.RefuteToolAvailable("demo.restart.click").
				AssertComponent(demo.IDModal, hidden)
		})
	}
}

func TestTabsShowTheirWidgets(t *testing.T) {
	s := start(t)
	s.AssertComponent(demo.IDTabs, func(st map[string]any) bool { return st["active"] == float64(tabOverview) }).
		AssertToolAvailable("demo.search.type_into").
		RefuteToolAvailable("demo.live.toggle").
		Select(demo.IDTabs, tabConfig).
		AssertComponent(demo.IDTabs, func(st map[string]any) bool { return st["active"] == float64(tabConfig) }).
		RefuteToolAvailable("demo.search.type_into").
		AssertToolAvailable("demo.live.toggle").
		AssertToolAvailable("demo.api_token.type_into").
		CallTool("demo.tabs.get_tabs", nil)
	if r := result(t, s); r["active"] != float64(tabConfig) || len(r["tabs"].([]any)) != 4 {
		t.Fatalf("get_tabs: %v", r)
	}
	// Selecting the active tab again changes nothing and is no failure.
	s.Select(demo.IDTabs, tabConfig)
	if r := result(t, s); r["changed"] != false {
		t.Fatalf("re-selecting the active tab: %v", r)
	}
	// An overview widget is not in this view.
	if out, isErr := s.Call("demo.search.type_into", map[string]any{"text": "x"}); !isErr || out["error"] != mcpbridge.ErrKindWidgetGone {
		t.Fatalf("type into a hidden tab's input: %v", out)
	}
}

func TestConfigTab(t *testing.T) {
	s := start(t).Select(demo.IDTabs, tabConfig)

	// Checkbox.
	s.Toggle(demo.IDLive).
		AssertComponent(demo.IDLive, func(st map[string]any) bool { return st["checked"] == true }).
		AssertModel(func(m ui.Model) bool { return config(m).Live }).
		AssertScreen("Live updates on").
		Toggle(demo.IDLive).
		AssertModel(func(m ui.Model) bool { return !config(m).Live }).
		CallTool("demo.live.get_checked", nil)
	if result(t, s)["checked"] != false {
		t.Fatalf("get_checked: %v", s.Result())
	}

	// Select list: the region filters the services.
	s.Select(demo.IDRegion, 2).
		AssertComponent(demo.IDRegion, func(st map[string]any) bool { return st["selected"] == float64(2) }).
		AssertModel(func(m ui.Model) bool {
			st := services(m)
			for _, v := range st.Visible {
				if v.Region != "us-east" {
					return false
				}
			}
			return st.Region == "us-east" && len(st.Visible) == 3
		}).
		CallTool("demo.region.get_selected", nil)
	if r := result(t, s); r["index"] != float64(2) || r["label"] != "us-east" {
		t.Fatalf("get_selected: %v", r)
	}

	// Menu: clear_filter resets the region.
	s.CallTool("demo.actions.get_items", nil)
	var ids []string
	for _, it := range result(t, s)["items"].([]any) {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	if !slices.Contains(ids, "clear_filter") || !slices.Contains(ids, "view_compact") {
		t.Fatalf("menu items %v", ids)
	}
	s.SelectItem(demo.IDActions, "clear_filter").
		AssertModel(func(m ui.Model) bool {
			st := services(m)
			return st.Region == "all regions" && st.Filter == "" && len(st.Visible) == 8
		}).
		AssertComponent(demo.IDRegion, func(st map[string]any) bool { return st["selected"] == float64(0) }).
		AssertScreen("Filters cleared")

	// Tree: expand, collapse, select a node that was hidden.
	node := func(st map[string]any, id string) map[string]any {
		for _, n := range st["nodes"].([]any) {
			if n := n.(map[string]any); n["id"] == id {
				return n
			}
		}
		return nil
	}
	s.AssertComponent(demo.IDInfra, func(st map[string]any) bool {
		return node(st, "eu-west")["expanded"] == true && node(st, "us-east")["expanded"] == false
	}).
		CallTool("demo.infra.expand", map[string]any{"node_id": "us-east"}).
		CallTool("demo.infra.collapse", map[string]any{"node_id": "eu-west"}).
		AssertComponent(demo.IDInfra, func(st map[string]any) bool {
			return node(st, "eu-west")["expanded"] == false && node(st, "us-east")["expanded"] == true
		}).
		CallTool("demo.infra.select_node", map[string]any{"node_id": "ap-south/inventory"}).
		AssertComponent(demo.IDInfra, func(st map[string]any) bool { return st["selected"] == "ap-south/inventory" }).
		AssertModel(func(m ui.Model) bool { return config(m).SelectedNode == "ap-south/inventory" })

	// Text area.
	const notes = "billing queue backed up\nrestarted at 12:40"
	s.TypeInto(demo.IDNotes, notes).
		AssertComponent(demo.IDNotes, func(st map[string]any) bool { return st["value"] == notes }).
		AssertModel(func(m ui.Model) bool { return config(m).Notes == notes }).
		CallTool("demo.notes.get_value", nil)
	if result(t, s)["value"] != notes {
		t.Fatalf("notes get_value: %v", s.Result())
	}
	s.Clear(demo.IDNotes).
		AssertModel(func(m ui.Model) bool { return config(m).Notes == "" })

	var cfg demo.ConfigState
	readJSON(t, s, "demo://state/config", &cfg)
	if want := (demo.ConfigState{Region: "all regions", SelectedNode: "ap-south/inventory"}); cfg != want {
		t.Fatalf("demo://state/config = %+v, want %+v", cfg, want)
	}
}

func TestAPITokenNeverLeaks(t *testing.T) {
	const secret = "tok-7f3a9c2e-SECRET"
	s := start(t).Select(demo.IDTabs, tabConfig)
	var seen []string // every result, resource and screen read
	record := func(where string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		seen = append(seen, where+": "+string(b))
	}

	s.SelectItem(demo.IDActions, "export").
		AssertScreen("Export needs an API token").
		TypeInto(demo.IDToken, secret).
		AssertComponent(demo.IDToken, func(st map[string]any) bool { return st["set"] == true })
	record("type_into result", s.Result())
	if st := s.Result()["state"].(map[string]any); st["set"] != true {
		t.Fatalf("type_into state: %v", st)
	}
	var cfg demo.ConfigState
	readJSON(t, s, "demo://state/config", &cfg)
	if !cfg.TokenSet {
		t.Fatalf("demo://state/config = %+v: api_token_set is false", cfg)
	}
	// The model has it: the app can use it.
	s.SelectItem(demo.IDActions, "export").
		AssertScreen("Exported 8 rows")
	record("export result", s.Result())

	// There is no way to read it back.
	s.RefuteToolAvailable("demo.api_token.get_value")
	out, isErr := s.Call("demo.api_token.get_value", nil)
	if !isErr {
		t.Fatalf("get_value on a password field: %v", out)
	}
	record("get_value result", out)
	out, _ = s.Call(mcpbridge.ToolDiscover, map[string]any{"query": "api_token"})
	record("discover_tools", out)

	// Every resource, the screen and the tools' descriptions.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.Client().ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) < 6 {
		t.Fatalf("resources %v", res.Resources)
	}
	for _, r := range res.Resources {
		seen = append(seen, r.URI+": "+s.ReadResource(r.URI))
	}
	seen = append(seen, "screen: "+s.Screen())
	for tl, err := range s.Client().Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		record("tool "+tl.Name, tl)
	}
	for _, tab := range []int{tabOverview, tabMetrics, tabLogs, tabConfig} {
		s.Select(demo.IDTabs, tab)
		record("select_tab result", s.Result())
		seen = append(seen, "tree: "+s.ReadResource(mcpbridge.URITree), "screen: "+s.Screen())
	}

	for _, text := range seen {
		if strings.Contains(text, secret) || strings.Contains(text, secret[4:16]) {
			t.Errorf("the API token leaks in %s", text)
		}
	}
	if !strings.Contains(strings.Join(seen, "\n"), `"api_token_set":true`) {
		t.Error("no resource said the token is set")
	}

	// Clearing it unsets it.
	s.CallTool("demo.api_token.clear", nil)
	readJSON(t, s, "demo://state/config", &cfg)
	if cfg.TokenSet {
		t.Fatal("api_token_set after clear")
	}
}

func TestTimelineAndCharts(t *testing.T) {
	s := start(t).Select(demo.IDTabs, tabMetrics)

	s.CallTool("demo.timeline.seek", map[string]any{"position": 40}).
		AssertModel(func(m ui.Model) bool { return timeline(m).Minute == 40 }).
		AssertComponent(demo.IDTimeline, func(st map[string]any) bool { return st["position"] == float64(40) }).
		AssertScreen("12:40").
		CallTool("demo.timeline.get_position", nil)
	if r := result(t, s); r["position"] != float64(40) || r["min"] != float64(0) || r["max"] != float64(59) || r["playing"] != false {
		t.Fatalf("get_position: %v", r)
	}
	s.CallTool("demo.timeline.play", nil).
		AssertModel(func(m ui.Model) bool { return timeline(m).Playing }).
		CallTool("demo.timeline.pause", nil).
		AssertModel(func(m ui.Model) bool { return !timeline(m).Playing })
	var tl demo.TimelineState
	readJSON(t, s, "demo://state/timeline", &tl)
	if tl.Playing || tl.Minute < 40 || tl.Minute > 45 {
		t.Fatalf("demo://state/timeline after play and pause: %+v", tl)
	}
	// Paused means paused.
	time.Sleep(300 * time.Millisecond) // negative check: longer than the play tick (250 ms), which would move the minute
	s.AssertModel(func(m ui.Model) bool { return timeline(m) == tl })
	minute := tl.Minute

	// The charts are read-only: reading them folds nothing.
	se, _ := s.Server().Session(s.ID())
	version := se.Dispatcher.Snapshot().Version

	s.CallTool("demo.cpu_chart.get_series", nil)
	series := result(t, s)["series"].([]any)
	var names []string
	for _, sr := range series {
		sr := sr.(map[string]any)
		names = append(names, sr["name"].(string))
		if n := len(sr["values"].([]any)); n != minute+1 {
			t.Errorf("series %s has %d values at minute %d", sr["name"], n, minute)
		}
	}
	if !slices.Equal(names, []string{"api-gateway", "billing", "search"}) {
		t.Fatalf("cpu series %v", names)
	}
	s.CallTool("demo.cpu_chart.get_range", nil)
	if r := result(t, s); r["min"].(float64) >= r["max"].(float64) {
		t.Fatalf("cpu range %v", r)
	}
	s.CallTool("demo.cpu_chart.get_point_at", map[string]any{"index": 40})
	points := result(t, s)["points"].([]any)
	if len(points) != 3 {
		t.Fatalf("points at 40: %v", points)
	}
	if billing := points[1].(map[string]any); billing["name"] != "billing" || billing["value"].(float64) < 70 {
		t.Fatalf("billing at 12:40 should be in its spike: %v", billing)
	}

	s.CallTool("demo.rps_chart.get_data", nil)
	bars := result(t, s)["bars"].([]any)
	if len(bars) != 8 || bars[0].(map[string]any)["label"] != "api-gateway" || bars[0].(map[string]any)["value"] != float64(1840) {
		t.Fatalf("rps bars %v", bars)
	}
	s.CallTool("demo.rps_chart.get_range", nil)
	if r := result(t, s); r["min"] != float64(0) || r["max"] != float64(1840) {
		t.Fatalf("rps range %v", r)
	}

	s.CallTool("demo.latency_chart.get_points", nil)
	sc := result(t, s)["series"].([]any)
	if len(sc) != 1 || len(sc[0].(map[string]any)["points"].([]any)) != 7 { // inventory is down
		t.Fatalf("scatter series %v", sc)
	}
	s.CallTool("demo.latency_chart.get_range", nil)
	if x := result(t, s)["x"].(map[string]any); x["max"] != float64(1840) {
		t.Fatalf("scatter range %v", s.Result())
	}
	if v := se.Dispatcher.Snapshot().Version; v != version {
		t.Fatalf("chart reads changed the model version %d -> %d", version, v)
	}

	// Seeking outside the timeline is refused.
	if out, isErr := s.Call("demo.timeline.seek", map[string]any{"position": 60}); !isErr || out["error"] != mcpbridge.ErrKindToolError {
		t.Fatalf("seek to 60: %v", out)
	}
}

func TestLogsViewport(t *testing.T) {
	s := start(t)
	// Seeking the timeline scrolls the logs to that minute.
	s.Select(demo.IDTabs, tabMetrics).
		CallTool("demo.timeline.seek", map[string]any{"position": 10}).
		Select(demo.IDTabs, tabLogs).
		AssertComponent(demo.IDLogs, func(st map[string]any) bool { return st["offset"] == float64(20) }).
		AssertScreen("Logs from 12:10").
		CallTool("demo.logs.scroll_to", map[string]any{"row": 70}).
		AssertComponent(demo.IDLogs, func(st map[string]any) bool {
			lines := st["visible_lines"].([]any)
			return st["offset"] == float64(70) && strings.HasPrefix(lines[0].(string), "12:35") &&
				strings.Contains(lines[1].(string), "WARN queue depth 1200")
		}).
		AssertScreen("WARN queue depth 1200").
		CallTool("demo.logs.get_visible_range", nil)
	if r := result(t, s); r["top"] != float64(70) || r["bottom"] != float64(83) || r["total"] != float64(120) {
		t.Fatalf("get_visible_range: %v", r)
	}
	if out, isErr := s.Call("demo.logs.scroll_to", map[string]any{"row": 107}); !isErr || out["error"] != mcpbridge.ErrKindToolError {
		t.Fatalf("scroll past the end: %v", out)
	}
}

// The demo's state resources are served to the session's own MCP client
// and are the projections of the live model.
func TestStateResources(t *testing.T) {
	s := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.Client().ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	for _, want := range []string{"demo://state/services", "demo://state/timeline", "demo://state/config", mcpbridge.URITree, mcpbridge.URIScreen, mcpbridge.URIContext} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources/list lacks %s: %v", want, uris)
		}
	}

	matches := func() {
		t.Helper()
		var got demo.ServicesState
		readJSON(t, s, "demo://state/services", &got)
		// Through JSON, as the projection reaches a client.
		b, err := json.Marshal(services(s.Model()))
		if err != nil {
			t.Fatal(err)
		}
		var want demo.ServicesState
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("demo://state/services = %+v, the model projects %+v", got, want)
		}
	}
	matches()
	var st demo.ServicesState
	readJSON(t, s, "demo://state/services", &st)
	if len(st.Visible) != 8 || st.Region != "all regions" || st.Selected != "" {
		t.Fatalf("initial services %+v", st)
	}

	s.TypeInto(demo.IDSearch, "eu-west").Click(demo.IDSearchGo).Select(demo.IDTable, 1)
	matches()
	readJSON(t, s, "demo://state/services", &st)
	if st.Filter != "eu-west" || len(st.Visible) != 3 || st.Selected != "auth" {
		t.Fatalf("filtered services %+v", st)
	}

	// The same read straight through the go-sdk client.
	rr, err := s.Client().ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://state/timeline"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "application/json" || rr.Contents[0].Text != `{"minute":0,"playing":false}` {
		t.Fatalf("demo://state/timeline = %+v", rr.Contents)
	}
	if _, err := s.Client().ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://state/nope"}); err == nil {
		t.Fatal("an unknown resource was read")
	}
}

// The console's keys need a terminal: a headless session has none.
func TestPressKeyNeedsATerminal(t *testing.T) {
	s := start(t)
	out, isErr := s.Call(mcpbridge.ToolSendKey, map[string]any{"keys": []string{"tab"}})
	if !isErr || out["error"] != mcpbridge.ErrKindNoTerminal {
		t.Fatalf("raxol_send_key on a headless session: %v", out)
	}
}
