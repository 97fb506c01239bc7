package ui

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// dwKeys are the key presses the display widgets handle, by the String()
// name they are matched on.
var dwKeys = map[string]tea.KeyPressMsg{
	"enter":  {Code: tea.KeyEnter},
	"space":  {Code: tea.KeySpace, Text: " "},
	"esc":    {Code: tea.KeyEscape},
	"up":     {Code: tea.KeyUp},
	"down":   {Code: tea.KeyDown},
	"left":   {Code: tea.KeyLeft},
	"right":  {Code: tea.KeyRight},
	"home":   {Code: tea.KeyHome},
	"end":    {Code: tea.KeyEnd},
	"pgup":   {Code: tea.KeyPgUp},
	"pgdown": {Code: tea.KeyPgDown},
	"s":      {Code: 's', Text: "s"},
	"k":      {Code: 'k', Text: "k"},
	"j":      {Code: 'j', Text: "j"},
	"h":      {Code: 'h', Text: "h"},
	"l":      {Code: 'l', Text: "l"},
	"x":      {Code: 'x', Text: "x"},
	"y":      {Code: 'y', Text: "y"},
}

// dwK returns the key press named name.
func dwK(name string) tea.KeyPressMsg {
	k, ok := dwKeys[name]
	if !ok {
		panic("unknown test key " + name)
	}
	return k
}

func TestDisplayKeyStrings(t *testing.T) {
	for name, k := range dwKeys {
		if got := k.String(); got != name {
			t.Errorf("key %q: String() = %q", name, got)
		}
	}
}

// dwRows returns n table rows "row i" / "i".
func dwRows(n int) [][]string {
	rows := make([][]string, n)
	for i := range rows {
		rows[i] = []string{fmt.Sprintf("row %d", i), fmt.Sprint(i)}
	}
	return rows
}

// dwLines returns n viewport lines "line i".
func dwLines(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i)
	}
	return lines
}

var (
	dwTable = Table{
		ID:       "t",
		Columns:  []TableColumn{{Key: "name", Title: "Name"}, {Key: "size", Title: "Size", Width: 6}},
		Rows:     dwRows(30),
		Selected: -1,
		Height:   5,
	}
	// dwTreeNodes shows as: a (expanded), a1, a2 (collapsed, has a child),
	// b (collapsed, has a child), c.
	dwTreeNodes = []TreeNode{
		{ID: "a", Label: "A", Expanded: true, Children: []TreeNode{
			{ID: "a1", Label: "A1"},
			{ID: "a2", Label: "A2", Children: []TreeNode{{ID: "a2x", Label: "A2x"}}},
		}},
		{ID: "b", Label: "B", Children: []TreeNode{{ID: "b1", Label: "B1"}}},
		{ID: "c", Label: "C"},
	}
	dwTree     = Tree{ID: "tr", Nodes: dwTreeNodes}
	dwScrubber = Scrubber{ID: "s", Min: 0, Max: 100, Position: 50, Step: 5}
	dwViewport = Viewport{ID: "v", Lines: dwLines(30), Offset: 5, Height: 10}
	dwModal    = Modal{ID: "m", Title: "Delete?", Visible: true}
)

// dwWith returns a copy of w changed by f.
func dwWith[W any](w W, f func(*W)) W {
	f(&w)
	return w
}

