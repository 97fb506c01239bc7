package web

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// part is the id attribute of a part of widget id's element: domID never
// writes "__", so parts of one widget never meet another widget's id.
func part(id, name string) string { return domID(id) + "__" + name }

// rootAttrs are the attributes of a widget's outermost element: its class,
// data-id, id, and the focus marks, then extra.
func (r *renderer) rootAttrs(w ui.Widget, class string, extra ...string) []string {
	id := w.WidgetID()
	a := []string{"class", "raxol-widget " + class, "data-id", dataID(id), "id", domID(id)}
	if r.opts.Focus != "" && id == r.opts.Focus {
		a = append(a, "data-focused", "true", "aria-current", "true")
	}
	return append(a, extra...)
}

// name is the accessible name of a widget without a label of its own:
// the title of the box it is in, else its id.
func name(w ui.Widget, label string) string {
	if label != "" {
		return label
	}
	return oneLine(w.WidgetID())
}

// width is the width app-defined widgets and chart drawings are drawn at.
func (r *renderer) width() int {
	if r.opts.Width > 0 {
		return r.opts.Width
	}
	return DefaultWidth
}

// highlight is the row (or item, or option) a terminal highlights in
// the widget id, from Options.Local, or -1: the human's arrow keys move it
// without telling the app.
func (r *renderer) highlight(id string, n int) int {
	if r.opts.Local == nil || n == 0 {
		return -1
	}
	st := r.opts.Local(id)
	if st == nil {
		return -1
	}
	return min(max(st.Row, 0), n-1)
}

// mark is data-highlighted's value for row i of highlight h.
func mark(i, h int) string {
	if i == h {
		return "true"
	}
	return ""
}

// around is the row a window centres on: the highlight, else sel.
func around(h, sel int) int {
	if h >= 0 {
		return h
	}
	return sel
}

// window is the range of at most limit of n rows to write, around sel.
func window(n, sel, limit int) (start, end int) {
	if n <= limit {
		return 0, n
	}
	start = max0(min(n-limit, sel-limit/2))
	return start, start + limit
}

func max0(v int) int { return max(v, 0) }

// widget writes one widget as the element its kind calls for.
func (r *renderer) widget(w ui.Widget, depth int, label string) {
	switch w := deref(w).(type) {
	case ui.Button:
		r.button(w, label)
	case ui.TextInput:
		r.field(w, "text", w.Label, oneLine(w.Value), w.Placeholder, w.MaxLen, w.Disabled, label)
	case ui.PasswordField:
		// The value is never written, whatever it is.
		r.field(w, "password", w.Label, "", w.Placeholder, w.MaxLen, w.Disabled, label)
	case ui.TextArea:
		r.textArea(w, label)
	case ui.Checkbox:
		r.checkbox(w, label)
	case ui.SelectList:
		r.selectList(w, label)
	case ui.Tabs:
		r.tabs(w, label)
	case ui.Menu:
		r.menu(w, label)
	case ui.Table:
		r.table(w, label)
	case ui.Tree:
		r.tree(w, label)
	case ui.Viewport:
		r.viewport(w, label)
	case ui.Scrubber:
		r.scrubber(w, label)
	case ui.Modal:
		r.modal(w, depth)
	case ui.BarChart:
		r.barChart(w, label)
	case ui.LineChart:
		r.lineChart(w, label)
	case ui.ScatterChart:
		r.scatterChart(w, label)
	default:
		r.custom(w, label)
	}
}

func (r *renderer) button(b ui.Button, label string) {
	class := "raxol-button"
	if b.Destructive {
		class += " raxol-destructive"
	}
	text := oneLine(b.Label)
	aria := ""
	if text == "" {
		aria = name(b, label)
	}
	r.open("button", r.rootAttrs(b, class, "type", "button", "aria-label", aria, "disabled", flag(b.Disabled))...)
	r.b.WriteString(esc(text))
	r.close("button")
}

