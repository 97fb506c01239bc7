package ui

import (
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// RenderOptions says how to draw a tree for one terminal.
type RenderOptions struct {
	// Width and Height are the terminal's size in cells. Values below 1
	// are treated as 1.
	Width, Height int
	// Focus is the id of this terminal's focused widget, or "".
	Focus string
	// Local returns the terminal's local state for a widget id; nil means
	// every widget gets a fresh zero state.
	Local func(id string) *LocalState
	// Theme defaults to [DefaultTheme].
	Theme *Theme
	// Highlight is the id of a widget to draw in the theme's Activity
	// style (an agent just acted on it), or "".
	Highlight string
	// MarkFocus marks the focused widget in the text itself, for
	// terminals that cannot show the theme's colours: it is drawn two
	// columns narrower, after [FocusMarker] on its first line and two
	// spaces on the others.
	MarkFocus bool
	// OnPanic, if set, is told of a node that panicked while it was drawn
	// (its Render, Children, Shown or WidgetID), with the widget's id (""
	// if it has none or WidgetID panicked), the panic value and the stack.
	// The node is drawn as a one-line placeholder, the rest of the screen
	// as usual.
	OnPanic func(widgetID string, value any, stack []byte)
	// Cache, if set, reuses what unchanged widgets drew in the last frame
	// of the same terminal (see [RenderCache]).
	Cache *RenderCache
}

// Rect is a rectangle of screen cells.
type Rect struct{ X, Y, W, H int }

// Contains reports whether the cell (x, y) is inside r.
func (r Rect) Contains(x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.W && y < r.Y+r.H
}

// Hit is where a widget was drawn.
type Hit struct {
	ID   string
	Rect Rect
}

// Frame is a rendered tree.
type Frame struct {
	// Content is the screen text with styling, at most Height lines of at
	// most Width cells.
	Content string
	// Hits lists the widgets drawn, in paint order: a later hit that
	// overlaps an earlier one is on top of it.
	Hits []Hit
}

// HitTest returns the topmost widget drawn at (x, y) and the point relative
// to its top-left cell.
func (f Frame) HitTest(x, y int) (id string, rel ClickEvent, ok bool) {
	for i := len(f.Hits) - 1; i >= 0; i-- {
		h := f.Hits[i]
		if h.Rect.Contains(x, y) {
			return h.ID, ClickEvent{X: x - h.Rect.X, Y: y - h.Rect.Y}, true
		}
	}
	return "", ClickEvent{}, false
}

// Render draws root for one terminal: the tree in place, then any shown
// overlay centered on top of it.
func Render(root Node, opts RenderOptions) Frame {
	if opts.Cache != nil {
		opts.Cache.begin()
	}
	r := newRenderer(opts)
	base := r.node(root, r.width, r.height, false)
	if len(base.lines) > r.height {
		base.lines = base.lines[:r.height]
	}
	content := strings.Join(base.lines, "\n")
	hits := clipHits(base.hits, r.width, r.height)

	overlays := r.overlays
	r.inOverlay = true // overlays are drawn in place from now on
	for _, o := range overlays {
		if _, ok := o.(Widget); !ok {
			continue
		}
		ow := min(r.width-2, 72)
		if ow < 1 {
			ow = r.width
		}
		ob := r.node(o, ow, r.height, false)
		if len(ob.lines) > r.height {
			ob.lines = ob.lines[:r.height]
		}
		x := max(0, (r.width-ob.w)/2)
		y := max(0, (r.height-len(ob.lines))/2)
		canvas := lipgloss.NewCanvas(r.width, r.height)
		canvas.Compose(lipgloss.NewCompositor(
			lipgloss.NewLayer(content),
			lipgloss.NewLayer(strings.Join(ob.lines, "\n")).X(x).Y(y).Z(1),
		))
		content = canvas.Render()
		for _, h := range ob.hits {
			h.Rect.X += x
			h.Rect.Y += y
			hits = append(hits, h)
		}
	}
	return Frame{Content: content, Hits: hits}
}

// RenderNode draws a subtree at the given width without overlays or hit
// rectangles. Container widgets use it (through [RenderContext]) to draw
// their children.
func RenderNode(n Node, width int, opts RenderOptions) string {
	opts.Width = width
	r := newRenderer(opts)
	r.inOverlay = true
	return strings.Join(r.node(n, r.width, 0, false).lines, "\n")
}

type renderer struct {
	child         func(n Node, width int) string // RenderContext.Child
	width, height int
	focus         string
	local         func(string) *LocalState
	theme         *Theme
	overlays      []Overlay
	inOverlay     bool // overlays met while drawing an overlay are drawn in place
	redraw        bool // drawing a subtree again: its overlays are collected already
	opts          RenderOptions
}

func newRenderer(opts RenderOptions) *renderer {
	r := &renderer{
		width:  max(opts.Width, 1),
		height: max(opts.Height, 1),
		focus:  opts.Focus,
		local:  opts.Local,
		theme:  opts.Theme,
		opts:   opts,
	}
	if r.local == nil {
		r.local = func(string) *LocalState { return &LocalState{} }
	}
	if r.theme == nil {
		r.theme = builtinTheme
	}
	r.opts.Local, r.opts.Theme = r.local, r.theme
	r.child = func(n Node, w int) string { return RenderNode(n, w, r.opts) }
	return r
}

// builtinTheme is the theme of a render given none; nothing changes it.
var builtinTheme = DefaultTheme()

// block is a rendered subtree: lines no wider than the width it was
// rendered at, the widest line's width, and the widgets drawn in it.
//
// Its lines and hits may be the RenderCache's, shared with the frames
// before and after: neither is changed in place once node returns them
// (they are resliced, or copied into the parent's); widget copies a cached
// widget's lines before it marks or highlights them.
type block struct {
	lines []string
	w     int
	hits  []Hit
	// reused is set for a widget drawn from the RenderCache: its lines
	// are the ones it drew last frame.
	reused bool
}

func (b *block) empty() bool { return len(b.lines) == 0 && len(b.hits) == 0 }

// linesOf splits text into lines, cutting any line wider than width.
func linesOf(text string, width int) block {
	lines := strings.Split(text, "\n")
	b := block{lines: lines}
	for i, l := range lines {
		lw := lineWidth(l)
		if lw > width {
			l = ansi.Truncate(l, width, "")
			lines[i], lw = l, lineWidth(l)
		}
		b.w = max(b.w, lw)
	}
	return b
}

// node draws one node within width columns and, when height > 0, as few
// lines beyond height as its nodes can manage; fill says the node is in a
// [Fill] that was given height. App code that panics (a custom widget's
// Render, Children...) costs that node its drawing: it becomes a
// placeholder.
func (r *renderer) node(n Node, width, height int, fill bool) (b block) {
	width = max(width, 1)
	defer func() {
		if v := recover(); v != nil {
			id := safeID(n)
			if r.opts.OnPanic != nil {
				r.opts.OnPanic(id, v, debug.Stack())
			}
			b = r.failed(id, width)
		}
	}()
	switch n := n.(type) {
	case nil:
		return block{}
	case Overlay:
		if !n.Shown() {
			return block{}
		}
		if !r.inOverlay {
			if !r.redraw {
				r.overlays = append(r.overlays, n)
			}
			return block{}
		}
		if w, ok := n.(Widget); ok {
			return r.widget(w, width, height, fill)
		}
		return r.column(n.Children(), 0, width, height)
	case Widget:
		return r.widget(n, width, height, fill)
	case Column:
		return r.column(n.Items, n.Gap, width, height)
	case Row:
		return r.row(n.Items, n.Gap, width, height, fill)
	case Box:
		return r.box(n, width, height, fill)
	case Fill:
		return r.node(n.Child, width, height, fill)
	case Text:
		st := r.theme.Normal.Bold(n.Bold).Faint(n.Faint)
		if !strings.Contains(n.Text, "\n") && lineWidth(n.Text) <= width {
			return linesOf(Paint(st, n.Text), width)
		}
		return linesOf(Paint(st.Width(width), n.Text), width)
	default:
		return r.column(n.Children(), 0, width, height)
	}
}

// failed is the placeholder of a node that panicked while drawn.
func (r *renderer) failed(id string, width int) block {
	text := "⚠ widget failed"
	if id != "" {
		text = "⚠ widget " + dwClean(id) + " failed"
	}
	b := linesOf(Paint(r.theme.Muted, Truncate(text, width)), width)
	if id != "" {
		b.hits = []Hit{{ID: id, Rect: Rect{W: b.w, H: len(b.lines)}}}
	}
	return b
}

// safeID is a node's widget id, or "" when it has none or WidgetID
// panics.
func safeID(n Node) (id string) {
	defer func() {
		if recover() != nil {
			id = ""
		}
	}()
	if w, ok := n.(Widget); ok {
		return w.WidgetID()
	}
	return ""
}

// FocusMarker is drawn before the focused widget's first line under
// [RenderOptions.MarkFocus].
const FocusMarker = "> "

func (r *renderer) widget(w Widget, width, height int, fill bool) block {
	id := w.WidgetID()
	st := r.local(id)
	if st == nil {
		st = &LocalState{}
	}
	focused := id != "" && id == r.focus
	mark := focused && r.opts.MarkFocus && width > len(FocusMarker)
	if mark {
		width -= len(FocusMarker)
	}
	rc := RenderContext{
		Width:   width,
		Height:  max(height, 0),
		Fill:    fill && height > 0,
		Focused: focused,
		Local:   st,
		Theme:   r.theme,
		Child:   r.child,
	}
	var b block
	shared := false // b.lines are the cache's too: copied before they are changed
	if c := r.opts.Cache; c != nil && id != "" && cacheable(w) {
		before := *st
		e, ok := c.lookup(id, w, st, rc)
		if ok {
			*st = e.after
			b = block{lines: e.lines, w: e.blockW, hits: e.hits, reused: true}
		} else {
			b = linesOf(w.Render(rc), width)
			b.hits = []Hit{{ID: id, Rect: Rect{W: b.w, H: len(b.lines)}}}
			e = cachedWidget{w: w, before: before, after: *st, width: rc.Width, height: rc.Height, fill: rc.Fill,
				focused: rc.Focused, theme: rc.Theme, lines: b.lines, blockW: b.w, hits: b.hits}
		}
		c.store(id, e)
		shared = true
	} else {
		b = linesOf(w.Render(rc), width)
	}
	if shared && ((id != "" && id == r.opts.Highlight) || mark) {
		b.lines = slices.Clone(b.lines)
	}
	if id != "" && id == r.opts.Highlight {
		// Its own colors give way to one unmistakable look: reverse video
		// reads on 16-color and monochrome terminals too.
		for i, l := range b.lines {
			b.lines[i] = Paint(r.theme.Activity, padLine(ansi.Strip(l), b.w))
		}
	}
	if !mark {
		if b.hits == nil {
			b.hits = []Hit{{ID: id, Rect: Rect{W: b.w, H: len(b.lines)}}}
		}
		return b
	}
	if len(b.lines) == 0 {
		b.lines = []string{""}
	}
	b.hits = []Hit{{ID: id, Rect: Rect{X: len(FocusMarker), W: b.w, H: len(b.lines)}}}
	indent := strings.Repeat(" ", len(FocusMarker))
	for i, l := range b.lines {
		if i == 0 {
			b.lines[i] = FocusMarker + l
		} else {
			b.lines[i] = indent + l
		}
	}
	b.w += len(FocusMarker)
	return b
}

// column stacks items. With a height budget it fits them in: when they
// are taller, the tallest items are drawn again with less height (widgets
// that scroll show fewer rows), tallest first, until they fit; what still
// does not fit is cut off the bottom of the tallest items; when they are
// shorter, the height left is shared among the
// [Fill] items, drawn again with their share added.
func (r *renderer) column(items []Node, gap, width, height int) block {
	blocks := make([]block, len(items))
	for i, it := range items {
		blocks[i] = r.node(it, width, height, false)
	}
	if height > 0 {
		r.fit(items, blocks, gap, width, height)
	}
	nl, nh, shown := 0, 0, 0
	for _, b := range blocks {
		if !b.empty() {
			nl, nh, shown = nl+len(b.lines), nh+len(b.hits), shown+1
		}
	}
	out := block{lines: make([]string, 0, nl+gap*max(0, shown-1)), hits: make([]Hit, 0, nh)}
	for _, b := range blocks {
		if b.empty() {
			continue
		}
		if len(out.lines) > 0 {
			for range gap {
				out.lines = append(out.lines, "")
			}
		}
		y := len(out.lines)
		for _, h := range b.hits {
			h.Rect.Y += y
			out.hits = append(out.hits, h)
		}
		out.lines = append(out.lines, b.lines...)
		out.w = max(out.w, b.w)
	}
	return out
}

// fit redraws a column's blocks so that they take height lines where they
// can; see column.
func (r *renderer) fit(items []Node, blocks []block, gap, width, height int) {
	total, shown := 0, 0
	var fills []int
	for i, b := range blocks {
		if b.empty() {
			continue
		}
		total += len(b.lines)
		shown++
		if _, ok := items[i].(Fill); ok {
			fills = append(fills, i)
		}
	}
	total += gap * max(0, shown-1)
	redraw := r.redraw
	r.redraw = true // overlays were collected by the first drawing
	defer func() { r.redraw = redraw }()
	switch {
	case total > height:
		order := make([]int, len(blocks))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return len(blocks[order[a]].lines) > len(blocks[order[b]].lines) })
		over := total - height
		for _, i := range order {
			cur := len(blocks[i].lines)
			if over <= 0 || cur <= 1 {
				break
			}
			if b := r.node(items[i], width, max(1, cur-over), false); len(b.lines) < cur {
				over -= cur - len(b.lines)
				blocks[i] = b
			}
		}
		// What cannot shrink is cut, tallest first, so that the items
		// below it (a status line) stay on the screen.
		sort.SliceStable(order, func(a, b int) bool { return len(blocks[order[a]].lines) > len(blocks[order[b]].lines) })
		for _, i := range order {
			cur := len(blocks[i].lines)
			if over <= 0 || cur <= 1 {
				break
			}
			keep := max(1, cur-over)
			over -= cur - keep
			blocks[i].lines = blocks[i].lines[:keep]
			blocks[i].hits = clipHits(blocks[i].hits, width, keep)
		}
	case total < height && len(fills) > 0:
		extra := height - total
		for k, i := range fills {
			share := extra / len(fills)
			if k < extra%len(fills) {
				share++
			}
			blocks[i] = r.node(items[i], width, len(blocks[i].lines)+share, true)
		}
	}
}

