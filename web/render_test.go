package web

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/net/html"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// fold folds msgs into m, as the dispatcher would.
func fold(t *testing.T, m ui.Model, msgs ...tea.Msg) ui.Model {
	t.Helper()
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m
}

// demoViews are the demo's screens: each tab, and the restart dialog open.
func demoViews(t *testing.T) map[string]ui.Node {
	t.Helper()
	m := fold(t, demo.New(), ui.RowSelected{ID: demo.IDTable, Index: 2})
	views := map[string]ui.Node{}
	for i, name := range []string{"overview", "metrics", "logs", "config"} {
		views[name] = fold(t, m, ui.TabChanged{ID: demo.IDTabs, Index: i}).View()
	}
	w, ok := ui.Find(m.View(), demo.IDRestart)
	if !ok {
		t.Fatal("no restart button")
	}
	views["modal"] = fold(t, m, w.(ui.Button).OnClick).View()
	if o, ok := ui.ActiveOverlay(views["modal"]); !ok || o.(ui.Widget).WidgetID() != demo.IDModal {
		t.Fatal("the restart dialog did not open")
	}
	return views
}

func TestDemoTableIsATableWithItsSelectedRow(t *testing.T) {
	for _, sel := range []int{-1, 0, 2, 7} {
		m := demo.New()
		if sel >= 0 {
			m = fold(t, m, ui.RowSelected{ID: demo.IDTable, Index: sel})
		}
		view := m.View()
		w, _ := ui.Find(view, demo.IDTable)
		tbl := w.(ui.Table)
		if tbl.Selected != sel {
			t.Fatalf("the demo's selection is %d, want %d", tbl.Selected, sel)
		}
		root := parse(t, Render(view, Options{}))
		el := byDataID(t, root, demo.IDTable)
		if got := attrValue(el, "id"); got != "raxol-services" {
			t.Errorf("id = %q", got)
		}
		tables := elements(el, tagged("table"))
		if len(tables) != 1 {
			t.Fatalf("%d tables", len(tables))
		}
		ths := elements(tables[0], tagged("th"))
		if len(ths) != len(tbl.Columns) {
			t.Fatalf("%d th, want %d", len(ths), len(tbl.Columns))
		}
		for i, th := range ths {
			if !attrIs(th, "scope", "col") || th.Parent.Parent.Data != "thead" {
				t.Errorf("th %d is not a column header in thead", i)
			}
			if textOf(th) != tbl.Columns[i].Title {
				t.Errorf("th %d = %q, want %q", i, textOf(th), tbl.Columns[i].Title)
			}
		}
		body := elements(tables[0], tagged("tbody"))[0]
		rows := elements(body, tagged("tr"))
		if len(rows) != len(tbl.Rows) {
			t.Fatalf("%d body rows, want %d", len(rows), len(tbl.Rows))
		}
		selected := elements(tables[0], func(n *html.Node) bool { return attrIs(n, "aria-selected", "true") })
		if sel < 0 {
			if len(selected) != 0 {
				t.Errorf("%d rows selected with no selection", len(selected))
			}
			continue
		}
		if len(selected) != 1 {
			t.Fatalf("%d rows aria-selected, want 1", len(selected))
		}
		if selected[0].Data != "tr" || !attrIs(selected[0], "data-index", strconv.Itoa(sel)) {
			t.Errorf("the selected element is %s data-index %q, want row %d", selected[0].Data, attrValue(selected[0], "data-index"), sel)
		}
		if got := textOf(elements(selected[0], tagged("td"))[0]); got != tbl.Rows[sel][0] {
			t.Errorf("the selected row shows %q, want %q", got, tbl.Rows[sel][0])
		}
	}
}

func attrValue(n *html.Node, name string) string {
	v, _ := attr(n, name)
	return v
}