// field writes a one-line input (text or password) with its label.
func (r *renderer) field(w ui.Widget, typ, lbl, value, placeholder string, maxLen int, disabled bool, label string) {
	if maxLen <= 0 {
		maxLen = ui.DefaultMaxLen
	}
	input := part(w.WidgetID(), "input")
	lbl = oneLine(lbl)
	r.open("div", r.rootAttrs(w, "raxol-field raxol-"+typ)...)
	aria := ""
	if lbl != "" {
		r.elem("label", lbl, "for", input)
	} else {
		aria = name(w, label)
	}
	attrs := []string{"type", typ, "id", input, "aria-label", aria, "placeholder", oneLine(placeholder),
		"maxlength", strconv.Itoa(maxLen), "disabled", flag(disabled)}
	if typ == "password" {
		attrs = append(attrs, "autocomplete", "off")
	} else {
		attrs = append(attrs, "value", value)
	}
	r.open("input", attrs...)
	r.close("div")
}

func (r *renderer) textArea(t ui.TextArea, label string) {
	rows := t.Height
	if rows <= 0 {
		rows = 4
	}
	maxLen := t.MaxLen
	if maxLen <= 0 {
		maxLen = 4 * ui.DefaultMaxLen
	}
	input := part(t.ID, "input")
	lbl := oneLine(t.Label)
	r.open("div", r.rootAttrs(t, "raxol-field raxol-textarea")...)
	aria := ""
	if lbl != "" {
		r.elem("label", lbl, "for", input)
	} else {
		aria = name(t, label)
	}
	r.open("textarea", "id", input, "aria-label", aria, "rows", strconv.Itoa(min(rows, 1000)),
		"placeholder", oneLine(t.Placeholder), "maxlength", strconv.Itoa(maxLen), "disabled", flag(t.Disabled))
	// A newline right after the start tag is dropped by the parser: this
	// one is, so that a value's own first newline stays.
	r.b.WriteByte('\n')
	r.text(t.Value)
	r.close("textarea")
	r.close("div")
}

func (r *renderer) checkbox(c ui.Checkbox, label string) {
	input := part(c.ID, "input")
	lbl := oneLine(c.Label)
	aria := ""
	if lbl == "" {
		aria = name(c, label)
	}
	r.open("div", r.rootAttrs(c, "raxol-checkbox")...)
	r.open("input", "type", "checkbox", "id", input, "aria-label", aria, "checked", flag(c.Checked), "disabled", flag(c.Disabled))
	if lbl != "" {
		r.elem("label", lbl, "for", input)
	}
	r.close("div")
}

// labelled writes a widget's visible label, if any, and returns the
// attributes that name its control: aria-labelledby the label, else
// aria-label.
func (r *renderer) labelled(w ui.Widget, lbl, label string) []string {
	lbl = oneLine(lbl)
	if lbl == "" {
		return []string{"aria-label", name(w, label)}
	}
	id := part(w.WidgetID(), "label")
	r.elem("div", lbl, "class", "raxol-label", "id", id)
	return []string{"aria-labelledby", id}
}

func (r *renderer) selectList(s ui.SelectList, label string) {
	r.open("div", r.rootAttrs(s, "raxol-selectlist")...)
	attrs := append([]string{"role", "listbox", "tabindex", "0", "aria-disabled", disabled(s.Disabled)}, r.labelled(s, s.Label, label)...)
	h := r.highlight(s.ID, len(s.Options))
	start, end := window(len(s.Options), around(h, s.Selected), r.opts.MaxRows)
	if a := around(h, s.Selected); a >= start && a < end {
		attrs = append(attrs, "aria-activedescendant", part(s.ID, "opt-"+strconv.Itoa(a)))
	}
	r.open("ul", attrs...)
	for i := start; i < end && !r.full(); i++ {
		r.elem("li", s.Options[i], "role", "option", "id", part(s.ID, "opt-"+strconv.Itoa(i)),
			"data-index", strconv.Itoa(i), "aria-selected", boolStr(i == s.Selected), "data-highlighted", mark(i, h))
	}
	r.close("ul")
	r.note(end-start, len(s.Options), "options")
	r.close("div")
}

// tabindex is "0" for the one element of a composite widget that Tab
// reaches, else "-1".
func tabindex(first bool) string {
	if first {
		return "0"
	}
	return "-1"
}

// disabled is aria-disabled's value: "true", or "" (left out).
func disabled(b bool) string {
	if b {
		return "true"
	}
	return ""
}

