package teaapp

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/bubbles/v2/filepicker"
	"charm.land/bubbles/v2/list"
	"charm.land/bubbles/v2/paginator"
	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/table"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// cstep folds msg with the model's own Update and drops its command, as
// the tests' stand-in for the host's step.
func cstep(m tea.Model, msg tea.Msg) tea.Model {
	n, _ := m.Update(msg)
	return n
}

// countingStep is cstep that counts the messages folded.
func countingStep(n *int) stepFunc {
	return func(m tea.Model, msg tea.Msg) tea.Model {
		*n++
		return cstep(m, msg)
	}
}

// ----- test programs -----

// formModel is a value model holding inputs in an unexported slice, the
// way Bubble Tea's textinputs example does: keys go to the focused one.
type formModel struct {
	inputs []textinput.Model
	focus  int
}

func newForm(n int) formModel {
	f := formModel{}
	for i := range n {
		ti := textinput.New()
		ti.Placeholder = fmt.Sprintf("field %d", i)
		ti.Prompt = fmt.Sprintf("F%d> ", i)
		if i == n-1 && n > 1 {
			ti.EchoMode = textinput.EchoPassword
			ti.Prompt = "Password> "
		}
		f.inputs = append(f.inputs, ti)
	}
	f.inputs[0].Focus()
	return f
}

func (f formModel) Init() tea.Cmd { return nil }

func (f formModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "tab" {
		f.inputs[f.focus].Blur()
		f.focus = (f.focus + 1) % len(f.inputs)
		f.inputs[f.focus].Focus()
		return f, nil
	}
	var cmd tea.Cmd
	f.inputs[f.focus], cmd = f.inputs[f.focus].Update(msg)
	return f, cmd
}

func (f formModel) View() tea.View {
	var b strings.Builder
	for _, in := range f.inputs {
		b.WriteString(in.View() + "\n")
	}
	return tea.NewView(b.String())
}

// screenOf is the model's view as plain text, as the host gives it.
func screenOf(m tea.Model) string { return ansi.Strip(m.View().Content) }

// fruit is a list item whose FilterValue is empty: its label is what the
// delegate draws.
type fruit string

func (fruit) FilterValue() string { return "" }

// fruitDelegate draws "> 1. name" for the selected item, "  1. name"
// for others, like Bubble Tea's list-simple example.
type fruitDelegate struct{}

func (fruitDelegate) Height() int                             { return 1 }
func (fruitDelegate) Spacing() int                            { return 0 }
func (fruitDelegate) Update(_ tea.Msg, _ *list.Model) tea.Cmd { return nil }
func (fruitDelegate) Render(w io.Writer, m list.Model, i int, it list.Item) {
	s := fmt.Sprintf("%d. %s", i+1, it.(fruit))
	if i == m.Index() {
		s = "> " + s
	} else {
		s = "  " + s
	}
	fmt.Fprint(w, s)
}

// listModel is a pointer model with a list; ignore makes its Update
// drop every key.
type listModel struct {
	list   list.Model
	chosen string
	ignore bool
}

func newListModel(n int) *listModel {
	items := make([]list.Item, n)
	for i := range items {
		items[i] = fruit(fmt.Sprintf("fruit%04d", i))
	}
	l := list.New(items, fruitDelegate{}, 40, 14)
	l.Title = "Fruits"
	return &listModel{list: l}
}

func (m *listModel) Init() tea.Cmd { return nil }

func (m *listModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if m.ignore {
			return m, nil
		}
		if k.String() == "enter" && !m.list.SettingFilter() {
			if it, ok := m.list.SelectedItem().(fruit); ok {
				m.chosen = string(it)
			}
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.list, cmd = m.list.Update(msg)
	return m, cmd
}

func (m *listModel) View() tea.View { return tea.NewView(m.list.View()) }

// ----- discover -----

// nested is a model with components in nested, embedded, pointer,
// interface, array and cyclic places.
type nested struct {
	Form struct {
		Email    textinput.Model
		URLInput textinput.Model
	}
	embedded
	child   tea.Model
	ptr     *textarea.Model
	nilPtr  *textinput.Model
	pages   [2]paginator.Model
	self    *nested
	skipped map[string]textinput.Model
	spin    spinner.Model
	bar     progress.Model
}

type embedded struct {
	Notes viewport.Model
}

func (n nested) Init() tea.Cmd                       { return nil }
func (n nested) Update(tea.Msg) (tea.Model, tea.Cmd) { return n, nil }
func (n nested) View() tea.View                      { return tea.NewView("") }

func names(fs []found) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name+":"+f.Kind)
	}
	return out
}

