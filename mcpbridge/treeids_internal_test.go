package mcpbridge

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// The ids the lens is given and the widget the activity log labels are
// the tree's (widgetIDs, ui.Find), read from its scan: the demo's tree on
// any tab, and trees with modals shown, hidden and nested.
func TestTreeIDsAreWidgetIDs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var m ui.Model = demo.New()
		m, _ = m.Update(ui.TabChanged{ID: demo.IDTabs, Index: rapid.IntRange(0, 3).Draw(t, "tab")})
		inner := ui.Modal{ID: "inner", Visible: rapid.Bool().Draw(t, "inner shown"), Body: ui.Button{ID: "ok", Label: "OK"}}
		outer := ui.Modal{ID: "outer", Visible: rapid.Bool().Draw(t, "outer shown"), Body: ui.Column{Items: []ui.Node{ui.TextInput{ID: "name"}, inner}}}
		items := []ui.Node{outer, nil, ui.Text{}, ui.Row{Items: []ui.Node{ui.Checkbox{ID: "c"}, ui.Button{ID: "b"}}}}
		panics := rapid.Bool().Draw(t, "app code panics")
		if panics {
			items = append(items, badID{ui.Button{ID: "x"}}, badKids{}, ui.Modal{ID: "m", Body: badID{ui.Button{ID: "y"}}})
		}
		if rapid.Bool().Draw(t, "demo") {
			items = append(items, m.View()) // which holds a modal of its own
		}
		tree := ui.Column{Items: items}
		g := guard.Scope{}
		sc := newScanned(g, 1, tree)
		want := widgetIDs(g, tree)
		if got := treeIDs(sc); !slices.Equal(got, want) {
			t.Fatalf("treeIDs %v, widgetIDs %v", got, want)
		}
		if sc.exact == panics {
			t.Fatalf("app code panicked: %v; the scan is exact: %v", panics, sc.exact)
		}
		for _, id := range want {
			if !sc.exact {
				break // ui.Find would panic
			}
			w, ok := sc.find(tree, id)
			f, fok := ui.Find(tree, id)
			if ok != fok || (ok && w.WidgetID() != f.WidgetID()) {
				t.Fatalf("find %q: %v %v, ui.Find %v %v", id, w, ok, f, fok)
			}
		}
	})
}

// badID is a widget whose WidgetID panics.
type badID struct{ ui.Button }

func (badID) WidgetID() string { panic("id") }

// badKids is a node whose Children panics.
type badKids struct{ ui.Text }

func (badKids) Children() []ui.Node { panic("children") }

// widgetIDs, what treeIDs must give, lists every widget id of tree in tree order, hidden overlays'
// content included.
func widgetIDs(g guard.Scope, tree ui.Node) []string {
	var ids []string
	var walk func(n ui.Node)
	walk = func(n ui.Node) {
		if n == nil {
			return
		}
		id := ""
		if w, ok := n.(ui.Widget); ok {
			id, _ = guard.Call(g, metrics.HookWidgetID, "", w.WidgetID)
			ids = append(ids, id)
		}
		kids, _ := guard.Call(g, metrics.HookChildren, id, n.Children)
		for _, k := range kids {
			walk(k)
		}
	}
	walk(tree)
	return ids
}
