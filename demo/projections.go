package demo

import "github.com/raxol-ssh/raxol-ssh/ui"

// Projections returns the demo's model projections by name, for MCP
// resources (demo://state/<name>). Each takes the model as the dispatcher
// last folded it and returns plain data that marshals to JSON. A model of
// another type projects to nil.
func Projections() map[string]func(ui.Model) any {
	return map[string]func(ui.Model) any{
		"services": withModel(ProjectServices),
		"timeline": withModel(ProjectTimeline),
		"config":   withModel(ProjectConfig),
	}
}

func withModel[T any](f func(Model) T) func(ui.Model) any {
	return func(m ui.Model) any {
		dm, ok := m.(Model)
		if !ok {
			return nil
		}
		return f(dm)
	}
}

// ServicesState is the services table as the user sees it.
type ServicesState struct {
	Filter   string         `json:"filter"`
	Region   string         `json:"region"`
	Sort     string         `json:"sort,omitempty"`
	Visible  []Service      `json:"visible"`
	Selected string         `json:"selected,omitempty"`
	Restarts map[string]int `json:"restarts"`
}

// ProjectServices projects the services table.
func ProjectServices(m Model) ServicesState {
	st := ServicesState{Filter: m.filter, Region: regions[m.region], Visible: m.visibleServices(), Restarts: cloneMap(m.restarts)}
	if m.sortCol != "" {
		st.Sort = m.sortCol + " " + m.sortDir
	}
	if s, ok := m.selectedService(); ok {
		st.Selected = s.Name
	}
	return st
}

// TimelineState is the incident timeline.
type TimelineState struct {
	Minute  int  `json:"minute"`
	Playing bool `json:"playing"`
}

// ProjectTimeline projects the timeline scrubber.
func ProjectTimeline(m Model) TimelineState {
	return TimelineState{Minute: m.position, Playing: m.playing}
}

// ConfigState is the configuration tab. The API token is never projected,
// only whether one is set.
type ConfigState struct {
	Live         bool   `json:"live_updates"`
	Region       string `json:"region"`
	Notes        string `json:"notes"`
	TokenSet     bool   `json:"api_token_set"`
	SelectedNode string `json:"selected_node,omitempty"`
}

// ProjectConfig projects the configuration tab.
func ProjectConfig(m Model) ConfigState {
	return ConfigState{Live: m.live, Region: regions[m.region], Notes: m.notes, TokenSet: m.token != "", SelectedNode: m.selNode}
}
