package teaapp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unsafe"

	"charm.land/bubbles/v2/filepicker"
	"charm.land/bubbles/v2/help"
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

// This file turns the components the screen shows into widgets: value
// types holding a copy of each component's state, with the tools an
// agent drives it by.

// Bounds of what a widget copies.
const (
	maxLabels     = 200     // list labels copied around the selection
	maxRows       = 500     // table rows copied
	maxContent    = 1 << 16 // viewport content bytes copied
	maxLabelRunes = 200     // runes of one label
)

// compState is a copy of one component's state: plain data only, no
// pointer into the model, so it can be read on any goroutine. Which
// fields are set depends on the kind. Its scalars are one comparable
// struct (compScalars), so that telling two states apart (same) is one
// comparison and the slices'.
type compState struct {
	compScalars
	Labels  []string // list: labels of items LabelsFrom...
	Columns []string
	Rows    [][]string
	// Items identifies the list's copied items (see itemKey), drawn at
	// Width: the next copy reuses Labels while they stay the same.
	Items []uint64
	// filepicker: the current directory's entries (dirs end in "/").
	Entries []string
}

// compScalars are a component's state but its slices (compState).
type compScalars struct {
	// textinput, textarea
	Value       string
	Length      int
	Focused     bool
	Password    bool
	Placeholder string
	CharLimit   int
	Err         string
	Line        int
	Column      int
	LineCount   int

	// list (Index, Total), table (Index is the cursor, Total the rows)
	Title         string
	Index         int
	Total         int
	Selected      string
	LabelsFrom    int
	Filtering     bool
	FilterState   string
	Filter        string
	Page          int
	TotalPages    int
	PerPage       int
	YOffset       int
	Height        int
	AtBottom      bool
	Content       string
	Truncated     bool
	Percent       float64
	ShowAll       bool
	Directory     string
	Path          string
	Highlighted   string
	ActivateKey   string
	FilterEnabled bool
	Width         int
}

// same reports whether s and o hold the same state, as reflect.DeepEqual
// tells (a nil slice differs from an empty one; a NaN from itself).
func (s *compState) same(o *compState) bool {
	if s.compScalars != o.compScalars || !sameSlice(s.Labels, o.Labels) || !sameSlice(s.Columns, o.Columns) ||
		!sameSlice(s.Items, o.Items) || !sameSlice(s.Entries, o.Entries) || (s.Rows == nil) != (o.Rows == nil) || len(s.Rows) != len(o.Rows) {
		return false
	}
	for i := range s.Rows {
		if !sameSlice(s.Rows[i], o.Rows[i]) {
			return false
		}
	}
	return true
}

// sameSlice is slices.Equal that tells nil from empty, as
// reflect.DeepEqual does.
func sameSlice[T comparable](a, b []T) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}

// compWidget is one component as a widget in the tree. It is a value
// type: copied state, static tool specs.
type compWidget struct {
	name      string
	kind      string
	sensitive bool
	st        compState
	extra     []ui.ToolSpec // WithAction's specs (shared, never changed)
	// seen is the line of the component's view found on the screen when
	// it was last drawn: while its state stays the same and the screen
	// still shows that line, it is shown without drawing it again. Not
	// part of SameAs.
	seen string
}

// compWidget is a ToolProvider and a Comparer.
var (
	_ ui.ToolProvider = compWidget{}
	_ ui.Comparer     = compWidget{}
)

// Children returns nil: a component widget is a leaf.
func (w compWidget) Children() []ui.Node { return nil }

// WidgetID returns the component's tool id.
func (w compWidget) WidgetID() string { return w.name }

// HoldsSecret implements ui.Secret: a password input's arguments are
// masked in approval prompts.
func (w compWidget) HoldsSecret() bool { return w.st.Password }

// Focusable returns false: the program has its own focus.
func (w compWidget) Focusable() bool { return false }

// Render returns "": the host draws the program's whole screen.
func (w compWidget) Render(ui.RenderContext) string { return "" }

