package demo

import (
	"encoding/json"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// SnapshotVersion is the version of the console's saved model: change it
// when the fields below change meaning.
const SnapshotVersion = 1

// saved is the console's model as it is saved (every field but the API
// token: what was typed into a password field is not written to disk).
type saved struct {
	Services    []Service       `json:"services"`
	Search      string          `json:"search"`
	Filter      string          `json:"filter"`
	Region      int             `json:"region"`
	SortCol     string          `json:"sort_col"`
	SortDir     string          `json:"sort_dir"`
	SelectedRow int             `json:"selected_row"`
	Tab         int             `json:"tab"`
	Expanded    map[string]bool `json:"expanded"`
	SelNode     string          `json:"sel_node"`
	Live        bool            `json:"live"`
	Position    int             `json:"position"`
	Playing     bool            `json:"playing"`
	LogOffset   int             `json:"log_offset"`
	Notes       string          `json:"notes"`
	Confirming  string          `json:"confirming"`
	Restarts    map[string]int  `json:"restarts"`
	Status      string          `json:"status"`
	CompactView bool            `json:"compact_view"`
}

// MarshalJSON saves the console (see [saved]).
func (m Model) MarshalJSON() ([]byte, error) {
	return json.Marshal(saved{
		Services: m.services, Search: m.search, Filter: m.filter, Region: m.region,
		SortCol: m.sortCol, SortDir: m.sortDir, SelectedRow: m.selectedRow, Tab: m.tab,
		Expanded: m.expanded, SelNode: m.selNode, Live: m.live, Position: m.position,
		Playing: m.playing, LogOffset: m.logOffset, Notes: m.notes, Confirming: m.confirming,
		Restarts: m.restarts, Status: m.status, CompactView: m.compactView,
	})
}

// UnmarshalJSON restores a saved console, keeping what it cannot use in
// range (a snapshot is input like any other).
func (m *Model) UnmarshalJSON(b []byte) error {
	var s saved
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*m = New().(Model)
	if s.Services != nil {
		m.services = s.Services
	}
	m.search, m.filter, m.sortCol, m.sortDir = s.Search, s.Filter, s.SortCol, s.SortDir
	if s.Region >= 0 && s.Region < len(regions) {
		m.region = s.Region
	}
	if s.Tab >= 0 && s.Tab < len(tabNames) {
		m.tab = s.Tab
	}
	if !validColumn(s.SortCol) || (s.SortDir != ui.SortAsc && s.SortDir != ui.SortDesc) {
		m.sortCol, m.sortDir = "", ""
	}
	m.selectedRow = -1
	if s.SelectedRow >= 0 && s.SelectedRow < len(m.visibleServices()) {
		m.selectedRow = s.SelectedRow
	}
	if s.Expanded != nil {
		m.expanded = s.Expanded
	}
	if s.Restarts != nil {
		m.restarts = s.Restarts
	}
	m.selNode, m.live, m.playing, m.notes = s.SelNode, s.Live, s.Playing, s.Notes
	m.position = clamp(s.Position, 0, timelineMinutes-1)
	m.logOffset = clamp(s.LogOffset, 0, len(logLines())-1)
	m.confirming, m.status, m.compactView = s.Confirming, s.Status, s.CompactView
	return nil
}
