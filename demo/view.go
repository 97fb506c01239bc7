package demo

import (
	"fmt"
	"strconv"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// View builds the console's component tree.
func (m Model) View() ui.Node {
	var body ui.Node
	switch m.tab {
	case 1:
		body = m.metricsTab()
	case 2:
		body = m.logsTab()
	case 3:
		body = m.configTab()
	default:
		body = m.overviewTab()
	}
	modal := ui.Modal{
		ID:           IDModal,
		Title:        "Restart service",
		Visible:      m.confirming != "",
		ConfirmLabel: "Restart",
		DismissLabel: "Cancel",
		Body:         ui.Text{Text: fmt.Sprintf("Restart %s? Its in-flight requests will fail.", m.confirming)},
	}
	return ui.Column{Items: []ui.Node{
		ui.Tabs{ID: IDTabs, Tabs: tabNames, Active: m.tab},
		body,
		ui.Text{Text: m.status, Faint: true},
		modal,
	}}
}

func (m Model) overviewTab() ui.Node {
	visible := m.visibleServices()
	rows := make([][]string, len(visible))
	for i, s := range visible {
		restarts := ""
		if n := m.restarts[s.Name]; n > 0 {
			restarts = fmt.Sprintf(" ↻%d", n)
		}
		rows[i] = []string{s.Name + restarts, s.Region, s.Status, formatCPU(s.CPU), strconv.Itoa(s.MemMiB), strconv.Itoa(s.RPS)}
	}
	height := 8
	if m.compactView {
		height = 4
	}
	return ui.Column{Items: []ui.Node{
		ui.Row{Gap: 1, Items: []ui.Node{
			ui.TextInput{ID: IDSearch, Label: "Search", Value: m.search, Placeholder: "name, region or status"},
			ui.Row{Gap: 1, Items: []ui.Node{
				ui.Button{ID: IDSearchGo, Label: "Search", OnClick: searchClicked{}},
				ui.Button{ID: IDRestart, Label: "Restart…", OnClick: restartClicked{}, Disabled: m.selectedRow < 0, Destructive: true},
			}},
		}},
		// The table takes the height left (its Height is what it shows
		// at least, room permitting).
		ui.Fill{Child: ui.Box{Title: fmt.Sprintf("Services (%d)", len(visible)), Child: ui.Table{
			ID:            IDTable,
			Columns:       columns,
			Rows:          rows,
			Selected:      m.selectedRow,
			SortColumn:    m.sortCol,
			SortDirection: m.sortDir,
			Height:        height,
		}}},
	}}
}

func (m Model) metricsTab() ui.Node {
	series := cpuSeries()
	var line []ui.Series
	for _, name := range []string{"api-gateway", "billing", "search"} {
		vals := series[name]
		line = append(line, ui.Series{Name: name, Values: vals[:m.position+1]})
	}
	var bars []ui.Bar
	var points []ui.Point
	for _, s := range m.services {
		bars = append(bars, ui.Bar{Label: s.Name, Value: float64(s.RPS)})
		if s.Status != "down" {
			points = append(points, ui.Point{X: float64(s.RPS), Y: s.CPU})
		}
	}
	return ui.Column{Items: []ui.Node{
		ui.Scrubber{ID: IDTimeline, Label: fmt.Sprintf("12:%02d", m.position), Min: 0, Max: timelineMinutes - 1, Position: m.position, Playing: m.playing},
		ui.Row{Gap: 1, Items: []ui.Node{
			ui.LineChart{ID: IDCPU, Title: "CPU % over the hour", Series: line, Height: 6},
			ui.BarChart{ID: IDRPS, Title: "Requests/s", Bars: bars},
		}},
		ui.ScatterChart{ID: IDLatency, Title: "CPU % vs requests/s", Series: []ui.ScatterSeries{{Name: "services", Points: points}}, Height: 5},
	}}
}

func (m Model) logsTab() ui.Node {
	return ui.Fill{Child: ui.Box{Title: fmt.Sprintf("Logs from 12:%02d", m.position), Child: ui.Viewport{
		ID:     IDLogs,
		Lines:  logLines(),
		Offset: m.logOffset,
		Height: 14,
	}}}
}

func (m Model) configTab() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.Fill{Child: ui.Row{Gap: 2, Items: []ui.Node{
			ui.Box{Title: "Infrastructure", Child: ui.Tree{ID: IDInfra, Nodes: m.infraTree(), Selected: m.selNode, Height: 8}},
			ui.Column{Items: []ui.Node{
				ui.Checkbox{ID: IDLive, Label: "Live updates", Checked: m.live},
				ui.SelectList{ID: IDRegion, Label: "Region", Options: regions, Selected: m.region},
				ui.Menu{ID: IDActions, Items: menuItems},
			}},
		}}},
		ui.TextArea{ID: IDNotes, Label: "Notes", Value: m.notes, Placeholder: "incident notes", Height: 3},
		ui.PasswordField{ID: IDToken, Label: "API token", Value: m.token, Placeholder: "needed to export"},
	}}
}

var menuItems = []ui.MenuItem{
	{ID: "refresh", Label: "Refresh data"},
	{ID: "clear_filter", Label: "Clear filters"},
	{ID: "export", Label: "Export CSV"},
	{ID: "restart", Label: "Restart selected…"},
	{ID: "view", Label: "View", Children: []ui.MenuItem{
		{ID: "view_compact", Label: "Compact table"},
		{ID: "view_full", Label: "Full table"},
	}},
}

func (m Model) infraTree() []ui.TreeNode {
	byRegion := map[string][]ui.TreeNode{}
	for _, s := range m.services {
		byRegion[s.Region] = append(byRegion[s.Region], ui.TreeNode{ID: s.Region + "/" + s.Name, Label: s.Name + " (" + s.Status + ")"})
	}
	var nodes []ui.TreeNode
	for _, r := range regions[1:] {
		nodes = append(nodes, ui.TreeNode{ID: r, Label: r, Expanded: m.expanded[r], Children: byRegion[r]})
	}
	return nodes
}
