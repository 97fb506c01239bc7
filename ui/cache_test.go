package ui

import "testing"

// TestFocusMovingBackAndForthDrawsNothingAgain: with the focus moving
// between two widgets and back (Tab, Shift+Tab), the third frame draws
// neither widget nor its box again: each one's drawing with the focus and
// without is kept while it is drawn, not only the last frame's. A widget
// that changed meanwhile is drawn again.
func TestFocusMovingBackAndForthDrawsNothingAgain(t *testing.T) {
	tree := func(label string) Node {
		return Column{Items: []Node{
			Box{Title: "a", Child: Button{ID: "a", Label: label}},
			Box{Title: "b", Child: TextInput{ID: "b", Label: "Name", Value: "x"}},
		}}
	}
	var c RenderCache
	draw := func(focus, label string) Frame {
		return Render(tree(label), RenderOptions{Width: 40, Height: 10, Focus: focus, Cache: &c})
	}
	// The drawings of frame 1 and 2 (a focused, then b), by key.
	lines := func(id string, focused bool) *string {
		for k, e := range c.cur {
			if k.id == id && k.focused == focused && len(e.lines) > 0 {
				return &e.lines[0]
			}
		}
		t.Fatalf("no drawing of %s (focused %v) kept", id, focused)
		return nil
	}
	box := func(id string, focused bool) *string {
		for k, e := range c.curBoxes {
			if k.id == id && k.focused == focused && len(e.out) > 0 {
				return &e.out[0]
			}
		}
		return nil
	}
	first := draw("a", "Go")
	aFocused, bPlain := lines("a", true), lines("b", false)
	draw("b", "Go")
	draw("b", "Go") // the boxes are kept once their widget is reused
	aPlain, bFocused := lines("a", false), lines("b", true)
	aPlainBox, bFocusedBox := box("a", false), box("b", true)
	if aPlainBox == nil || bFocusedBox == nil {
		t.Fatal("no box drawing kept for a reused widget")
	}
	third := draw("a", "Go")
	if third.Content != first.Content {
		t.Fatalf("the frame with the focus back differs from the first:\n%s\n%s", third.Content, first.Content)
	}
	if lines("a", true) != aFocused || lines("b", false) != bPlain {
		t.Fatal("the focus moving back drew a widget again that was drawn so before")
	}
	// Both variants stay while the widgets are drawn.
	if lines("a", false) != aPlain || lines("b", true) != bFocused {
		t.Fatal("the variant this frame did not use was not kept")
	}
	draw("b", "Go")
	if box("a", false) != aPlainBox || box("b", true) != bFocusedBox {
		t.Fatal("the boxes were drawn again with the focus back")
	}
	// A changed widget is drawn again, with the focus and without.
	if f := draw("a", "Stop"); f.Content == first.Content {
		t.Fatal("a changed label was not drawn")
	}
	if lines("a", true) == aFocused {
		t.Fatal("a changed widget's kept drawing was used")
	}
	if got, want := draw("b", "Stop").Content, Render(tree("Stop"), RenderOptions{Width: 40, Height: 10, Focus: "b"}).Content; got != want {
		t.Fatalf("after the change the cached frame differs from a fresh one:\n%s\n%s", got, want)
	}
}
