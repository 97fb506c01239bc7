package mcpbridge_test

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// The laws tool derivation obeys, after the functor laws of the Elixir
// original (tool derivation commutes with component composition), checked
// on random trees from gen_test.go.

const ns = "app"

var nameRe = regexp.MustCompile(`^app\.[A-Za-z0-9_-]{1,64}\.[a-z][a-z0-9_]{0,31}$`)

func derive(tree ui.Node) []mcpbridge.Derived {
	d := mcpbridge.Derive(ns, tree, nil)
	if d == nil {
		d = []mcpbridge.Derived{}
	}
	return d
}

func names(ds []mcpbridge.Derived) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name
	}
	return out
}

func nameSet(ds []mcpbridge.Derived) map[string]mcpbridge.Derived {
	m := make(map[string]mcpbridge.Derived, len(ds))
	for _, d := range ds {
		m[d.Name] = d
	}
	return m
}

// sameDerived fails t unless got and want are the same tools in the same
// order, descriptions and schemas included.
func sameDerived(t *rapid.T, what string, got, want []mcpbridge.Derived) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %q\n want %q", what, names(got), names(want))
	}
}

// Law 1. Purity: deriving twice gives identical results, and the results
// share nothing a caller could change.
func TestLawPurity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree := drawTree(t, newGenState())
		a, b := derive(tree), derive(tree)
		sameDerived(t, "second derivation", b, a)
		// Scribbling over one result must not show in the next one.
		for _, d := range a {
			d.Schema["type"] = "scribbled"
			if p, ok := d.Schema["properties"].(map[string]any); ok {
				p["scribbled"] = true
			}
		}
		sameDerived(t, "derivation after the caller changed an earlier result", derive(tree), b)
	})
}

// wrapGen wraps a node in 1-2 transparent containers.
func wrap(t *rapid.T, n ui.Node) ui.Node {
	for range rapid.IntRange(1, 2).Draw(t, "wraps") {
		switch rapid.IntRange(0, 2).Draw(t, "wrapper") {
		case 0:
			n = ui.Column{Items: []ui.Node{n}}
		case 1:
			n = ui.Row{Items: []ui.Node{n}, Gap: 1}
		default:
			n = ui.Box{Title: appText.Draw(t, "boxTitle"), Child: n}
		}
	}
	return n
}

// Law 2. Container transparency: wrapping the tree, or any subtree, in
// Column/Row/Box once or twice changes nothing.
func TestLawContainerTransparency(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree := drawTree(t, newGenState())
		want := derive(tree)
		wrapped := tree
		for range rapid.IntRange(1, 3).Draw(t, "nWrapped") {
			k := rapid.IntRange(0, len(allNodes(wrapped))-1).Draw(t, "at")
			wrapped = replaceAt(wrapped, k, func(n ui.Node) ui.Node { return wrap(t, n) })
		}
		sameDerived(t, "wrapped tree", derive(wrapped), want)
	})
}

// Law 3. Composition: Derive(Column{a, b}) == Derive(a) ++ Derive(b) for
// trees with disjoint ids, unless a modal is open: then the composed tree
// derives what the tree with the modal on top (b's, else a's) derives,
// everything else being behind it.
func TestLawComposition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := newGenState()
		a, b := drawTree(t, st), drawTree(t, st)
		var want []mcpbridge.Derived
		_, aOpen := topModal(a)
		_, bOpen := topModal(b)
		switch {
		case bOpen:
			want = derive(b)
		case aOpen:
			want = derive(a)
		default:
			want = append(slices.Clone(derive(a)), derive(b)...)
		}
		var both ui.Node = ui.Column{Items: []ui.Node{a, b}}
		if rapid.Bool().Draw(t, "row") {
			both = ui.Row{Items: []ui.Node{a, b}}
		}
		sameDerived(t, "composed tree", derive(both), want)
	})
}

// Law 4. Removal: replacing one widget by a Text removes exactly its tools
// (for a modal, those of its content too) and leaves every other tool as it
// was; unless what it removed holds a shown modal, which uncovers what was
// behind it: then none of the removed tools remain.
func TestLawRemoval(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree := drawTree(t, newGenState())
		var at []int
		for i, n := range allNodes(tree) {
			if _, ok := n.(ui.Widget); ok {
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			return
		}
		k := rapid.SampledFrom(at).Draw(t, "remove")
		gone := map[string]bool{}
		uncovers := false
		removed := replaceAt(tree, k, func(n ui.Node) ui.Node {
			for _, id := range allWidgetIDs(n) {
				gone[id] = true
			}
			uncovers = shownModals(n) > 0
			return ui.Text{Text: appText.Draw(t, "text")}
		})
		if uncovers {
			for _, d := range derive(removed) {
				if gone[d.WidgetID] {
					t.Fatalf("removed widget %q still derives %s", d.WidgetID, d.Name)
				}
			}
			return
		}
		var want []mcpbridge.Derived
		for _, d := range derive(tree) {
			if !gone[d.WidgetID] {
				want = append(want, d)
			}
		}
		sameDerived(t, fmt.Sprintf("tree without %v", gone), derive(removed), want)
	})
}

