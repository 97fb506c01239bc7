package mcpbridge

import (
	"reflect"
	"testing"

	tea "charm.land/bubbletea/v2"
	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// TestDeriveCacheDerivesWhatAFreshDerivationDoes: through any run of
// changes to the demo (typing, tabs, selection, sorting, regions, toggles), the
// watcher's cached derivation gives exactly the tools a fresh one gives.
func TestDeriveCacheDerivesWhatAFreshDerivationDoes(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var m ui.Model = demo.New()
		var cache deriveCache
		for step := range rapid.IntRange(1, 15).Draw(rt, "steps") {
			var msg tea.Msg
			switch rapid.IntRange(0, 7).Draw(rt, "change") {
			case 0:
				msg = ui.TextInputChanged{ID: demo.IDSearch, Text: rapid.SampledFrom([]string{"", "a", "eu", "zzz"}).Draw(rt, "text")}
			case 1:
				msg = ui.TabChanged{ID: demo.IDTabs, Index: rapid.IntRange(0, 3).Draw(rt, "tab")}
			case 2:
				msg = ui.RowSelected{ID: demo.IDTable, Index: rapid.IntRange(0, 5).Draw(rt, "row")}
			case 3:
				msg = ui.CheckboxToggled{ID: demo.IDLive, Checked: rapid.Bool().Draw(rt, "live")}
			case 4:
				msg = ui.TableSorted{ID: demo.IDTable, Column: rapid.SampledFrom([]string{"cpu", "name"}).Draw(rt, "col"), Direction: ui.SortDesc}
			case 5:
				msg = ui.OptionSelected{ID: demo.IDRegion, Index: rapid.IntRange(0, 3).Draw(rt, "region")}
			case 6:
				msg = ui.TextAreaChanged{ID: demo.IDNotes, Text: rapid.SampledFrom([]string{"", "n", "notes"}).Draw(rt, "notes")}
			}
			if msg != nil {
				m, _ = m.Update(msg)
			}
			tree := m.View()
			got := deriveCached(guard.Scope{}, "demo", tree, nil, &cache)
			want := derive(guard.Scope{}, "demo", tree, nil)
			if !reflect.DeepEqual(got, want) {
				rt.Fatalf("step %d: the cached derivation differs from a fresh one", step)
			}
		}
	})
}