// HandleEvent returns nil: keys go to the program, not to the widget.
func (w compWidget) HandleEvent(ui.Event, *ui.LocalState) []tea.Msg { return nil }

// SameAs reports whether other is the same component in the same state.
func (w compWidget) SameAs(other ui.Widget) bool {
	o, ok := other.(compWidget)
	if !ok || o.name != w.name || o.kind != w.kind || o.sensitive != w.sensitive || len(o.extra) != len(w.extra) {
		return false
	}
	for i := range w.extra {
		if w.extra[i].Action != o.extra[i].Action {
			return false
		}
	}
	return w.st.same(&o.st)
}

// componentWidgets returns one widget per component that the screen
// (the program's view as plain text) shows now, in discover's order. A
// component whose own view does not appear on the screen has none. A
// widget in prev (by name) that holds the same state is returned again,
// so the tools derived from it are kept.
func componentWidgets(m tea.Model, comps []found, screen string, prev map[string]ui.Widget, cfg *config) []ui.Widget {
	ws, _ := componentWidgetsFocus(m, comps, screen, prev, cfg)
	return ws
}

// componentWidgetsFocus is componentWidgets, and the component with the
// program's focus as focusedComponent tells it, from the same reading of
// each component (read where it is in m, never copied whole).
func componentWidgetsFocus(m tea.Model, comps []found, screen string, prev map[string]ui.Widget, cfg *config) ([]ui.Widget, string) {
	var opts componentOptions
	if cfg != nil {
		opts = cfg.comps
	}
	var out []ui.Widget
	focus := ""
	for _, f := range comps {
		c, err := componentRef(m, f)
		if err != nil {
			continue
		}
		w := compWidget{name: f.Name, kind: f.Kind, sensitive: opts.isSensitive(f)}
		var before *compState
		pw := prev[f.Name]
		p, hadPrev := pw.(compWidget)
		if hadPrev && p.kind == f.Kind {
			before = &p.st
		}
		w.st = snapshot(c, f, &opts, before)
		if focus == "" && w.st.Focused && (f.Kind == "textinput" || f.Kind == "textarea" || f.Kind == "table") {
			focus = f.Name
		}
		unchanged := hadPrev && p.kind == f.Kind && p.st.same(&w.st)
		if unchanged && p.seen != "" && strings.Contains(screen, p.seen) {
			w.seen = p.seen // unchanged and still there: not drawn again
		} else {
			ok, line := shown(c, screen)
			if !ok {
				continue
			}
			w.seen = line
		}
		if w.st.Password {
			w.sensitive = true
		}
		for _, x := range opts.extraActions(f) {
			w.extra = append(w.extra, x.spec)
		}
		if unchanged && w.SameAs(p) {
			out = append(out, pw) // as the last view held it: not boxed again
			continue
		}
		out = append(out, w)
	}
	return out, focus
}