func (r *renderer) row(items []Node, gap, width, height int, fill bool) block {
	visible := items // unless an overlay is hidden
	for i, it := range items {
		if o, ok := it.(Overlay); ok && !o.Shown() {
			if len(visible) == len(items) {
				visible = append(make([]Node, 0, len(items)), items[:i]...)
			}
			continue
		}
		if len(visible) < len(items) {
			visible = append(visible, it)
		}
	}
	n := len(visible)
	if n == 0 {
		return block{}
	}
	childW := max(1, (width-gap*(n-1))/n)
	blocks := make([]block, n)
	tallest := 0
	for i, it := range visible {
		blocks[i] = r.node(it, childW, height, fill)
		tallest = max(tallest, len(blocks[i].lines))
	}
	var out block
	out.lines = make([]string, tallest)
	spacer := strings.Repeat(" ", gap)
	blank := strings.Repeat(" ", childW)
	var sb strings.Builder
	for y := range tallest {
		sb.Reset()
		for i, b := range blocks {
			if i > 0 {
				sb.WriteString(spacer)
			}
			if y < len(b.lines) {
				sb.WriteString(padLine(b.lines[y], childW))
			} else {
				sb.WriteString(blank)
			}
		}
		out.lines[y] = sb.String()
	}
	out.w = n*childW + gap*(n-1)
	nh := 0
	for _, b := range blocks {
		nh += len(b.hits)
	}
	out.hits = make([]Hit, 0, nh)
	for i, b := range blocks {
		x := i * (childW + gap)
		for _, h := range b.hits {
			h.Rect.X += x
			out.hits = append(out.hits, h)
		}
	}
	return out
}