func (r *renderer) tabs(t ui.Tabs, label string) {
	r.open("div", r.rootAttrs(t, "raxol-tabs", "role", "tablist", "aria-label", name(t, label))...)
	n := min(len(t.Tabs), r.opts.MaxRows)
	for i := 0; i < n && !r.full(); i++ {
		sel := i == t.Active
		tab := "-1"
		if sel || (i == 0 && (t.Active < 0 || t.Active >= len(t.Tabs))) {
			tab = "0"
		}
		text := oneLine(t.Tabs[i])
		aria := ""
		if text == "" {
			aria = "Tab " + strconv.Itoa(i+1)
		}
		r.open("button", "type", "button", "role", "tab", "id", part(t.ID, "tab-"+strconv.Itoa(i)),
			"data-index", strconv.Itoa(i), "aria-selected", boolStr(sel), "tabindex", tab,
			"aria-label", aria, "disabled", flag(t.Disabled))
		r.b.WriteString(esc(text))
		r.close("button")
	}
	r.close("div")
	r.note(n, len(t.Tabs), "tabs")
}

func (r *renderer) menu(m ui.Menu, label string) {
	r.nested(m, "raxol-menu", "menu", name(m, label), m.Disabled, "items", func(count *int) {
		r.menuItems(m, m.Items, "item", 0, count, r.highlight(m.ID, r.opts.MaxRows))
	})
}

// nested writes a widget of nested items (a menu, a tree) as a list of
// role with the items write puts in it, counting them against MaxRows,
// and a note when some were left out.
func (r *renderer) nested(w ui.Widget, class, role, label string, dis bool, what string, write func(count *int)) {
	r.open("div", r.rootAttrs(w, class)...)
	r.open("ul", "role", role, "aria-label", label, "aria-disabled", disabled(dis))
	count := 0
	write(&count)
	r.close("ul")
	if count >= r.opts.MaxRows {
		r.elem("p", "More "+what+" not shown", "class", "raxol-note", "role", "note")
	}
	r.close("div")
}

func (r *renderer) menuItems(m ui.Menu, items []ui.MenuItem, path string, depth int, count *int, h int) {
	for i, it := range items {
		if *count >= r.opts.MaxRows || r.full() {
			return
		}
		*count++
		p := path + "-" + strconv.Itoa(i)
		sub := len(it.Children) > 0 && depth < maxDepth
		text := oneLine(it.Label)
		aria := ""
		if text == "" {
			aria = oneLine(it.ID)
		}
		r.open("li", "role", "none")
		attrs := []string{"type", "button", "role", "menuitem", "id", part(m.ID, p), "data-item", oneLine(it.ID),
			"tabindex", tabindex(*count == 1), "aria-label", aria, "disabled", flag(it.Disabled || m.Disabled),
			"data-highlighted", mark(*count-1, h)}
		if sub {
			attrs = append(attrs, "aria-haspopup", "menu", "aria-expanded", "true")
		}
		r.open("button", attrs...)
		r.b.WriteString(esc(text))
		r.close("button")
		if sub {
			r.open("ul", "role", "menu", "aria-label", text)
			r.menuItems(m, it.Children, p, depth+1, count, h)
			r.close("ul")
		}
		r.close("li")
	}
}

func (r *renderer) table(t ui.Table, label string) {
	cols := t.Columns[:min(len(t.Columns), maxCols)]
	r.open("div", r.rootAttrs(t, "raxol-table")...)
	r.open("table", "role", "grid", "aria-readonly", "true", "aria-label", name(t, label),
		"aria-rowcount", strconv.Itoa(len(t.Rows)+1), "aria-disabled", disabled(t.Disabled))
	r.open("thead")
	r.open("tr", "aria-rowindex", "1")
	for _, c := range cols {
		sort := ""
		if c.Key != "" && c.Key == t.SortColumn {
			sort = "ascending"
			if t.SortDirection == ui.SortDesc {
				sort = "descending"
			}
		}
		r.elem("th", c.Title, "scope", "col", "data-key", oneLine(c.Key), "aria-sort", sort)
	}
	r.close("tr")
	r.close("thead")
	r.open("tbody")
	h := r.highlight(t.ID, len(t.Rows))
	start, end := window(len(t.Rows), around(h, t.Selected), r.opts.MaxRows)
	for i := start; i < end && !r.full(); i++ {
		r.open("tr", "data-index", strconv.Itoa(i), "aria-rowindex", strconv.Itoa(i+2), "aria-selected", boolStr(i == t.Selected),
			"data-highlighted", mark(i, h))
		row := t.Rows[i]
		for j := range cols {
			cell := ""
			if j < len(row) && !r.full() { // past the bound, cells stay empty
				cell = row[j]
			}
			r.elem("td", cell)
		}
		r.close("tr")
	}
	r.close("tbody")
	r.close("table")
	r.note(end-start, len(t.Rows), "rows")
	r.close("div")
}

