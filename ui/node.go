package ui

import (
	tea "charm.land/bubbletea/v2"
)

// Node is one element of the component tree.
type Node interface {
	// Children returns the node's direct children in order, or nil.
	Children() []Node
}

// Model is an app: shaped like a Bubble Tea model, but its view is a
// component tree rather than a string.
//
// Update must not mutate the receiver in a way visible through other copies
// (use value receivers, copy slices before changing them): the dispatcher
// keeps the previous model to restore when an Update panics, and snapshots
// hand the model to readers on other goroutines.
type Model interface {
	Init() tea.Cmd
	Update(msg tea.Msg) (Model, tea.Cmd)
	View() Node
}

// Event is an input event routed to a widget: a [tea.KeyPressMsg], a
// [tea.PasteMsg] or a [ClickEvent].
type Event = tea.Msg

// ClickEvent is a left mouse click at (X, Y), relative to the top-left cell
// of the widget's rendered rectangle.
type ClickEvent struct{ X, Y int }

// LocalState is a widget's per-terminal state that the app model does not
// own: text cursors, highlighted rows, scroll positions. Each terminal keeps
// one per widget id. Widgets clamp these values themselves, since the tree
// may have changed since they were last set.
type LocalState struct {
	Cursor int // text cursor, in runes
	Row    int // highlighted row or item
	Col    int // highlighted column
	Offset int // first visible row
	Data   any // free for app-defined widgets
}

// RenderContext is what a widget needs to draw itself.
type RenderContext struct {
	// Width is the number of columns available (at least 1).
	Width int
	// Height is the most lines the widget should take, or 0 when there is
	// no bound (e.g. drawn by RenderContext.Child). The screen's height
	// comes down through the layout: a widget that scrolls shows fewer rows
	// than its own Height asks for when they would not fit, keeping the
	// highlighted one in view.
	Height int
	// Fill is set when the widget is drawn in a [Fill] that was given the
	// height left: it may use all of Height, more rows than its own Height
	// field asks for.
	Fill bool
	// Focused reports whether this terminal's focus is on the widget.
	Focused bool
	// Local is the terminal's local state for the widget (never nil).
	Local *LocalState
	// Theme holds the styles to draw with (never nil).
	Theme *Theme
	// Child draws a subtree (a container widget's content) at the given
	// width with the same focus, local state and theme (never nil).
	Child func(n Node, width int) string
}

// Widget is an interactive or data-bearing element of the tree, identified
// by an id unique within its tree.
type Widget interface {
	Node
	// WidgetID returns the widget's id.
	WidgetID() string
	// Focusable reports whether the widget can take keyboard focus now
	// (interactive and enabled).
	Focusable() bool
	// Render draws the widget within rc.Width columns.
	Render(rc RenderContext) string
	// HandleEvent turns an input event into app messages. It may update
	// st (cursor, highlight) and returns nil when the event means nothing
	// to the widget.
	HandleEvent(ev Event, st *LocalState) []tea.Msg
}

// DefaultMaxLen caps the text of inputs whose MaxLen is zero, and the runes
// taken from one paste; the rest is dropped.
const DefaultMaxLen = 4096

// Column stacks its children vertically with Gap blank lines between them.
type Column struct {
	Items []Node
	Gap   int
}

// Row places its children side by side, sharing the width equally, with Gap
// blank columns between them.
type Row struct {
	Items []Node
	Gap   int
}

// Box draws a border around its child, with an optional title on the top
// border.
type Box struct {
	Title string
	Child Node
}

// Fill gives its child the height its [Column] has left: when a column's
// items take fewer lines than the screen (or the box, or the fill) they are
// drawn in, the lines left are shared among its Fill items, whose child is
// drawn with RenderContext.Fill set and Height raised by its share. A
// widget that scrolls (Table, SelectList, Tree, Menu, Viewport) then shows
// more rows than its own Height asks for; Box, Row and Fill pass the extra
// height on, a Column shares it among its own Fill items. Anywhere else (a
// Row's item, the root) a Fill is just its child.
type Fill struct {
	Child Node
}

// Text is a static piece of text. Long lines are wrapped to the width.
type Text struct {
	Text  string
	Bold  bool
	Faint bool
}

func (c Column) Children() []Node { return c.Items }
func (r Row) Children() []Node    { return r.Items }
func (b Box) Children() []Node {
	if b.Child == nil {
		return nil
	}
	return []Node{b.Child}
}
func (Text) Children() []Node { return nil }
func (f Fill) Children() []Node {
	if f.Child == nil {
		return nil
	}
	return []Node{f.Child}
}

// Walk visits n and its descendants in pre-order. It stops descending into
// a node's children when visit returns false.
func Walk(n Node, visit func(Node) bool) {
	if n == nil {
		return
	}
	if !visit(n) {
		return
	}
	for _, c := range n.Children() {
		Walk(c, visit)
	}
}

// Find returns the first widget in pre-order with the given id.
func Find(root Node, id string) (Widget, bool) {
	var found Widget
	Walk(root, func(n Node) bool {
		if found != nil {
			return false
		}
		if w, ok := n.(Widget); ok && w.WidgetID() == id {
			found = w
			return false
		}
		return true
	})
	return found, found != nil
}

// Overlay is implemented by nodes drawn over the rest of the screen instead
// of in place (a visible [Modal]). While one is shown, focus is trapped in
// the topmost one.
type Overlay interface {
	Node
	// Shown reports whether the overlay is currently displayed.
	Shown() bool
}

// ActiveOverlay returns the last shown overlay in pre-order, the one on
// top. Overlays inside a hidden one are not shown.
func ActiveOverlay(root Node) (Overlay, bool) {
	var top Overlay
	Walk(root, func(n Node) bool {
		if o, ok := n.(Overlay); ok {
			if !o.Shown() {
				return false // nothing inside a hidden overlay is shown
			}
			top = o
		}
		return true
	})
	return top, top != nil
}

// FocusOrder returns the ids of the focusable widgets in tree order. While
// an overlay is shown, only the overlay and its descendants are included,
// which is how a modal traps focus. Hidden overlays and their content are
// skipped.
func FocusOrder(root Node) []string {
	scope := root
	if o, ok := ActiveOverlay(root); ok {
		scope = o
	}
	var ids []string
	first := true
	Walk(scope, func(n Node) bool {
		isScope := first // the first node visited is scope itself
		first = false
		if o, ok := n.(Overlay); ok && (!isScope || !o.Shown()) {
			// A hidden overlay has nothing to focus. A shown one below the
			// scope cannot exist: it would be the active overlay.
			return false
		}
		if w, ok := n.(Widget); ok && w.Focusable() {
			ids = append(ids, w.WidgetID())
		}
		return true
	})
	return ids
}

// NextFocus returns the id after cur in order (before it when back is
// true), wrapping around. An unknown or empty cur gives the first (or last)
// id; an empty order gives "".
func NextFocus(order []string, cur string, back bool) string {
	if len(order) == 0 {
		return ""
	}
	i := -1
	for j, id := range order {
		if id == cur {
			i = j
			break
		}
	}
	switch {
	case i < 0 && back:
		return order[len(order)-1]
	case i < 0:
		return order[0]
	case back:
		return order[(i-1+len(order))%len(order)]
	default:
		return order[(i+1)%len(order)]
	}
}
