package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// scrollers are the widgets that scroll, each with 20 rows named row0 to
// row19 under the id "w".
func scrollers() map[string]Widget {
	var rows [][]string
	var opts []string
	var nodes []TreeNode
	var items []MenuItem
	for i := range 20 {
		name := fmt.Sprintf("row%d", i)
		rows = append(rows, []string{name})
		opts = append(opts, name)
		nodes = append(nodes, TreeNode{ID: name, Label: name})
		items = append(items, MenuItem{ID: name, Label: name})
	}
	return map[string]Widget{
		"table":      Table{ID: "w", Columns: []TableColumn{{Key: "name", Title: "Name"}}, Rows: rows, Selected: -1},
		"selectlist": SelectList{ID: "w", Label: "Pick", Options: opts, Selected: -1},
		"tree":       Tree{ID: "w", Nodes: nodes},
		"menu":       Menu{ID: "w", Items: items},
	}
}

// hasLine reports whether a line of text is name followed by nothing but
// spaces and border, whatever its mark.
func hasLine(text, name string) bool {
	return regexp.MustCompile(`(?m)^[ ›○●]*` + name + ` *$`).MatchString(text)
}

// In a short window a scrolling widget shows fewer rows, keeping the
// highlighted one in view, and the line below it (one reporting the
// selection) stays on the screen.
func TestShortColumnKeepsHighlightAndLastLine(t *testing.T) {
	for name, w := range scrollers() {
		t.Run(name, func(t *testing.T) {
			st := &LocalState{}
			tree := Column{Items: []Node{Text{Text: "top"}, w, Text{Text: "selected: none"}}}
			render := func() string {
				f := Render(tree, RenderOptions{Width: 30, Height: 8, Focus: "w", Local: func(string) *LocalState { return st }})
				return ansi.Strip(f.Content)
			}
			down := tea.KeyPressMsg{Code: tea.KeyDown}
			for i := 0; i < 19; i++ {
				render() // the terminal draws between keys
				w.HandleEvent(down, st)
				out := render()
				lines := strings.Split(out, "\n")
				if len(lines) > 8 || lines[len(lines)-1] != "selected: none" || lines[0] != "top" {
					t.Fatalf("after %d downs the screen is not top, the widget, the last line:\n%s", i+1, out)
				}
				if !hasLine(out, fmt.Sprintf("row%d", i+1)) {
					t.Fatalf("after %d downs row%d is not in view:\n%s", i+1, i+1, out)
				}
			}
			// PgUp pages by the rows shown and keeps the highlight in view.
			w.HandleEvent(tea.KeyPressMsg{Code: tea.KeyHome}, st)
			if out := render(); !hasLine(out, "row0") {
				t.Fatalf("after home row0 is not in view:\n%s", out)
			}
		})
	}
}

// A click maps to the row drawn under it in a shortened window.
func TestShortColumnClicksHitTheRowsDrawn(t *testing.T) {
	for name, w := range scrollers() {
		t.Run(name, func(t *testing.T) {
			st := &LocalState{Row: 19}
			f := Render(Column{Items: []Node{w}}, RenderOptions{Width: 30, Height: 6, Focus: "w", Local: func(string) *LocalState { return st }})
			lines := strings.Split(ansi.Strip(f.Content), "\n")
			y := len(lines) - 1 // the last line shows row19
			if !hasLine(lines[y], "row19") {
				t.Fatalf("last line %q, want row19:\n%s", lines[y], ansi.Strip(f.Content))
			}
			msgs := w.HandleEvent(ClickEvent{X: 3, Y: y}, st)
			if len(msgs) != 1 || !strings.Contains(fmt.Sprintf("%+v", msgs[0]), "19") {
				t.Fatalf("a click on row19 gave %+v", msgs)
			}
		})
	}
}

// Fill takes the height a column leaves: a viewport and a table in one
// show more than their Height; the lines left are shared between two.
func TestFillTakesHeightLeft(t *testing.T) {
	lines := make([]string, 50)
	for i := range lines {
		lines[i] = fmt.Sprintf("line%d", i)
	}
	vp := Viewport{ID: "v", Lines: lines, Height: 3}
	var rows [][]string
	for i := range 10 {
		rows = append(rows, []string{fmt.Sprintf("r%d", i)})
	}
	tb := Table{ID: "t", Columns: []TableColumn{{Key: "k", Title: "K"}}, Rows: rows, Height: 2, Selected: -1}
	shown := regexp.MustCompile(`1–(\d+) of 50`)
	draw := func(n Node, h int) string {
		return ansi.Strip(Render(n, RenderOptions{Width: 40, Height: h}).Content)
	}

	out := draw(Column{Items: []Node{Text{Text: "top"}, Box{Child: vp}, Text{Text: "end"}}}, 20)
	if got := shown.FindStringSubmatch(out); got == nil || got[1] != "3" {
		t.Fatalf("without Fill the viewport shows %v lines, want its Height 3:\n%s", got, out)
	}
	out = draw(Column{Items: []Node{Text{Text: "top"}, Fill{Child: Box{Child: vp}}, Text{Text: "end"}}}, 20)
	if got := shown.FindStringSubmatch(out); got == nil || got[1] != "15" { // 20 - top, end, 2 borders, status
		t.Fatalf("in a Fill the viewport shows %v lines, want 15:\n%s", got, out)
	}
	if l := strings.Split(out, "\n"); len(l) != 20 || l[19] != "end" {
		t.Fatalf("the column is not 20 lines ending with the last item:\n%s", out)
	}

	out = draw(Column{Items: []Node{Fill{Child: tb}, Text{Text: "end"}}}, 20)
	for i := range 10 {
		if !strings.Contains(out, fmt.Sprintf("r%d ", i)) {
			t.Fatalf("in a Fill the table does not show row r%d:\n%s", i, out)
		}
	}

	// Two Fill items share the height left; Fill outside a column is its
	// child.
	out = draw(Column{Items: []Node{Fill{Child: vp}, Fill{Child: vp}}}, 21)
	if got := shown.FindAllStringSubmatch(out, -1); len(got) != 2 || got[0][1] != "10" || got[1][1] != "9" {
		t.Fatalf("two Fills show %v lines, want 10 and 9:\n%s", got, out)
	}
	out = draw(Row{Items: []Node{Fill{Child: vp}}}, 21)
	if got := shown.FindStringSubmatch(out); got == nil || got[1] != "3" {
		t.Fatalf("a Fill in a Row shows %v lines, want the viewport's 3:\n%s", got, out)
	}
	if (Fill{}).Children() != nil || len((Fill{Child: vp}).Children()) != 1 {
		t.Fatal("Fill's children")
	}
}

// Drawing an item again to fit it does not draw its overlay twice.
func TestShrinkCollectsOverlaysOnce(t *testing.T) {
	w := scrollers()["table"]
	m := Modal{ID: "m", Title: "Sure?", Visible: true, Body: Text{Text: "body"}}
	f := Render(Column{Items: []Node{Column{Items: []Node{w, m}}, Text{Text: "end"}}}, RenderOptions{Width: 40, Height: 12})
	n := 0
	for _, h := range f.Hits {
		if h.ID == "m" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the modal is drawn %d times, want once", n)
	}
}