// shown reports whether the screen shows the component c: one of the
// first lines of its own view (trimmed, ANSI stripped) is on it.
func shown(c any, screen string) (bool, string) {
	var view string
	switch c := c.(type) {
	case *textinput.Model:
		// Its prompt and value, as it draws them when they fit, tell
		// without drawing it (a value that scrolls is drawn below).
		if v := c.Value(); c.EchoMode == textinput.EchoNormal && v != "" && (c.Width() <= 0 || len(v) < c.Width()) {
			if line := strings.TrimSpace(ansi.Strip(c.Prompt) + v); line != "" && strings.Contains(screen, line) {
				return true, line
			}
		}
		view = c.View()
		if strings.TrimSpace(ansi.Strip(view)) == "" {
			return c.Focused(), ""
		}
	case *textarea.Model:
		view = c.View()
		if strings.TrimSpace(ansi.Strip(view)) == "" {
			return c.Focused(), ""
		}
	case *list.Model:
		// Its View draws every page's dot: costly for long lists. Its
		// title, or the selected item as its delegate draws it, tells.
		if title := strings.TrimSpace(c.Title); c.ShowTitle() && title != "" && strings.Contains(screen, title) {
			return true, title
		}
		items := c.VisibleItems()
		if i := c.Index(); i >= 0 && i < len(items) {
			if first := itemFirstLine(c, listDelegate(c), i, items[i]); first != "" {
				return strings.Contains(screen, first), first
			}
		}
		view = c.View()
	case *table.Model:
		view = c.View()
	case *viewport.Model:
		view = c.View()
	case *paginator.Model:
		view = c.View()
	case *filepicker.Model:
		view = c.View()
	case *spinner.Model:
		view = c.View()
	case *progress.Model:
		// A program that draws with ViewAs leaves Percent at 0: look for
		// the bar's own characters too.
		if ok, line := onScreen(c.View(), screen); ok {
			return true, line
		}
		return strings.Contains(screen, strings.Repeat(string(c.Full), 3)) ||
			strings.Contains(screen, strings.Repeat(string(c.Empty), 3)), ""
	case *help.Model:
		// help draws the bindings its program passes to View: none are
		// stored. Its separators show it.
		return strings.Contains(screen, strings.TrimSpace(c.ShortSeparator)) && strings.TrimSpace(c.ShortSeparator) != "", ""
	default:
		return false, ""
	}
	return onScreen(view, screen)
}

// onScreen reports whether one of the first non-blank lines of view, of
// at least two runes or the only one, trimmed, is a substring of screen.
func onScreen(view, screen string) (bool, string) {
	lines := strings.Split(ansi.Strip(view), "\n")
	var cands []string
	for _, l := range lines {
		// A terminal draws a tab as spaces up to its next stop: compare
		// the longest run without one.
		var longest string
		for _, seg := range strings.Split(l, "\t") {
			if seg = strings.TrimSpace(seg); len(seg) > len(longest) {
				longest = seg
			}
		}
		if l = longest; l != "" {
			cands = append(cands, l)
		}
		if len(cands) == 5 {
			break
		}
	}
	for _, l := range cands {
		if (len([]rune(l)) >= 2 || len(cands) == 1) && strings.Contains(screen, l) {
			return true, l
		}
	}
	return false, ""
}