// Law 5. Reorder invariance: permuting the items of a Column or Row does
// not change the set of tools, unless two modals are shown (which one is
// on top depends on the order): then the reordered tree derives what its
// top modal does.
func TestLawReorderInvariance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree := drawTree(t, newGenState())
		var at []int
		for i, n := range allNodes(tree) {
			switch n.(type) {
			case ui.Column, ui.Row:
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			return
		}
		k := rapid.SampledFrom(at).Draw(t, "container")
		reordered := replaceAt(tree, k, func(n ui.Node) ui.Node {
			switch v := n.(type) {
			case ui.Column:
				v.Items = rapid.Permutation(v.Items).Draw(t, "items")
				return v
			case ui.Row:
				v.Items = rapid.Permutation(v.Items).Draw(t, "items")
				return v
			}
			return n
		})
		want, got := nameSet(derive(tree)), nameSet(derive(reordered))
		if shownModals(tree) > 1 {
			top, _ := topModal(reordered)
			want = nameSet(derive(top))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("reordered tree derives %q, want the set %q", slices.Sorted(mapsKeys(got)), slices.Sorted(mapsKeys(want)))
		}
	})
}

func mapsKeys(m map[string]mcpbridge.Derived) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Law 6. Additivity: the number of tools is the sum of len(Tools()) over
// the widgets that are neither disabled, excluded, a hidden modal nor in
// one, nor behind the open modal.
func TestLawAdditivity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree := drawTree(t, newGenState())
		want := 0
		for _, w := range reachableWidgets(tree) {
			tp := w.(ui.ToolProvider)
			if boolField(w, "Disabled") {
				if n := len(tp.Tools()); n != 0 {
					t.Fatalf("disabled %T %q offers %d tools", w, w.WidgetID(), n)
				}
				continue
			}
			if boolField(w, "Exclude") {
				continue
			}
			want += len(tp.Tools())
		}
		if got := len(derive(tree)); got != want {
			t.Fatalf("derived %d tools, the widgets offer %d", got, want)
		}
	})
}

// Law 7. Valid names: every name is app.<id>.<action> in the allowed
// alphabets and SplitName gives back its widget id and action.
func TestLawValidNames(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		for _, d := range derive(drawTree(t, newGenState())) {
			if !nameRe.MatchString(d.Name) {
				t.Fatalf("name %q does not match %s", d.Name, nameRe)
			}
			if d.Name != ns+"."+d.WidgetID+"."+d.Action {
				t.Fatalf("name %q is not %s.%s.%s", d.Name, ns, d.WidgetID, d.Action)
			}
			id, action, ok := mcpbridge.SplitName(ns, d.Name)
			if !ok || id != d.WidgetID || action != d.Action {
				t.Fatalf("SplitName(%q) = %q, %q, %v; want %q, %q, true", d.Name, id, action, ok, d.WidgetID, d.Action)
			}
		}
	})
}

// checkText fails t when s holds app text or a character no tool may show.
func checkText(t *rapid.T, where, s string) {
	t.Helper()
	if strings.Contains(s, appMarker) || strings.Contains(mcpbridge.Clean(s), appMarker) {
		t.Fatalf("%s holds app text: %q", where, s)
	}
	for _, r := range s {
		if forbiddenRune(r) {
			t.Fatalf("%s holds %U: %q", where, r, s)
		}
	}
}

// checkSchema walks a schema value, checking every key and string.
func checkSchema(t *rapid.T, where string, v any) {
	t.Helper()
	switch v := v.(type) {
	case string:
		checkText(t, where, v)
	case map[string]any:
		for k, x := range v {
			checkText(t, where+" key", k)
			checkSchema(t, where+"."+k, x)
		}
	case []any:
		for i, x := range v {
			checkSchema(t, fmt.Sprintf("%s[%d]", where, i), x)
		}
	case []string:
		for i, x := range v {
			checkText(t, fmt.Sprintf("%s[%d]", where, i), x)
		}
	case bool, float64, int, nil:
	default:
		t.Fatalf("%s: unexpected schema value %T", where, v)
	}
}

