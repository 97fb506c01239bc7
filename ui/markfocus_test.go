package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// MarkFocus puts FocusMarker before the focused widget's first line and
// indents its other lines; the widget's hit rectangle starts after it.
func TestRenderMarkFocus(t *testing.T) {
	tree := Column{Items: []Node{
		TextInput{ID: "name", Label: "Name", Value: "ada"},
		Row{Gap: 1, Items: []Node{
			Button{ID: "ok", Label: "OK"},
			Box{Title: "Notes", Child: TextArea{ID: "notes", Value: "one\ntwo", Height: 2}},
		}},
	}}
	for _, focus := range []string{"name", "ok", "notes"} {
		f := Render(tree, RenderOptions{Width: 40, Height: 10, Focus: focus, MarkFocus: true})
		text := ansi.Strip(f.Content)
		if n := strings.Count(text, FocusMarker); n != 1 {
			t.Fatalf("focus %s: %d markers:\n%s", focus, n, text)
		}
		var hit Rect
		for _, h := range f.Hits {
			if h.ID == focus {
				hit = h.Rect
			}
		}
		lines := strings.Split(text, "\n")
		col := strings.Index(lines[hit.Y], FocusMarker)
		if col < 0 || ansi.StringWidth(lines[hit.Y][:col])+len(FocusMarker) != hit.X {
			t.Errorf("focus %s: marker not just before the hit rectangle %+v:\n%s", focus, hit, text)
		}
		if id, _, ok := f.HitTest(hit.X, hit.Y); !ok || id != focus {
			t.Errorf("focus %s: hit test at the widget's first cell = %q", focus, id)
		}
	}
	f := Render(tree, RenderOptions{Width: 40, Height: 10, Focus: "notes", MarkFocus: true})
	if !strings.Contains(ansi.Strip(f.Content), "│> one") || !strings.Contains(ansi.Strip(f.Content), "│  two") {
		t.Errorf("a multi-line widget is marked on its first line, indented on the others:\n%s", ansi.Strip(f.Content))
	}
	if plain := ansi.Strip(Render(tree, RenderOptions{Width: 40, Height: 10, Focus: "name"}).Content); strings.Contains(plain, FocusMarker) {
		t.Errorf("marker drawn without MarkFocus:\n%s", plain)
	}
}