func TestDemoSearchInputHasItsLabel(t *testing.T) {
	m := fold(t, demo.New(), ui.TextInputChanged{ID: demo.IDSearch, Text: `bill "&" <b>`})
	root := parse(t, Render(m.View(), Options{Focus: demo.IDSearch}))
	el := byDataID(t, root, demo.IDSearch)
	inputs := elements(el, tagged("input"))
	if len(inputs) != 1 || !attrIs(inputs[0], "type", "text") {
		t.Fatalf("the search field holds %d inputs of type text", len(inputs))
	}
	if got := attrValue(inputs[0], "value"); got != `bill "&" <b>` {
		t.Errorf("value = %q", got)
	}
	id := attrValue(inputs[0], "id")
	labels := elements(root, func(n *html.Node) bool { return n.Data == "label" && attrIs(n, "for", id) })
	if id == "" || len(labels) != 1 || textOf(labels[0]) != "Search" {
		t.Fatalf("no <label for=%q> saying Search", id)
	}
	if !attrIs(el, "data-focused", "true") || !attrIs(el, "aria-current", "true") {
		t.Error("the focused field is not marked")
	}
	if n := len(elements(root, func(n *html.Node) bool { _, ok := attr(n, "data-focused"); return ok })); n != 1 {
		t.Errorf("%d elements marked focused", n)
	}
}

func TestPasswordIsNeverWritten(t *testing.T) {
	const secret = "hunter2-correct-horse"
	m := fold(t, demo.New(), ui.TabChanged{ID: demo.IDTabs, Index: 3}, ui.PasswordFieldChanged{ID: demo.IDToken, Text: secret})
	view := m.View()
	w, _ := ui.Find(view, demo.IDToken)
	if w.(ui.PasswordField).Value != secret {
		t.Fatal("the demo did not take the token")
	}
	full := Render(view, Options{Focus: demo.IDToken})
	one, ok := RenderWidget(view, demo.IDToken, Options{})
	if !ok {
		t.Fatal("RenderWidget found no token field")
	}
	for _, out := range [][]byte{full, one} {
		if bytes.Contains(out, []byte("hunter2")) {
			t.Fatalf("the password appears in %s", out)
		}
		root := parse(t, out)
		inputs := elements(byDataID(t, root, demo.IDToken), tagged("input"))
		if len(inputs) != 1 || !attrIs(inputs[0], "type", "password") {
			t.Fatal("the token field is not one password input")
		}
		if _, has := attr(inputs[0], "value"); has {
			t.Error("the password input has a value")
		}
	}
}

// interactive are the roles a user acts on or reads as a unit, each of
// which must have a name.
var interactive = map[string]bool{
	"button": true, "textbox": true, "checkbox": true, "slider": true, "listbox": true, "option": true,
	"tab": true, "menu": true, "menuitem": true, "tree": true, "treeitem": true, "grid": true,
	"table": true, "dialog": true, "region": true, "group": true,
}

func TestDemoEveryWidgetIsNamedAndAddressable(t *testing.T) {
	for name, view := range demoViews(t) {
		t.Run(name, func(t *testing.T) {
			out := Render(view, Options{})
			root := parse(t, out)
			// Every control has a role and a name.
			controls := 0
			for _, el := range elements(root, func(n *html.Node) bool { return true }) {
				switch el.Data {
				case "button", "input", "textarea", "select":
					if role(el) == "" {
						t.Errorf("<%s id=%q> has no role", el.Data, attrValue(el, "id"))
					}
				}
				r := role(el)
				if !interactive[r] {
					continue
				}
				controls++
				if strings.TrimSpace(accessibleName(root, el)) == "" {
					var b bytes.Buffer
					_ = html.Render(&b, el)
					t.Errorf("%s has no accessible name: %.200s", r, b.String())
				}
			}
			if controls == 0 {
				t.Fatal("no controls")
			}
			// Every widget shown has its element, with its ids.
			ids := map[string]bool{}
			for _, el := range elements(root, func(n *html.Node) bool { _, ok := attr(n, "id"); return ok }) {
				id := attrValue(el, "id")
				if ids[id] {
					t.Errorf("id %q twice", id)
				}
				ids[id] = true
			}
			for _, el := range elements(root, func(n *html.Node) bool { return true }) {
				for _, a := range []string{"for", "aria-labelledby", "aria-activedescendant"} {
					if v, ok := attr(el, a); ok && !ids[v] {
						t.Errorf("%s=%q names no element", a, v)
					}
				}
			}
			shown := view
			ui.Walk(shown, func(n ui.Node) bool {
				if o, ok := n.(ui.Overlay); ok && !o.Shown() {
					byDataID(t, root, o.(ui.Widget).WidgetID()) // closed, but addressable
					return false
				}
				w, ok := n.(ui.Widget)
				if !ok {
					return true
				}
				el := byDataID(t, root, w.WidgetID())
				if got := attrValue(el, "id"); got != domID(w.WidgetID()) {
					t.Errorf("widget %q has id %q", w.WidgetID(), got)
				}
				// The element RenderWidget gives is the one Render wrote.
				one, ok := RenderWidget(view, w.WidgetID(), Options{})
				if !ok || !bytes.Contains(out, one) {
					t.Errorf("RenderWidget(%q) is not the element Render wrote: %.300s", w.WidgetID(), one)
				}
				return true
			})
		})
	}
}