// Law 8. No app text leaks: names, descriptions and schemas hold no marker
// and no control, format or private-use character.
func TestLawNoAppTextLeaks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		for _, d := range derive(drawTree(t, newGenState())) {
			checkText(t, "name", d.Name)
			checkText(t, d.Name+" description", d.Description)
			checkSchema(t, d.Name+" schema", d.Schema)
			if d.Schema["type"] != "object" {
				t.Fatalf("%s schema type is %v", d.Name, d.Schema["type"])
			}
		}
	})
}

// allActions is every action some built-in widget offers.
var allActions = func() []string {
	set := map[string]bool{}
	for _, w := range []ui.ToolProvider{
		ui.Button{}, ui.TextInput{}, ui.TextArea{}, ui.PasswordField{}, ui.SelectList{}, ui.Checkbox{}, ui.Tabs{},
		ui.Menu{}, ui.Modal{Visible: true}, ui.Table{}, ui.Tree{}, ui.Scrubber{}, ui.Viewport{}, ui.BarChart{},
		ui.LineChart{}, ui.ScatterChart{},
	} {
		for _, s := range w.Tools() {
			set[s.Action] = true
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for a := range set {
			if !yield(a) {
				return
			}
		}
	})
}()

// checkLookup checks that Lookup finds every derived tool, on the widget
// that derived it.
func checkLookup(t *rapid.T, tree ui.Node, ds []mcpbridge.Derived) {
	t.Helper()
	for _, d := range ds {
		tp, spec, ok := mcpbridge.Lookup(ns, tree, d.Name)
		if !ok {
			t.Fatalf("Lookup(%q) found nothing", d.Name)
		}
		if tp.WidgetID() != d.WidgetID || spec.Action != d.Action || fmt.Sprintf("%T", tp) != d.WidgetType {
			t.Fatalf("Lookup(%q) = %T %q action %q; derived from %s %q action %q",
				d.Name, tp, tp.WidgetID(), spec.Action, d.WidgetType, d.WidgetID, d.Action)
		}
		if mcpbridge.Clean(spec.Description) != d.Description {
			t.Fatalf("Lookup(%q) gives a different description", d.Name)
		}
	}
}

// Law 9. Lookup agrees with Derive: it finds every derived tool on the
// widget that derived it, and nothing for any other name.
func TestLawLookupAgreesWithDerive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree := drawTree(t, newGenState())
		ds := derive(tree)
		checkLookup(t, tree, ds)

		derived := nameSet(ds)
		ids := rapid.SampledFrom(append(allWidgetIDs(tree), "nope", "-"))
		actions := rapid.OneOf(rapid.SampledFrom(allActions), rapid.StringMatching(`[a-z][a-z0-9_]{0,31}`))
		for range 12 {
			var name string
			switch rapid.IntRange(0, 5).Draw(t, "nameKind") {
			case 0:
				name = "other." + ids.Draw(t, "id") + "." + actions.Draw(t, "action")
			case 1:
				name = ns + "." + ids.Draw(t, "id")
			case 2:
				name = appText.Draw(t, "garbage")
			default:
				name = ns + "." + ids.Draw(t, "id") + "." + actions.Draw(t, "action")
			}
			if _, ok := derived[name]; ok {
				continue
			}
			if tp, spec, ok := mcpbridge.Lookup(ns, tree, name); ok {
				t.Fatalf("Lookup(%q) found %T %q action %q, which Derive does not offer", name, tp, tp.WidgetID(), spec.Action)
			}
		}
	})
}

type warning struct {
	msg  string
	args []any
}

func (w warning) names(id string) bool {
	for i := 0; i+1 < len(w.args); i += 2 {
		if w.args[i] == "widget_id" && w.args[i+1] == id {
			return true
		}
	}
	return false
}

