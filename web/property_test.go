package web

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/net/html"
	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// hostile are pieces of text meant to break out of where they are put.
var hostile = []string{
	"<script>alert(1)</script>", `"`, "'", "&", "&amp;", "&#60;", "<", ">", "</textarea>", "</pre>", "</dialog><script>",
	"<!--", "-->", "<![CDATA[x]]>", `" onmouseover="alert(1)`, "' onfocus='x", "<img src=x onerror=alert(1)>",
	"<style>*{}</style>", "\x1b[31m", "\x1b[0m", "\x1b[2J\x1b[H", "\x1b]8;;https://evil.example\x07", "\x1b]0;title\x1b\\",
	"\x9b31m", "\x1bP+q\x1b\\", "\x00", "\r\n", "\t", "\u202e", "\u2066", "\ufeff", "\x7f", "\uE000", "é", "漢字", "👩‍💻",
}

// text draws a piece of app text: arbitrary strings and hostile pieces.
var text = rapid.Custom(func(t *rapid.T) string {
	parts := rapid.SliceOfN(rapid.OneOf(rapid.StringN(0, 12, 48), rapid.SampledFrom(hostile)), 0, 4).Draw(t, "parts")
	return strings.Join(parts, "")
})

// custom is an app-defined widget with text of its own.
type custom struct {
	ID, Label, Drawn string
	Secret           bool
}

func (custom) Children() []ui.Node                              { return nil }
func (c custom) WidgetID() string                               { return c.ID }
func (c custom) Focusable() bool                                { return true }
func (c custom) Render(ui.RenderContext) string                 { return c.Drawn }
func (c custom) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg { return nil }
func (c custom) Tools() []ui.ToolSpec                           { return nil }
func (c custom) CallTool(string, map[string]any) (any, []tea.Msg, error) {
	return nil, nil, nil
}
func (c custom) State() any        { return map[string]any{"label": c.Label, "drawn": c.Drawn, "n": 3} }
func (c custom) HoldsSecret() bool { return c.Secret }

// tree is a generated tree with every kind of node, all its text drawn by
// str, and the strings it used (for the focus).
type tree struct {
	root  ui.Node
	ids   []string
	texts []string // the ui.Text nodes' text outside the modal, in order
}

