package web

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/net/html"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

func TestEscapesAndStripsExample(t *testing.T) {
	const evil = "<script>alert('x')</script> \"q\" & \x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07\x00"
	view := ui.Column{Items: []ui.Node{
		ui.Text{Text: evil},
		ui.Box{Title: evil, Child: ui.Button{ID: `b"><script>`, Label: evil}},
		ui.TextInput{ID: "in", Label: evil, Value: evil},
		ui.TextArea{ID: "ta", Label: evil, Value: "</textarea><script>x</script>"},
	}}
	out := Render(view, Options{})
	for _, bad := range []string{"<script", "\x1b", "\x00", "onerror"} {
		if bytes.Contains(bytes.ToLower(out), []byte(bad)) {
			t.Errorf("%q in %s", bad, out)
		}
	}
	root := parse(t, out)
	want := "<script>alert('x')</script> \"q\" & red link"
	if got := textOf(elements(root, tagged("p"))[0]); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if got := attrValue(elements(root, tagged("input"))[0], "value"); got != want {
		t.Errorf("value = %q, want %q", got, want)
	}
	if got := textOf(elements(root, tagged("textarea"))[0]); got != "</textarea><script>x</script>" {
		t.Errorf("textarea = %q", got)
	}
	b := byDataID(t, root, `b"><script>`)
	if b.Data != "button" || attrValue(b, "id") != "raxol-b_22_3e_3cscript_3e" {
		t.Errorf("button %s id %q", b.Data, attrValue(b, "id"))
	}
	if n := len(elements(root, tagged("script"))); n != 0 {
		t.Errorf("%d scripts", n)
	}
}

func TestDomIDIsInjectiveAndPlain(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"a", "a_b", "a-b", "a.b", "a__b", "a_5fb", "A", "é", strings.Repeat("x", 500), strings.Repeat("x", 501)} {
		d := domID(id)
		if prev, ok := seen[d]; ok {
			t.Errorf("%q and %q both give %q", prev, id, d)
		}
		seen[d] = id
		if strings.Trim(d, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_~") != "" || len(d) > 200 {
			t.Errorf("domID(%q) = %q", id, d)
		}
	}
}

func TestOutputIsBounded(t *testing.T) {
	rows := make([][]string, 100000)
	for i := range rows {
		rows[i] = []string{"row " + strconv.Itoa(i), strings.Repeat("x", 100)}
	}
	tbl := ui.Table{ID: "t", Columns: []ui.TableColumn{{Key: "a", Title: "A"}, {Key: "b", Title: "B"}}, Rows: rows, Selected: 99990}
	out := Render(tbl, Options{})
	if len(out) > 200<<10 {
		t.Errorf("a table of 100000 rows is %d bytes", len(out))
	}
	root := parse(t, out)
	trs := elements(elements(root, tagged("tbody"))[0], tagged("tr"))
	if len(trs) != DefaultMaxRows {
		t.Errorf("%d rows written, want %d", len(trs), DefaultMaxRows)
	}
	sel := elements(root, func(n *html.Node) bool { return attrIs(n, "aria-selected", "true") })
	if len(sel) != 1 || attrValue(sel[0], "data-index") != "99990" {
		t.Error("the selected row is not among the rows written")
	}
	if !strings.Contains(textOf(root), "99500 more rows not shown") {
		t.Error("no note of the rows left out")
	}

	// Many nodes: cut at MaxBytes, still well formed.
	items := make([]ui.Node, 100000)
	for i := range items {
		items[i] = ui.Text{Text: strings.Repeat("y", 1000)}
	}
	out = Render(ui.Column{Items: items}, Options{MaxBytes: 1 << 20})
	if len(out) > 1<<20+4096 {
		t.Errorf("%d bytes, bound 1 MiB", len(out))
	}
	if !bytes.HasSuffix(out, []byte(`The rest is too large to show.</p>`)) || !bytes.Contains(out, []byte("</div>")) {
		t.Errorf("no note at the end: %s", out[len(out)-200:])
	}
	sameTree(t, out)

	// Deep nesting stops.
	var deep ui.Node = ui.Text{Text: "bottom"}
	for range 100000 {
		deep = ui.Column{Items: []ui.Node{deep}}
	}
	out = Render(deep, Options{})
	if len(out) > 10<<10 || !bytes.Contains(out, []byte("Nested too deeply")) {
		t.Errorf("deep tree: %d bytes", len(out))
	}
	sameTree(t, out)
}

// panicky is an app-defined widget whose Render panics.
type panicky struct{ custom }

func (panicky) Render(ui.RenderContext) string { panic("boom") }

// badID is an app-defined widget whose WidgetID panics.
type badID struct{ custom }

func (badID) WidgetID() string { panic("boom") }

