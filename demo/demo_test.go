package demo

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

func fold(t *testing.T, m ui.Model, msgs ...tea.Msg) Model {
	t.Helper()
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m.(Model)
}

func widget[T ui.Widget](t *testing.T, m Model, id string) T {
	t.Helper()
	w, ok := ui.Find(m.View(), id)
	if !ok {
		t.Fatalf("no widget %q in the view", id)
	}
	v, ok := w.(T)
	if !ok {
		t.Fatalf("widget %q is %T", id, w)
	}
	return v
}

func TestSearchButtonFiltersTheTable(t *testing.T) {
	m := fold(t, New(), ui.TextInputChanged{ID: IDSearch, Text: "bill"})
	if n := len(widget[ui.Table](t, m, IDTable).Rows); n != 8 {
		t.Fatalf("typing alone filtered the table to %d rows", n)
	}
	m = fold(t, m, searchClicked{})
	rows := widget[ui.Table](t, m, IDTable).Rows
	if len(rows) != 1 || rows[0][0] != "billing" {
		t.Fatalf("rows after search = %v", rows)
	}
	if !strings.Contains(m.status, `"bill": 1 of 8`) {
		t.Fatalf("status %q", m.status)
	}
}

func TestSortAndRegion(t *testing.T) {
	m := fold(t, New(), ui.TableSorted{ID: IDTable, Column: "cpu", Direction: ui.SortDesc})
	rows := widget[ui.Table](t, m, IDTable).Rows
	if rows[0][0] != "billing" || rows[len(rows)-1][0] != "inventory" {
		t.Fatalf("cpu desc order = %v", rows)
	}
	// Invalid sorts are ignored, not applied.
	m2 := fold(t, m, ui.TableSorted{ID: IDTable, Column: "cpu", Direction: "sideways"}, ui.TableSorted{ID: IDTable, Column: "nope", Direction: ui.SortAsc})
	if m2.sortCol != "cpu" || m2.sortDir != ui.SortDesc {
		t.Fatalf("invalid sort changed state to %s %s", m2.sortCol, m2.sortDir)
	}
	m = fold(t, m, ui.OptionSelected{ID: IDRegion, Index: 3}) // ap-south
	for _, r := range widget[ui.Table](t, m, IDTable).Rows {
		if r[1] != "ap-south" {
			t.Fatalf("region filter let %v through", r)
		}
	}
	m = fold(t, m, ui.OptionSelected{ID: IDRegion, Index: 99})
	if m.region != 3 {
		t.Fatal("out-of-range region applied")
	}
}

func TestRestartNeedsSelectionAndConfirmation(t *testing.T) {
	m := fold(t, New())
	if !widget[ui.Button](t, m, IDRestart).Disabled {
		t.Fatal("restart enabled with nothing selected")
	}
	m = fold(t, m, ui.RowSelected{ID: IDTable, Index: 2})
	if widget[ui.Button](t, m, IDRestart).Disabled {
		t.Fatal("restart disabled after selecting a row")
	}
	m = fold(t, m, restartClicked{})
	modal := widget[ui.Modal](t, m, IDModal)
	if !modal.Visible || !strings.Contains(ui.RenderNode(modal.Body, 80, ui.RenderOptions{}), "billing") {
		t.Fatalf("modal not asking about billing: %+v", modal)
	}
	m = fold(t, m, ui.ModalDismissed{ID: IDModal})
	if widget[ui.Modal](t, m, IDModal).Visible || m.restarts["billing"] != 0 {
		t.Fatal("dismiss did not cancel")
	}
	before := m
	m = fold(t, m, restartClicked{}, ui.ModalConfirmed{ID: IDModal})
	if m.restarts["billing"] != 1 || before.restarts["billing"] != 0 {
		t.Fatalf("restart counted %d (earlier copy %d): Update must not share maps", m.restarts["billing"], before.restarts["billing"])
	}
}