func TestDisplayWidgetEvents(t *testing.T) {
	type state = LocalState
	tbl, tree, scr, vp, modal := dwTable, dwTree, dwScrubber, dwViewport, dwModal
	sortedBy := func(col, dir string) Table {
		return dwWith(tbl, func(t *Table) { t.SortColumn, t.SortDirection = col, dir })
	}
	tests := []struct {
		name  string
		w     Widget
		st    LocalState
		ev    Event
		want  []tea.Msg
		after *LocalState // Row, Col and Offset after the event, when checked
	}{
		// Table: moving the highlight sends nothing.
		{"table up", tbl, state{Row: 3}, dwK("up"), nil, &state{Row: 2}},
		{"table k", tbl, state{Row: 3}, dwK("k"), nil, &state{Row: 2}},
		{"table up at top", tbl, state{Row: 0}, dwK("up"), nil, &state{Row: 0}},
		{"table down", tbl, state{Row: 3}, dwK("down"), nil, &state{Row: 4}},
		{"table j scrolls", tbl, state{Row: 4}, dwK("j"), nil, &state{Row: 5, Offset: 1}},
		{"table down at bottom", tbl, state{Row: 29, Offset: 25}, dwK("down"), nil, &state{Row: 29, Offset: 25}},
		{"table pgup", tbl, state{Row: 12, Offset: 8}, dwK("pgup"), nil, &state{Row: 7, Offset: 7}},
		{"table pgup clamps", tbl, state{Row: 2}, dwK("pgup"), nil, &state{Row: 0}},
		{"table pgdown", tbl, state{Row: 0}, dwK("pgdown"), nil, &state{Row: 5, Offset: 1}},
		{"table pgdown clamps", tbl, state{Row: 27, Offset: 25}, dwK("pgdown"), nil, &state{Row: 29, Offset: 25}},
		{"table pgdown height 0 pages by 10", dwWith(tbl, func(t *Table) { t.Height = 0 }), state{Row: 0}, dwK("pgdown"), nil, &state{Row: 10}},
		{"table home", tbl, state{Row: 20, Offset: 16}, dwK("home"), nil, &state{Row: 0}},
		{"table end", tbl, state{Row: 0}, dwK("end"), nil, &state{Row: 29, Offset: 25}},
		{"table left", tbl, state{Col: 1}, dwK("left"), nil, &state{Col: 0}},
		{"table left at first column", tbl, state{Col: 0}, dwK("left"), nil, &state{Col: 0}},
		{"table right", tbl, state{Col: 0}, dwK("right"), nil, &state{Col: 1}},
		{"table right at last column", tbl, state{Col: 1}, dwK("right"), nil, &state{Col: 1}},
		{"table unknown key", tbl, state{Row: 3}, dwK("x"), nil, &state{Row: 3}},
		// Table: choosing and sorting.
		{"table enter", tbl, state{Row: 4}, dwK("enter"), []tea.Msg{RowSelected{ID: "t", Index: 4}}, nil},
		{"table space", tbl, state{Row: 7, Offset: 3}, dwK("space"), []tea.Msg{RowSelected{ID: "t", Index: 7}}, nil},
		{"table enter clamps a stale row", tbl, state{Row: 99, Col: 7}, dwK("enter"), []tea.Msg{RowSelected{ID: "t", Index: 29}}, &state{Row: 29, Col: 1, Offset: 25}},
		{"table s unsorted", tbl, state{Col: 0}, dwK("s"), []tea.Msg{TableSorted{ID: "t", Column: "name", Direction: SortAsc}}, nil},
		{"table s asc to desc", sortedBy("name", SortAsc), state{Col: 0}, dwK("s"), []tea.Msg{TableSorted{ID: "t", Column: "name", Direction: SortDesc}}, nil},
		{"table s desc to asc", sortedBy("name", SortDesc), state{Col: 0}, dwK("s"), []tea.Msg{TableSorted{ID: "t", Column: "name", Direction: SortAsc}}, nil},
		{"table s other column", sortedBy("name", SortAsc), state{Col: 1}, dwK("s"), []tea.Msg{TableSorted{ID: "t", Column: "size", Direction: SortAsc}}, nil},
		{"table s stale column", tbl, state{Col: 9}, dwK("s"), []tea.Msg{TableSorted{ID: "t", Column: "size", Direction: SortAsc}}, &state{Col: 1}},
		// Table: clicks (before any render, header clicks use 80 columns:
		// the mark, Name in 71 cells, a gap, Size at 74).
		{"table click row", tbl, state{}, ClickEvent{X: 5, Y: 3}, []tea.Msg{RowSelected{ID: "t", Index: 1}}, &state{Row: 1}},
		{"table click scrolled row", tbl, state{Row: 12, Offset: 10}, ClickEvent{X: 5, Y: 2}, []tea.Msg{RowSelected{ID: "t", Index: 10}}, &state{Row: 10, Offset: 10}},
		{"table click separator", tbl, state{Row: 3}, ClickEvent{X: 5, Y: 1}, nil, &state{Row: 3}},
		{"table click below rows", tbl, state{Row: 3}, ClickEvent{X: 5, Y: 7}, nil, &state{Row: 3}},
		{"table click header name", tbl, state{Col: 1}, ClickEvent{X: 2, Y: 0}, []tea.Msg{TableSorted{ID: "t", Column: "name", Direction: SortAsc}}, &state{Col: 0}},
		{"table click header size", sortedBy("size", SortAsc), state{}, ClickEvent{X: 75, Y: 0}, []tea.Msg{TableSorted{ID: "t", Column: "size", Direction: SortDesc}}, &state{Col: 1}},
		{"table click header mark", tbl, state{}, ClickEvent{X: 0, Y: 0}, nil, nil},
		// Table: disabled and empty tables send nothing.
		{"table disabled down", dwWith(tbl, func(t *Table) { t.Disabled = true }), state{Row: 3}, dwK("down"), nil, &state{Row: 3}},
		{"table disabled enter", dwWith(tbl, func(t *Table) { t.Disabled = true }), state{Row: 3}, dwK("enter"), nil, nil},
		{"table disabled s", dwWith(tbl, func(t *Table) { t.Disabled = true }), state{}, dwK("s"), nil, nil},
		{"table disabled click", dwWith(tbl, func(t *Table) { t.Disabled = true }), state{}, ClickEvent{X: 5, Y: 3}, nil, nil},
		{"table no rows enter", dwWith(tbl, func(t *Table) { t.Rows = nil }), state{}, dwK("enter"), nil, nil},
		{"table no rows s", dwWith(tbl, func(t *Table) { t.Rows = nil }), state{}, dwK("s"), nil, nil},
		{"table no rows down", dwWith(tbl, func(t *Table) { t.Rows = nil }), state{}, dwK("down"), nil, nil},
		{"table no columns enter", dwWith(tbl, func(t *Table) { t.Columns = nil }), state{}, dwK("enter"), nil, nil},
		{"table no columns s", dwWith(tbl, func(t *Table) { t.Columns = nil }), state{}, dwK("s"), nil, nil},

		// Tree: rows are a(0) a1(1) a2(2) b(3) c(4).
		{"tree up", tree, state{Row: 2}, dwK("up"), nil, &state{Row: 1}},
		{"tree up at top", tree, state{Row: 0}, dwK("up"), nil, &state{Row: 0}},
		{"tree down", tree, state{Row: 1}, dwK("down"), nil, &state{Row: 2}},
		{"tree down at bottom", tree, state{Row: 4}, dwK("down"), nil, &state{Row: 4}},
		{"tree home", tree, state{Row: 3}, dwK("home"), nil, &state{Row: 0}},
		{"tree end", tree, state{Row: 0}, dwK("end"), nil, &state{Row: 4}},
		{"tree pgup by height", dwWith(tree, func(t *Tree) { t.Height = 2 }), state{Row: 4, Offset: 3}, dwK("pgup"), nil, &state{Row: 2, Offset: 2}},
		{"tree pgdown by height", dwWith(tree, func(t *Tree) { t.Height = 2 }), state{Row: 0}, dwK("pgdown"), nil, &state{Row: 2, Offset: 1}},
		{"tree pgdown clamps", tree, state{Row: 1}, dwK("pgdown"), nil, &state{Row: 4}},
		{"tree unknown key", tree, state{Row: 1}, dwK("x"), nil, &state{Row: 1}},
		{"tree right expands", tree, state{Row: 2}, dwK("right"), []tea.Msg{TreeExpanded{ID: "tr", NodeID: "a2"}}, &state{Row: 2}},
		{"tree right on expanded moves to child", tree, state{Row: 0}, dwK("right"), nil, &state{Row: 1}},
		{"tree right on leaf", tree, state{Row: 1}, dwK("right"), nil, &state{Row: 1}},
		{"tree left collapses", tree, state{Row: 0}, dwK("left"), []tea.Msg{TreeCollapsed{ID: "tr", NodeID: "a"}}, &state{Row: 0}},
		{"tree left on leaf moves to parent", tree, state{Row: 1}, dwK("left"), nil, &state{Row: 0}},
		{"tree left on collapsed moves to parent", tree, state{Row: 2}, dwK("left"), nil, &state{Row: 0}},
		{"tree left on root leaf", tree, state{Row: 4}, dwK("left"), nil, &state{Row: 4}},
		{"tree left on collapsed root", tree, state{Row: 3}, dwK("left"), nil, &state{Row: 3}},
		{"tree enter", tree, state{Row: 3}, dwK("enter"), []tea.Msg{TreeSelected{ID: "tr", NodeID: "b"}}, nil},
		{"tree space", tree, state{Row: 4}, dwK("space"), []tea.Msg{TreeSelected{ID: "tr", NodeID: "c"}}, nil},
		{"tree enter clamps a stale row", tree, state{Row: 99}, dwK("enter"), []tea.Msg{TreeSelected{ID: "tr", NodeID: "c"}}, &state{Row: 4}},
		{"tree click row", tree, state{}, ClickEvent{X: 8, Y: 1}, []tea.Msg{TreeSelected{ID: "tr", NodeID: "a1"}}, &state{Row: 1}},
		{"tree click leaf indent", tree, state{}, ClickEvent{X: 4, Y: 1}, []tea.Msg{TreeSelected{ID: "tr", NodeID: "a1"}}, &state{Row: 1}},
		{"tree click glyph collapses", tree, state{Row: 4}, ClickEvent{X: 2, Y: 0}, []tea.Msg{TreeCollapsed{ID: "tr", NodeID: "a"}}, &state{Row: 0}},
		{"tree click glyph expands", tree, state{}, ClickEvent{X: 4, Y: 2}, []tea.Msg{TreeExpanded{ID: "tr", NodeID: "a2"}}, &state{Row: 2}},
		{"tree click scrolled", dwWith(tree, func(t *Tree) { t.Height = 2 }), state{Row: 4, Offset: 3}, ClickEvent{X: 8, Y: 0}, []tea.Msg{TreeSelected{ID: "tr", NodeID: "b"}}, &state{Row: 3, Offset: 3}},
		{"tree click below rows", tree, state{Row: 2}, ClickEvent{X: 2, Y: 5}, nil, &state{Row: 2}},
		{"tree disabled enter", dwWith(tree, func(t *Tree) { t.Disabled = true }), state{}, dwK("enter"), nil, nil},
		{"tree disabled right", dwWith(tree, func(t *Tree) { t.Disabled = true }), state{Row: 2}, dwK("right"), nil, &state{Row: 2}},
		{"tree disabled down", dwWith(tree, func(t *Tree) { t.Disabled = true }), state{Row: 2}, dwK("down"), nil, &state{Row: 2}},
		{"tree empty enter", Tree{ID: "e"}, state{}, dwK("enter"), nil, nil},
		{"tree empty right", Tree{ID: "e"}, state{}, dwK("right"), nil, nil},

		// Scrubber: seeking clamps and says nothing when nothing changes.
		{"scrubber left", scr, state{}, dwK("left"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 45}}, nil},
		{"scrubber h", scr, state{}, dwK("h"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 45}}, nil},
		{"scrubber right", scr, state{}, dwK("right"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 55}}, nil},
		{"scrubber l", scr, state{}, dwK("l"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 55}}, nil},
		{"scrubber home", scr, state{}, dwK("home"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 0}}, nil},
		{"scrubber end", scr, state{}, dwK("end"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 100}}, nil},
		{"scrubber pgup", dwWith(scr, func(s *Scrubber) { s.Step = 2 }), state{}, dwK("pgup"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 30}}, nil},
		{"scrubber pgdown", dwWith(scr, func(s *Scrubber) { s.Step = 2 }), state{}, dwK("pgdown"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 70}}, nil},
		{"scrubber pgup clamps", scr, state{}, dwK("pgup"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 0}}, nil},
		{"scrubber pgdown clamps", scr, state{}, dwK("pgdown"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 100}}, nil},
		{"scrubber right clamps", dwWith(scr, func(s *Scrubber) { s.Position = 98 }), state{}, dwK("right"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 100}}, nil},
		{"scrubber right at max", dwWith(scr, func(s *Scrubber) { s.Position = 100 }), state{}, dwK("right"), nil, nil},
		{"scrubber end at max", dwWith(scr, func(s *Scrubber) { s.Position = 100 }), state{}, dwK("end"), nil, nil},
		{"scrubber pgdown at max", dwWith(scr, func(s *Scrubber) { s.Position = 100 }), state{}, dwK("pgdown"), nil, nil},
		{"scrubber left at min", dwWith(scr, func(s *Scrubber) { s.Position = 0 }), state{}, dwK("left"), nil, nil},
		{"scrubber home at min", dwWith(scr, func(s *Scrubber) { s.Position = 0 }), state{}, dwK("home"), nil, nil},
		{"scrubber pgup at min", dwWith(scr, func(s *Scrubber) { s.Position = 0 }), state{}, dwK("pgup"), nil, nil},
		{"scrubber step 0 is 1", dwWith(scr, func(s *Scrubber) { s.Step = 0 }), state{}, dwK("right"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 51}}, nil},
		{"scrubber step 0 pages by 10", dwWith(scr, func(s *Scrubber) { s.Step = 0 }), state{}, dwK("pgdown"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 60}}, nil},
		{"scrubber stale position", dwWith(scr, func(s *Scrubber) { s.Position = 500 }), state{}, dwK("left"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 95}}, nil},
		{"scrubber max below min", Scrubber{ID: "s", Min: 10, Max: 0, Position: 5}, state{}, dwK("right"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 6}}, nil},
		{"scrubber max below min end", Scrubber{ID: "s", Min: 10, Max: 0, Position: 5}, state{}, dwK("end"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 10}}, nil},
		{"scrubber max below min home", Scrubber{ID: "s", Min: 10, Max: 0, Position: 5}, state{}, dwK("home"), []tea.Msg{ScrubberSeeked{ID: "s", Position: 0}}, nil},
		{"scrubber max equals min", Scrubber{ID: "s", Min: 7, Max: 7, Position: 7}, state{}, dwK("right"), nil, nil},
		{"scrubber max equals min home", Scrubber{ID: "s", Min: 7, Max: 7, Position: 7}, state{}, dwK("home"), nil, nil},
		{"scrubber no overflow", Scrubber{ID: "s", Min: 0, Max: math.MaxInt, Position: math.MaxInt, Step: math.MaxInt}, state{}, dwK("pgdown"), nil, nil},
		{"scrubber no underflow", Scrubber{ID: "s", Min: math.MinInt, Max: 0, Position: math.MinInt, Step: math.MaxInt}, state{}, dwK("pgup"), nil, nil},
		{"scrubber space plays", scr, state{}, dwK("space"), []tea.Msg{ScrubberPlayed{ID: "s"}}, nil},
		{"scrubber space pauses", dwWith(scr, func(s *Scrubber) { s.Playing = true }), state{}, dwK("space"), []tea.Msg{ScrubberPaused{ID: "s"}}, nil},
		{"scrubber click glyph", scr, state{}, ClickEvent{X: 0, Y: 0}, []tea.Msg{ScrubberPlayed{ID: "s"}}, nil},
		{"scrubber click before render", scr, state{}, ClickEvent{X: 10, Y: 0}, nil, nil},
		{"scrubber unknown key", scr, state{}, dwK("x"), nil, nil},
		{"scrubber enter", scr, state{}, dwK("enter"), nil, nil},
		{"scrubber disabled right", dwWith(scr, func(s *Scrubber) { s.Disabled = true }), state{}, dwK("right"), nil, nil},
		{"scrubber disabled space", dwWith(scr, func(s *Scrubber) { s.Disabled = true }), state{}, dwK("space"), nil, nil},
		{"scrubber disabled click", dwWith(scr, func(s *Scrubber) { s.Disabled = true }), state{}, ClickEvent{X: 0, Y: 0}, nil, nil},

		// Viewport: max offset is 30-10 = 20.
		{"viewport up", vp, state{}, dwK("up"), []tea.Msg{ScrolledTo{ID: "v", Row: 4}}, nil},
		{"viewport k", vp, state{}, dwK("k"), []tea.Msg{ScrolledTo{ID: "v", Row: 4}}, nil},
		{"viewport down", vp, state{}, dwK("down"), []tea.Msg{ScrolledTo{ID: "v", Row: 6}}, nil},
		{"viewport j", vp, state{}, dwK("j"), []tea.Msg{ScrolledTo{ID: "v", Row: 6}}, nil},
		{"viewport pgup clamps", vp, state{}, dwK("pgup"), []tea.Msg{ScrolledTo{ID: "v", Row: 0}}, nil},
		{"viewport pgdown", vp, state{}, dwK("pgdown"), []tea.Msg{ScrolledTo{ID: "v", Row: 15}}, nil},
		{"viewport pgdown clamps", dwWith(vp, func(v *Viewport) { v.Offset = 15 }), state{}, dwK("pgdown"), []tea.Msg{ScrolledTo{ID: "v", Row: 20}}, nil},
		{"viewport home", vp, state{}, dwK("home"), []tea.Msg{ScrolledTo{ID: "v", Row: 0}}, nil},
		{"viewport end", vp, state{}, dwK("end"), []tea.Msg{ScrolledTo{ID: "v", Row: 20}}, nil},
		{"viewport up at top", dwWith(vp, func(v *Viewport) { v.Offset = 0 }), state{}, dwK("up"), nil, nil},
		{"viewport pgup at top", dwWith(vp, func(v *Viewport) { v.Offset = 0 }), state{}, dwK("pgup"), nil, nil},
		{"viewport home at top", dwWith(vp, func(v *Viewport) { v.Offset = 0 }), state{}, dwK("home"), nil, nil},
		{"viewport down at bottom", dwWith(vp, func(v *Viewport) { v.Offset = 20 }), state{}, dwK("down"), nil, nil},
		{"viewport pgdown at bottom", dwWith(vp, func(v *Viewport) { v.Offset = 20 }), state{}, dwK("pgdown"), nil, nil},
		{"viewport end at bottom", dwWith(vp, func(v *Viewport) { v.Offset = 20 }), state{}, dwK("end"), nil, nil},
		{"viewport stale offset past the end", dwWith(vp, func(v *Viewport) { v.Offset = 50 }), state{}, dwK("down"), []tea.Msg{ScrolledTo{ID: "v", Row: 20}}, nil},
		{"viewport negative offset", dwWith(vp, func(v *Viewport) { v.Offset = -3 }), state{}, dwK("up"), []tea.Msg{ScrolledTo{ID: "v", Row: 0}}, nil},
		{"viewport height 0 is 10", dwWith(vp, func(v *Viewport) { v.Offset, v.Height = 0, 0 }), state{}, dwK("pgdown"), []tea.Msg{ScrolledTo{ID: "v", Row: 10}}, nil},
		{"viewport short text", dwWith(vp, func(v *Viewport) { v.Offset, v.Lines = 0, dwLines(3) }), state{}, dwK("end"), nil, nil},
		{"viewport short text down", dwWith(vp, func(v *Viewport) { v.Offset, v.Lines = 0, dwLines(3) }), state{}, dwK("down"), nil, nil},
		{"viewport unknown key", vp, state{}, dwK("x"), nil, nil},
		{"viewport click", vp, state{}, ClickEvent{X: 1, Y: 1}, nil, nil},
		{"viewport disabled down", dwWith(vp, func(v *Viewport) { v.Disabled = true }), state{}, dwK("down"), nil, nil},
		{"viewport disabled end", dwWith(vp, func(v *Viewport) { v.Disabled = true }), state{}, dwK("end"), nil, nil},

		// Modal.
		{"modal enter", modal, state{}, dwK("enter"), []tea.Msg{ModalConfirmed{ID: "m"}}, nil},
		{"modal esc", modal, state{}, dwK("esc"), []tea.Msg{ModalDismissed{ID: "m"}}, nil},
		{"modal space", modal, state{}, dwK("space"), nil, nil},
		{"modal other key", modal, state{}, dwK("y"), nil, nil},
		{"modal click before render", modal, state{}, ClickEvent{X: 3, Y: 3}, nil, nil},
		{"modal hidden enter", dwWith(modal, func(m *Modal) { m.Visible = false }), state{}, dwK("enter"), nil, nil},
		{"modal hidden esc", dwWith(modal, func(m *Modal) { m.Visible = false }), state{}, dwK("esc"), nil, nil},

		// Charts are read-only.
		{"bar chart enter", BarChart{ID: "b", Bars: []Bar{{"a", 1}}}, state{}, dwK("enter"), nil, nil},
		{"bar chart click", BarChart{ID: "b", Bars: []Bar{{"a", 1}}}, state{}, ClickEvent{}, nil, nil},
		{"line chart enter", LineChart{ID: "l", Series: []Series{{"a", []float64{1, 2}}}}, state{}, dwK("enter"), nil, nil},
		{"line chart click", LineChart{ID: "l", Series: []Series{{"a", []float64{1, 2}}}}, state{}, ClickEvent{}, nil, nil},
		{"scatter chart enter", ScatterChart{ID: "p", Series: []ScatterSeries{{"a", []Point{{1, 2}}}}}, state{}, dwK("enter"), nil, nil},
		{"scatter chart click", ScatterChart{ID: "p", Series: []ScatterSeries{{"a", []Point{{1, 2}}}}}, state{}, ClickEvent{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.st
			got := tt.w.HandleEvent(tt.ev, &st)
			if len(got) != 0 || len(tt.want) != 0 {
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("HandleEvent(%v) = %#v, want %#v", tt.ev, got, tt.want)
				}
			}
			if tt.after != nil {
				if st.Row != tt.after.Row || st.Col != tt.after.Col || st.Offset != tt.after.Offset {
					t.Errorf("state after = row %d col %d offset %d, want row %d col %d offset %d",
						st.Row, st.Col, st.Offset, tt.after.Row, tt.after.Col, tt.after.Offset)
				}
			}
		})
	}
}