func (r *renderer) box(b Box, width, height int, fill bool) block {
	inner := max(1, width-2)
	innerH := 0
	if height > 0 {
		innerH = max(1, height-2)
	}
	child := r.node(b.Child, inner, innerH, fill)
	border := r.theme.Border
	focused := false
	for _, h := range child.hits {
		if h.ID == r.focus && r.focus != "" {
			border = r.theme.FocusBorder
			focused = true
			break
		}
	}
	out := block{w: inner + 2}
	// A box around a widget drawn as it was last frame is drawn as it
	// was too: measuring and padding every line again is most of a big
	// table's frame.
	var key cachedBox
	var childKey cacheKey
	if c := r.opts.Cache; c != nil && child.reused {
		if w, ok := b.Child.(Widget); ok && cacheable(w) {
			childKey = cacheKey{w.WidgetID(), innerH, fill && innerH > 0, focused}
			key = cachedBox{title: b.Title, inner: inner, lines: len(child.lines), focused: focused,
				highlighted: childKey.id == r.opts.Highlight, theme: r.theme}
			if e, ok := c.lookupBox(childKey, key); ok {
				out.lines = e.out // shared with the cache: never changed in place
				c.storeBox(childKey, e)
				out.hits = boxHits(child.hits)
				return out
			}
		}
	}
	out.lines = make([]string, 0, len(child.lines)+2)
	title := b.Title
	if title != "" && inner >= 5 {
		title = Truncate(title, inner-4)
		fill := inner - 3 - lineWidth(title)
		out.lines = append(out.lines, Paint(border, "╭─ ")+Paint(r.theme.Title, title)+Paint(border, " "+strings.Repeat("─", max(0, fill))+"╮"))
	} else {
		out.lines = append(out.lines, Paint(border, "╭"+strings.Repeat("─", inner)+"╮"))
	}
	side := Paint(border, "│")
	lines := child.lines
	if len(lines) == 0 {
		lines = []string{""}
	}
	for _, l := range lines {
		out.lines = append(out.lines, side+padLine(l, inner)+side)
	}
	out.lines = append(out.lines, Paint(border, "╰"+strings.Repeat("─", inner)+"╯"))
	out.hits = boxHits(child.hits)
	if childKey.id != "" {
		key.out = out.lines
		r.opts.Cache.storeBox(childKey, key)
	}
	return out
}

// boxHits moves a box's child's hits inside its border.
func boxHits(child []Hit) []Hit {
	out := make([]Hit, 0, len(child))
	for _, h := range child {
		h.Rect.X++
		h.Rect.Y++
		out = append(out, h)
	}
	return out
}

func clipHits(hits []Hit, w, h int) []Hit {
	out := hits[:0:0]
	for _, hit := range hits {
		if hit.Rect.X >= w || hit.Rect.Y >= h {
			continue
		}
		hit.Rect.W = min(hit.Rect.W, w-hit.Rect.X)
		hit.Rect.H = min(hit.Rect.H, h-hit.Rect.Y)
		out = append(out, hit)
	}
	return out
}