func TestTimelineTreeAndInputs(t *testing.T) {
	m := fold(t, New(), ui.ScrubberSeeked{ID: IDTimeline, Position: 40})
	if m.position != 40 || m.logOffset != logLineOfMinute(40) {
		t.Fatalf("seek: position %d offset %d", m.position, m.logOffset)
	}
	m = fold(t, m, ui.ScrubberSeeked{ID: IDTimeline, Position: 1000})
	if m.position != timelineMinutes-1 {
		t.Fatalf("seek clamps to %d", m.position)
	}
	mp, cmd := m.Update(ui.ScrubberPlayed{ID: IDTimeline})
	if cmd == nil || !mp.(Model).playing || mp.(Model).position != 0 {
		t.Fatal("play at the end did not rewind and schedule a tick")
	}
	m = fold(t, mp, ui.ScrubberPaused{ID: IDTimeline}, playTick{gen: mp.(Model).playGen})
	if m.position != 0 {
		t.Fatal("a tick after pause advanced the timeline")
	}
	m = fold(t, m, ui.TreeExpanded{ID: IDInfra, NodeID: "us-east"}, ui.TreeSelected{ID: IDInfra, NodeID: "us-east/billing"})
	if !m.expanded["us-east"] || m.selNode != "us-east/billing" {
		t.Fatal("tree messages not applied")
	}
	m = fold(t, m, ui.TextAreaChanged{ID: IDNotes, Text: "n"}, ui.PasswordFieldChanged{ID: IDToken, Text: "s3cret"}, ui.MenuSelected{ID: IDActions, ItemID: "export"})
	if m.notes != "n" || !strings.HasPrefix(m.status, "Exported") {
		t.Fatalf("status %q", m.status)
	}
}

func TestEveryWidgetTypeIsUsed(t *testing.T) {
	seen := map[string]bool{}
	m := New().(Model)
	for tab := range tabNames {
		m.tab = tab
		m.confirming = "x"
		ui.Walk(m.View(), func(n ui.Node) bool {
			if w, ok := n.(ui.Widget); ok {
				seen[strings.TrimPrefix(fmt.Sprintf("%T", w), "ui.")] = true
			}
			return true
		})
	}
	for _, want := range []string{"Button", "TextInput", "TextArea", "PasswordField", "SelectList", "Checkbox", "Tabs", "Menu", "Modal", "Table", "Tree", "Scrubber", "Viewport", "BarChart", "LineChart", "ScatterChart"} {
		if !seen[want] {
			t.Errorf("the demo never shows a %s", want)
		}
	}
}

func TestProjectionsMarshalAndHideTheToken(t *testing.T) {
	m := fold(t, New(), ui.PasswordFieldChanged{ID: IDToken, Text: "hunter2"}, ui.RowSelected{ID: IDTable, Index: 0})
	for name, f := range Projections() {
		b, err := json.Marshal(f(m))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(string(b), "hunter2") {
			t.Fatalf("projection %s leaks the API token: %s", name, b)
		}
	}
	if ProjectServices(m).Selected != "api-gateway" || !ProjectConfig(m).TokenSet {
		t.Fatal("projections do not reflect the model")
	}
	if Projections()["services"](nil) != nil {
		t.Fatal("a foreign model should project to nil")
	}
}

func BenchmarkViewAndRender(b *testing.B) {
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		_ = ui.Render(m.View(), ui.RenderOptions{Width: 100, Height: 30, Focus: IDSearch})
	}
}

// BenchmarkAgentTypesAFrame is a terminal's frame after an agent typed
// into the search (the table filtered by it): View and Render with the
// terminal's render cache, so what did not change is not drawn again.
func BenchmarkAgentTypesAFrame(b *testing.B) {
	var m ui.Model = New()
	var cache ui.RenderCache
	th := ui.DefaultTheme()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m, _ = m.Update(ui.TextInputChanged{ID: IDSearch, Text: []string{"eu", "eu-"}[i%2]})
		_ = ui.Render(m.View(), ui.RenderOptions{Width: 100, Height: 30, Focus: IDSearch, Theme: th, Cache: &cache})
	}
}

// BenchmarkFocusMovesAFrame is a terminal's frame after the human pressed
// Tab or Shift+Tab (the load tool's typists), the focus moving between
// the tab bar and the search and back: View and Render with the
// terminal's render cache.
func BenchmarkFocusMovesAFrame(b *testing.B) {
	m := New()
	var cache ui.RenderCache
	th := ui.DefaultTheme()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = ui.Render(m.View(), ui.RenderOptions{Width: 80, Height: 23, Focus: []string{IDTabs, IDSearch}[i%2], Theme: th, Cache: &cache})
	}
}