func TestDisplayWidgetFocusable(t *testing.T) {
	tests := []struct {
		w    Widget
		want bool
	}{
		{dwTable, true},
		{dwWith(dwTable, func(t *Table) { t.Disabled = true }), false},
		{dwTree, true},
		{dwWith(dwTree, func(t *Tree) { t.Disabled = true }), false},
		{dwScrubber, true},
		{dwWith(dwScrubber, func(s *Scrubber) { s.Disabled = true }), false},
		{dwViewport, true},
		{dwWith(dwViewport, func(v *Viewport) { v.Disabled = true }), false},
		{dwModal, true},
		{dwWith(dwModal, func(m *Modal) { m.Visible = false }), false},
		{BarChart{ID: "b"}, false},
		{LineChart{ID: "l"}, false},
		{ScatterChart{ID: "p"}, false},
	}
	for _, tt := range tests {
		if got := tt.w.Focusable(); got != tt.want {
			t.Errorf("%T %s: Focusable() = %v, want %v", tt.w, tt.w.WidgetID(), got, tt.want)
		}
	}
	if got := (Modal{Body: Text{Text: "x"}}).Children(); len(got) != 1 {
		t.Errorf("Modal with body: Children() = %v, want the body", got)
	}
	if got := (Modal{}).Children(); got != nil {
		t.Errorf("Modal without body: Children() = %v, want nil", got)
	}
}