// snapshot copies the state of c, the component f; before is the state
// copied last time, if any, whose list labels are reused when the items
// are the same.
func snapshot(c any, f found, opts *componentOptions, before *compState) compState {
	var st compState
	switch c := c.(type) {
	case *textinput.Model:
		v := c.Value()
		st.Length = len([]rune(v))
		st.Password = c.EchoMode != textinput.EchoNormal
		if !st.Password {
			st.Value = v
		}
		st.Focused = c.Focused()
		st.Placeholder = c.Placeholder
		st.CharLimit = c.CharLimit
		st.Column = c.Position()
		if c.Err != nil {
			st.Err = c.Err.Error()
		}
	case *textarea.Model:
		v := c.Value()
		st.Value = v
		st.Length = len([]rune(v))
		st.Focused = c.Focused()
		st.Placeholder = c.Placeholder
		st.CharLimit = c.CharLimit
		st.Line = c.Line()
		st.Column = c.Column()
		st.LineCount = c.LineCount()
		if c.Err != nil {
			st.Err = c.Err.Error()
		}
	case *list.Model:
		st.Title = c.Title
		items := c.VisibleItems()
		st.Total = len(items)
		st.Index = c.Index()
		st.FilterEnabled = c.FilteringEnabled()
		st.Filtering = c.SettingFilter()
		st.FilterState = c.FilterState().String()
		st.Filter = c.FilterValue()
		st.Page, st.TotalPages, st.PerPage = c.Paginator.Page, c.Paginator.TotalPages, c.Paginator.PerPage
		from := max(0, st.Index-maxLabels/2)
		to := min(len(items), from+maxLabels)
		from = max(0, to-maxLabels)
		st.LabelsFrom = from
		st.Width = c.Width()
		st.Items = make([]uint64, 0, to-from)
		for i := from; i < to; i++ {
			st.Items = append(st.Items, itemKey(items[i]))
		}
		if before != nil && before.LabelsFrom == from && before.Width == st.Width && slices.Equal(before.Items, st.Items) {
			st.Labels = before.Labels // never changed once made
		} else {
			st.Labels = make([]string, 0, to-from)
			d := listDelegate(c)
			for i := from; i < to; i++ {
				st.Labels = append(st.Labels, itemLabel(c, d, i, items[i]))
			}
		}
		if st.Index >= 0 && st.Index < len(items) {
			st.Selected = st.Labels[st.Index-from]
		}
		st.ActivateKey = opts.activateKeyName(f)
	case *table.Model:
		for _, col := range c.Columns() {
			st.Columns = append(st.Columns, col.Title)
		}
		rows := c.Rows()
		st.Total = len(rows)
		st.Index = c.Cursor()
		st.Focused = c.Focused()
		n := min(len(rows), maxRows)
		if before != nil && sameRows(before.Rows, rows[:n]) {
			st.Rows = before.Rows // never changed once made
		} else {
			st.Rows = make([][]string, 0, n)
			for _, r := range rows[:n] {
				st.Rows = append(st.Rows, append([]string(nil), r...))
			}
		}
		st.Truncated = len(rows) > maxRows
		st.ActivateKey = opts.activateKeyName(f)
	case *viewport.Model:
		st.YOffset = c.YOffset()
		st.Total = c.TotalLineCount()
		st.Height = c.Height()
		st.AtBottom = c.AtBottom()
		st.Percent = roundPercent(c.ScrollPercent())
		content := c.GetContent()
		if len(content) > maxContent {
			content, st.Truncated = strings.ToValidUTF8(content[:maxContent], ""), true
		}
		st.Content = ansi.Strip(content)
	case *paginator.Model:
		st.Page, st.TotalPages, st.PerPage = c.Page, c.TotalPages, c.PerPage
	case *filepicker.Model:
		st.Directory = c.CurrentDirectory
		st.Path = c.Path
		st.Highlighted = c.HighlightedPath()
		st.Entries = pickerEntries(c)
	case *progress.Model:
		st.Percent = roundPercent(c.Percent())
	case *help.Model:
		st.ShowAll = c.ShowAll
	case *spinner.Model:
		// Its frame changes ten times a second and means nothing.
	}
	return st
}

// itemKey identifies a list item cheaply, to tell whether its label must
// be drawn again: its dynamic type and the address of its value (a value
// stored in an interface is never changed in place; a new one gets a new
// address, unless the old one's memory was freed and reused), mixed with
// its FilterValue, which also tells most reused addresses apart. An item
// that is a pointer changed in place keeps its key unless its
// FilterValue changes: its label is drawn again when the list's width or
// selection window changes.
func itemKey(it list.Item) uint64 {
	words := (*[2]uintptr)(unsafe.Pointer(&it))
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(words[0]))
	binary.LittleEndian.PutUint64(b[8:], uint64(words[1]))
	h.Write(b[:])
	if it != nil {
		h.Write([]byte(it.FilterValue()))
	}
	return h.Sum64()
}

// sameRows reports whether a copy of table rows holds rows.
func sameRows(copied [][]string, rows []table.Row) bool {
	if len(copied) != len(rows) {
		return false
	}
	for i, r := range rows {
		if !slices.Equal(copied[i], r) {
			return false
		}
	}
	return true
}

