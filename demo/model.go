package demo

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Name is the demo's app name and MCP tool namespace.
const Name = "demo"

// Widget ids, stable across views.
const (
	IDTabs     = "tabs"
	IDSearch   = "search"
	IDSearchGo = "search_btn"
	IDRestart  = "restart"
	IDTable    = "services"
	IDModal    = "confirm_restart"
	IDTimeline = "timeline"
	IDCPU      = "cpu_chart"
	IDRPS      = "rps_chart"
	IDLatency  = "latency_chart"
	IDLogs     = "logs"
	IDInfra    = "infra"
	IDLive     = "live"
	IDRegion   = "region"
	IDActions  = "actions"
	IDNotes    = "notes"
	IDToken    = "api_token"
)

// Tabs of the console.
var tabNames = []string{"Overview", "Metrics", "Logs", "Config"}

// Messages of the demo's own buttons and timers.
type (
	searchClicked  struct{}
	restartClicked struct{}
	playTick       struct{ gen int }
	liveTick       struct{ gen int }
)

// Model is the console's state. It is a value: Update returns a changed
// copy and never mutates slices shared with earlier copies.
type Model struct {
	services    []Service
	search      string // text in the search input
	filter      string // applied by the Search button
	region      int
	sortCol     string
	sortDir     string
	selectedRow int // index into the visible rows
	tab         int
	expanded    map[string]bool
	selNode     string
	live        bool
	liveGen     int
	position    int
	playing     bool
	playGen     int
	logOffset   int
	notes       string
	token       string
	confirming  string // service awaiting restart confirmation
	restarts    map[string]int
	status      string
	compactView bool
}

// New returns a fresh console.
func New() ui.Model {
	return Model{
		services:    seedServices(),
		selectedRow: -1,
		expanded:    map[string]bool{"eu-west": true},
		restarts:    map[string]int{},
		status:      "Ready. Tab moves focus; Enter activates.",
	}
}

// Init starts nothing: an idle console costs no CPU.
func (m Model) Init() tea.Cmd { return nil }

// Update folds one message.
func (m Model) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ui.Restored:
		// Brought back from a snapshot: the timers it had run again.
		var cmds []tea.Cmd
		if m.live {
			m.liveGen++
			cmds = append(cmds, m.liveTick())
		}
		if m.playing {
			m.playGen++
			cmds = append(cmds, m.playTick())
		}
		return m, tea.Batch(cmds...)
	case ui.TabChanged:
		if msg.ID == IDTabs && msg.Index >= 0 && msg.Index < len(tabNames) {
			m.tab = msg.Index
		}
	case ui.TextInputChanged:
		if msg.ID == IDSearch {
			m.search = msg.Text
		}
	case searchClicked:
		m.filter = strings.TrimSpace(m.search)
		m.selectedRow = -1
		n := len(m.visibleServices())
		if m.filter == "" {
			m.status = fmt.Sprintf("Showing all %d services", n)
		} else {
			m.status = fmt.Sprintf("Filter %q: %d of %d services", m.filter, n, len(m.services))
		}
	case ui.RowSelected:
		if msg.ID == IDTable && msg.Index >= 0 && msg.Index < len(m.visibleServices()) {
			m.selectedRow = msg.Index
			m.status = "Selected " + m.visibleServices()[msg.Index].Name
		}
	case ui.TableSorted:
		if msg.ID == IDTable && (msg.Direction == ui.SortAsc || msg.Direction == ui.SortDesc) && validColumn(msg.Column) {
			m.sortCol, m.sortDir = msg.Column, msg.Direction
			m.selectedRow = -1
		}
	case restartClicked:
		if svc, ok := m.selectedService(); ok {
			m.confirming = svc.Name
		} else {
			m.status = "Select a service in the table first"
		}
	case ui.ModalConfirmed:
		if msg.ID == IDModal && m.confirming != "" {
			m.restarts = cloneMap(m.restarts)
			m.restarts[m.confirming]++
			m.status = fmt.Sprintf("Restarted %s (restart #%d)", m.confirming, m.restarts[m.confirming])
			m.confirming = ""
		}
	case ui.ModalDismissed:
		if msg.ID == IDModal && m.confirming != "" {
			m.status = "Restart of " + m.confirming + " cancelled"
			m.confirming = ""
		}
	case ui.ScrubberSeeked:
		if msg.ID == IDTimeline {
			m.seek(msg.Position)
		}
	case ui.ScrubberPlayed:
		if msg.ID == IDTimeline && !m.playing {
			m.playing = true
			m.playGen++
			if m.position >= timelineMinutes-1 {
				m.seek(0)
			}
			return m, m.playTick()
		}
	case ui.ScrubberPaused:
		if msg.ID == IDTimeline {
			m.playing = false
		}
	case playTick:
		if m.playing && msg.gen == m.playGen {
			m.seek(m.position + 1)
			if m.position >= timelineMinutes-1 {
				m.playing = false
				return m, nil
			}
			return m, m.playTick()
		}
	case ui.ScrolledTo:
		if msg.ID == IDLogs {
			m.logOffset = clamp(msg.Row, 0, len(logLines())-1)
		}
	case ui.TreeExpanded:
		if msg.ID == IDInfra {
			m.expanded = cloneMap(m.expanded)
			m.expanded[msg.NodeID] = true
		}
	case ui.TreeCollapsed:
		if msg.ID == IDInfra {
			m.expanded = cloneMap(m.expanded)
			delete(m.expanded, msg.NodeID)
		}
	case ui.TreeSelected:
		if msg.ID == IDInfra {
			m.selNode = msg.NodeID
			m.status = "Selected " + msg.NodeID
		}
	case ui.CheckboxToggled:
		if msg.ID == IDLive {
			m.live = msg.Checked
			m.liveGen++
			if m.live {
				m.status = "Live updates on"
				return m, m.liveTick()
			}
			m.status = "Live updates off"
		}
	case liveTick:
		if m.live && msg.gen == m.liveGen {
			m.services = jitter(m.services)
			return m, m.liveTick()
		}
	case ui.OptionSelected:
		if msg.ID == IDRegion && msg.Index >= 0 && msg.Index < len(regions) {
			m.region = msg.Index
			m.selectedRow = -1
			m.status = "Region: " + regions[msg.Index]
		}
	case ui.MenuSelected:
		if msg.ID == IDActions {
			return m.menu(msg.ItemID)
		}
	case ui.TextAreaChanged:
		if msg.ID == IDNotes {
			m.notes = msg.Text
		}
	case ui.PasswordFieldChanged:
		if msg.ID == IDToken {
			m.token = msg.Text
		}
	}
	return m, nil
}