func TestTreeVisible(t *testing.T) {
	var got []string
	for _, r := range dwTree.Visible() {
		got = append(got, fmt.Sprintf("%s/%d/%s", r.Node.ID, r.Depth, r.Parent))
	}
	want := []string{"a/0/", "a1/1/a", "a2/1/a", "b/0/", "c/0/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Visible() = %v, want %v", got, want)
	}
}

func TestChartRanges(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	if lo, hi := (BarChart{Bars: []Bar{{"a", 3}, {"b", 7}, {"c", nan}, {"d", inf}}}).Range(); lo != 0 || hi != 7 {
		t.Errorf("BarChart.Range = %v, %v, want 0, 7", lo, hi)
	}
	if lo, hi := (BarChart{Bars: []Bar{{"a", -3}, {"b", -7}}}).Range(); lo != -7 || hi != 0 {
		t.Errorf("BarChart.Range negative = %v, %v, want -7, 0", lo, hi)
	}
	if lo, hi := (LineChart{Series: []Series{{"a", []float64{3, nan, 5}}, {"b", []float64{4, -inf}}}}).Range(); lo != 3 || hi != 5 {
		t.Errorf("LineChart.Range = %v, %v, want 3, 5", lo, hi)
	}
	if lo, hi := (LineChart{}).Range(); lo != 0 || hi != 0 {
		t.Errorf("empty LineChart.Range = %v, %v, want 0, 0", lo, hi)
	}
	sc := ScatterChart{Series: []ScatterSeries{{"a", []Point{{1, 10}, {5, -2}, {nan, 100}}}, {"b", []Point{{-3, 4}, {2, inf}}}}}
	if x0, x1, y0, y1 := sc.Range(); x0 != -3 || x1 != 5 || y0 != -2 || y1 != 10 {
		t.Errorf("ScatterChart.Range = %v %v %v %v, want -3 5 -2 10", x0, x1, y0, y1)
	}
}