func TestDiscoverNamesByFieldPath(t *testing.T) {
	ta := textarea.New()
	n := &nested{child: newForm(2), ptr: &ta}
	n.self = n // a cycle
	got := names(discover(n, &config{}))
	want := []string{
		"form_email:textinput", "form_url_input:textinput", "notes:viewport",
		"child_inputs_0:textinput", "child_inputs_1:textinput", "ptr:textarea",
		"pages_0:paginator", "pages_1:paginator", "spin:spinner", "bar:progress",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("discover:\n got %v\nwant %v", got, want)
	}
}

func TestDiscoverValueModelAndOptions(t *testing.T) {
	cfg := &config{}
	for _, o := range []Option{Rename("inputs_0", "Email"), Exclude("inputs_1")} {
		o(cfg)
	}
	got := names(discover(newForm(3), cfg))
	want := []string{"email:textinput", "inputs_2:textinput"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("discover with options: got %v, want %v", got, want)
	}
}

// dup has two fields whose names sanitise alike.
type dup struct {
	A_b textinput.Model
	AB  textinput.Model
	Ab  textinput.Model
}

func (d dup) Init() tea.Cmd                       { return nil }
func (d dup) Update(tea.Msg) (tea.Model, tea.Cmd) { return d, nil }
func (d dup) View() tea.View                      { return tea.NewView("") }

