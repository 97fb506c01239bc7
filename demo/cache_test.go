package demo

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// TestRenderCacheDrawsWhatAFreshRenderDraws: through any run of changes
// to the demo (typing, selecting, switching tabs, toggling, sorting),
// focus moves, highlights, focus markers, local state changes and window
// sizes, a terminal's frames drawn with a render cache are exactly the
// frames drawn without one, and leave the same local state.
func TestRenderCacheDrawsWhatAFreshRenderDraws(t *testing.T) {
	ids := []string{IDTabs, IDSearch, IDSearchGo, IDRestart, IDTable, IDTimeline, IDLogs, IDInfra, IDLive, IDRegion, IDActions, IDNotes, IDToken}
	rapid.Check(t, func(rt *rapid.T) {
		var m ui.Model = New()
		var cache ui.RenderCache
		cached, fresh := map[string]*ui.LocalState{}, map[string]*ui.LocalState{}
		local := func(states map[string]*ui.LocalState) func(string) *ui.LocalState {
			return func(id string) *ui.LocalState {
				st, ok := states[id]
				if !ok {
					st = &ui.LocalState{}
					states[id] = st
				}
				return st
			}
		}
		w, h := 100, 30
		for step := range rapid.IntRange(1, 12).Draw(rt, "steps") {
			var msg tea.Msg
			switch rapid.IntRange(0, 8).Draw(rt, "change") {
			case 0:
				msg = ui.TextInputChanged{ID: IDSearch, Text: rapid.SampledFrom([]string{"", "a", "eu", "bill", "zzz"}).Draw(rt, "text")}
			case 1:
				msg = ui.TabChanged{ID: IDTabs, Index: rapid.IntRange(0, 3).Draw(rt, "tab")}
			case 2:
				msg = ui.RowSelected{ID: IDTable, Index: rapid.IntRange(0, 5).Draw(rt, "row")}
			case 3:
				msg = ui.CheckboxToggled{ID: IDLive, Checked: rapid.Bool().Draw(rt, "live")}
			case 4:
				msg = ui.TableSorted{ID: IDTable, Column: rapid.SampledFrom([]string{"cpu", "name", "status"}).Draw(rt, "col"), Direction: ui.SortDesc}
			case 5: // a local state change, as keys make
				id := rapid.SampledFrom(ids).Draw(rt, "id")
				row := rapid.IntRange(0, 6).Draw(rt, "local")
				local(cached)(id).Row, local(fresh)(id).Row = row, row
			case 6:
				w, h = rapid.IntRange(20, 140).Draw(rt, "w"), rapid.IntRange(5, 50).Draw(rt, "h")
			}
			if msg != nil {
				m, _ = m.Update(msg)
			}
			focus := rapid.SampledFrom(append([]string{""}, ids...)).Draw(rt, "focus")
			highlight := rapid.SampledFrom([]string{"", IDSearch, IDTable}).Draw(rt, "highlight")
			mark := rapid.Bool().Draw(rt, "markFocus") // a plain terminal's marker
			tree := m.View()
			a := ui.Render(tree, ui.RenderOptions{Width: w, Height: h, Focus: focus, Local: local(cached), Highlight: highlight, MarkFocus: mark, Cache: &cache})
			b := ui.Render(tree, ui.RenderOptions{Width: w, Height: h, Focus: focus, Local: local(fresh), Highlight: highlight, MarkFocus: mark})
			if a.Content != b.Content {
				rt.Fatalf("step %d: the cached frame differs\ncached:\n%s\nfresh:\n%s", step, a.Content, b.Content)
			}
			for id, st := range fresh {
				if *cached[id] != *st {
					rt.Fatalf("step %d: widget %s's local state %+v with the cache, %+v without", step, id, *cached[id], *st)
				}
			}
		}
	})
}
