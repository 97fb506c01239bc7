package web

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Defaults of [Options].
const (
	// DefaultWidth is the width, in cells, app-defined widgets are drawn
	// at when Options.Width is zero.
	DefaultWidth = 80
	// DefaultMaxBytes bounds the HTML of one Render when
	// Options.MaxBytes is zero.
	DefaultMaxBytes = 4 << 20
	// DefaultMaxRows bounds the rows of one table, list, tree, menu,
	// viewport or chart when Options.MaxRows is zero.
	DefaultMaxRows = 500
	// maxDepth bounds the nesting of layout nodes followed.
	maxDepth = 64
	// maxCols bounds the columns of a table written.
	maxCols = 64
	// maxStateEntries bounds the state entries shown beside an
	// app-defined widget.
	maxStateEntries = 32
	// hostedWidth is the width a hosted program's screen is drawn at
	// when Options.Width is zero: wide enough that it is not cropped.
	hostedWidth = 1000
)

// Options are what a render needs besides the tree. The zero value works.
type Options struct {
	// Width is the width, in cells, app-defined widgets (and a hosted
	// program's screen) are drawn at as text; zero means [DefaultWidth]
	// (a hosted screen: its own width).
	Width int
	// Focus is the id of the focused widget, or "": its element carries
	// data-focused="true" and aria-current="true".
	Focus string
	// Local returns a widget's local state (as a terminal keeps it), or
	// nil; nil means every widget gets a zero state. Render reads copies:
	// it never changes the states it is given.
	Local func(id string) *ui.LocalState
	// MaxBytes bounds the output, roughly: once it is passed, the nodes
	// left are not written and a note says so. Zero means
	// [DefaultMaxBytes].
	MaxBytes int
	// MaxRows bounds the rows of any one table, list, tree, menu,
	// viewport or chart written; the rest are counted in a note. Zero
	// means [DefaultMaxRows].
	MaxRows int
	// ReadOnly renders for a viewer who may not act: inputs and text
	// areas are readonly, buttons aria-disabled (they keep their roles
	// and names, which a screen reader still reads).
	ReadOnly bool
}

// Render returns root as an HTML5 fragment.
func Render(root ui.Node, opts Options) []byte {
	r := newRenderer(opts)
	if h, ok := root.(ui.Hosted); ok {
		r.hosted(h)
	} else {
		r.node(root, 0, "")
	}
	r.finish()
	return r.b.Bytes()
}

// RenderWidget returns the element of the widget id in root, exactly as
// [Render] writes it within the whole fragment (the same bytes: its name
// may come from the box it is in), and false when root shows no such
// widget (none with that id, or inside a closed modal). It is what a live
// channel sends to replace that one element, found by its data-id.
func RenderWidget(root ui.Node, id string, opts Options) ([]byte, bool) {
	if h, ok := root.(ui.Hosted); ok {
		if w, ok := h.(ui.Widget); ok && safeID(w) == id {
			return Render(root, opts), true
		}
		for _, c := range safeChildren(h) {
			if w, label, ok := locate(c, id, 1, ""); ok {
				return renderOne(w, label, opts), true
			}
		}
		return nil, false
	}
	w, label, ok := locate(root, id, 0, "")
	if !ok {
		return nil, false
	}
	return renderOne(w, label, opts), true
}

func renderOne(w ui.Widget, label string, opts Options) []byte {
	r := newRenderer(opts)
	r.node(w, 0, label)
	r.finish()
	return r.b.Bytes()
}

// locate finds the widget id where node would write it, with the label
// node would give it. It follows node's walk: a widget's own children are
// its business (but a shown modal's body), a Box names its one child.
func locate(n ui.Node, id string, depth int, label string) (w ui.Widget, lbl string, ok bool) {
	defer func() {
		if recover() != nil {
			w, lbl, ok = nil, "", false
		}
	}()
	if n == nil || depth > maxDepth {
		return nil, "", false
	}
	switch n := n.(type) {
	case ui.Widget:
		if n.WidgetID() == id {
			return n, label, true
		}
		if m, isModal := deref(n).(ui.Modal); isModal && m.Visible {
			return locate(m.Body, id, depth+1, "")
		}
		return nil, "", false
	case ui.Column:
		return locateIn(n.Items, id, depth, label)
	case ui.Row:
		return locateIn(n.Items, id, depth, label)
	case ui.Fill:
		return locate(n.Child, id, depth+1, label)
	case ui.Box:
		return locate(n.Child, id, depth+1, oneLine(n.Title))
	case ui.Text:
		return nil, "", false
	default:
		for _, c := range n.Children() {
			if w, l, ok := locate(c, id, depth+1, ""); ok {
				return w, l, true
			}
		}
		return nil, "", false
	}
}