func (r *renderer) tree(t ui.Tree, label string) {
	r.nested(t, "raxol-tree", "tree", name(t, label), t.Disabled, "nodes", func(count *int) {
		r.treeNodes(t, t.Nodes, "node", 1, count, r.highlight(t.ID, r.opts.MaxRows))
	})
}

func (r *renderer) treeNodes(t ui.Tree, nodes []ui.TreeNode, path string, level int, count *int, h int) {
	for i, n := range nodes {
		if *count >= r.opts.MaxRows || r.full() {
			return
		}
		*count++
		p := path + "-" + strconv.Itoa(i)
		sel := n.ID != "" && n.ID == t.Selected
		tab := "-1"
		if sel || (t.Selected == "" && *count == 1) {
			tab = "0" // the one item Tab reaches
		}
		expanded := ""
		if len(n.Children) > 0 {
			expanded = boolStr(n.Expanded)
		}
		// The item is named by its own label, not by its children's too.
		r.open("li", "role", "treeitem", "id", part(t.ID, p), "data-node", oneLine(n.ID), "aria-level", strconv.Itoa(level),
			"aria-selected", boolStr(sel), "aria-expanded", expanded, "tabindex", tab, "aria-labelledby", part(t.ID, p+"-label"),
			"data-highlighted", mark(*count-1, h))
		text := oneLine(n.Label)
		if text == "" {
			text = oneLine(n.ID)
		}
		r.elem("span", text, "class", "raxol-tree-label", "id", part(t.ID, p+"-label"))
		if n.Expanded && len(n.Children) > 0 && level <= maxDepth {
			r.open("ul", "role", "group", "aria-labelledby", part(t.ID, p+"-label"))
			r.treeNodes(t, n.Children, p, level+1, count, h)
			r.close("ul")
		}
		r.close("li")
	}
}

func (r *renderer) viewport(v ui.Viewport, label string) {
	title := oneLine(v.Title)
	aria := title
	if aria == "" {
		aria = name(v, label)
	}
	r.open("div", r.rootAttrs(v, "raxol-viewport", "role", "region", "aria-label", aria, "tabindex", "0",
		"data-offset", strconv.Itoa(max0(v.Offset)), "aria-disabled", disabled(v.Disabled))...)
	if title != "" {
		r.elem("h3", title, "class", "raxol-viewport-title")
	}
	start := 0
	if len(v.Lines) > r.opts.MaxRows {
		start = max0(min(v.Offset, len(v.Lines)-r.opts.MaxRows))
	}
	end := min(len(v.Lines), start+r.opts.MaxRows)
	r.open("pre")
	for i := start; i < end && !r.full(); i++ {
		r.line(v.Lines[i])
		r.b.WriteByte('\n')
	}
	r.close("pre")
	r.note(end-start, len(v.Lines), "lines")
	r.close("div")
}

func (r *renderer) scrubber(s ui.Scrubber, label string) {
	lo, hi := s.Min, s.Max
	if hi < lo {
		lo, hi = hi, lo
	}
	pos := min(max(s.Position, lo), hi)
	step := max(s.Step, 1)
	input := part(s.ID, "input")
	lbl := oneLine(s.Label)
	r.open("div", r.rootAttrs(s, "raxol-scrubber")...)
	aria := ""
	if lbl != "" {
		r.elem("label", lbl, "for", input)
	} else {
		aria = name(s, label)
	}
	r.open("input", "type", "range", "id", input, "aria-label", aria, "min", strconv.Itoa(lo), "max", strconv.Itoa(hi),
		"step", strconv.Itoa(step), "value", strconv.Itoa(pos), "disabled", flag(s.Disabled))
	action, text := "play", "Play"
	if s.Playing {
		action, text = "pause", "Pause"
	}
	r.elem("button", text, "type", "button", "data-action", action, "aria-pressed", boolStr(s.Playing), "disabled", flag(s.Disabled))
	r.close("div")
}