// pickerEntries returns the names of the entries the file picker lists
// (an unexported field: it has no getter), directories ending in "/".
func pickerEntries(fp *filepicker.Model) []string {
	f := reflect.ValueOf(fp).Elem().FieldByName("files")
	if !f.IsValid() {
		return nil
	}
	files, ok := expose(f).Interface().([]os.DirEntry)
	if !ok {
		return nil
	}
	out := make([]string, 0, min(len(files), maxRows))
	for _, e := range files[:min(len(files), maxRows)] {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	return out
}

// roundPercent rounds a fraction to four decimals, so a spring's last
// jitters do not make a new state.
func roundPercent(p float64) float64 { return math.Round(p*10000) / 10000 }

// itemLabel is what the list's own delegate draws for the item at index
// i of its visible items, ANSI stripped, its lines joined, without the
// selection marks a delegate draws before the selected item; the item's
// FilterValue when that draws nothing.
func itemLabel(l *list.Model, d list.ItemDelegate, i int, it list.Item) (label string) {
	defer func() {
		if r := recover(); r != nil {
			label = it.FilterValue()
		}
	}()
	var buf bytes.Buffer
	// A delegate draws the selected item differently; Render is given the
	// list as it is, and trimLabel drops the marks.
	if d != nil {
		d.Render(&buf, *l, i, it)
	}
	label = strings.Join(labelLines(buf.String()), " ")
	if label == "" {
		label = it.FilterValue()
	}
	if r := []rune(label); len(r) > maxLabelRunes {
		label = string(r[:maxLabelRunes])
	}
	return label
}

// labelLines returns the non-blank lines a delegate drew, ANSI stripped
// and trimmed of selection marks.
func labelLines(drawn string) []string {
	var parts []string
	for _, line := range strings.Split(ansi.Strip(drawn), "\n") {
		if line = trimLabel(line); line != "" {
			parts = append(parts, line)
		}
	}
	return parts
}

// itemFirstLine is the first line the delegate d draws for the item at
// index i, trimmed, or "".
func itemFirstLine(l *list.Model, d list.ItemDelegate, i int, it list.Item) (first string) {
	defer func() {
		if recover() != nil {
			first = ""
		}
	}()
	if d == nil {
		return ""
	}
	var buf bytes.Buffer
	d.Render(&buf, *l, i, it)
	if parts := labelLines(buf.String()); len(parts) > 0 {
		return parts[0]
	}
	return ""
}

// trimLabel trims spaces and the marks delegates draw before a selected
// item (">", "│", "•"...).
func trimLabel(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(">›»→▶►❯➜│┃|•*", r)
	})
}

// listDelegate returns the delegate of l (an unexported field: list has
// SetDelegate and no getter).
func listDelegate(l *list.Model) list.ItemDelegate {
	f := reflect.ValueOf(l).Elem().FieldByName("delegate")
	if !f.IsValid() {
		return nil
	}
	d, _ := expose(f).Interface().(list.ItemDelegate)
	return d
}

