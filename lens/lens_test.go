package lens

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// wt returns the tools of widget id, named "demo.<id>.<action>".
func wt(id string, actions ...string) []Tool {
	ts := make([]Tool, len(actions))
	for i, a := range actions {
		ts[i] = Tool{Name: "demo." + id + "." + a, WidgetID: id}
	}
	return ts
}

// st returns session tools with the given names.
func st(names ...string) []Tool {
	ts := make([]Tool, len(names))
	for i, n := range names {
		ts[i] = Tool{Name: n}
	}
	return ts
}

func concat(parts ...[]Tool) []Tool { return slices.Concat(parts...) }

// The fixture tree:
//
//	index: 0    1  2  3  4  5  6  7
//	id:    root a  b  c  d  e  f  g
//
// root, c and f have no tools. Three session tools sit at the start, in the
// middle and at the end of the derivation order.
var (
	fixtureTree  = []string{"root", "a", "b", "c", "d", "e", "f", "g"}
	fixtureTools = concat(
		st("raxol_screenshot"),
		wt("a", "click", "clear"),
		wt("b", "click"),
		st("raxol_send_key"),
		wt("d", "type_into", "clear"),
		wt("e", "click"),
		wt("g", "click"),
		st("discover_tools"),
	)
	sessionNames = []string{"raxol_screenshot", "raxol_send_key", "discover_tools"}
)

// want is the session tools followed by the given widget tool names
// (shorthand "a.click" for "demo.a.click").
func want(widget ...string) []string {
	out := slices.Clone(sessionNames)
	for _, w := range widget {
		out = append(out, "demo."+w)
	}
	return out
}

// Widget tool name groups of the fixture, for readable expectations.
var (
	A = []string{"a.click", "a.clear"}
	B = []string{"b.click"}
	D = []string{"d.type_into", "d.clear"}
	E = []string{"e.click"}
	G = []string{"g.click"}
)

func order(groups ...[]string) []string { return want(slices.Concat(groups...)...) }

