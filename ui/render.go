package ui

import (
	"strings"

	"charm.land/lipgloss/v2"
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
	r := newRenderer(opts)
	base := r.node(root, r.width)
	content := clip(base.text, r.width, r.height)
	hits := clipHits(base.hits, r.width, r.height)

	for _, o := range r.overlays {
		w, ok := o.(Widget)
		if !ok {
			continue
		}
		ow := min(r.width-2, 72)
		if ow < 1 {
			ow = r.width
		}
		ob := r.widget(w, ow)
		ob.text = clip(ob.text, r.width, r.height)
		x := max(0, (r.width-lipgloss.Width(ob.text))/2)
		y := max(0, (r.height-lipgloss.Height(ob.text))/2)
		canvas := lipgloss.NewCanvas(r.width, r.height)
		canvas.Compose(lipgloss.NewCompositor(
			lipgloss.NewLayer(content),
			lipgloss.NewLayer(ob.text).X(x).Y(y).Z(1),
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
	return r.node(n, r.width).text
}

type renderer struct {
	width, height int
	focus         string
	local         func(string) *LocalState
	theme         *Theme
	overlays      []Overlay
	inOverlay     bool // overlays met while drawing an overlay are drawn in place
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
		r.theme = DefaultTheme()
	}
	r.opts.Local, r.opts.Theme = r.local, r.theme
	return r
}

type block struct {
	text string
	hits []Hit
}

func (r *renderer) node(n Node, width int) block {
	width = max(width, 1)
	switch n := n.(type) {
	case nil:
		return block{}
	case Overlay:
		if !n.Shown() {
			return block{}
		}
		if !r.inOverlay {
			r.overlays = append(r.overlays, n)
			return block{}
		}
		if w, ok := n.(Widget); ok {
			return r.widget(w, width)
		}
		return r.column(n.Children(), 0, width)
	case Widget:
		return r.widget(n, width)
	case Column:
		return r.column(n.Items, n.Gap, width)
	case Row:
		return r.row(n.Items, n.Gap, width)
	case Box:
		return r.box(n, width)
	case Text:
		st := r.theme.Normal.Bold(n.Bold).Faint(n.Faint).Width(width)
		return block{text: st.Render(n.Text)}
	default:
		return r.column(n.Children(), 0, width)
	}
}

func (r *renderer) widget(w Widget, width int) block {
	id := w.WidgetID()
	st := r.local(id)
	if st == nil {
		st = &LocalState{}
	}
	rc := RenderContext{
		Width:   width,
		Focused: id != "" && id == r.focus,
		Local:   st,
		Theme:   r.theme,
		Child: func(n Node, w int) string {
			return RenderNode(n, w, r.opts)
		},
	}
	text := lipgloss.NewStyle().MaxWidth(width).Render(w.Render(rc))
	return block{
		text: text,
		hits: []Hit{{ID: id, Rect: Rect{W: lipgloss.Width(text), H: lipgloss.Height(text)}}},
	}
}

func (r *renderer) column(items []Node, gap, width int) block {
	var parts []string
	var hits []Hit
	y := 0
	for _, it := range items {
		b := r.node(it, width)
		if b.text == "" && len(b.hits) == 0 {
			continue
		}
		if len(parts) > 0 && gap > 0 {
			parts = append(parts, strings.Repeat("\n", gap-1))
			y += gap
		}
		for _, h := range b.hits {
			h.Rect.Y += y
			hits = append(hits, h)
		}
		parts = append(parts, b.text)
		y += lipgloss.Height(b.text)
	}
	return block{text: strings.Join(parts, "\n"), hits: hits}
}

func (r *renderer) row(items []Node, gap, width int) block {
	var visible []Node
	for _, it := range items {
		if o, ok := it.(Overlay); ok && !o.Shown() {
			continue
		}
		visible = append(visible, it)
	}
	n := len(visible)
	if n == 0 {
		return block{}
	}
	childW := max(1, (width-gap*(n-1))/n)
	var parts []string
	var hits []Hit
	x := 0
	for i, it := range visible {
		b := r.node(it, childW)
		text := lipgloss.NewStyle().Width(childW).MaxWidth(childW).Render(b.text)
		if i > 0 && gap > 0 {
			parts = append(parts, strings.Repeat(" ", gap))
			x += gap
		}
		for _, h := range b.hits {
			h.Rect.X += x
			hits = append(hits, h)
		}
		parts = append(parts, text)
		x += childW
	}
	return block{text: lipgloss.JoinHorizontal(lipgloss.Top, parts...), hits: hits}
}

func (r *renderer) box(b Box, width int) block {
	inner := max(1, width-2)
	child := r.node(b.Child, inner)
	border := r.theme.Border
	for _, h := range child.hits {
		if h.ID == r.focus && r.focus != "" {
			border = r.theme.FocusBorder
			break
		}
	}
	lines := strings.Split(child.text, "\n")
	var sb strings.Builder
	title := b.Title
	if title != "" && inner >= 5 {
		title = Truncate(title, inner-4)
		fill := inner - 3 - lipgloss.Width(title)
		sb.WriteString(border.Render("╭─ ") + r.theme.Title.Render(title) + border.Render(" "+strings.Repeat("─", max(0, fill-1))+"╮"))
	} else {
		sb.WriteString(border.Render("╭" + strings.Repeat("─", inner) + "╮"))
	}
	pad := lipgloss.NewStyle().Width(inner).MaxWidth(inner)
	for _, l := range lines {
		sb.WriteString("\n" + border.Render("│") + pad.Render(l) + border.Render("│"))
	}
	sb.WriteString("\n" + border.Render("╰"+strings.Repeat("─", inner)+"╯"))
	hits := make([]Hit, 0, len(child.hits))
	for _, h := range child.hits {
		h.Rect.X++
		h.Rect.Y++
		hits = append(hits, h)
	}
	return block{text: sb.String(), hits: hits}
}

// Truncate cuts s to at most w cells, marking the cut with an ellipsis.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) <= w {
		return s
	}
	if w == 1 {
		return "…"
	}
	return lipgloss.NewStyle().MaxWidth(w-1).Render(s) + "…"
}

// clip keeps at most h lines of at most w cells.
func clip(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	return lipgloss.NewStyle().MaxWidth(w).Render(strings.Join(lines, "\n"))
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