func (r *renderer) modal(m ui.Modal, depth int) {
	if !m.Visible {
		// Closed and empty, but addressable: opening it replaces it.
		name := oneLine(m.Title)
		if name == "" {
			name = oneLine(m.ID)
		}
		r.open("dialog", r.rootAttrs(m, "raxol-modal", "aria-label", name)...)
		r.close("dialog")
		return
	}
	title := oneLine(m.Title)
	attrs := []string{"open", on, "aria-modal", "true"}
	if title != "" {
		attrs = append(attrs, "aria-labelledby", part(m.ID, "title"))
	} else {
		attrs = append(attrs, "aria-label", oneLine(m.ID))
	}
	r.open("dialog", r.rootAttrs(m, "raxol-modal", attrs...)...)
	if title != "" {
		r.elem("h2", title, "id", part(m.ID, "title"), "class", "raxol-modal-title")
	}
	r.open("div", "class", "raxol-modal-body")
	r.node(m.Body, depth+1, "")
	r.close("div")
	confirm, dismiss := oneLine(m.ConfirmLabel), oneLine(m.DismissLabel)
	if confirm == "" {
		confirm = "Confirm"
	}
	if dismiss == "" {
		dismiss = "Cancel"
	}
	r.open("div", "class", "raxol-modal-actions")
	r.elem("button", confirm, "type", "button", "data-action", "confirm", "id", part(m.ID, "confirm"))
	r.elem("button", dismiss, "type", "button", "data-action", "dismiss", "id", part(m.ID, "dismiss"))
	r.close("div")
	r.close("dialog")
}

// num formats a chart value.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// figure opens a chart: a figure with its caption and its drawing (for the
// eye; the table that follows is for everyone).
func (r *renderer) figure(w ui.Widget, title, label string) {
	caption := oneLine(title)
	if caption == "" {
		caption = name(w, label)
	}
	r.open("figure", r.rootAttrs(w, "raxol-chart", "aria-labelledby", part(w.WidgetID(), "caption"))...)
	r.elem("figcaption", caption, "id", part(w.WidgetID(), "caption"))
	r.open("pre", "class", "raxol-chart-drawing", "aria-hidden", "true")
	r.drawnText(r.drawn(w, r.width()))
	r.close("pre")
}

// head writes a chart's data table's start and header row; the table is
// named by the figure's caption.
func (r *renderer) head(w ui.Widget, titles ...string) {
	r.open("table", "class", "raxol-chart-data", "aria-labelledby", part(w.WidgetID(), "caption"))
	r.open("thead")
	r.open("tr")
	for _, t := range titles {
		r.elem("th", t, "scope", "col")
	}
	r.close("tr")
	r.close("thead")
	r.open("tbody")
}

func (r *renderer) cells(cells ...string) {
	r.open("tr")
	for i, c := range cells {
		if i == 0 {
			r.elem("th", c, "scope", "row")
			continue
		}
		r.elem("td", c)
	}
	r.close("tr")
}

func (r *renderer) endFigure(shown, total int, what string) {
	r.close("tbody")
	r.close("table")
	r.note(shown, total, what)
	r.close("figure")
}

func (r *renderer) barChart(c ui.BarChart, label string) {
	r.figure(c, c.Title, label)
	r.head(c, "Bar", "Value")
	n := min(len(c.Bars), r.opts.MaxRows)
	for i := 0; i < n && !r.full(); i++ {
		r.cells(c.Bars[i].Label, num(c.Bars[i].Value))
	}
	r.endFigure(n, len(c.Bars), "bars")
}