func locateIn(items []ui.Node, id string, depth int, label string) (ui.Widget, string, bool) {
	if len(items) != 1 {
		label = ""
	}
	for _, c := range items {
		if w, l, ok := locate(c, id, depth+1, label); ok {
			return w, l, true
		}
	}
	return nil, "", false
}

// safeID is w's id, or "" when its WidgetID panics.
func safeID(w ui.Widget) (id string) {
	defer func() {
		if recover() != nil {
			id = ""
		}
	}()
	return w.WidgetID()
}

// safeChildren is n's children, or none when Children panics.
func safeChildren(n ui.Node) (c []ui.Node) {
	defer func() {
		if recover() != nil {
			c = nil
		}
	}()
	return n.Children()
}

// renderer writes one fragment.
type renderer struct {
	b         bytes.Buffer
	opts      Options
	truncated bool // nodes were left out for MaxBytes
	parts     *[]Part
	inWidget  int // widgets open around what is written now
}

// Part is one widget's element within a fragment [RenderParts] wrote: its
// data-id, the span of its bytes, and whether it is outermost (inside no
// other widget's element). A live channel that has sent a fragment
// replaces what changed by sending changed outermost parts alone.
type Part struct {
	ID         string
	Start, End int
	Outer      bool
}

// RenderParts is [Render], with the span of every widget's element in
// the fragment.
func RenderParts(root ui.Node, opts Options) ([]byte, []Part) {
	r := newRenderer(opts)
	var parts []Part
	r.parts = &parts
	if h, ok := root.(ui.Hosted); ok {
		r.hosted(h)
	} else {
		r.node(root, 0, "")
	}
	r.finish()
	return r.b.Bytes(), parts
}

func newRenderer(opts Options) *renderer {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = DefaultMaxRows
	}
	return &renderer{opts: opts}
}

// full reports whether the output passed MaxBytes; it notes that
// something is left out.
func (r *renderer) full() bool {
	if r.b.Len() >= r.opts.MaxBytes {
		r.truncated = true
		return true
	}
	return false
}

func (r *renderer) finish() {
	if r.truncated {
		r.b.WriteString(`<p class="raxol-note raxol-truncated" role="note">The rest is too large to show.</p>`)
	}
}

// on marks a boolean attribute in attrs.
const on = "\x00on"

// open writes a start tag with attrs, name and value pairs: values are
// escaped and quoted, [on] writes the name alone, and "" leaves the
// attribute out.
func (r *renderer) open(tag string, attrs ...string) {
	if r.opts.ReadOnly {
		switch tag {
		case "input", "textarea":
			attrs = append(attrs, "readonly", on, "aria-readonly", "true")
		case "button":
			attrs = append(attrs, "aria-disabled", "true")
		}
	}
	r.b.WriteByte('<')
	r.b.WriteString(tag)
	for i := 0; i+1 < len(attrs); i += 2 {
		name, v := attrs[i], attrs[i+1]
		if v == "" {
			continue
		}
		r.b.WriteByte(' ')
		r.b.WriteString(name)
		if v == on {
			continue
		}
		r.b.WriteString(`="`)
		r.b.WriteString(esc(v))
		r.b.WriteByte('"')
	}
	r.b.WriteByte('>')
}

func (r *renderer) close(tag string) {
	r.b.WriteString("</")
	r.b.WriteString(tag)
	r.b.WriteByte('>')
}

// text writes app text, cleaned and escaped.
func (r *renderer) text(s string) { r.b.WriteString(esc(clean(s))) }

// drawnText writes text drawn already cleaned (by drawn), escaped.
func (r *renderer) drawnText(s string) { r.b.WriteString(esc(s)) }

// drawnRaw is a widget's drawing with its styles (escape sequences), to
// be written by drawnStyled.
func (r *renderer) drawnRaw(w ui.Widget, width int) string {
	return ui.RenderNode(w, width, ui.RenderOptions{
		Width: width,
		Focus: r.opts.Focus,
		Local: r.local,
		Theme: ui.DefaultTheme(),
	})
}

// line writes app text on one line, cleaned and escaped.
func (r *renderer) line(s string) { r.b.WriteString(esc(oneLine(s))) }

// elem writes <tag attrs>text</tag>, text on one line.
func (r *renderer) elem(tag, text string, attrs ...string) {
	r.open(tag, attrs...)
	r.line(text)
	r.close(tag)
}

// note writes a note of rows left out.
func (r *renderer) note(shown, total int, what string) {
	if shown >= total {
		return
	}
	r.elem("p", strconv.Itoa(total-shown)+" more "+what+" not shown", "class", "raxol-note", "role", "note")
}

// flag is the attribute value of a boolean: [on] or "" (left out).
func flag(b bool) string {
	if b {
		return on
	}
	return ""
}