// The static tool specs, per kind and action.
var (
	textSchema  = ui.ObjectSchema(map[string]any{"text": ui.Prop("string", "The text the input should hold: its content is replaced.")}, "text")
	emptySchema = ui.ObjectSchema(nil)

	specTypeInto = ui.ToolSpec{Action: "type_into", Description: "Replace the input's content with text, typed key by key as a person would.", InputSchema: textSchema}
	specClear    = ui.ToolSpec{Action: "clear", Description: "Delete the input's content.", InputSchema: emptySchema}
	specGetValue = ui.ToolSpec{Action: "get_value", Description: "Read the input's content.", InputSchema: emptySchema, ReadOnly: true}

	specListSelect = ui.ToolSpec{Action: "select", Description: "Move the list's selection to the item at index (0-based, among the items shown) or with the given label, by pressing the list's keys.",
		InputSchema: ui.ObjectSchema(map[string]any{
			"index": ui.Prop("integer", "The item's 0-based index among the items the list shows."),
			"label": ui.Prop("string", "The item's label, as get_options lists it."),
		})}
	specListActivate = ui.ToolSpec{Action: "activate", Description: "Select the item (index or label; the current one if neither) and press the key that chooses it (Enter unless configured).",
		InputSchema: ui.ObjectSchema(map[string]any{
			"index": ui.Prop("integer", "The item's 0-based index among the items the list shows."),
			"label": ui.Prop("string", "The item's label, as get_options lists it."),
		})}
	specGetOptions = ui.ToolSpec{Action: "get_options", Description: "List the list's items (index and label) around the selection.",
		InputSchema: ui.ObjectSchema(map[string]any{
			"offset": ui.Prop("integer", "The first index to list (default: the first one copied)."),
			"limit":  ui.Prop("integer", "The most items to list (default 50)."),
		}), ReadOnly: true}
	specGetSelected = ui.ToolSpec{Action: "get_selected", Description: "Read the list's selected item (index and label).", InputSchema: emptySchema, ReadOnly: true}
	specFilter      = ui.ToolSpec{Action: "filter", Description: "Filter the list's items by text, typed into the list's filter (empty text clears the filter).", InputSchema: textSchema}

	specSelectRow = ui.ToolSpec{Action: "select_row", Description: "Move the table's cursor to the row at index (0-based).",
		InputSchema: ui.ObjectSchema(map[string]any{"index": ui.Prop("integer", "The row's 0-based index.")}, "index")}
	specTableActivate = ui.ToolSpec{Action: "activate", Description: "Move the table's cursor to the row at index (the current one if none) and press the key that chooses it (Enter unless configured).",
		InputSchema: ui.ObjectSchema(map[string]any{"index": ui.Prop("integer", "The row's 0-based index.")})}
	specGetRows = ui.ToolSpec{Action: "get_rows", Description: "Read the table's columns, rows and cursor.", InputSchema: emptySchema, ReadOnly: true}

	specScroll = ui.ToolSpec{Action: "scroll", Description: "Scroll the view so that the given line (0-based) is its top line.",
		InputSchema: ui.ObjectSchema(map[string]any{"line": ui.Prop("integer", "The 0-based line to show at the top.")}, "line")}
	specScrollBy = ui.ToolSpec{Action: "scroll_by", Description: "Scroll the view by a number of lines: positive down, negative up (stops at either end).",
		InputSchema: ui.ObjectSchema(map[string]any{"lines": ui.Prop("integer", "Lines to scroll: positive down, negative up.")}, "lines")}
	specGetContent = ui.ToolSpec{Action: "get_content", Description: "Read the view's whole content and scroll position.", InputSchema: emptySchema, ReadOnly: true}

	specGoToPage = ui.ToolSpec{Action: "go_to_page", Description: "Go to the page (0-based) by pressing the paginator's keys.",
		InputSchema: ui.ObjectSchema(map[string]any{"page": ui.Prop("integer", "The 0-based page.")}, "page")}

	pathSchema = ui.ObjectSchema(map[string]any{"path": ui.Prop("string", "An entry of the current directory: its name, or its full path.")}, "path")
	specOpen   = ui.ToolSpec{Action: "open", Description: "Open a directory of the current directory in the file picker.", InputSchema: pathSchema}
	specSelect = ui.ToolSpec{Action: "select", Description: "Choose a file of the current directory in the file picker.", InputSchema: pathSchema}
	specBack   = ui.ToolSpec{Action: "back", Description: "Go up to the parent directory in the file picker.", InputSchema: emptySchema}

	specGetState = ui.ToolSpec{Action: "get_state", Description: "Read the component's state.", InputSchema: emptySchema, ReadOnly: true}
)

// Tools returns the tools of the component's kind, then the app's extra
// actions; every one annotated sensitive when the component is.
func (w compWidget) Tools() []ui.ToolSpec {
	toolsDerived.Add(1)
	var specs []ui.ToolSpec
	switch w.kind {
	case "textinput", "textarea":
		specs = []ui.ToolSpec{specTypeInto, specClear, specGetValue}
	case "list":
		specs = []ui.ToolSpec{specListSelect, specListActivate, specGetOptions, specGetSelected}
		if w.st.FilterEnabled {
			specs = append(specs, specFilter)
		}
	case "table":
		specs = []ui.ToolSpec{specSelectRow, specTableActivate, specGetRows}
	case "viewport":
		specs = []ui.ToolSpec{specScroll, specScrollBy, specGetContent}
	case "paginator":
		specs = []ui.ToolSpec{specGoToPage, specGetState}
	case "filepicker":
		specs = []ui.ToolSpec{specOpen, specSelect, specBack, specGetState}
	case "progress", "spinner", "help":
		specs = []ui.ToolSpec{specGetState}
	}
	for _, x := range w.extra {
		replaced := false
		for i := range specs {
			if specs[i].Action == x.Action {
				specs[i], replaced = x, true
			}
		}
		if !replaced {
			specs = append(specs, x)
		}
	}
	if w.sensitive {
		for i := range specs {
			a := map[string]any{"sensitive": true}
			for k, v := range specs[i].Annotations {
				if k != "sensitive" {
					a[k] = v
				}
			}
			specs[i].Annotations = a
		}
	}
	return specs
}