func (m Model) menu(item string) (ui.Model, tea.Cmd) {
	switch item {
	case "refresh":
		m.services = seedServices()
		m.status = "Refreshed"
	case "clear_filter":
		m.search, m.filter, m.region, m.selectedRow = "", "", 0, -1
		m.status = "Filters cleared"
	case "export":
		if m.token == "" {
			m.status = "Export needs an API token (Config tab)"
		} else {
			m.status = fmt.Sprintf("Exported %d rows", len(m.visibleServices()))
		}
	case "restart":
		return m.Update(restartClicked{})
	case "view_compact":
		m.compactView = true
	case "view_full":
		m.compactView = false
	}
	return m, nil
}

func (m *Model) seek(pos int) {
	m.position = clamp(pos, 0, timelineMinutes-1)
	m.logOffset = logLineOfMinute(m.position)
}

func (m Model) playTick() tea.Cmd {
	gen := m.playGen
	return tea.Tick(250*time.Millisecond, func(time.Time) tea.Msg { return playTick{gen: gen} })
}

func (m Model) liveTick() tea.Cmd {
	gen := m.liveGen
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return liveTick{gen: gen} })
}

// visibleServices applies the region, the filter and the sort.
func (m Model) visibleServices() []Service {
	var out []Service
	f := strings.ToLower(m.filter)
	for _, s := range m.services {
		if m.region > 0 && s.Region != regions[m.region] {
			continue
		}
		if f != "" && !strings.Contains(strings.ToLower(s.Name+" "+s.Region+" "+s.Status), f) {
			continue
		}
		out = append(out, s)
	}
	if m.sortCol != "" {
		slices.SortStableFunc(out, func(a, b Service) int {
			c := compareBy(m.sortCol, a, b)
			if m.sortDir == ui.SortDesc {
				return -c
			}
			return c
		})
	}
	return out
}

func (m Model) selectedService() (Service, bool) {
	v := m.visibleServices()
	if m.selectedRow < 0 || m.selectedRow >= len(v) {
		return Service{}, false
	}
	return v[m.selectedRow], true
}

var columns = []ui.TableColumn{
	{Key: "name", Title: "Service", Width: 14},
	{Key: "region", Title: "Region", Width: 9},
	{Key: "status", Title: "Status", Width: 9},
	{Key: "cpu", Title: "CPU %", Width: 7},
	{Key: "mem", Title: "Mem MiB", Width: 8},
	{Key: "rps", Title: "Req/s"},
}

func validColumn(key string) bool {
	return slices.ContainsFunc(columns, func(c ui.TableColumn) bool { return c.Key == key })
}

func compareBy(col string, a, b Service) int {
	switch col {
	case "region":
		return cmp.Compare(a.Region, b.Region)
	case "status":
		return cmp.Compare(a.Status, b.Status)
	case "cpu":
		return cmp.Compare(a.CPU, b.CPU)
	case "mem":
		return cmp.Compare(a.MemMiB, b.MemMiB)
	case "rps":
		return cmp.Compare(a.RPS, b.RPS)
	default:
		return cmp.Compare(a.Name, b.Name)
	}
}

func jitter(in []Service) []Service {
	out := slices.Clone(in)
	for i := range out {
		if out[i].Status == "down" {
			continue
		}
		d := float64((i*7+int(time.Now().UnixNano()/1e8))%11-5) / 2
		out[i].CPU = max(0, min(100, out[i].CPU+d))
	}
	return out
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func formatCPU(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