// boolStr is "true" or "false", for aria attributes that take either.
func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// node writes one node of the tree. depth counts the layout levels above
// it; label is the accessible name a Box gives the widget directly in it.
// A node whose app code panics (a Children, WidgetID or Render of an
// app-defined node) is written as a placeholder, the rest as usual.
func (r *renderer) node(n ui.Node, depth int, label string) {
	if n == nil {
		return
	}
	if r.full() {
		return
	}
	start, inWidget := r.b.Len(), r.inWidget
	defer func() {
		if v := recover(); v != nil {
			r.inWidget = inWidget
			r.b.Truncate(start)
			r.elem("p", "This part could not be shown.", "class", "raxol-note raxol-failed", "role", "note")
		}
	}()
	if depth > maxDepth {
		r.elem("p", "Nested too deeply to show.", "class", "raxol-note", "role", "note")
		return
	}
	switch n := n.(type) {
	case ui.Widget:
		if r.parts == nil {
			r.widget(n, depth, label)
			return
		}
		at, mark := r.b.Len(), len(*r.parts)
		r.inWidget++
		r.widget(n, depth, label)
		r.inWidget--
		if r.b.Len() > at && !r.truncated {
			*r.parts = slices.Insert(*r.parts, mark, Part{ID: dataID(safeID(n)), Start: at, End: r.b.Len(), Outer: r.inWidget == 0})
		}
	case ui.Column:
		r.layout("raxol-column", n.Items, n.Gap, depth, label)
	case ui.Row:
		r.layout("raxol-row", n.Items, n.Gap, depth, label)
	case ui.Fill:
		r.open("div", "class", "raxol-fill")
		r.node(n.Child, depth+1, label)
		r.close("div")
	case ui.Box:
		r.box(n, depth)
	case ui.Text:
		class := "raxol-text"
		if n.Bold {
			class += " raxol-bold"
		}
		if n.Faint {
			class += " raxol-faint"
		}
		r.open("p", "class", class)
		r.text(n.Text)
		r.close("p")
	default: // an app-defined layout node
		r.layout("raxol-group", n.Children(), 0, depth, "")
	}
}

// layout writes a column or row of items. A label reaches the items only
// when there is one.
func (r *renderer) layout(class string, items []ui.Node, gap, depth int, label string) {
	if gap > 0 {
		class += " raxol-gap-" + strconv.Itoa(min(gap, 4))
	}
	if len(items) != 1 {
		label = ""
	}
	r.open("div", "class", class)
	for _, it := range items {
		if r.full() {
			break
		}
		r.node(it, depth+1, label)
	}
	r.close("div")
}

// box writes a Box: a section named by its title, shown as a heading. The
// title names the widget directly inside too (a table in a box).
func (r *renderer) box(b ui.Box, depth int) {
	title := oneLine(b.Title)
	r.open("section", "class", "raxol-box", "aria-label", title)
	if title != "" {
		r.elem("h2", title, "class", "raxol-box-title")
	}
	r.node(b.Child, depth+1, title)
	r.close("section")
}

// hosted writes a hosted program: its screen as text, and its components
// (the tree's widgets) beside it.
func (r *renderer) hosted(h ui.Hosted) {
	start, inWidget := r.b.Len(), r.inWidget
	defer func() {
		if v := recover(); v != nil {
			r.inWidget = inWidget
			r.b.Truncate(start)
			r.elem("p", "The program's screen could not be shown.", "class", "raxol-note raxol-failed", "role", "note")
		}
	}()
	id := ""
	var screen string
	if w, ok := h.(ui.Widget); ok {
		id = w.WidgetID()
		width := r.opts.Width
		if width <= 0 {
			width = hostedWidth
		}
		screen = r.drawnRaw(w, width)
	}
	attrs := []string{"class", "raxol-hosted"}
	if id != "" {
		attrs = append(attrs, "data-id", dataID(id), "id", domID(id))
	}
	r.open("div", attrs...)
	r.open("section", "class", "raxol-screen", "aria-label", "Screen", "tabindex", "0") // focusable: a driver types to the program here
	r.open("pre")
	r.drawnStyled(screen, maxDrawnRunes)
	r.close("pre")
	r.close("section")
	if kids := h.Children(); len(kids) > 0 {
		r.open("div", "class", "raxol-components", "role", "group", "aria-label", "Components")
		for _, c := range kids {
			if r.full() {
				break
			}
			r.node(c, 1, "")
		}
		r.close("div")
	}
	r.close("div")
}

// local returns a copy of the widget's local state.
func (r *renderer) local(id string) *ui.LocalState {
	st := &ui.LocalState{}
	if r.opts.Local != nil {
		if s := r.opts.Local(id); s != nil {
			*st = *s
		}
	}
	return st
}

// drawn is the widget as a terminal draws it at width, as plain text.
func (r *renderer) drawn(w ui.Widget, width int) string {
	return cleanN(ui.RenderNode(w, width, ui.RenderOptions{
		Width: width,
		Focus: r.opts.Focus,
		Local: r.local,
		Theme: ui.DefaultTheme(),
	}), maxDrawnRunes)
}