func TestDiscoverUniqueNames(t *testing.T) {
	got := names(discover(dup{}, &config{}))
	want := []string{"a_b:textinput", "ab:textinput", "ab_2:textinput"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, s := range []struct{ in, want string }{
		{"CamelCase", "camel_case"}, {"URLInput", "url_input"}, {"inputs_12", "inputs_12"},
		{"_x", "x"}, {"0", "list_0"}, {"", "list"}, {"héllo wörld", "h_llo_w_rld"},
		{strings.Repeat("a", 80), strings.Repeat("a", 64)},
	} {
		if got := sanitizeName(s.in, "list"); got != s.want {
			t.Errorf("sanitizeName(%q) = %q, want %q", s.in, got, s.want)
		}
	}
}

// ----- textinput -----

func TestTypeIntoFocusedInputByKeys(t *testing.T) {
	m := tea.Model(newForm(3))
	comps := discover(m, &config{})
	var steps int
	next, res, err := apply(m, comps, applyMsg{Component: "inputs_0", Action: "type_into", Args: map[string]any{"text": "hi there"}}, countingStep(&steps), &config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.(formModel).inputs[0].Value(); got != "hi there" {
		t.Fatalf("value %q", got)
	}
	if steps != 8 {
		t.Fatalf("%d keys folded, want one per rune (8)", steps)
	}
	if r := res.(map[string]any); r["how"] != "typed" {
		t.Fatalf("result %v", r)
	}
	// Replacing: clear (2 keys) then type.
	steps = 0
	next, _, err = apply(next, comps, applyMsg{Component: "inputs_0", Action: "type_into", Args: map[string]any{"text": "x"}}, countingStep(&steps), &config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.(formModel).inputs[0].Value(); got != "x" || steps != 3 {
		t.Fatalf("value %q after %d keys", got, steps)
	}
	next, _, err = apply(next, comps, applyMsg{Component: "inputs_0", Action: "clear"}, cstep, &config{})
	if err != nil || next.(formModel).inputs[0].Value() != "" {
		t.Fatalf("clear: %v, %q", err, next.(formModel).inputs[0].Value())
	}
}

func TestTypeIntoUnfocusedInputUsesSetter(t *testing.T) {
	m := tea.Model(newForm(3))
	comps := discover(m, &config{})
	var steps int
	next, res, err := apply(m, comps, applyMsg{Component: "inputs_1", Action: "type_into", Args: map[string]any{"text": "bob"}}, countingStep(&steps), &config{})
	if err != nil {
		t.Fatal(err)
	}
	if steps != 0 || next.(formModel).inputs[1].Value() != "bob" {
		t.Fatalf("%d keys, value %q", steps, next.(formModel).inputs[1].Value())
	}
	if m.(formModel).inputs[1].Value() != "" {
		t.Fatal("the setter changed the value model the caller holds")
	}
	if !strings.HasPrefix(res.(map[string]any)["how"].(string), "set") {
		t.Fatalf("result %v", res)
	}
}

func TestTypeIntoRejectsControlCharacters(t *testing.T) {
	m := tea.Model(newForm(2))
	comps := discover(m, &config{})
	for _, s := range []string{"a\x1b[2Jb", "a\nb", "a\tb"} {
		next, _, err := apply(m, comps, applyMsg{Component: "inputs_0", Action: "type_into", Args: map[string]any{"text": s}}, cstep, &config{})
		if err == nil {
			t.Fatalf("%q accepted", s)
		}
		if next.(formModel).inputs[0].Value() != "" {
			t.Fatal("model changed")
		}
	}
	ws := componentWidgets(m, comps, screenOf(m), nil, &config{})
	if _, _, err := ws[0].(ui.ToolProvider).CallTool("type_into", map[string]any{"text": "\x1b"}); err == nil {
		t.Fatal("CallTool accepted ESC")
	}
}

// deaf passes no key to its input.
type deaf struct{ in textinput.Model }

func (d deaf) Init() tea.Cmd                       { return nil }
func (d deaf) Update(tea.Msg) (tea.Model, tea.Cmd) { return d, nil }
func (d deaf) View() tea.View                      { return tea.NewView(d.in.View()) }

func TestIgnoredKeysAreAnError(t *testing.T) {
	d := deaf{in: textinput.New()}
	d.in.Focus()
	m := tea.Model(d)
	_, _, err := apply(m, discover(m, &config{}), applyMsg{Component: "in", Action: "type_into", Args: map[string]any{"text": "hello"}}, cstep, &config{})
	if err == nil || !strings.Contains(err.Error(), "did not pass the keys to in") {
		t.Fatalf("err = %v", err)
	}
}

func TestPasswordNeverReturned(t *testing.T) {
	const secret = "hunter2"
	f := newForm(2) // inputs_1 is a password
	f.inputs[0].Blur()
	f.inputs[1].Focus()
	f.focus = 1
	m := tea.Model(f)
	cfg := &config{}
	comps := discover(m, cfg)
	next, res, err := apply(m, comps, applyMsg{Component: "inputs_1", Action: "type_into", Args: map[string]any{"text": secret}}, cstep, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if next.(formModel).inputs[1].Value() != secret {
		t.Fatal("not typed")
	}
	ws := componentWidgets(next, comps, screenOf(next), nil, cfg)
	var pw ui.ToolProvider
	for _, w := range ws {
		if w.WidgetID() == "inputs_1" {
			pw = w.(ui.ToolProvider)
		}
	}
	if pw == nil {
		t.Fatalf("no widget for the password input among %d", len(ws))
	}
	for _, s := range pw.Tools() {
		if s.Annotations["sensitive"] != true {
			t.Errorf("tool %s not sensitive", s.Action)
		}
	}
	got, _, _ := pw.CallTool("get_value", nil)
	all := []any{res, pw.State(), got}
	// A mismatch error must not carry it either.
	badLimit := next.(formModel)
	badLimit.inputs[1].CharLimit = 3
	_, _, err = apply(badLimit, comps, applyMsg{Component: "inputs_1", Action: "type_into", Args: map[string]any{"text": secret}}, cstep, cfg)
	if err == nil {
		t.Fatal("a char limit cutting the text is not an error")
	}
	all = append(all, err.Error())
	for _, v := range all {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), secret) || strings.Contains(string(b), "hun") {
			t.Fatalf("password leaked: %s", b)
		}
	}
	if !strings.Contains(fmt.Sprint(pw.State()), "length:7") {
		t.Fatalf("state %v", pw.State())
	}
}

// ----- widgets -----

func TestWidgetsOnlyForComponentsOnScreen(t *testing.T) {
	m := tea.Model(newForm(3))
	comps := discover(m, &config{})
	screen := screenOf(m)
	if n := len(componentWidgets(m, comps, screen, nil, &config{})); n != 3 {
		t.Fatalf("%d widgets, want 3", n)
	}
	// Only the first input's line on screen.
	first := strings.Split(screen, "\n")[0]
	ws := componentWidgets(m, comps, first, nil, &config{})
	if len(ws) != 1 || ws[0].WidgetID() != "inputs_0" {
		t.Fatalf("widgets %v", ws)
	}
	w := ws[0]
	if w.Focusable() || w.Render(ui.RenderContext{}) != "" || w.HandleEvent(nil, nil) != nil || w.Children() != nil {
		t.Fatal("a component widget draws, takes focus or events")
	}
}

func TestSameStateSameWidget(t *testing.T) {
	m := newListModel(30)
	comps := discover(m, &config{})
	a := componentWidgets(m, comps, screenOf(m), nil, &config{})
	if len(a) != 1 {
		t.Fatalf("%d widgets", len(a))
	}
	prev := map[string]ui.Widget{"list": a[0]}
	b := componentWidgets(m, comps, screenOf(m), prev, &config{})
	if !a[0].(ui.Comparer).SameAs(b[0]) {
		t.Fatal("same state, not SameAs")
	}
	m.list.CursorDown()
	c := componentWidgets(m, comps, screenOf(m), prev, &config{})
	if a[0].(ui.Comparer).SameAs(c[0]) {
		t.Fatal("moved selection, still SameAs")
	}
	if got := c[0].(ui.ToolProvider).State().(map[string]any)["selected"]; got != "2. fruit0001" {
		t.Fatalf("selected label %q", got)
	}
}

// ----- list -----

func TestListSelectByKeysAndLabel(t *testing.T) {
	m := newListModel(30)
	comps := discover(m, &config{})
	var steps int
	next, res, err := apply(m, comps, applyMsg{Component: "list", Action: "select", Args: map[string]any{"index": float64(12)}}, countingStep(&steps), &config{})
	if err != nil {
		t.Fatal(err)
	}
	if next.(*listModel).list.Index() != 12 || steps != 12 {
		t.Fatalf("index %d after %d keys", next.(*listModel).list.Index(), steps)
	}
	if r := res.(map[string]any); r["label"] != "13. fruit0012" || r["how"] != "keys" {
		t.Fatalf("result %v", r)
	}
	_, res, err = apply(next, comps, applyMsg{Component: "list", Action: "activate", Args: map[string]any{"label": "fruit0003"}}, cstep, &config{})
	if err != nil {
		t.Fatal(err)
	}
	if m.chosen != "fruit0003" || m.list.Index() != 3 {
		t.Fatalf("chose %q at %d (%v)", m.chosen, m.list.Index(), res)
	}
}

func TestListOutOfRangeLeavesModel(t *testing.T) {
	m := newListModel(5)
	comps := discover(m, &config{})
	for _, args := range []map[string]any{{"index": float64(5)}, {"index": float64(-1)}, {"label": "kiwi"}, {"index": 1.5}} {
		_, _, err := apply(m, comps, applyMsg{Component: "list", Action: "select", Args: args}, cstep, &config{})
		if err == nil {
			t.Fatalf("%v accepted", args)
		}
		if m.list.Index() != 0 {
			t.Fatal("model changed")
		}
	}
}

func TestListIgnoringKeysIsAnError(t *testing.T) {
	m := newListModel(10)
	m.ignore = true
	_, _, err := apply(m, discover(m, &config{}), applyMsg{Component: "list", Action: "select", Args: map[string]any{"index": float64(4)}}, cstep, &config{})
	if err == nil || !strings.Contains(err.Error(), "the program did not pass the keys to list: its Update ignored them") {
		t.Fatalf("err = %v", err)
	}
}

func TestHugeListUsesSetter(t *testing.T) {
	m := newListModel(5000)
	m.ignore = true // the setter does not need the program's Update
	comps := discover(m, &config{})
	var steps int
	_, res, err := apply(m, comps, applyMsg{Component: "list", Action: "select", Args: map[string]any{"index": float64(4321)}}, countingStep(&steps), &config{})
	if err != nil {
		t.Fatal(err)
	}
	if m.list.Index() != 4321 || steps != 0 {
		t.Fatalf("index %d, %d keys", m.list.Index(), steps)
	}
	if !strings.HasPrefix(res.(map[string]any)["how"].(string), "set") {
		t.Fatalf("result %v", res)
	}
	ws := componentWidgets(m, comps, screenOf(m), nil, &config{})
	if len(ws) != 1 {
		t.Fatalf("%d widgets", len(ws))
	}
	tp := ws[0].(ui.ToolProvider)
	got, _, err := tp.CallTool("get_options", map[string]any{"offset": float64(4320), "limit": float64(2)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if !strings.Contains(string(b), `"label":"4322. fruit4321"`) || !strings.Contains(string(b), `"count":5000`) {
		t.Fatalf("get_options %s", b)
	}
	if _, _, err := tp.CallTool("get_options", map[string]any{"offset": float64(0)}); err == nil {
		t.Fatal("get_options far from the copied window answered")
	}
}

func TestListFilterAndWrites(t *testing.T) {
	m := newListModel(20)
	comps := discover(m, &config{})
	ws := componentWidgets(m, comps, screenOf(m), nil, &config{})
	tp := ws[0].(ui.ToolProvider)
	var actions []string
	for _, s := range tp.Tools() {
		actions = append(actions, s.Action)
	}
	if strings.Join(actions, ",") != "select,activate,get_options,get_selected,filter" {
		t.Fatalf("tools %v", actions)
	}
	out, msgs, err := tp.CallTool("select", map[string]any{"index": float64(2)})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("CallTool: %v %v", msgs, err)
	}
	am := msgs[0].(applyMsg)
	if am.Component != "list" || am.Action != "select" || am.Outcome != out {
		t.Fatalf("applyMsg %+v", am)
	}
	next, _, err := apply(m, comps, applyMsg{Component: "list", Action: "filter", Args: map[string]any{"text": "fru"}}, cstep, &config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.(*listModel).list.FilterValue(); got != "fru" {
		t.Fatalf("filter %q", got)
	}
}

// ----- table, viewport, paginator -----

type tableModel struct {
	t  table.Model
	vp viewport.Model
	p  paginator.Model
}

func newTableModel(focused bool) tableModel {
	var rows []table.Row
	for i := range 40 {
		rows = append(rows, table.Row{fmt.Sprint(i), fmt.Sprintf("city%d", i)})
	}
	t := table.New(table.WithColumns([]table.Column{{Title: "Rank", Width: 6}, {Title: "City", Width: 10}}),
		table.WithRows(rows), table.WithFocused(focused), table.WithHeight(8))
	vp := viewport.New(viewport.WithWidth(20), viewport.WithHeight(5))
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	vp.SetContent(strings.Join(lines, "\n"))
	p := paginator.New(paginator.WithTotalPages(6))
	return tableModel{t: t, vp: vp, p: p}
}

func (m tableModel) Init() tea.Cmd { return nil }

func (m tableModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.t, _ = m.t.Update(msg)
	m.vp, _ = m.vp.Update(msg)
	m.p, _ = m.p.Update(msg)
	return m, nil
}

func (m tableModel) View() tea.View {
	return tea.NewView(m.t.View() + "\n" + m.vp.View() + "\n" + m.p.View())
}

func TestTableViewportPaginator(t *testing.T) {
	m := tea.Model(newTableModel(true))
	comps := discover(m, &config{})
	if got := strings.Join(names(comps), " "); got != "t:table vp:viewport p:paginator" {
		t.Fatalf("discover %s", got)
	}
	if f := focusedComponent(m, comps); f != "t" {
		t.Fatalf("focused %q", f)
	}
	next, _, err := apply(m, comps, applyMsg{Component: "t", Action: "select_row", Args: map[string]any{"index": float64(7)}}, cstep, &config{})
	if err != nil {
		t.Fatal(err)
	}
	if next.(tableModel).t.Cursor() != 7 {
		t.Fatalf("cursor %d", next.(tableModel).t.Cursor())
	}
	if _, _, err := apply(next, comps, applyMsg{Component: "t", Action: "select_row", Args: map[string]any{"index": float64(40)}}, cstep, &config{}); err == nil {
		t.Fatal("row 40 of 40 accepted")
	}
	// The table moved the viewport too (both take up/down): scroll is
	// checked against where the viewport is now.
	next, res, err := apply(next, comps, applyMsg{Component: "vp", Action: "scroll", Args: map[string]any{"line": float64(20)}}, cstep, &config{})
	if err != nil {
		t.Fatal(err)
	}
	vp := next.(tableModel).vp
	if vp.YOffset() != 20 {
		t.Fatalf("y offset %d (%v)", vp.YOffset(), res)
	}
	next, _, err = apply(next, comps, applyMsg{Component: "vp", Action: "scroll_by", Args: map[string]any{"lines": float64(1000)}}, cstep, &config{})
	if err != nil {
		t.Fatal(err)
	}
	vp = next.(tableModel).vp
	if vp.YOffset() != 45 {
		t.Fatalf("scroll_by to the end: %d", vp.YOffset())
	}
	if _, _, err := apply(next, comps, applyMsg{Component: "vp", Action: "scroll", Args: map[string]any{"line": float64(46)}}, cstep, &config{}); err == nil {
		t.Fatal("line past the end accepted")
	}
	next, _, err = apply(next, comps, applyMsg{Component: "p", Action: "go_to_page", Args: map[string]any{"page": float64(4)}}, cstep, &config{})
	if err != nil || next.(tableModel).p.Page != 4 {
		t.Fatalf("page: %v", err)
	}
	ws := componentWidgets(next, comps, screenOf(next), nil, &config{})
	if len(ws) != 3 {
		t.Fatalf("%d widgets", len(ws))
	}
	rows, _, err := ws[0].(ui.ToolProvider).CallTool("get_rows", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rows)
	if !strings.Contains(string(b), `"columns":["Rank","City"]`) || !strings.Contains(string(b), `["7","city7"]`) {
		t.Fatalf("get_rows %s", b)
	}
}

func TestUnfocusedTableUsesSetter(t *testing.T) {
	m := tea.Model(newTableModel(false))
	comps := discover(m, &config{})
	var steps int
	next, _, err := apply(m, comps, applyMsg{Component: "t", Action: "select_row", Args: map[string]any{"index": float64(3)}}, countingStep(&steps), &config{})
	if err != nil || next.(tableModel).t.Cursor() != 3 || steps != 0 {
		t.Fatalf("err %v, cursor %d, %d keys", err, next.(tableModel).t.Cursor(), steps)
	}
}

// ----- textarea -----

type editor struct{ ta textarea.Model }

func (e editor) Init() tea.Cmd { return nil }
func (e editor) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	e.ta, _ = e.ta.Update(msg)
	return e, nil
}
func (e editor) View() tea.View { return tea.NewView(e.ta.View()) }

func TestTextareaTypesLines(t *testing.T) {
	ta := textarea.New()
	ta.Focus()
	ta.SetValue("old\ntext\nhere")
	m := tea.Model(editor{ta: ta})
	comps := discover(m, &config{})
	next, _, err := apply(m, comps, applyMsg{Component: "ta", Action: "type_into", Args: map[string]any{"text": "one\r\ntwo"}}, cstep, &config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.(editor).ta.Value(); got != "one\ntwo" {
		t.Fatalf("value %q", got)
	}
}

// ----- extra actions, keys -----

type doneMsg struct{}

func TestWithActionRunsItsCommand(t *testing.T) {
	cfg := &config{}
	WithAction("inputs_0", ui.ToolSpec{Action: "shout", Description: "Upper-case the input.", ReadOnly: true},
		func(m tea.Model, args map[string]any) (tea.Model, tea.Cmd, any, error) {
			f := m.(formModel)
			f.inputs[0].SetValue(strings.ToUpper(f.inputs[0].Value()))
			return f, func() tea.Msg { return doneMsg{} }, "ok", nil
		})(cfg)
	f := newForm(1)
	f.inputs[0].SetValue("hey")
	m := tea.Model(f)
	comps := discover(m, cfg)
	ws := componentWidgets(m, comps, screenOf(m), nil, cfg)
	spec, ok := ws[0].(compWidget).spec("shout")
	if !ok || spec.ReadOnly {
		t.Fatalf("extra action %+v", spec)
	}
	var cmd tea.Cmd
	step := func(m tea.Model, msg tea.Msg) tea.Model {
		n, c := m.Update(msg)
		cmd = c
		return n
	}
	next, res, err := apply(m, comps, applyMsg{Component: "inputs_0", Action: "shout"}, step, cfg)
	if err != nil || res != "ok" {
		t.Fatal(res, err)
	}
	if next.(formModel).inputs[0].Value() != "HEY" {
		t.Fatalf("value %q", next.(formModel).inputs[0].Value())
	}
	if cmd == nil {
		t.Fatal("the action's command did not reach step")
	}
	if _, ok := cmd().(doneMsg); !ok {
		t.Fatal("wrong command")
	}
}

func TestKeyMapKeysRoundTrip(t *testing.T) {
	for _, n := range []string{"up", "down", "k", "j", "enter", "ctrl+u", "pgdown", "end", "ctrl+end", "alt+>", "/", "esc", "space", "shift+tab", "?", "G", "home", "alt+<", "f1"} {
		k, ok := parseKeyName(n)
		if !ok || k.String() != n {
			t.Errorf("%q: %v %q", n, ok, k.String())
		}
	}
	for _, n := range []string{"", "ctrl+", "nonsense", "ab"} {
		if _, ok := parseKeyName(n); ok {
			t.Errorf("%q parsed", n)
		}
	}
}

func TestListLabelsFollowItems(t *testing.T) {
	m := newListModel(10)
	comps := discover(m, &config{})
	a := componentWidgets(m, comps, screenOf(m), nil, &config{})
	m.list.SetItem(0, fruit("mango"))
	b := componentWidgets(m, comps, screenOf(m), map[string]ui.Widget{"list": a[0]}, &config{})
	if got := b[0].(ui.ToolProvider).State().(map[string]any)["selected"]; got != "1. mango" {
		t.Fatalf("selected label %q after SetItem", got)
	}
	if a[0].(ui.Comparer).SameAs(b[0]) {
		t.Fatal("a new item, still SameAs")
	}
}

func TestForeignPackage(t *testing.T) {
	for pkg, want := range map[string]bool{
		"main": false, "myapp/ui": false, "github.com/me/app": false, "": false,
		"time": true, "sync/atomic": true, "charm.land/lipgloss/v2": true,
		"github.com/charmbracelet/x/ansi": true,
	} {
		if got := foreignPackage(pkg); got != want {
			t.Errorf("foreignPackage(%q) = %v, want %v", pkg, got, want)
		}
	}
}

// holder keeps a value model and a pointer model behind interfaces.
type holder struct {
	child tea.Model
	other any
}

func (h holder) Init() tea.Cmd                       { return nil }
func (h holder) Update(tea.Msg) (tea.Model, tea.Cmd) { return h, nil }
func (h holder) View() tea.View                      { return tea.NewView("") }

func TestSetterThroughInterfaces(t *testing.T) {
	lm := newListModel(500)
	m := tea.Model(holder{child: newForm(2), other: lm})
	comps := discover(m, &config{})
	if got := strings.Join(names(comps), " "); got != "child_inputs_0:textinput child_inputs_1:textinput other_list:list" {
		t.Fatalf("discover %s", got)
	}
	next, _, err := apply(m, comps, applyMsg{Component: "child_inputs_1", Action: "type_into", Args: map[string]any{"text": "abc"}}, cstep, &config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.(holder).child.(formModel).inputs[1].Value(); got != "abc" {
		t.Fatalf("value through the interface %q", got)
	}
	if m.(holder).child.(formModel).inputs[1].Value() != "" {
		t.Fatal("the caller's value model changed")
	}
	// The list is behind a pointer: changed in place; 400 presses away,
	// so set.
	next, _, err = apply(next, comps, applyMsg{Component: "other_list", Action: "select", Args: map[string]any{"index": float64(400)}}, cstep, &config{})
	if err != nil {
		t.Fatal(err)
	}
	if lm.list.Index() != 400 || next.(holder).other.(*listModel) != lm {
		t.Fatalf("index %d", lm.list.Index())
	}
}

func TestSensitiveRenameAndActivateKey(t *testing.T) {
	cfg := &config{}
	for _, o := range []Option{Rename("list", "fruits"), Sensitive("list"), ActivateKey("fruits", "space")} {
		o(cfg)
	}
	m := newListModel(10)
	var pressed []string
	step := func(m tea.Model, msg tea.Msg) tea.Model {
		if k, ok := msg.(tea.KeyPressMsg); ok {
			pressed = append(pressed, k.String())
		}
		return cstep(m, msg)
	}
	comps := discover(m, cfg)
	if len(comps) != 1 || comps[0].Name != "fruits" {
		t.Fatalf("discover %v", comps)
	}
	ws := componentWidgets(m, comps, screenOf(m), nil, cfg)
	for _, s := range ws[0].(ui.ToolProvider).Tools() {
		if s.Annotations["sensitive"] != true {
			t.Errorf("%s not sensitive", s.Action)
		}
	}
	if _, _, err := apply(m, comps, applyMsg{Component: "fruits", Action: "activate", Args: map[string]any{"index": float64(2)}}, step, cfg); err != nil {
		t.Fatal(err)
	}
	if strings.Join(pressed, " ") != "down down space" {
		t.Fatalf("pressed %v", pressed)
	}
	if _, _, err := apply(m, comps, applyMsg{Component: "list", Action: "select"}, step, cfg); err == nil {
		t.Fatal("the old name still answers")
	}
}

func TestValidationErrorIsReported(t *testing.T) {
	f := newForm(1)
	f.inputs[0].Validate = func(s string) error {
		if strings.ContainsAny(s, "0123456789") {
			return fmt.Errorf("no digits")
		}
		return nil
	}
	m := tea.Model(f)
	_, res, err := apply(m, discover(m, &config{}), applyMsg{Component: "inputs_0", Action: "type_into", Args: map[string]any{"text": "a1"}}, cstep, &config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.(map[string]any)["error"] != "no digits" {
		t.Fatalf("result %v", res)
	}
}

func TestOnScreen(t *testing.T) {
	screen := "┌──────────┐\n│ > hello  │   other\n│ a   b    │\n└──────────┘"
	for _, c := range []struct {
		view string
		want bool
	}{
		{"\x1b[1m> hello\x1b[0m", true},
		{"\n\n  > hello  \n", true},
		{"> hell0", false},
		{"a\tb", true},    // the tab became spaces on the screen
		{"   \n ", false}, // blank
		{"x\n> hello", true},
	} {
		if got, _ := onScreen(c.view, screen); got != c.want {
			t.Errorf("onScreen(%q) = %v, want %v", c.view, got, c.want)
		}
	}
}

// picker is a program with a file picker, as Bubble Tea's file-picker
// example: it reads the choice with DidSelectFile.
type pickerModel struct {
	fp     filepicker.Model
	chosen string
}

func (p pickerModel) Init() tea.Cmd { return p.fp.Init() }

func (p pickerModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	p.fp, cmd = p.fp.Update(msg)
	if ok, path := p.fp.DidSelectFile(msg); ok {
		p.chosen = path
	}
	return p, cmd
}

func (p pickerModel) View() tea.View { return tea.NewView(p.fp.View()) }

// syncStep folds msg and then, at once, the message of its command (the
// file picker reads its directory with one).
func syncStep(m tea.Model, msg tea.Msg) tea.Model {
	n, cmd := m.Update(msg)
	if cmd != nil {
		if next := cmd(); next != nil {
			n, _ = n.Update(next)
		}
	}
	return n
}

func TestFilePicker(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b", "sub"} {
		if d == "sub" {
			if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, d, "inner.txt"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, d+".txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fp := filepicker.New()
	fp.CurrentDirectory = dir
	fp.SetHeight(10)
	m := tea.Model(pickerModel{fp: fp})
	m, _ = m.Update(m.Init()())
	cfg := &config{}
	comps := discover(m, cfg)
	ws := componentWidgets(m, comps, screenOf(m), nil, cfg)
	if len(ws) != 1 {
		t.Fatalf("%d widgets on %q", len(ws), screenOf(m))
	}
	b, _ := json.Marshal(ws[0].(ui.ToolProvider).State())
	if !strings.Contains(string(b), `"entries":["sub/","a.txt","b.txt"]`) {
		t.Fatalf("state %s", b)
	}
	next, _, err := apply(m, comps, applyMsg{Component: "fp", Action: "select", Args: map[string]any{"path": "b.txt"}}, syncStep, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := next.(pickerModel).chosen; got != filepath.Join(dir, "b.txt") {
		t.Fatalf("the program saw %q chosen", got)
	}
	next, _, err = apply(next, comps, applyMsg{Component: "fp", Action: "open", Args: map[string]any{"path": "sub"}}, syncStep, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := next.(pickerModel).fp.CurrentDirectory; got != filepath.Join(dir, "sub") {
		t.Fatalf("in %s", got)
	}
	if _, _, err := apply(next, comps, applyMsg{Component: "fp", Action: "select", Args: map[string]any{"path": "../a.txt"}}, syncStep, cfg); err == nil {
		t.Fatal("an entry of another directory accepted")
	}
	next, _, err = apply(next, comps, applyMsg{Component: "fp", Action: "back"}, syncStep, cfg)
	if err != nil || next.(pickerModel).fp.CurrentDirectory != dir {
		t.Fatalf("back: %v", err)
	}
}

func TestTableRowsFollowChanges(t *testing.T) {
	tm := newTableModel(true)
	m := tea.Model(tm)
	comps := discover(m, &config{})
	a := componentWidgets(m, comps, screenOf(m), nil, &config{})
	tm.t.Rows()[3][1] = "changed" // in place, as a program may
	b := componentWidgets(m, comps, screenOf(m), map[string]ui.Widget{"t": a[0]}, &config{})
	rows, _, _ := b[0].(ui.ToolProvider).CallTool("get_rows", nil)
	if got := rows.(map[string]any)["rows"].([][]string)[3][1]; got != "changed" {
		t.Fatalf("row 3 reads %q", got)
	}
	old, _, _ := a[0].(ui.ToolProvider).CallTool("get_rows", nil)
	if got := old.(map[string]any)["rows"].([][]string)[3][1]; got != "city3" {
		t.Fatalf("the earlier copy reads %q: it shares the program's rows", got)
	}
}