func TestSelect(t *testing.T) {
	tests := []struct {
		name  string
		tools []Tool // nil: fixtureTools
		in    Input  // Tree nil is replaced by fixtureTree unless noTree
		want  []string
	}{
		// Focused mode.
		{
			name: "focused first then neighbours alternating after/before",
			in:   Input{Focused: "d"},
			// e: 1 after; c (1 before) and f (2 after) have no tools;
			// b: 2 before; g: 3 after; a: 3 before.
			want: order(D, E, B, G, A),
		},
		{
			name: "explicit focused mode equals default",
			in:   Input{Mode: ModeFocused, Focused: "d"},
			want: order(D, E, B, G, A),
		},
		{
			name: "neighbour before wins over farther neighbour after",
			in:   Input{Focused: "e"},
			// d: 1 before; g: 2 after; b: 3 before; a: 4 before.
			want: order(E, D, G, B, A),
		},
		{
			name: "neighbours at the start of the tree",
			in:   Input{Focused: "a"},
			want: order(A, B, D, E, G),
		},
		{
			name: "neighbours at the end of the tree",
			in:   Input{Focused: "g"},
			// f none, e: 2 before, d: 3 before, c none, b: 5 before, a: 6 before.
			want: order(G, E, D, B, A),
		},
		{
			name: "focus on a widget without tools still orders its neighbours",
			in:   Input{Focused: "c"},
			// d: 1 after, b: 1 before, e: 2 after, a: 2 before, g: 4 after.
			want: order(D, B, E, A, G),
		},
		{
			name: "no focus: tree order",
			in:   Input{},
			want: order(A, B, D, E, G),
		},
		{
			name: "unknown focused id is skipped: tree order",
			in:   Input{Focused: "nope"},
			want: order(A, B, D, E, G),
		},
		{
			name: "focused then hovered then neighbours",
			in:   Input{Focused: "d", Hover: "a"},
			want: order(D, A, E, B, G),
		},
		{
			name: "hover equal to focus counts once",
			in:   Input{Focused: "d", Hover: "d"},
			want: order(D, E, B, G, A),
		},
		{
			name: "hover without focus leads, rest in tree order",
			in:   Input{Hover: "e"},
			want: order(E, A, B, D, G),
		},
		{
			name: "recent in recency order, deduplicated, unknown and tool-less skipped",
			in:   Input{Focused: "d", Recent: []string{"g", "nope", "a", "g", "d", "c", ""}},
			want: order(D, G, A, E, B),
		},
		{
			name: "focused, hovered, recent, neighbours",
			in:   Input{Focused: "d", Hover: "b", Recent: []string{"g", "b", "a"}},
			want: order(D, B, G, A, E),
		},
		{
			name: "recent without focus, rest in tree order",
			in:   Input{Recent: []string{"e", "b"}},
			want: order(E, B, A, D, G),
		},

		// Hover mode.
		{
			name: "hover mode: hovered, focused, then as focused mode",
			in:   Input{Mode: ModeHover, Focused: "d", Hover: "a", Recent: []string{"g"}},
			// neighbours are still the focused widget's: e, b.
			want: order(A, D, G, E, B),
		},
		{
			name: "hover mode without hover is focused mode",
			in:   Input{Mode: ModeHover, Focused: "d"},
			want: order(D, E, B, G, A),
		},
		{
			name: "hover mode with hover on a tool-less widget",
			in:   Input{Mode: ModeHover, Focused: "d", Hover: "c"},
			want: order(D, E, B, G, A),
		},
		{
			name: "hover mode hovering the focused widget",
			in:   Input{Mode: ModeHover, Focused: "d", Hover: "d"},
			want: order(D, E, B, G, A),
		},

		// All mode.
		{
			name: "all mode: input order, attention ignored",
			in:   Input{Mode: ModeAll, Focused: "g", Hover: "e", Recent: []string{"d"}},
			want: order(A, B, D, E, G),
		},
		{
			name: "all mode is cut to MaxTools, session tools first",
			in:   Input{Mode: ModeAll, Focused: "g", MaxTools: 5},
			want: want("a.click", "a.clear"),
		},

		// Modal shadowing.
		{
			name: "modal: focused widget outside the modal is skipped",
			in:   Input{Focused: "a", Modal: []string{"dialog", "d", "e"}},
			want: order(D, E),
		},
		{
			name: "modal: shadowed hover and recent are skipped",
			in:   Input{Focused: "e", Hover: "a", Recent: []string{"g", "b"}, Modal: []string{"d", "e"}},
			want: order(E, D),
		},
		{
			name: "modal in hover mode",
			in:   Input{Mode: ModeHover, Focused: "d", Hover: "g", Modal: []string{"e", "d"}},
			want: order(D, E),
		},
		{
			name: "modal in all mode",
			in:   Input{Mode: ModeAll, Modal: []string{"g", "b"}},
			want: order(B, G),
		},
		{
			name: "empty non-nil modal shadows every widget tool",
			in:   Input{Focused: "d", Modal: []string{}},
			want: order(),
		},
		{
			name: "empty non-nil modal in all mode",
			in:   Input{Mode: ModeAll, Modal: []string{}},
			want: order(),
		},

		// The MaxTools cut.
		{
			name: "cut counts session tools and may split a widget",
			in:   Input{Focused: "d", MaxTools: 4},
			want: want("d.type_into"),
		},
		{
			name: "cut after a whole widget",
			in:   Input{Focused: "d", MaxTools: 6},
			want: want("d.type_into", "d.clear", "e.click"),
		},
		{
			name: "exactly the session tools",
			in:   Input{Focused: "d", MaxTools: 3},
			want: want(),
		},
		{
			name: "more session tools than MaxTools: the first ones",
			in:   Input{Focused: "d", MaxTools: 2},
			want: []string{"raxol_screenshot", "raxol_send_key"},
		},
		{
			name: "more session tools than MaxTools in all mode",
			in:   Input{Mode: ModeAll, MaxTools: 1},
			want: []string{"raxol_screenshot"},
		},

		// Odd inputs.
		{
			name:  "empty input",
			tools: []Tool{},
			in:    Input{Focused: "d", Hover: "a", Recent: []string{"b"}},
			want:  nil,
		},
		{
			name:  "only session tools",
			tools: st("raxol_screenshot", "discover_tools"),
			in:    Input{Focused: "d"},
			want:  []string{"raxol_screenshot", "discover_tools"},
		},
		{
			name:  "widgets missing from the tree go last, in input order",
			tools: concat(wt("u", "click"), fixtureTools, wt("v", "click")),
			in:    Input{Focused: "d"},
			want:  append(order(D, E, B, G, A), "demo.u.click", "demo.v.click"),
		},
		{
			name:  "a focused widget missing from the tree still leads",
			tools: concat(fixtureTools, wt("u", "click")),
			in:    Input{Focused: "u"},
			want:  order([]string{"u.click"}, A, B, D, E, G),
		},
		{
			name: "a widget's tools stay together even if interleaved",
			tools: []Tool{
				{Name: "demo.a.click", WidgetID: "a"},
				{Name: "demo.b.click", WidgetID: "b"},
				{Name: "demo.a.clear", WidgetID: "a"},
			},
			in:   Input{Focused: "b"},
			want: []string{"demo.b.click", "demo.a.click", "demo.a.clear"},
		},
		{
			name: "all mode keeps interleaved input order",
			tools: []Tool{
				{Name: "demo.a.click", WidgetID: "a"},
				{Name: "demo.b.click", WidgetID: "b"},
				{Name: "demo.a.clear", WidgetID: "a"},
			},
			in:   Input{Mode: ModeAll, Focused: "b"},
			want: []string{"demo.a.click", "demo.b.click", "demo.a.clear"},
		},
		{
			name: "repeated names keep the first occurrence",
			tools: []Tool{
				{Name: "demo.a.click", WidgetID: "a"},
				{Name: "raxol_screenshot"},
				{Name: "demo.a.click", WidgetID: "b"}, // same name, other widget: dropped
				{Name: "demo.b.click", WidgetID: "b"},
				{Name: "raxol_screenshot"},
				{Name: "demo.b.click", WidgetID: "b"},
			},
			in:   Input{Focused: "b"},
			want: []string{"raxol_screenshot", "demo.b.click", "demo.a.click"},
		},
		{
			name: "a repeated name shadowed by the modal stays dropped",
			tools: []Tool{
				{Name: "x", WidgetID: "a"},
				{Name: "x", WidgetID: "b"},
			},
			in:   Input{Modal: []string{"b"}},
			want: nil,
		},
		{
			name: "unrecognised mode falls back to focused",
			in:   Input{Mode: "bogus", Focused: "d"},
			want: order(D, E, B, G, A),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := tt.tools
			if tools == nil {
				tools = fixtureTools
			}
			in := tt.in
			if in.Tree == nil {
				in.Tree = fixtureTree
			}
			got := Names(Select(tools, in))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Select names\n got: %q\nwant: %q", got, tt.want)
			}
		})
	}
}

