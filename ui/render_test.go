package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"pgregory.net/rapid"
)

// lineWidth's fast path must agree with the full measurement.
func TestLineWidthMatchesANSIStringWidth(t *testing.T) {
	for _, s := range []string{"", "abc", "\x1b[1;31mred\x1b[0m", "\x1b[38;5;12mx\x1b[m y", "日本", "a\tb", "é", "\x1b]0;t\x07x", "\x1b[", "\x1b[1",
		"╭─ Services ─╮", "│ x │", "▁▂▃█", "• a…", "─\u0301", "│\u200d", "█\ufe0f", "\xe2\x94", "\xe2", "╰\x1b[0m╯"} {
		if got, want := lineWidth(s), ansi.StringWidth(s); got != want {
			t.Errorf("lineWidth(%q) = %d, want %d", s, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOf(rapid.SampledFrom([]string{"a", "Z", " ", "~", "\x1b[1m", "\x1b[0m", "\x1b[38;2;1;2;3m", "日", "é", "\t", "\x1b[?25l",
			"─", "│", "╭", "╯", "▁", "█", "▟", "•", "…", "\u0301", "\u200d", "\ufe0f", "\u20e3", "👍", "\xe2", "\x94"})).Draw(t, "parts")
		s := strings.Join(parts, "")
		if got, want := lineWidth(s), ansi.StringWidth(s); got != want {
			t.Fatalf("lineWidth(%q) = %d, want %d", s, got, want)
		}
	})
}

// Every rune of the fast path is one cell, alone, as the full measurement
// says.
func TestOneCellRunes(t *testing.T) {
	for r := rune(0x2000); r < 0x2600; r++ {
		b := []byte(string(r))
		if len(b) == 3 && b[0] == 0xe2 && oneCell(b[1], b[2]) {
			if w := ansi.StringWidth(string(r)); w != 1 {
				t.Errorf("U+%04X: width %d on the fast path", r, w)
			}
		}
	}
}

func TestRenderLayoutAndHits(t *testing.T) {
	tree := Column{Items: []Node{
		Text{Text: "title"},
		Row{Gap: 1, Items: []Node{
			Button{ID: "a", Label: "A"},
			Box{Title: "box", Child: Button{ID: "b", Label: "B"}},
		}},
	}}
	f := Render(tree, RenderOptions{Width: 41, Height: 10})
	lines := strings.Split(f.Content, "\n")
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > 41 {
			t.Fatalf("line %d is %d wide: %q", i, w, l)
		}
	}
	want := map[string]Rect{"a": {X: 0, Y: 1, W: 5, H: 1}, "b": {X: 22, Y: 2, W: 5, H: 1}}
	for _, h := range f.Hits {
		if r, ok := want[h.ID]; !ok || r != h.Rect {
			t.Errorf("hit %s at %+v, want %+v", h.ID, h.Rect, want[h.ID])
		}
		delete(want, h.ID)
	}
	if len(want) != 0 {
		t.Errorf("missing hits %v", want)
	}
	if id, rel, ok := f.HitTest(23, 2); !ok || id != "b" || rel != (ClickEvent{X: 1, Y: 0}) {
		t.Errorf("HitTest(23,2) = %q %+v %v", id, rel, ok)
	}
	if _, _, ok := f.HitTest(40, 9); ok {
		t.Error("HitTest on empty space found a widget")
	}
	// Clipped to the height.
	if n := len(strings.Split(Render(tree, RenderOptions{Width: 41, Height: 2}).Content, "\n")); n != 2 {
		t.Errorf("height 2 gave %d lines", n)
	}
}

func TestFocusOrderAndNextFocus(t *testing.T) {
	tree := Column{Items: []Node{
		Button{ID: "a"}, Button{ID: "off", Disabled: true}, Text{Text: "x"},
		Row{Items: []Node{Checkbox{ID: "c"}, BarChart{ID: "chart"}}},
		Modal{ID: "m", Body: Button{ID: "inside"}},
	}}
	if got := strings.Join(FocusOrder(tree), ","); got != "a,c" {
		t.Fatalf("focus order %s, want a,c (disabled, charts and hidden modals skipped)", got)
	}
	order := []string{"a", "b", "c"}
	for _, tc := range []struct {
		cur  string
		back bool
		want string
	}{{"a", false, "b"}, {"c", false, "a"}, {"a", true, "c"}, {"", false, "a"}, {"gone", true, "c"}} {
		if got := NextFocus(order, tc.cur, tc.back); got != tc.want {
			t.Errorf("NextFocus(%q, back=%v) = %q, want %q", tc.cur, tc.back, got, tc.want)
		}
	}
	if NextFocus(nil, "a", false) != "" {
		t.Error("empty order should give no focus")
	}
}

func BenchmarkRenderWideTable(b *testing.B) {
	rows := make([][]string, 200)
	for i := range rows {
		rows[i] = []string{"service-name", "eu-west", "ok", "12.5", "512"}
	}
	tree := Box{Title: "t", Child: Table{ID: "t", Rows: rows, Columns: []TableColumn{{Key: "a"}, {Key: "b"}, {Key: "c"}, {Key: "d"}, {Key: "e"}}, Height: 40}}
	b.ReportAllocs()
	for b.Loop() {
		_ = Render(tree, RenderOptions{Width: 160, Height: 50})
	}
}

func TestOverlaysInsideHiddenOnesAreNotActive(t *testing.T) {
	tree := Column{Items: []Node{
		TextInput{ID: "a"},
		Modal{ID: "m", Visible: false, Body: Modal{ID: "n", Visible: true, Body: Button{ID: "b"}}},
	}}
	if o, ok := ActiveOverlay(tree); ok {
		t.Fatalf("active overlay %v inside a hidden one", o)
	}
	if got := strings.Join(FocusOrder(tree), ","); got != "a" {
		t.Fatalf("focus order %s, want a", got)
	}
}

func TestHighlightDrawsTheWidgetInTheActivityStyle(t *testing.T) {
	tree := Column{Items: []Node{Button{ID: "a", Label: "A"}, Button{ID: "b", Label: "B"}}}
	plain := Render(tree, RenderOptions{Width: 20, Height: 4}).Content
	lit := Render(tree, RenderOptions{Width: 20, Height: 4, Highlight: "b"}).Content
	pl, ll := strings.Split(plain, "\n"), strings.Split(lit, "\n")
	if pl[0] != ll[0] {
		t.Fatalf("the other widget changed: %q vs %q", pl[0], ll[0])
	}
	if ansi.Strip(ll[1]) != ansi.Strip(pl[1]) || !strings.Contains(ll[1], "\x1b[") || ll[1] == pl[1] {
		t.Fatalf("highlighted line %q (plain %q)", ll[1], pl[1])
	}
	if !strings.Contains(DefaultTheme().Activity.Render("x"), "7") {
		t.Fatal("the activity style is not reverse video")
	}
}

// TestBoxLinesAreOneWidth: every line of a box, its titled top border
// included, is as wide as the box, for any width and title.
func TestBoxLinesAreOneWidth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		width := rapid.IntRange(3, 60).Draw(t, "width") // a box is at least 3 wide
		title := rapid.StringMatching(`[a-zA-Z日 ]{0,30}`).Draw(t, "title")
		out := RenderNode(Box{Title: title, Child: Text{Text: "x"}}, width, RenderOptions{})
		for i, l := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(l); w != width {
				t.Fatalf("width %d, title %q: line %d is %d wide: %q", width, title, i, w, l)
			}
		}
	})
}