// dwANSI matches CSI and OSC escape sequences.
var dwANSI = regexp.MustCompile(`\x1b\[[0-9;:?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)`)

// dwPlain returns s without escape sequences.
func dwPlain(s string) string { return dwANSI.ReplaceAllString(s, "") }

// dwRC returns a render context at width w.
func dwRC(w int, focused bool, st *LocalState) RenderContext {
	return RenderContext{
		Width:   w,
		Focused: focused,
		Local:   st,
		Theme:   DefaultTheme(),
		Child:   func(n Node, w int) string { return RenderNode(n, w, RenderOptions{}) },
	}
}

// dwRender renders w and checks every line fits in width.
func dwRender(t *testing.T, w Widget, width int, focused bool, st *LocalState) string {
	t.Helper()
	out := w.Render(dwRC(width, focused, st))
	for i, line := range strings.Split(out, "\n") {
		if lw := lipgloss.Width(line); lw > width {
			t.Fatalf("%T %q at width %d: line %d is %d cells: %q", w, w.WidgetID(), width, i, lw, line)
		}
	}
	return out
}

func TestDisplayWidgetsRenderWithinWidth(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	big := Table{ID: "big", Columns: []TableColumn{{Key: "a", Title: "A"}, {Key: "b", Title: "Bee", Width: 1 << 40}, {Key: "c", Title: "Sea", Width: -4}}, Rows: dwRows(60), Selected: 59}
	big.Rows[3] = []string{"tab\there", "ctl\x1b[31mred\x07", "wide 漢字漢字", "extra", "cells"}
	big.Rows[4] = nil
	deep := TreeNode{ID: "leaf", Label: "deep leaf"}
	for i := range 60 {
		deep = TreeNode{ID: fmt.Sprint("n", i), Label: strings.Repeat("label ", 5), Expanded: true, Children: []TreeNode{deep}}
	}
	manyBars := make([]Bar, 500)
	for i := range manyBars {
		manyBars[i] = Bar{Label: fmt.Sprint("bar ", i), Value: float64(i*i) - 1000}
	}
	longSeries := make([]float64, 5000)
	for i := range longSeries {
		longSeries[i] = math.Sin(float64(i) / 50)
	}
	points := make([]Point, 3000)
	for i := range points {
		points[i] = Point{X: float64(i % 97), Y: float64(i % 89)}
	}
	widgets := []Widget{
		dwTable,
		dwWith(dwTable, func(t *Table) { t.Selected, t.SortColumn, t.SortDirection = 3, "name", SortDesc }),
		dwWith(dwTable, func(t *Table) { t.Disabled = true }),
		dwWith(dwTable, func(t *Table) { t.Rows = nil }),
		dwWith(dwTable, func(t *Table) { t.Columns = nil }),
		dwWith(dwTable, func(t *Table) { t.Height, t.Selected = -3, 1<<40 }),
		dwWith(dwTable, func(t *Table) { t.Height = math.MaxInt }),
		big,
		Table{ID: "long", Columns: dwTable.Columns, Rows: dwRows(10000), Selected: 9000, Height: 10},
		Table{ID: "blank"},
		dwTree,
		dwWith(dwTree, func(t *Tree) { t.Selected, t.Height = "a2", 2 }),
		dwWith(dwTree, func(t *Tree) { t.Disabled = true }),
		Tree{ID: "deep", Nodes: []TreeNode{deep}, Selected: "leaf", Height: math.MaxInt},
		Tree{ID: "empty"},
		dwScrubber,
		dwWith(dwScrubber, func(s *Scrubber) { s.Playing, s.Label = true, "Episode 4: the long label" }),
		dwWith(dwScrubber, func(s *Scrubber) { s.Disabled = true }),
		Scrubber{ID: "rev", Min: 10, Max: -10, Position: 99, Label: "reversed"},
		Scrubber{ID: "flat", Min: 7, Max: 7, Position: 7},
		Scrubber{ID: "huge", Min: math.MinInt, Max: math.MaxInt, Position: 12345, Step: math.MaxInt},
		dwViewport,
		dwWith(dwViewport, func(v *Viewport) { v.Title, v.Offset = "Log", 1<<40 }),
		dwWith(dwViewport, func(v *Viewport) { v.Disabled, v.Title = true, "Log" }),
		Viewport{ID: "vempty", Title: "nothing"},
		Viewport{ID: "vbig", Lines: append(dwLines(100000), "tab\there", "\x1b[2J\x1b]0;evil\x07", strings.Repeat("漢", 2000)), Offset: 99995, Height: 20},
		Viewport{ID: "vall", Lines: append(dwLines(300), "tab\there", strings.Repeat("漢", 2000)), Offset: 5, Height: 1 << 40},
		Viewport{ID: "vneg", Lines: dwLines(50), Offset: -9, Height: -1},
		dwModal,
		dwWith(dwModal, func(m *Modal) {
			m.Body = Column{Items: []Node{Text{Text: strings.Repeat("Are you sure? ", 20)}, dwTable}}
			m.ConfirmLabel, m.DismissLabel = "Delete everything now", "Keep"
		}),
		Modal{ID: "untitled", Visible: true, Body: Text{Text: "plain"}},
		dwWith(dwModal, func(m *Modal) { m.Visible = false }),
		BarChart{ID: "bars", Title: "Sales", Bars: []Bar{{"north", 42}, {"south", 17.5}, {"east", 0}, {"west", 3.125}}},
		BarChart{ID: "neg", Bars: []Bar{{"up", 10}, {"down", -5}, {"nan", nan}, {"inf", inf}, {"", -inf}}},
		BarChart{ID: "extreme", Bars: []Bar{{"max", math.MaxFloat64}, {"min", -math.MaxFloat64}, {"tiny", 1e-300}}},
		BarChart{ID: "zeros", Bars: []Bar{{"a", 0}, {"b", 0}}},
		BarChart{ID: "many", Bars: manyBars, Height: 10},
		BarChart{ID: "nobars", Title: "empty"},
		LineChart{ID: "line", Title: "CPU", Series: []Series{{"cpu", []float64{1, 5, 3, 8, 2}}, {"mem", []float64{4, 4, nan, 6, inf}}}},
		LineChart{ID: "one", Series: []Series{{"single", []float64{3}}}},
		LineChart{ID: "flat", Series: []Series{{"flat", []float64{2, 2, 2, 2}}}},
		LineChart{ID: "nan", Series: []Series{{"nan", []float64{nan, inf, -inf}}}},
		LineChart{ID: "long", Series: []Series{{"sin", longSeries}, {"", []float64{-1, 1}}}, Height: 40},
		LineChart{ID: "extreme", Series: []Series{{"x", []float64{-math.MaxFloat64, math.MaxFloat64, 0}}}, Height: 1},
		LineChart{ID: "noseries"},
		ScatterChart{ID: "scatter", Title: "Points", Series: []ScatterSeries{{"a", []Point{{1, 1}, {2, 4}, {3, 9}}}, {"b", []Point{{1, 8}, {nan, 2}, {2, inf}}}}},
		ScatterChart{ID: "one", Series: []ScatterSeries{{"p", []Point{{5, 5}}}}},
		ScatterChart{ID: "many", Series: []ScatterSeries{{"a", points}, {"b", points[:10]}, {"c", nil}, {"d", nil}, {"e", nil}, {"f", nil}, {"g", nil}, {"h", nil}, {"i", points[:1]}}, Height: -5},
		ScatterChart{ID: "extreme", Series: []ScatterSeries{{"x", []Point{{-math.MaxFloat64, math.MaxFloat64}, {math.MaxFloat64, -math.MaxFloat64}}}}},
		ScatterChart{ID: "nodata", Series: []ScatterSeries{{"x", []Point{{nan, nan}}}}},
	}
	states := []LocalState{
		{},
		{Row: -5, Col: -2, Offset: -9},
		{Row: 1 << 40, Col: 1 << 40, Offset: 1 << 40, Data: "someone else's"},
	}
	for _, w := range widgets {
		for _, width := range []int{1, 2, 5, 40, 120, 1000} {
			for _, focused := range []bool{false, true} {
				for _, st := range states {
					dwRender(t, w, width, focused, &st)
					if !w.Focusable() {
						break // read-only widgets ignore the local state
					}
				}
			}
		}
		// A context without theme, local state or child renderer works too.
		_ = w.Render(RenderContext{Width: 0})
	}
}