// Law 10. Duplicate ids: when a widget id appears twice, only the first
// widget with it (in pre-order, hidden modals skipped) derives tools, the
// warn func is told the id, and Lookup agrees. The copy is a random
// built-in widget or an app-defined widget without tools.
func TestLawDuplicateIDs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := newGenState()
		tree := drawTree(t, st)
		ids := allWidgetIDs(tree)
		if len(ids) == 0 {
			return
		}
		id := rapid.SampledFrom(ids).Draw(t, "dupID")
		var dup ui.Node
		if rapid.IntRange(0, 3).Draw(t, "plain") == 0 {
			dup = plainWidget{ID: id}
		} else {
			kind := rapid.IntRange(0, len(widgetKinds)-1).Draw(t, "dupKind")
			dup = withID(drawWidgetOfKind(t, st, maxDepth, kind), id)
		}
		before := rapid.Bool().Draw(t, "before")
		k := rapid.IntRange(0, len(allNodes(tree))-1).Draw(t, "at")
		tree = replaceAt(tree, k, func(n ui.Node) ui.Node {
			if before {
				return ui.Column{Items: []ui.Node{dup, n}}
			}
			return ui.Column{Items: []ui.Node{n, dup}}
		})

		// The model: the first visible widget of each id owns it (and
		// derives if the human can reach it).
		type tool struct{ name, typ string }
		var want []tool
		seen := map[string]bool{}
		occurrences := 0
		ws, reach := visibleReach(tree)
		for i, w := range ws {
			wid := w.WidgetID()
			if wid == id {
				occurrences++
			}
			if seen[wid] {
				continue
			}
			seen[wid] = true
			tp, ok := w.(ui.ToolProvider)
			if !ok || boolField(w, "Exclude") || !reach[i] {
				continue
			}
			for _, s := range tp.Tools() {
				want = append(want, tool{ns + "." + wid + "." + s.Action, fmt.Sprintf("%T", w)})
			}
		}

		var warns []warning
		ds := mcpbridge.Derive(ns, tree, func(msg string, args ...any) { warns = append(warns, warning{msg, args}) })
		var got []tool
		for _, d := range ds {
			got = append(got, tool{d.Name, d.WidgetType})
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("id %q twice (%d visible):\n got  %v\n want %v", id, occurrences, got, want)
		}
		switch {
		case occurrences >= 2 && (len(warns) != 1 || !warns[0].names(id)):
			t.Fatalf("id %q appears %d times; warnings %v, want one naming it", id, occurrences, warns)
		case occurrences < 2 && len(warns) != 0:
			t.Fatalf("id %q appears %d times where Derive looks; unexpected warnings %v", id, occurrences, warns)
		}
		checkLookup(t, tree, ds)
	})
}

var sessionTools = []string{mcpbridge.ToolScreenshot, mcpbridge.ToolWaitFor, mcpbridge.ToolSendKey, mcpbridge.ToolDiscover, mcpbridge.ToolShow}

// Law 11. The focus lens on derived tools: never more than MaxTools; the
// session tools first whenever there is room for them; with a modal
// open, no tool of a widget outside it; only derived or session tools; and
// everything visible when there is room for it all.
func TestLawLensOnDerivedTools(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree := drawTree(t, newGenState())
		ds := derive(tree)
		ns := len(sessionTools)
		tools := make([]lens.Tool, 0, len(ds)+ns)
		for _, n := range sessionTools {
			tools = append(tools, lens.Tool{Name: n})
		}
		for _, d := range ds {
			tools = append(tools, lens.Tool{Name: d.Name, WidgetID: d.WidgetID})
		}

		ids := allWidgetIDs(tree)
		var modal []string
		inModal := map[string]bool{}
		if o, ok := ui.ActiveOverlay(tree); ok {
			modal = allWidgetIDs(o)
			if modal == nil {
				modal = []string{}
			}
			for _, id := range modal {
				inModal[id] = true
			}
		}
		pick := rapid.SampledFrom(append([]string{""}, ids...))
		in := lens.Input{
			Mode:     rapid.SampledFrom([]lens.Mode{"", lens.ModeFocused, lens.ModeHover, lens.ModeAll}).Draw(t, "mode"),
			MaxTools: rapid.IntRange(1, 30).Draw(t, "maxTools"),
			Tree:     ids,
			Focused:  pick.Draw(t, "focused"),
			Hover:    pick.Draw(t, "hover"),
			Recent:   rapid.SliceOfN(pick, 0, 5).Draw(t, "recent"),
			Modal:    modal,
		}
		out := lens.Names(lens.Select(tools, in))

		if len(out) > in.MaxTools {
			t.Fatalf("%d tools advertised, MaxTools %d", len(out), in.MaxTools)
		}
		if in.MaxTools >= ns && !slices.Equal(out[:ns], sessionTools) {
			t.Fatalf("advertised %q do not start with the session tools", out)
		}
		byName := nameSet(ds)
		var eligible []string
		for _, d := range ds {
			if modal == nil || inModal[d.WidgetID] {
				eligible = append(eligible, d.Name)
			}
		}
		seen := map[string]bool{}
		for _, name := range out {
			if seen[name] {
				t.Fatalf("%q advertised twice", name)
			}
			seen[name] = true
			if slices.Contains(sessionTools, name) {
				continue
			}
			d, ok := byName[name]
			if !ok {
				t.Fatalf("advertised %q is neither derived nor a session tool", name)
			}
			if modal != nil && !inModal[d.WidgetID] {
				t.Fatalf("modal %q open, but %q of widget %q outside it is advertised", modal, name, d.WidgetID)
			}
		}
		if in.MaxTools >= ns+len(eligible) {
			want := append(slices.Clone(sessionTools), eligible...)
			if !lens.SameSet(out, want) {
				t.Fatalf("room for all: advertised %q, want %q", out, want)
			}
		}
		if in.Mode == lens.ModeAll && in.MaxTools >= ns {
			if w := eligible[:min(len(eligible), in.MaxTools-ns)]; !slices.Equal(out[ns:], w) {
				t.Fatalf("mode all: advertised %q, want %q in derivation order", out[ns:], w)
			}
		}
	})
}

