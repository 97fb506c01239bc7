package lens

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// scenario is one random lens input.
type scenario struct {
	tools []Tool
	in    Input
}

// drawScenario draws a random tree of widgets with 0-4 tools each, 0-4
// session tools at random places, random focus, hover, recency and modal,
// MaxTools 1-30 and a random mode.
func drawScenario(t *rapid.T) scenario {
	ids := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z][a-z0-9_]{0,4}`), 0, 14, rapid.ID[string]).Draw(t, "ids")

	// Most widgets are in the tree; a few are unknown to it. The tree also
	// holds some widgets that have no tools at all.
	var tree []string
	var tools []Tool
	for _, id := range ids {
		if rapid.IntRange(0, 9).Draw(t, "inTree_"+id) > 0 {
			tree = append(tree, id)
		}
		n := rapid.IntRange(0, 4).Draw(t, "nTools_"+id)
		for k := range n {
			tools = append(tools, Tool{Name: fmt.Sprintf("app.%s.act%d", id, k), WidgetID: id})
		}
	}
	// Derivation order is usually the tree order; sometimes interleave
	// widgets' tools to check that groups stay together.
	if rapid.IntRange(0, 4).Draw(t, "shuffle") == 0 {
		tools = rapid.Permutation(tools).Draw(t, "shuffled")
	}
	nSession := rapid.IntRange(0, 4).Draw(t, "nSession")
	for i := range nSession {
		at := rapid.IntRange(0, len(tools)).Draw(t, "sessionAt")
		tools = slices.Insert(tools, at, Tool{Name: fmt.Sprintf("raxol_s%d", i)})
	}
	// Occasionally repeat a tool later in the list.
	for range rapid.IntRange(0, 2).Draw(t, "nDup") {
		if len(tools) == 0 {
			break
		}
		i := rapid.IntRange(0, len(tools)-1).Draw(t, "dupOf")
		at := rapid.IntRange(i+1, len(tools)).Draw(t, "dupAt")
		tools = slices.Insert(tools, at, tools[i])
	}

	pick := rapid.SampledFrom(append([]string{"", "nope"}, ids...))
	var modal []string
	if rapid.Bool().Draw(t, "modalOpen") {
		modal = []string{} // open, possibly with nothing inside
		for _, id := range append([]string{"dialog"}, ids...) {
			if rapid.Bool().Draw(t, "inModal_"+id) {
				modal = append(modal, id)
			}
		}
	}
	return scenario{
		tools: tools,
		in: Input{
			Mode:     rapid.SampledFrom([]Mode{"", ModeFocused, ModeHover, ModeAll}).Draw(t, "mode"),
			MaxTools: rapid.IntRange(1, 30).Draw(t, "maxTools"),
			Tree:     tree,
			Focused:  pick.Draw(t, "focused"),
			Hover:    pick.Draw(t, "hover"),
			Recent:   rapid.SliceOfN(pick, 0, 6).Draw(t, "recent"),
			Modal:    modal,
		},
	}
}

// deepCopy copies s, keeping nil slices nil and empty slices empty.
func deepCopy(s scenario) scenario {
	c := s
	c.tools = slices.Clone(s.tools)
	c.in.Tree = slices.Clone(s.in.Tree)
	c.in.Recent = slices.Clone(s.in.Recent)
	c.in.Modal = slices.Clone(s.in.Modal)
	return c
}

// dedup returns tools without repeated names, first occurrence kept.
func dedup(tools []Tool) []Tool {
	seen := map[string]bool{}
	var out []Tool
	for _, t := range tools {
		if !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}

func shadowed(in Input, t Tool) bool {
	return t.WidgetID != "" && in.Modal != nil && !slices.Contains(in.Modal, t.WidgetID)
}

// visibleWidgetTools returns the deduplicated, unshadowed widget tools in
// input order.
func visibleWidgetTools(s scenario) []Tool {
	var out []Tool
	for _, t := range dedup(s.tools) {
		if t.WidgetID != "" && !shadowed(s.in, t) {
			out = append(out, t)
		}
	}
	return out
}

func sessionTools(s scenario) []Tool {
	var out []Tool
	for _, t := range dedup(s.tools) {
		if t.WidgetID == "" {
			out = append(out, t)
		}
	}
	return out
}

func limitOf(in Input) int {
	if in.MaxTools <= 0 {
		return DefaultMaxTools
	}
	return in.MaxTools
}

func TestSelectProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawScenario(t)
		orig := deepCopy(s)
		got := Select(s.tools, s.in)

		// Does not mutate its input.
		if !reflect.DeepEqual(s, orig) {
			t.Fatalf("Select mutated its input:\n got %#v\nwant %#v", s, orig)
		}
		// Deterministic.
		if again := Select(s.tools, s.in); !slices.Equal(got, again) {
			t.Fatalf("Select not deterministic:\n%q\n%q", Names(got), Names(again))
		}

		limit := limitOf(s.in)
		if len(got) > limit {
			t.Fatalf("%d tools exceed MaxTools %d", len(got), limit)
		}

		// No duplicates; a subset of the input.
		names := map[string]bool{}
		for _, g := range got {
			if names[g.Name] {
				t.Fatalf("duplicate tool %q in %q", g.Name, Names(got))
			}
			names[g.Name] = true
			if !slices.Contains(s.tools, g) {
				t.Fatalf("tool %+v is not in the input", g)
			}
		}

		// Session tools first, in input order; all of them when they fit.
		sess := sessionTools(s)
		nSess := min(len(sess), limit)
		if !slices.Equal(got[:nSess], sess[:nSess]) {
			t.Fatalf("result does not start with the session tools %q: %q", Names(sess[:nSess]), Names(got))
		}
		for _, g := range got[nSess:] {
			if g.WidgetID == "" {
				t.Fatalf("session tool %q after the widget tools", g.Name)
			}
		}

		// Modal shadowing.
		for _, g := range got {
			if shadowed(s.in, g) {
				t.Fatalf("tool %q of widget %q outside modal %q", g.Name, g.WidgetID, s.in.Modal)
			}
		}

		// As many tools as the limit allows.
		visible := visibleWidgetTools(s)
		if wantLen := min(limit, len(sess)+len(visible)); len(got) != wantLen {
			t.Fatalf("got %d tools, want %d", len(got), wantLen)
		}

		// All mode: an order-preserving prefix of the visible widget tools.
		if s.in.Mode == ModeAll {
			if w := got[nSess:]; !slices.Equal(w, visible[:len(w)]) {
				t.Fatalf("all mode: widget tools %q are not a prefix of %q", Names(w), Names(visible))
			}
		}

		// The focused widget's first tool comes right after the session tools
		// when nothing ranks ahead of it.
		var focusedFirst *Tool
		for i, v := range visible {
			if v.WidgetID == s.in.Focused {
				focusedFirst = &visible[i]
				break
			}
		}
		hoverLeads := s.in.Mode == ModeHover && s.in.Hover != s.in.Focused &&
			slices.ContainsFunc(visible, func(v Tool) bool { return v.WidgetID == s.in.Hover })
		if focusedFirst != nil && s.in.Mode != ModeAll && !hoverLeads && len(sess) < limit {
			if got[nSess] != *focusedFirst {
				t.Fatalf("focused %q: got %q right after the session tools, want %q", s.in.Focused, got[nSess].Name, focusedFirst.Name)
			}
		}

		// Exact agreement with an independent, rank-based model.
		if want := model(s); !slices.Equal(got, want) {
			t.Fatalf("Select disagrees with the model\n got: %q\nwant: %q\ninput: %+v", Names(got), Names(want), s.in)
		}
	})
}

// model is a reference implementation written differently from Select:
// it gives every widget a rank (tier, position) and sorts by it.
func model(s scenario) []Tool {
	limit := limitOf(s.in)
	sess := sessionTools(s)
	visible := visibleWidgetTools(s)
	if s.in.Mode == ModeAll {
		return slices.Concat(sess, visible)[:min(limit, len(sess)+len(visible))]
	}
	type rank struct{ tier, pos int }
	better := func(a, b rank) bool { return a.tier < b.tier || a.tier == b.tier && a.pos < b.pos }
	ranks := map[string]rank{}
	offer := func(id string, r rank) {
		if old, ok := ranks[id]; !ok || better(r, old) {
			ranks[id] = r
		}
	}
	first, second := s.in.Focused, s.in.Hover
	if s.in.Mode == ModeHover {
		first, second = second, first
	}
	for i, v := range visible {
		id := v.WidgetID
		offer(id, rank{5, i}) // unknown to the tree: input order
		if p := slices.Index(s.in.Tree, id); p >= 0 {
			offer(id, rank{4, p}) // tree order
		}
		if f := slices.Index(s.in.Tree, s.in.Focused); s.in.Focused != "" && f >= 0 {
			for p, x := range s.in.Tree {
				if x != id || p == f {
					continue
				}
				// d after has position 2d-1, d before has 2d.
				if p > f {
					offer(id, rank{3, 2*(p-f) - 1})
				} else {
					offer(id, rank{3, 2 * (f - p)})
				}
			}
		}
		if r := slices.Index(s.in.Recent, id); r >= 0 {
			offer(id, rank{2, r})
		}
		if id == second {
			offer(id, rank{1, 0})
		}
		if id == first {
			offer(id, rank{0, 0})
		}
	}
	widgets := slices.SortedFunc(func(yield func(string) bool) {
		for id := range ranks {
			if !yield(id) {
				return
			}
		}
	}, func(a, b string) int {
		ra, rb := ranks[a], ranks[b]
		if c := cmp.Compare(ra.tier, rb.tier); c != 0 {
			return c
		}
		return cmp.Compare(ra.pos, rb.pos)
	})
	out := slices.Clone(sess)
	for _, w := range widgets {
		for _, v := range visible {
			if v.WidgetID == w {
				out = append(out, v)
			}
		}
	}
	return out[:min(limit, len(out))]
}

// TestSameSetProperty checks that SameSet agrees with set equality
// of random name lists, in both directions.
func TestSameSetProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SampledFrom([]string{"a", "b", "c", "d"})
		a := rapid.SliceOfN(name, 0, 6).Draw(t, "a")
		b := rapid.SliceOfN(name, 0, 6).Draw(t, "b")
		set := func(xs []string) []string { return slices.Compact(slices.Sorted(slices.Values(xs))) }
		want := slices.Equal(set(a), set(b))
		if got := SameSet(a, b); got != want {
			t.Fatalf("SameSet(%q, %q) = %v, want %v", a, b, got, want)
		}
		if SameSet(b, a) != want {
			t.Fatalf("SameSet not symmetric on %q, %q", a, b)
		}
		if shuffled := rapid.Permutation(a).Draw(t, "perm"); !SameSet(a, shuffled) {
			t.Fatalf("SameSet(%q, %q) = false for a permutation", a, shuffled)
		}
	})
}