func TestDisplayWidgetsRenderContent(t *testing.T) {
	plain := func(w Widget, width int, focused bool, st *LocalState) string {
		t.Helper()
		if st == nil {
			st = &LocalState{}
		}
		return dwPlain(dwRender(t, w, width, focused, st))
	}
	contains := func(what, out string, wants ...string) {
		t.Helper()
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", what, want, out)
			}
		}
	}
	lacks := func(what, out string, nots ...string) {
		t.Helper()
		for _, not := range nots {
			if strings.Contains(out, not) {
				t.Errorf("%s: output has %q:\n%s", what, not, out)
			}
		}
	}

	// Table: sort arrows, selection mark, window following the highlight.
	asc := dwWith(dwTable, func(t *Table) { t.SortColumn, t.SortDirection, t.Selected = "size", SortAsc, 2 })
	out := plain(asc, 40, false, nil)
	contains("table asc", out, "Name", "Size ▲", "› row 2", "──────")
	lacks("table asc", out, "row 5")
	contains("table desc", plain(dwWith(asc, func(t *Table) { t.SortDirection = SortDesc }), 40, false, nil), "Size ▼")
	contains("table empty", plain(dwWith(dwTable, func(t *Table) { t.Rows = nil }), 40, false, nil), "(no rows)")
	st := &LocalState{Row: 20}
	out = plain(dwTable, 40, true, st)
	contains("table scrolled", out, "row 20", "row 16")
	lacks("table scrolled", out, "row 15", "row 21")
	if st.Offset != 16 {
		t.Errorf("table render: Offset = %d, want 16 (highlight at the bottom of the window)", st.Offset)
	}
	short := dwWith(dwTable, func(t *Table) {
		t.Rows = [][]string{{"only name"}, {"a", "1", "surplus"}}
	})
	contains("table ragged rows", plain(short, 40, false, nil), "only name", "a")

	// Tree: glyphs, indentation, selection mark.
	out = plain(dwWith(dwTree, func(t *Tree) { t.Selected = "a2" }), 40, false, nil)
	contains("tree", out, "  ▾ A ", "      A1", "›   ▸ A2", "  ▸ B", "    C")
	lacks("tree", out, "A2x", "B1")
	contains("tree empty", plain(Tree{ID: "e"}, 40, false, nil), "(empty)")

	// Scrubber: play state, bar, position.
	out = plain(dwWith(dwScrubber, func(s *Scrubber) { s.Label = "Track" }), 40, false, nil)
	contains("scrubber", out, "⏸ Track ", "━●─", " 50/100")
	if got := lipgloss.Width(out); got != 40 {
		t.Errorf("scrubber fills %d of 40 cells: %q", got, out)
	}
	contains("scrubber playing", plain(dwWith(dwScrubber, func(s *Scrubber) { s.Playing = true }), 40, false, nil), "▶ ")
	contains("scrubber at min", plain(dwWith(dwScrubber, func(s *Scrubber) { s.Position = -3 }), 40, false, nil), "⏸ ●─", " 0/100")
	contains("scrubber reversed", plain(Scrubber{Min: 10, Max: 0, Position: 10}, 40, false, nil), "━● 10/10")

	// Viewport: the window, the position line, sanitising.
	out = plain(dwViewport, 40, false, nil)
	contains("viewport", out, "line 5", "line 14", "6–15 of 30", "┃", "│")
	lacks("viewport", out, "line 4\n", "line 15")
	out = plain(Viewport{Lines: []string{"a\tb", "x\x1b[31my\x07z"}}, 40, false, nil)
	contains("viewport sanitised", out, "a       b", "x[31myz", "1–2 of 2")
	lacks("viewport sanitised", out, "\x1b", "\t")
	contains("viewport stale offset", plain(dwWith(dwViewport, func(v *Viewport) { v.Offset = 1000 }), 40, false, nil), "line 29", "21–30 of 30")

	// Modal: title, body, buttons, hint.
	out = plain(dwWith(dwModal, func(m *Modal) { m.Body = Text{Text: "Really delete?"} }), 40, true, nil)
	contains("modal", out, "╔═ Delete? ═", "Really delete?", "[ Confirm ]  [ Cancel ]", "enter: confirm · esc: cancel", "╚═")
	contains("modal labels", plain(dwWith(dwModal, func(m *Modal) { m.ConfirmLabel, m.DismissLabel = "Yes", "No" }), 40, true, nil), "[ Yes ]  [ No ]")
	if got := dwModal.Render(dwRC(40, true, &LocalState{})); !strings.Contains(got, "Delete?") {
		t.Errorf("modal title is not one styled run: %q", got)
	}
	if got := dwWith(dwModal, func(m *Modal) { m.Visible = false }).Render(dwRC(40, true, &LocalState{})); got != "" {
		t.Errorf("hidden modal renders %q, want nothing", got)
	}

	// Charts.
	if got := len(strings.Split(plain(LineChart{Series: []Series{{"x", []float64{1, 2}}}, Height: 1 << 40}, 40, false, nil), "\n")); got != 500+3 {
		t.Errorf("line chart with a huge Height has %d lines, want 500 plot rows, axis, x labels, legend", got)
	}
	if got := len(strings.Split(plain(ScatterChart{Series: []ScatterSeries{{"x", []Point{{1, 2}}}}, Height: math.MaxInt}, 40, false, nil), "\n")); got != 500+3 {
		t.Errorf("scatter chart with a huge Height has %d lines, want 500 plot rows, axis, x labels, legend", got)
	}
	out = plain(BarChart{Title: "Sales", Bars: []Bar{{"north", 42}, {"south", 21}, {"west", 0}}}, 40, false, nil)
	contains("bar chart", out, "Sales", "north ", "████", " 42", "south", " 21", " 0")
	lines := strings.Split(out, "\n")
	if n42, n21 := strings.Count(lines[1], "█"), strings.Count(lines[2], "█"); n42 < 2*n21-1 || n42 > 2*n21+1 || n42 < 10 {
		t.Errorf("bar chart: 42 has %d blocks, 21 has %d; want about twice, scaled to the width:\n%s", n42, n21, out)
	}
	contains("bar chart negative", plain(BarChart{Bars: []Bar{{"up", 10}, {"down", -5}, {"bad", math.NaN()}}}, 40, false, nil), "▒", "-5", "n/a")
	contains("bar chart more", plain(BarChart{Bars: []Bar{{"a", 1}, {"b", 2}, {"c", 3}}, Height: 2}, 40, false, nil), "… 1 more")
	out = plain(LineChart{Title: "CPU", Series: []Series{{"cpu", []float64{1, 5, 3, 8, 2}}, {"mem", []float64{4, 4, 6}}}}, 60, false, nil)
	contains("line chart", out, "CPU", "8┤", "1┤", "└───", "• cpu", "× mem", "•", "×")
	if got := len(strings.Split(out, "\n")); got != 1+8+2+1 {
		t.Errorf("line chart has %d lines, want title, 8 plot rows, axis, x labels, legend:\n%s", got, out)
	}
	out = plain(LineChart{Series: []Series{{"flat", []float64{3, 3, 3}}}, Height: 5}, 40, false, nil)
	if strings.Count(out, "3┤") != 1 || !strings.Contains(strings.Split(out, "\n")[2], "3┤•") {
		t.Errorf("flat line chart: want the one value labelled once, on the middle row where it is drawn:\n%s", out)
	}
	contains("line chart no data", plain(LineChart{Series: []Series{{"x", []float64{math.NaN()}}}}, 60, false, nil), "(no data)", "• x")
	out = plain(ScatterChart{Title: "Pts", Series: []ScatterSeries{{"a", []Point{{1, 1}, {3, 9}}}, {"b", []Point{{2, 5}}}}}, 60, false, nil)
	contains("scatter", out, "Pts", "9┤", "1┤", "• a", "× b", "1", "3")
	if got := len(strings.Split(out, "\n")); got != 1+10+2+1 {
		t.Errorf("scatter chart has %d lines, want title, 10 plot rows, axis, x labels, legend:\n%s", got, out)
	}

	// Focus and disabled states look different.
	for _, w := range []Widget{
		dwWith(dwTable, func(t *Table) { t.Selected = 1 }), dwTree, dwScrubber, dwViewport, dwModal,
	} {
		unfocused := w.Render(dwRC(40, false, &LocalState{}))
		if focused := w.Render(dwRC(40, true, &LocalState{})); focused == unfocused {
			t.Errorf("%T: focused and unfocused renders are the same", w)
		}
	}
	for _, pair := range [][2]Widget{
		{dwTable, dwWith(dwTable, func(t *Table) { t.Disabled = true })},
		{dwTree, dwWith(dwTree, func(t *Tree) { t.Disabled = true })},
		{dwScrubber, dwWith(dwScrubber, func(s *Scrubber) { s.Disabled = true })},
		{dwViewport, dwWith(dwViewport, func(v *Viewport) { v.Disabled = true })},
	} {
		enabled := pair[0].Render(dwRC(40, false, &LocalState{}))
		if disabled := pair[1].Render(dwRC(40, false, &LocalState{})); disabled == enabled {
			t.Errorf("%T: disabled and enabled renders are the same", pair[0])
		}
	}
}