// State returns the component's state as plain JSON data. A password
// input's value is never in it: its length only.
func (w compWidget) State() any {
	st := w.st
	s := map[string]any{"id": w.name, "kind": w.kind}
	switch w.kind {
	case "textinput", "textarea":
		if st.Password {
			s["password"] = true
			s["length"] = st.Length
		} else {
			s["value"] = st.Value
		}
		s["focused"] = st.Focused
		if st.Placeholder != "" {
			s["placeholder"] = st.Placeholder
		}
		if st.CharLimit > 0 {
			s["char_limit"] = st.CharLimit
		}
		if st.Err != "" {
			s["error"] = st.Err
		}
		if w.kind == "textarea" {
			s["line"], s["column"], s["line_count"] = st.Line, st.Column, st.LineCount
		}
	case "list":
		if st.Title != "" {
			s["title"] = st.Title
		}
		s["count"] = st.Total
		s["selected_index"] = st.Index
		s["selected"] = st.Selected
		s["page"], s["total_pages"] = st.Page, st.TotalPages
		if from, to := st.Page*st.PerPage, min(st.Page*st.PerPage+st.PerPage, st.Total); st.PerPage > 0 && from >= st.LabelsFrom && to <= st.LabelsFrom+len(st.Labels) && from < to {
			s["page_items"] = st.Labels[from-st.LabelsFrom : to-st.LabelsFrom]
		}
		if st.FilterEnabled {
			s["filter"] = st.Filter
			s["filter_state"] = st.FilterState
		}
	case "table":
		s["columns"] = st.Columns
		s["row_count"] = st.Total
		s["cursor"] = st.Index
		s["focused"] = st.Focused
		if st.Index >= 0 && st.Index < len(st.Rows) {
			s["selected_row"] = st.Rows[st.Index]
		}
	case "viewport":
		s["y_offset"] = st.YOffset
		s["total_lines"] = st.Total
		s["height"] = st.Height
		s["at_bottom"] = st.AtBottom
		s["scroll_percent"] = st.Percent
	case "paginator":
		s["page"], s["total_pages"], s["per_page"] = st.Page, st.TotalPages, st.PerPage
	case "filepicker":
		s["directory"] = st.Directory
		s["highlighted"] = st.Highlighted
		s["entries"] = st.Entries
		if st.Path != "" {
			s["selected"] = st.Path
		}
	case "progress":
		s["percent"] = st.Percent
	case "help":
		s["show_all"] = st.ShowAll
	}
	return s
}

// CallTool answers a read from the copied state, or returns a write as
// one applyMsg for the host to apply on the dispatcher goroutine, with
// the Outcome the host Sets.
func (w compWidget) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	spec, ok := w.spec(action)
	if !ok {
		return nil, nil, fmt.Errorf("%s has no action %q", w.name, action)
	}
	if spec.ReadOnly {
		r, err := w.read(action, args)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.%s: %w", w.name, action, err)
		}
		return r, nil, nil
	}
	if err := w.precheck(action, args); err != nil {
		return nil, nil, fmt.Errorf("%s.%s: %w", w.name, action, err)
	}
	outcome := ui.NewOutcome()
	return outcome, []tea.Msg{applyMsg{Component: w.name, Action: action, Args: args, Outcome: outcome}}, nil
}