func genTree(t *rapid.T) tree {
	var tr tree
	str := func(label string) string { return text.Draw(t, label) }
	id := func() string {
		s := str("id")
		tr.ids = append(tr.ids, s)
		return s
	}
	txt := func() ui.Node {
		s := str("text")
		tr.texts = append(tr.texts, s)
		return ui.Text{Text: s, Bold: rapid.Bool().Draw(t, "bold")}
	}
	n := rapid.IntRange(0, 4)
	strs := func(label string) []string {
		out := make([]string, n.Draw(t, label+"#"))
		for i := range out {
			out[i] = str(label)
		}
		return out
	}
	cols := make([]ui.TableColumn, n.Draw(t, "cols"))
	for i := range cols {
		cols[i] = ui.TableColumn{Key: str("key"), Title: str("title")}
	}
	rows := make([][]string, n.Draw(t, "rows"))
	for i := range rows {
		rows[i] = strs("cell")
	}
	sortCol := ""
	if len(cols) > 0 {
		sortCol = cols[0].Key
	}
	menuItems := []ui.MenuItem{{ID: str("item"), Label: str("item label"), Children: []ui.MenuItem{{ID: str("item"), Label: str("item label")}}}, {ID: str("item"), Label: str("item label"), Disabled: true}}
	treeNodes := []ui.TreeNode{{ID: str("node"), Label: str("node label"), Expanded: true, Children: []ui.TreeNode{{ID: str("node"), Label: str("node label")}}}}
	widgets := []ui.Node{
		ui.Button{ID: id(), Label: str("label"), Disabled: rapid.Bool().Draw(t, "disabled")},
		ui.TextInput{ID: id(), Label: str("label"), Value: str("value"), Placeholder: str("placeholder")},
		ui.PasswordField{ID: id(), Label: str("label"), Value: str("value"), Placeholder: str("placeholder")},
		ui.TextArea{ID: id(), Label: str("label"), Value: str("value"), Placeholder: str("placeholder")},
		ui.Checkbox{ID: id(), Label: str("label"), Checked: rapid.Bool().Draw(t, "checked")},
		ui.SelectList{ID: id(), Label: str("label"), Options: strs("option"), Selected: rapid.IntRange(-1, 4).Draw(t, "selected")},
		ui.Tabs{ID: id(), Tabs: strs("tab"), Active: rapid.IntRange(-1, 4).Draw(t, "active")},
		ui.Menu{ID: id(), Items: menuItems},
		ui.Table{ID: id(), Columns: cols, Rows: rows, Selected: rapid.IntRange(-1, 4).Draw(t, "row"), SortColumn: sortCol, SortDirection: ui.SortDesc},
		ui.Tree{ID: id(), Nodes: treeNodes, Selected: treeNodes[0].Children[0].ID},
		ui.Viewport{ID: id(), Title: str("title"), Lines: strs("line")},
		ui.Scrubber{ID: id(), Label: str("label"), Min: 0, Max: 10, Position: 3},
		ui.BarChart{ID: id(), Title: str("title"), Bars: []ui.Bar{{Label: str("bar"), Value: 2}, {Label: str("bar"), Value: 5}}},
		ui.LineChart{ID: id(), Title: str("title"), Series: []ui.Series{{Name: str("series"), Values: []float64{1, 3, 2}}}},
		ui.ScatterChart{ID: id(), Title: str("title"), Series: []ui.ScatterSeries{{Name: str("series"), Points: []ui.Point{{X: 1, Y: 2}}}}},
		custom{ID: id(), Label: str("label"), Drawn: str("drawn")},
		custom{ID: id(), Label: str("label"), Drawn: str("drawn"), Secret: true},
	}
	items := []ui.Node{txt()}
	for _, w := range widgets {
		items = append(items, ui.Box{Title: str("box"), Child: ui.Fill{Child: w}}, txt())
	}
	items = append(items, ui.Modal{ID: id(), Title: str("title"), Body: ui.Text{Text: str("body")}, Visible: rapid.Bool().Draw(t, "visible"),
		ConfirmLabel: str("confirm"), DismissLabel: str("dismiss")})
	tr.root = ui.Column{Items: []ui.Node{ui.Row{Items: items[:3]}, ui.Column{Items: items[3:], Gap: 1}}}
	return tr
}

// twin is an injective rewriting of cleaned text with none of HTML's
// special characters: the tree built from it must render to the same
// elements and attributes as the one built from the original text.
func twin(s string) string {
	return strings.NewReplacer("\uE000", "\uE000f", "<", "\uE000a", ">", "\uE000b", "&", "\uE000c", `"`, "\uE000d", "'", "\uE000e").Replace(clean(s))
}

// allowedTags are the elements this package writes.
var allowedTags = map[string]bool{
	"root": true, "div": true, "section": true, "h2": true, "h3": true, "p": true, "button": true, "label": true,
	"input": true, "textarea": true, "ul": true, "li": true, "span": true, "table": true, "thead": true, "tbody": true,
	"tr": true, "th": true, "td": true, "pre": true, "dialog": true, "figure": true, "figcaption": true, "dl": true,
	"dt": true, "dd": true,
}

// equalityDependent are attributes whose presence or value depends on two
// texts being equal (a selection, a sort column, the focus), which twin
// may not keep for texts that clean to the same.
var equalityDependent = map[string]bool{"aria-sort": true, "data-focused": true, "aria-current": true, "aria-selected": true, "tabindex": true}

// textAttrs are attributes whose value is app text (or made from it).
var textAttrs = map[string]bool{
	"id": true, "data-id": true, "for": true, "aria-labelledby": true, "aria-label": true, "value": true, "placeholder": true,
	"data-item": true, "data-node": true, "data-key": true, "aria-activedescendant": true,
}

// shape is the elements of out: each tag with its attributes, the values
// of those that are not app text.
func shape(t *rapid.T, out []byte) []string {
	root := parse(t, out)
	var s []string
	for _, el := range elements(root, func(*html.Node) bool { return true }) {
		var as []string
		for _, a := range el.Attr {
			switch {
			case equalityDependent[a.Key]:
			case textAttrs[a.Key]:
				as = append(as, a.Key)
			default:
				as = append(as, a.Key+"="+a.Val)
			}
		}
		sort.Strings(as)
		s = append(s, el.Data+" "+strings.Join(as, " "))
	}
	return s
}