func TestHighlightFollowsTheTerminal(t *testing.T) {
	view := fold(t, demo.New(), ui.RowSelected{ID: demo.IDTable, Index: 2}).View()
	st := &ui.LocalState{Row: 5, Offset: 3}
	before := *st
	local := func(id string) *ui.LocalState {
		if id == demo.IDTable {
			return st
		}
		return nil
	}
	root := parse(t, Render(view, Options{Local: local, Width: 40}))
	el := byDataID(t, root, demo.IDTable)
	hl := elements(el, func(n *html.Node) bool { return attrIs(n, "data-highlighted", "true") })
	if len(hl) != 1 || !attrIs(hl[0], "data-index", "5") {
		t.Fatalf("%d rows highlighted, want row 5", len(hl))
	}
	sel := elements(el, func(n *html.Node) bool { return attrIs(n, "aria-selected", "true") })
	if len(sel) != 1 || !attrIs(sel[0], "data-index", "2") {
		t.Fatal("the selection is not row 2")
	}
	if *st != before {
		t.Errorf("Render changed the terminal's state: %+v, was %+v", *st, before)
	}
}

// A read-only render marks every input readonly and every button
// aria-disabled, and leaves the rest as it was.
func TestReadOnlyRender(t *testing.T) {
	tree := ui.Column{Items: []ui.Node{ui.Button{ID: "go", Label: "Go"}, ui.TextInput{ID: "q", Label: "Query", Value: "x"}}}
	rw := string(Render(tree, Options{}))
	ro := string(Render(tree, Options{ReadOnly: true}))
	if strings.Contains(rw, "readonly") || strings.Contains(rw, "aria-disabled") {
		t.Fatalf("a driver's render is read only:\n%s", rw)
	}
	for _, want := range []string{`<button class="raxol-widget raxol-button" data-id="go" id="raxol-go" type="button" aria-disabled="true">Go</button>`, `readonly aria-readonly="true"`} {
		if !strings.Contains(ro, want) {
			t.Errorf("read-only render lacks %s:\n%s", want, ro)
		}
	}
}

// RenderParts writes what Render writes, and each widget's span is the
// bytes RenderWidget gives for it; outermost spans do not overlap, and
// every widget inside one lies within it.
func TestRenderPartsAreTheWidgetsElements(t *testing.T) {
	m := fold(t, demo.New(), ui.TextInputChanged{ID: demo.IDSearch, Text: "billing"})
	view := m.View()
	opts := Options{Focus: demo.IDSearch}
	full, parts := RenderParts(view, opts)
	if !bytes.Equal(full, Render(view, opts)) {
		t.Fatal("RenderParts wrote other bytes than Render")
	}
	if len(parts) < 5 {
		t.Fatalf("only %d parts in the demo", len(parts))
	}
	lastEnd := -1
	var outer Part
	for _, p := range parts {
		one, ok := RenderWidget(view, p.ID, opts)
		if !ok || !bytes.Equal(full[p.Start:p.End], one) {
			t.Errorf("part %q is not RenderWidget's element:\n%s\n%s", p.ID, full[p.Start:p.End], one)
		}
		if p.Outer {
			if p.Start < lastEnd {
				t.Errorf("outer part %q overlaps the one before", p.ID)
			}
			lastEnd, outer = p.End, p
		} else if p.Start < outer.Start || p.End > outer.End {
			t.Errorf("inner part %q is not inside %q", p.ID, outer.ID)
		}
	}
}