// spec returns the tool the widget offers for action.
func (w compWidget) spec(action string) (ui.ToolSpec, bool) {
	for _, s := range w.Tools() {
		if s.Action == action {
			return s, true
		}
	}
	return ui.ToolSpec{}, false
}

// read answers a read-only action from the copied state.
func (w compWidget) read(action string, args map[string]any) (any, error) {
	st := w.st
	switch action {
	case "get_value":
		if st.Password {
			return map[string]any{"length": st.Length, "password": true}, nil
		}
		return map[string]any{"value": st.Value}, nil
	case "get_options":
		offset, limit := st.LabelsFrom, 50
		if v, ok, err := intArg(args, "offset"); err != nil {
			return nil, err
		} else if ok {
			offset = v
		}
		if v, ok, err := intArg(args, "limit"); err != nil {
			return nil, err
		} else if ok {
			limit = v
		}
		if offset < 0 || limit < 1 {
			return nil, fmt.Errorf("offset must be 0 or more and limit 1 or more")
		}
		end := st.LabelsFrom + len(st.Labels)
		if st.Total > 0 && (offset < st.LabelsFrom || offset >= end) {
			return nil, fmt.Errorf("items %d to %d of %d are copied, around the selection: select an item near offset %d first", st.LabelsFrom, end-1, st.Total, offset)
		}
		items := []map[string]any{}
		for i := offset; i < end && len(items) < limit; i++ {
			items = append(items, map[string]any{"index": i, "label": st.Labels[i-st.LabelsFrom]})
		}
		return map[string]any{"items": items, "count": st.Total, "selected_index": st.Index}, nil
	case "get_selected":
		if st.Index < 0 || st.Index >= st.Total {
			return map[string]any{"index": -1}, nil
		}
		return map[string]any{"index": st.Index, "label": st.Selected}, nil
	case "get_rows":
		r := map[string]any{"columns": st.Columns, "rows": st.Rows, "cursor": st.Index, "row_count": st.Total}
		if st.Truncated {
			r["truncated"] = true
		}
		return r, nil
	case "get_content":
		r := map[string]any{"content": st.Content, "y_offset": st.YOffset, "total_lines": st.Total, "height": st.Height}
		if st.Truncated {
			r["truncated"] = true
		}
		return r, nil
	case "get_state":
		return w.State(), nil
	}
	return nil, fmt.Errorf("no such read")
}

// precheck rejects a write's arguments that cannot be right whatever the
// program does (out of range as of the copy, control characters), before
// anything is sent. apply checks again against the live model.
func (w compWidget) precheck(action string, args map[string]any) error {
	switch action {
	case "type_into", "filter":
		s, _ := args["text"].(string)
		multi := w.kind == "textarea" && action == "type_into"
		if multi {
			s = strings.ReplaceAll(s, "\r\n", "\n")
		}
		return cleanText(s, multi)
	case "select_row", "go_to_page", "scroll":
		for _, k := range []string{"index", "page", "line"} {
			if _, _, err := intArg(args, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// cleanText rejects text with ESC or other control characters (a newline
// is allowed when newline is set).
func cleanText(s string, newline bool) error {
	for _, r := range s {
		switch {
		case r == '\n' && newline:
		case r == 0x1b:
			return fmt.Errorf("text contains ESC: escape sequences cannot be typed")
		case unicode.IsControl(r):
			return fmt.Errorf("text contains the control character %U: type plain text", r)
		}
	}
	return nil
}

// intArg reads an integer argument (JSON numbers arrive as float64).
func intArg(args map[string]any, k string) (int, bool, error) {
	v, ok := args[k]
	if !ok || v == nil {
		return 0, false, nil
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		return n, true, nil
	case int64:
		f = float64(n)
	default:
		return 0, false, fmt.Errorf("%s must be an integer", k)
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		return 0, false, fmt.Errorf("%s must be an integer", k)
	}
	return int(f), true, nil
}