// ---- The sanitiser.

func TestCleanRemovesInvisibleAndControlCharacters(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    rune
	}{
		{"NUL", 0x00}, {"SOH", 0x01}, {"BEL", 0x07}, {"TAB", 0x09}, {"LF", 0x0A}, {"CR", 0x0D}, {"ESC", 0x1B},
		{"US", 0x1F}, {"DEL", 0x7F}, {"C1 CSI", 0x9B}, {"zero width space", 0x200B}, {"LRM", 0x200E},
		{"RLO", 0x202E}, {"word joiner", 0x2060}, {"BOM", 0xFEFF}, {"private use", 0xE000},
		{"private use plane 15", 0xF0000}, {"Hangul filler", 0x3164}, {"no-break space", 0x00A0},
		{"line separator", 0x2028}, {"paragraph separator", 0x2029}, {"ideographic space", 0x3000},
		{"soft hyphen", 0x00AD}, {"tag", 0xE0041}, {"braille blank", 0x2800},
	} {
		in := "a" + string(tc.r) + "b"
		if got := mcpbridge.Clean(in); got != "ab" {
			t.Errorf("%s (%U): Clean(%q) = %q, want %q", tc.name, tc.r, in, got, "ab")
		}
	}
	for r := rune(0); r <= 0x1F; r++ {
		if got := mcpbridge.Clean(string(r)); got != "" {
			t.Errorf("Clean(%U) = %q, want it removed", r, got)
		}
	}
}

func TestCleanKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"",
		"Press this button. Takes no arguments.",
		"ABCxyz 0123456789",
		`!"#$%&'()*+,-./:;<=>?@[\]^_{|}~` + "`",
		"two  spaces between words",
		"résumé naïve 日本語 Ελληνικά",
		"emoji 😀🎉👍",
		"\"asc\" or \"desc\"",
	} {
		if got := mcpbridge.Clean(s); got != s {
			t.Errorf("Clean(%q) = %q, want it unchanged", s, got)
		}
	}
	if got := mcpbridge.Clean("\u202eevil\u200b name\x00\n"); got != "evil name" {
		t.Errorf("Clean of mixed text = %q, want %q", got, "evil name")
	}
}

// Clean leaves nothing forbidden and is idempotent.
func TestCleanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(appText, rapid.String()).Draw(t, "s")
		c := mcpbridge.Clean(s)
		for _, r := range c {
			if forbiddenRune(r) {
				t.Fatalf("Clean(%q) = %q keeps %U", s, c, r)
			}
		}
		if cc := mcpbridge.Clean(c); cc != c {
			t.Fatalf("Clean is not idempotent: %q, then %q", c, cc)
		}
	})
}

// Law 12. Shadowing: while a modal is shown, the tree derives what the
// modal on top derives, and Lookup finds no tool of a widget behind it.
func TestLawShadowing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree := drawTree(t, newGenState())
		top, open := topModal(tree)
		if !open {
			open = rapid.Bool().Draw(t, "add modal")
			if !open {
				return
			}
			top = ui.Modal{ID: "zz-top", Visible: true, Body: ui.Checkbox{ID: "zz-in"}}
			tree = ui.Column{Items: []ui.Node{tree, top}}
		}
		sameDerived(t, "tree with an open modal", derive(tree), derive(top))
		inTop := map[string]bool{}
		for _, id := range allWidgetIDs(top) {
			inTop[id] = true
		}
		for _, w := range visibleWidgets(tree) {
			tp, ok := w.(ui.ToolProvider)
			if !ok || inTop[w.WidgetID()] {
				continue
			}
			for _, s := range tp.Tools() {
				if _, _, found := mcpbridge.Lookup(ns, tree, ns+"."+w.WidgetID()+"."+s.Action); found {
					t.Fatalf("%s.%s is behind modal %q but Lookup finds it", w.WidgetID(), s.Action, top.ID)
				}
			}
		}
	})
}