func (r *renderer) lineChart(c ui.LineChart, label string) {
	series := c.Series[:min(len(c.Series), maxCols)]
	r.figure(c, c.Title, label)
	titles := []string{"Point"}
	total := 0
	for _, s := range series {
		titles = append(titles, s.Name)
		total = max(total, len(s.Values))
	}
	r.head(c, titles...)
	n := min(total, r.opts.MaxRows)
	for i := 0; i < n && !r.full(); i++ {
		row := []string{strconv.Itoa(i + 1)}
		for _, s := range series {
			v := ""
			if i < len(s.Values) {
				v = num(s.Values[i])
			}
			row = append(row, v)
		}
		r.cells(row...)
	}
	r.endFigure(n, total, "points")
}

func (r *renderer) scatterChart(c ui.ScatterChart, label string) {
	r.figure(c, c.Title, label)
	r.head(c, "Series", "X", "Y")
	shown, total := 0, 0
	for _, s := range c.Series {
		total += len(s.Points)
	}
	for _, s := range c.Series {
		for _, p := range s.Points {
			if shown >= r.opts.MaxRows || r.full() {
				break
			}
			r.cells(s.Name, num(p.X), num(p.Y))
			shown++
		}
	}
	r.endFigure(shown, total, "points")
}

// custom writes an app-defined widget: a group holding what it draws in a
// terminal, and its state (unless it holds a secret). A hidden overlay is
// an empty, hidden element.
func (r *renderer) custom(w ui.Widget, label string) {
	if o, ok := w.(ui.Overlay); ok && !o.Shown() {
		r.open("div", r.rootAttrs(w, "raxol-custom", "hidden", on)...)
		r.close("div")
		return
	}
	aria := oneLine(ui.Label(w))
	if aria == "" || label != "" && aria == oneLine(w.WidgetID()) {
		aria = name(w, label)
	}
	r.open("div", r.rootAttrs(w, "raxol-custom", "role", "group", "aria-label", aria)...)
	r.open("pre", "class", "raxol-drawn")
	r.drawnText(r.drawn(w, r.width()))
	r.close("pre")
	if s, ok := w.(ui.Secret); !ok || !s.HoldsSecret() {
		r.state(w)
	}
	r.close("div")
}

// state writes the plain values of a widget's state (its ToolProvider's),
// as a description list.
func (r *renderer) state(w ui.Widget) {
	tp, ok := w.(ui.ToolProvider)
	if !ok {
		return
	}
	st, ok := tp.State().(map[string]any)
	if !ok || len(st) == 0 {
		return
	}
	keys := make([]string, 0, len(st))
	for k, v := range st {
		switch v.(type) {
		case string, bool, int, int64, float64:
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.Strings(keys)
	keys = keys[:min(len(keys), maxStateEntries)]
	r.open("dl", "class", "raxol-state")
	for _, k := range keys {
		if lk := strings.ToLower(k); strings.Contains(lk, "password") || strings.Contains(lk, "secret") {
			continue
		}
		r.elem("dt", k)
		r.elem("dd", fmt.Sprint(st[k]))
	}
	r.close("dl")
}

// deref is the built-in widget a pointer to one points at (its methods
// have value receivers, so a pointer is a widget too), else w.
func deref(w ui.Widget) ui.Widget {
	var v ui.Widget
	switch p := w.(type) {
	case *ui.Button:
		v = derefOf(p)
	case *ui.TextInput:
		v = derefOf(p)
	case *ui.PasswordField:
		v = derefOf(p)
	case *ui.TextArea:
		v = derefOf(p)
	case *ui.Checkbox:
		v = derefOf(p)
	case *ui.SelectList:
		v = derefOf(p)
	case *ui.Tabs:
		v = derefOf(p)
	case *ui.Menu:
		v = derefOf(p)
	case *ui.Table:
		v = derefOf(p)
	case *ui.Tree:
		v = derefOf(p)
	case *ui.Viewport:
		v = derefOf(p)
	case *ui.Scrubber:
		v = derefOf(p)
	case *ui.Modal:
		v = derefOf(p)
	case *ui.BarChart:
		v = derefOf(p)
	case *ui.LineChart:
		v = derefOf(p)
	case *ui.ScatterChart:
		v = derefOf(p)
	}
	if v == nil {
		return w
	}
	return v
}

// derefOf is *p, or nil for a nil pointer.
func derefOf[T ui.Widget](p *T) ui.Widget {
	if p == nil {
		return nil
	}
	return *p
}