// unsafeRune reports whether r must never reach the page: a control
// character (but newline and tab) or a bidirectional override.
func unsafeRune(r rune) bool { return dropped(r) }

func TestArbitraryTextNeverMakesMarkup(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		orig := genTree(t)
		focus := ""
		if len(orig.ids) > 0 {
			focus = orig.ids[rapid.IntRange(0, len(orig.ids)-1).Draw(t, "focus")]
		}
		out := Render(orig.root, Options{Focus: focus})

		// The same tree with safe text: the same elements.
		safe := mapTree(orig.root, twin)
		want := shape(t, Render(safe, Options{Focus: twin(focus)}))
		got := shape(t, out)
		if len(got) != len(want) {
			t.Fatalf("%d elements, want %d:\n%s", len(got), len(want), diff(got, want))
		}
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("element %d is %q, want %q:\n%s", k, got[k], want[k], out)
			}
		}

		if bytes.IndexByte(out, 0x1b) >= 0 {
			t.Fatal("an escape character reached the page")
		}
		root := parse(t, out)
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			switch n.Type {
			case html.TextNode:
				if strings.IndexFunc(n.Data, unsafeRune) >= 0 {
					t.Fatalf("text %q holds a control character", n.Data)
				}
			case html.ElementNode:
				if !allowedTags[n.Data] {
					t.Fatalf("element <%s> was not generated", n.Data)
				}
				for _, a := range n.Attr {
					if strings.HasPrefix(a.Key, "on") || a.Key == "style" || a.Key == "src" || a.Key == "href" {
						t.Fatalf("attribute %s on <%s>", a.Key, n.Data)
					}
					if strings.IndexFunc(a.Val, unsafeRune) >= 0 {
						t.Fatalf("attribute %s=%q holds a control character", a.Key, a.Val)
					}
				}
			case html.CommentNode:
				t.Fatalf("a comment %q", n.Data)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(root)

		// Text nodes say what the app said, cleaned.
		var ps []string
		for _, p := range elements(root, func(n *html.Node) bool {
			return n.Data == "p" && strings.HasPrefix(attrValue(n, "class"), "raxol-text") && attrValue(n.Parent, "class") != "raxol-modal-body"
		}) {
			ps = append(ps, textOfRaw(p))
		}
		if len(ps) != len(orig.texts) {
			t.Fatalf("%d texts, want %d", len(ps), len(orig.texts))
		}
		for k, s := range orig.texts {
			if ps[k] != clean(s) {
				t.Fatalf("text %d is %q, want %q", k, ps[k], clean(s))
			}
		}
	})
}