// dwFind returns the cell column and line of the first occurrence of what
// in the plain text out.
func dwFind(t *testing.T, out, what string) (x, y int) {
	t.Helper()
	for y, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, what); i >= 0 {
			return lipgloss.Width(line[:i]), y
		}
	}
	t.Fatalf("%q not found in:\n%s", what, out)
	return 0, 0
}

func TestDisplayWidgetClicksAfterRender(t *testing.T) {
	click := func(w Widget, st *LocalState, x, y int) []tea.Msg {
		return w.HandleEvent(ClickEvent{X: x, Y: y}, st)
	}
	check := func(what string, got []tea.Msg, want ...tea.Msg) {
		t.Helper()
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", what, got, want)
		}
	}

	// Modal, with buttons side by side and stacked.
	m := dwWith(dwModal, func(m *Modal) { m.Body = Text{Text: "Really delete?\nIt cannot be undone."} })
	for _, width := range []int{40, 20, 5} {
		st := &LocalState{}
		out := dwPlain(m.Render(dwRC(width, true, st)))
		cx, cy := dwFind(t, out, "[ C")
		dx, dy := dwFind(t, out, "[ Ca")
		check(fmt.Sprint("modal confirm at ", width), click(m, st, cx, cy), ModalConfirmed{ID: "m"})
		check(fmt.Sprint("modal confirm end at ", width), click(m, st, cx+min(10, width-1-cx), cy), ModalConfirmed{ID: "m"})
		check(fmt.Sprint("modal dismiss at ", width), click(m, st, dx, dy), ModalDismissed{ID: "m"})
		check(fmt.Sprint("modal body at ", width), click(m, st, cx, 1))
		check(fmt.Sprint("modal hint at ", width), click(m, st, cx, dy+1))
		if cx > 0 {
			check(fmt.Sprint("modal left of confirm at ", width), click(m, st, cx-1, cy))
		}
		check(fmt.Sprint("hidden modal at ", width), click(dwWith(m, func(m *Modal) { m.Visible = false }), st, cx, cy))
	}

	// Scrubber: the bar maps proportionally onto [Min, Max].
	s := dwWith(dwScrubber, func(s *Scrubber) { s.Label = "Track" })
	st := &LocalState{}
	out := dwPlain(s.Render(dwRC(40, true, st)))
	start, _ := dwFind(t, out, "━")
	knob, _ := dwFind(t, out, "●")
	end := lipgloss.Width(out[:strings.LastIndex(out, "─")])
	check("scrubber bar start", click(s, st, start, 0), ScrubberSeeked{ID: "s", Position: 0})
	check("scrubber bar end", click(s, st, end, 0), ScrubberSeeked{ID: "s", Position: 100})
	check("scrubber knob", click(s, st, knob, 0))
	check("scrubber right of knob", click(s, st, knob+2, 0), ScrubberSeeked{ID: "s", Position: 50 + int(math.Round(200/float64(end-start)))})
	check("scrubber label", click(s, st, 3, 0))
	check("scrubber suffix", click(s, st, end+2, 0))
	check("scrubber second line", click(s, st, knob, 1))
	check("scrubber play glyph", click(dwWith(s, func(s *Scrubber) { s.Playing = true }), st, 0, 0), ScrubberPaused{ID: "s"})
	check("disabled scrubber bar", click(dwWith(s, func(s *Scrubber) { s.Disabled = true }), st, start, 0))

	// Table: header clicks use the rendered column layout.
	tbl := dwWith(dwTable, func(t *Table) { t.SortColumn, t.SortDirection = "name", SortAsc })
	st = &LocalState{}
	out = dwPlain(tbl.Render(dwRC(40, true, st)))
	sx, _ := dwFind(t, out, "Size")
	nx, _ := dwFind(t, out, "Name")
	check("table header size", click(tbl, st, sx, 0), TableSorted{ID: "t", Column: "size", Direction: SortAsc})
	check("table header name", click(tbl, st, nx+3, 0), TableSorted{ID: "t", Column: "name", Direction: SortDesc})
	check("table header past the width", click(tbl, st, 45, 0))
	rx, ry := dwFind(t, out, "row 3")
	check("table row", click(tbl, st, rx, ry), RowSelected{ID: "t", Index: 3})

	// Tree: rows and glyphs as drawn.
	st = &LocalState{}
	out = dwPlain(dwTree.Render(dwRC(40, true, st)))
	gx, gy := dwFind(t, out, "▸ A2")
	check("tree glyph", click(dwTree, st, gx, gy), TreeExpanded{ID: "tr", NodeID: "a2"})
	check("tree label", click(dwTree, st, gx+2, gy), TreeSelected{ID: "tr", NodeID: "a2"})
}