func TestAppDefinedWidgets(t *testing.T) {
	view := ui.Column{Items: []ui.Node{
		custom{ID: "mine", Label: "Mine", Drawn: "\x1b[1mhello <b>\x1b[0m"},
		custom{ID: "secret", Label: "Key", Drawn: "••••", Secret: true},
		ui.Box{Title: "Boxed", Child: custom{ID: "boxed", Drawn: "x"}},
		panicky{custom{ID: "bad"}},
		badID{},
		ui.Button{ID: "after", Label: "After"},
	}}
	out := Render(view, Options{Focus: "mine"})
	root := parse(t, out)
	mine := byDataID(t, root, "mine")
	if role(mine) != "group" || attrValue(mine, "aria-label") != "Mine" || !attrIs(mine, "data-focused", "true") {
		t.Errorf("mine: role %q, name %q", role(mine), attrValue(mine, "aria-label"))
	}
	if got := textOf(elements(mine, tagged("pre"))[0]); !strings.Contains(got, "hello <b>") {
		t.Errorf("drawn = %q", got)
	}
	if dts := elements(mine, tagged("dt")); len(dts) != 3 {
		t.Errorf("%d state entries, want 3 (drawn, label, n)", len(dts))
	}
	if dl := elements(byDataID(t, root, "secret"), tagged("dl")); len(dl) != 0 {
		t.Error("a widget holding a secret shows its state")
	}
	if got := attrValue(byDataID(t, root, "boxed"), "aria-label"); got != "Boxed" {
		t.Errorf("a widget in a box is named %q", got)
	}
	if !strings.Contains(textOf(byDataID(t, root, "bad")), "failed") {
		t.Error("no placeholder for the widget whose Render panicked")
	}
	if !strings.Contains(textOf(root), "could not be shown") {
		t.Error("no placeholder for the widget whose WidgetID panicked")
	}
	byDataID(t, root, "after")
}

// program is a hosted program's root: its screen and its components.
type program struct {
	screen string
	comps  []ui.Node
}

func (p program) Children() []ui.Node                            { return p.comps }
func (p program) Focused() string                                { return "" }
func (p program) WidgetID() string                               { return "program" }
func (p program) Focusable() bool                                { return false }
func (p program) Render(ui.RenderContext) string                 { return p.screen }
func (p program) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg { return nil }

func TestHostedProgram(t *testing.T) {
	p := program{
		screen: "\x1b[7m Pick one \x1b[0m\n> \x1b[1;38;5;203mapples\x1b[22;39m\n  pears <&>\x1b]8;;http://evil\x07",
		comps:  []ui.Node{ui.TextInput{ID: "filter", Label: "Filter", Value: "ap"}, custom{ID: "list", Label: "list", Drawn: "apples"}},
	}
	out := Render(p, Options{})
	root := parse(t, out)
	el := byDataID(t, root, "program")
	pres := elements(el, tagged("pre"))
	if len(pres) == 0 || textOfAll(pres[0]) != " Pick one \n> apples\n  pears <&>" {
		t.Fatalf("screen = %q", textOfAll(pres[0]))
	}
	// The screen's styles are classes of spans: reverse video, bold in
	// colour 203; the hyperlink's escape is gone.
	for _, want := range []string{`<span class="f256 b257"> Pick one </span>`, `<span class="f203 rx-bold">apples</span>`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the screen lacks %s:\n%s", want, out)
		}
	}
	if bytes.Contains(out, []byte("evil")) || bytes.Contains(out, []byte("\x1b")) {
		t.Errorf("an escape sequence got through:\n%s", out)
	}
	in := elements(byDataID(t, root, "filter"), tagged("input"))
	if len(in) != 1 || attrValue(in[0], "value") != "ap" {
		t.Error("the component is not an input beside the screen")
	}
	byDataID(t, root, "list")
	one, ok := RenderWidget(p, "filter", Options{})
	if !ok || !bytes.Contains(out, one) {
		t.Errorf("RenderWidget(filter) = %s", one)
	}
}

func TestDisabledAndFocus(t *testing.T) {
	view := ui.Column{Items: []ui.Node{
		ui.Button{ID: "b", Label: "Go", Disabled: true},
		ui.TextInput{ID: "i", Label: "In", Disabled: true},
		ui.Checkbox{ID: "c", Label: "C", Checked: true, Disabled: true},
		ui.SelectList{ID: "s", Options: []string{"a"}, Disabled: true},
	}}
	root := parse(t, Render(view, Options{Focus: "c"}))
	if _, ok := attr(byDataID(t, root, "b"), "disabled"); !ok {
		t.Error("button not disabled")
	}
	if _, ok := attr(elements(byDataID(t, root, "i"), tagged("input"))[0], "disabled"); !ok {
		t.Error("input not disabled")
	}
	cb := elements(byDataID(t, root, "c"), tagged("input"))[0]
	if _, ok := attr(cb, "checked"); !ok {
		t.Error("checkbox not checked")
	}
	if !attrIs(elements(byDataID(t, root, "s"), tagged("ul"))[0], "aria-disabled", "true") {
		t.Error("listbox not aria-disabled")
	}
	if !attrIs(byDataID(t, root, "c"), "aria-current", "true") {
		t.Error("focus not marked")
	}
	if _, ok := RenderWidget(view, "nope", Options{}); ok {
		t.Error("RenderWidget found a widget that is not there")
	}
}

func TestPointerWidgets(t *testing.T) {
	view := ui.Column{Items: []ui.Node{
		&ui.Button{ID: "b", Label: "Go"},
		&ui.Modal{ID: "m", Title: "Sure?", Visible: true, Body: &ui.Checkbox{ID: "c", Label: "Really"}},
		(*ui.Table)(nil),
	}}
	out := Render(view, Options{})
	root := parse(t, out)
	if el := byDataID(t, root, "b"); el.Data != "button" {
		t.Errorf("a *ui.Button is a <%s>", el.Data)
	}
	if el := byDataID(t, root, "m"); el.Data != "dialog" {
		t.Errorf("a *ui.Modal is a <%s>", el.Data)
	}
	if one, ok := RenderWidget(view, "c", Options{}); !ok || !bytes.Contains(out, one) {
		t.Error("the checkbox in a *ui.Modal is not found")
	}
}

// textOfAll is the text of n and everything in it, as it is (not trimmed).
func textOfAll(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