// mapTree returns n with every text in it rewritten by f.
func mapTree(n ui.Node, f func(string) string) ui.Node {
	strs := func(in []string) []string {
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = f(s)
		}
		return out
	}
	nodes := func(in []ui.Node) []ui.Node {
		out := make([]ui.Node, len(in))
		for i, c := range in {
			out[i] = mapTree(c, f)
		}
		return out
	}
	var menu func([]ui.MenuItem) []ui.MenuItem
	menu = func(in []ui.MenuItem) []ui.MenuItem {
		out := make([]ui.MenuItem, len(in))
		for i, it := range in {
			out[i] = ui.MenuItem{ID: f(it.ID), Label: f(it.Label), Disabled: it.Disabled, Children: menu(it.Children)}
		}
		return out
	}
	var treeNodes func([]ui.TreeNode) []ui.TreeNode
	treeNodes = func(in []ui.TreeNode) []ui.TreeNode {
		out := make([]ui.TreeNode, len(in))
		for i, n := range in {
			out[i] = ui.TreeNode{ID: f(n.ID), Label: f(n.Label), Expanded: n.Expanded, Children: treeNodes(n.Children)}
		}
		return out
	}
	switch n := n.(type) {
	case ui.Column:
		n.Items = nodes(n.Items)
		return n
	case ui.Row:
		n.Items = nodes(n.Items)
		return n
	case ui.Box:
		n.Title, n.Child = f(n.Title), mapTree(n.Child, f)
		return n
	case ui.Fill:
		n.Child = mapTree(n.Child, f)
		return n
	case ui.Text:
		n.Text = f(n.Text)
		return n
	case ui.Button:
		n.ID, n.Label = f(n.ID), f(n.Label)
		return n
	case ui.TextInput:
		n.ID, n.Label, n.Value, n.Placeholder = f(n.ID), f(n.Label), f(n.Value), f(n.Placeholder)
		return n
	case ui.PasswordField:
		n.ID, n.Label, n.Value, n.Placeholder = f(n.ID), f(n.Label), f(n.Value), f(n.Placeholder)
		return n
	case ui.TextArea:
		n.ID, n.Label, n.Value, n.Placeholder = f(n.ID), f(n.Label), f(n.Value), f(n.Placeholder)
		return n
	case ui.Checkbox:
		n.ID, n.Label = f(n.ID), f(n.Label)
		return n
	case ui.SelectList:
		n.ID, n.Label, n.Options = f(n.ID), f(n.Label), strs(n.Options)
		return n
	case ui.Tabs:
		n.ID, n.Tabs = f(n.ID), strs(n.Tabs)
		return n
	case ui.Menu:
		n.ID, n.Items = f(n.ID), menu(n.Items)
		return n
	case ui.Table:
		cols := make([]ui.TableColumn, len(n.Columns))
		for i, c := range n.Columns {
			cols[i] = ui.TableColumn{Key: f(c.Key), Title: f(c.Title), Width: c.Width}
		}
		rows := make([][]string, len(n.Rows))
		for i, r := range n.Rows {
			rows[i] = strs(r)
		}
		n.ID, n.Columns, n.Rows, n.SortColumn = f(n.ID), cols, rows, f(n.SortColumn)
		return n
	case ui.Tree:
		n.ID, n.Nodes, n.Selected = f(n.ID), treeNodes(n.Nodes), f(n.Selected)
		return n
	case ui.Viewport:
		n.ID, n.Title, n.Lines = f(n.ID), f(n.Title), strs(n.Lines)
		return n
	case ui.Scrubber:
		n.ID, n.Label = f(n.ID), f(n.Label)
		return n
	case ui.Modal:
		n.ID, n.Title, n.Body, n.ConfirmLabel, n.DismissLabel = f(n.ID), f(n.Title), mapTree(n.Body, f), f(n.ConfirmLabel), f(n.DismissLabel)
		return n
	case ui.BarChart:
		bars := make([]ui.Bar, len(n.Bars))
		for i, b := range n.Bars {
			bars[i] = ui.Bar{Label: f(b.Label), Value: b.Value}
		}
		n.ID, n.Title, n.Bars = f(n.ID), f(n.Title), bars
		return n
	case ui.LineChart:
		series := make([]ui.Series, len(n.Series))
		for i, s := range n.Series {
			series[i] = ui.Series{Name: f(s.Name), Values: s.Values}
		}
		n.ID, n.Title, n.Series = f(n.ID), f(n.Title), series
		return n
	case ui.ScatterChart:
		series := make([]ui.ScatterSeries, len(n.Series))
		for i, s := range n.Series {
			series[i] = ui.ScatterSeries{Name: f(s.Name), Points: s.Points}
		}
		n.ID, n.Title, n.Series = f(n.ID), f(n.Title), series
		return n
	case custom:
		n.ID, n.Label, n.Drawn = f(n.ID), f(n.Label), f(n.Drawn)
		return n
	}
	panic(fmt.Sprintf("mapTree: %T", n))
}

func textOfRaw(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func diff(got, want []string) string {
	var b strings.Builder
	for k := 0; k < max(len(got), len(want)); k++ {
		g, w := "", ""
		if k < len(got) {
			g = got[k]
		}
		if k < len(want) {
			w = want[k]
		}
		mark := " "
		if g != w {
			mark = "!"
		}
		fmt.Fprintf(&b, "%s %q | %q\n", mark, g, w)
	}
	return b.String()
}