func TestRenderTreeWithModal(t *testing.T) {
	root := Column{Items: []Node{
		Text{Text: "Files"},
		dwTree,
		Row{Items: []Node{dwTable, dwViewport}, Gap: 1},
		dwScrubber,
		BarChart{ID: "bars", Bars: []Bar{{"a", 1}, {"b", -2}}},
		dwWith(dwModal, func(m *Modal) { m.Body = Column{Items: []Node{Text{Text: "Sure?"}, dwTable}} }),
	}}
	for _, size := range [][2]int{{1, 1}, {80, 24}, {1000, 500}} {
		w, h := size[0], size[1]
		for _, focus := range []string{"", "m", "t"} {
			f := Render(root, RenderOptions{Width: w, Height: h, Focus: focus})
			lines := strings.Split(f.Content, "\n")
			if len(lines) > h {
				t.Errorf("%dx%d: %d lines", w, h, len(lines))
			}
			for i, l := range lines {
				if lipgloss.Width(l) > w {
					t.Errorf("%dx%d: line %d is %d cells", w, h, i, lipgloss.Width(l))
				}
			}
			if w >= 80 && !strings.Contains(dwPlain(f.Content), "Delete?") {
				t.Errorf("%dx%d: the modal title is missing:\n%s", w, h, dwPlain(f.Content))
			}
			if w >= 80 {
				if id, _, ok := f.HitTest(w/2, h/2); !ok || (id != "m" && id != "t") {
					t.Errorf("%dx%d: the screen centre hits %q, want the modal", w, h, id)
				}
			}
		}
	}
}

func TestFocusOrderModalTrap(t *testing.T) {
	tree := func(visible bool) Node {
		return Column{Items: []Node{
			dwViewport,
			Row{Items: []Node{dwScrubber, BarChart{ID: "bars"}}},
			Modal{ID: "m", Visible: visible, Body: Column{Items: []Node{Text{Text: "Pick a row"}, dwWith(dwTable, func(t *Table) { t.ID = "mt" })}}},
			dwWith(dwTree, func(t *Tree) { t.Disabled = true }),
		}}
	}
	order := func(root Node) (ids []string) {
		// FocusOrder must not compare nodes with ==: a Modal whose Body
		// holds slices (a Table, a Column) is not comparable at run time.
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("FocusOrder panicked: %v", r)
			}
		}()
		return FocusOrder(root)
	}
	if got, want := order(tree(true)), []string{"m", "mt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("visible modal: FocusOrder = %v, want %v", got, want)
	}
	if got, want := order(tree(false)), []string{"v", "s"}; !reflect.DeepEqual(got, want) {
		t.Errorf("hidden modal: FocusOrder = %v, want %v", got, want)
	}
}