func TestSelectDefaultMaxTools(t *testing.T) {
	var tools []Tool
	var tree []string
	for i := range 40 {
		id := fmt.Sprintf("w%02d", i)
		tree = append(tree, id)
		tools = append(tools, wt(id, "click", "clear")...)
	}
	tools = append(tools, st("raxol_screenshot")...)
	for _, max := range []int{0, -1} {
		got := Names(Select(tools, Input{Tree: tree, Focused: "w20", MaxTools: max}))
		if len(got) != DefaultMaxTools {
			t.Fatalf("MaxTools %d: got %d tools, want %d", max, len(got), DefaultMaxTools)
		}
		// Session, w20 (2), then w21, w19, w22, w23, w18, ... — neighbours
		// alternate after/before.
		wantPrefix := []string{"raxol_screenshot", "demo.w20.click", "demo.w20.clear",
			"demo.w21.click", "demo.w21.clear", "demo.w19.click", "demo.w19.clear",
			"demo.w22.click", "demo.w22.clear", "demo.w18.click"}
		if !slices.Equal(got[:len(wantPrefix)], wantPrefix) {
			t.Errorf("MaxTools %d:\n got: %q\nwant prefix: %q", max, got, wantPrefix)
		}
	}
}

func TestSelectResultIsFresh(t *testing.T) {
	tools := slices.Clone(fixtureTools)
	got := Select(tools, Input{Mode: ModeAll, Tree: fixtureTree})
	if got == nil {
		t.Fatal("Select returned nil")
	}
	got[0].Name = "changed"
	if !slices.Equal(tools, fixtureTools) {
		t.Error("modifying the result changed the input")
	}
	if got := Select(nil, Input{}); got == nil || len(got) != 0 {
		t.Errorf("Select(nil) = %#v, want empty non-nil", got)
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{"", ModeFocused, false},
		{"focused", ModeFocused, false},
		{"hover", ModeHover, false},
		{"all", ModeAll, false},
		{"Focused", "", true},
		{"none", "", true},
		{" all", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMode(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseMode(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParseMode(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if err != nil {
				if !errors.Is(err, ErrUnknownMode) {
					t.Errorf("error %v does not wrap ErrUnknownMode", err)
				}
				for _, m := range []string{"focused", "hover", "all"} {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not name mode %q", err, m)
					}
				}
			}
		})
	}
}

func TestNames(t *testing.T) {
	if got := Names(nil); got == nil || len(got) != 0 {
		t.Errorf("Names(nil) = %#v, want empty non-nil", got)
	}
	got := Names(concat(st("s"), wt("a", "click")))
	if want := []string{"s", "demo.a.click"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
}

func TestSameSet(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		want bool
	}{
		{"both nil", nil, nil, true},
		{"nil and empty", nil, []string{}, true},
		{"equal", []string{"x", "y"}, []string{"x", "y"}, true},
		{"reordered", []string{"x", "y", "z"}, []string{"z", "x", "y"}, true},
		{"repetition ignored", []string{"x", "x", "y"}, []string{"y", "x"}, true},
		{"extra in b", []string{"x"}, []string{"x", "y"}, false},
		{"extra in a", []string{"x", "y"}, []string{"x"}, false},
		{"different", []string{"x", "y"}, []string{"x", "z"}, false},
		{"empty and non-empty", nil, []string{"x"}, false},
		{"same length, repetition hides a difference", []string{"x", "x"}, []string{"x", "y"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SameSet(tt.a, tt.b); got != tt.want {
				t.Errorf("SameSet(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := SameSet(tt.b, tt.a); got != tt.want {
				t.Errorf("SameSet(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

// BenchmarkSelect measures one tools/list over 200 widgets with 3 tools
// each, plus 3 session tools, in focused mode with hover and recency.
func BenchmarkSelect(b *testing.B) {
	var tools []Tool
	var tree []string
	tools = append(tools, st("raxol_screenshot", "raxol_send_key")...)
	for i := range 200 {
		id := fmt.Sprintf("w%03d", i)
		tree = append(tree, id)
		tools = append(tools, wt(id, "click", "clear", "get_value")...)
	}
	tools = append(tools, st("discover_tools")...)
	in := Input{
		Tree:    tree,
		Focused: "w100",
		Hover:   "w150",
		Recent:  []string{"w010", "w199", "w010", "w042"},
	}
	for _, mode := range []Mode{ModeFocused, ModeHover, ModeAll} {
		b.Run(string(mode), func(b *testing.B) {
			in := in
			in.Mode = mode
			b.ReportAllocs()
			for b.Loop() {
				if got := Select(tools, in); len(got) != DefaultMaxTools {
					b.Fatalf("got %d tools", len(got))
				}
			}
		})
	}
}
