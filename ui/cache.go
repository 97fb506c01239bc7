package ui

// RenderCache lets a terminal reuse what a built-in leaf widget drew in
// its last frame when nothing it is drawn from changed: the widget's value,
// its local state, its size and focus, and the theme. Agents change one
// widget at a time; the rest of the screen is drawn as it was. Give one
// cache to every [Render] of one terminal (RenderOptions.Cache); it keeps
// the last frame's widgets only, and it is not safe for concurrent use.
//
// Only the widgets of this package are cached, and only those with no
// children: their Render depends on nothing else. An app's own widget may
// read more (the time, say), so it is always drawn.
type RenderCache struct {
	prev, cur map[cacheKey]cachedWidget
	// boxes are the boxes drawn around cached widgets, by the widget's key.
	prevBoxes, curBoxes map[cacheKey]cachedBox
}

// cacheKey is a widget, the room it was drawn in and whether it had the
// focus. A column draws a Fill's widget twice a frame, at its own height
// and then at the height the column gives it: each drawing is kept.
//
// A widget's drawing with the focus and without are kept apart, and the
// one a frame did not use is carried on to the next while the widget is
// drawn (carry): the focus moving back and forth (Tab, Shift+Tab) would
// otherwise draw both widgets it moves between again every time.
type cacheKey struct {
	id      string
	height  int
	fill    bool
	focused bool
}

// other is the key of the same drawing with the focus the other way.
func (k cacheKey) other() cacheKey { k.focused = !k.focused; return k }

// cachedBox is a Box drawn around a widget the cache reused: the same
// drawing, given the same child lines, title, width, focus, highlight and
// theme.
type cachedBox struct {
	title                string
	inner, lines         int
	focused, highlighted bool
	theme                *Theme
	out                  []string
}

func (c *RenderCache) lookupBox(id cacheKey, k cachedBox) (cachedBox, bool) {
	e, ok := c.prevBoxes[id]
	if !ok || e.title != k.title || e.inner != k.inner || e.lines != k.lines || e.focused != k.focused ||
		e.highlighted != k.highlighted || e.theme != k.theme {
		return cachedBox{}, false
	}
	return e, true
}

func (c *RenderCache) storeBox(id cacheKey, e cachedBox) {
	if c.curBoxes != nil {
		c.curBoxes[id] = e
		carry(c.prevBoxes, c.curBoxes, id.other())
	}
}

// carry keeps prev's entry for k in cur, unless cur has one.
func carry[E any](prev, cur map[cacheKey]E, k cacheKey) {
	if _, ok := cur[k]; ok {
		return
	}
	if e, ok := prev[k]; ok {
		cur[k] = e
	}
}

type cachedWidget struct {
	w             Widget
	before, after LocalState
	width, height int
	fill, focused bool
	theme         *Theme
	lines         []string
	blockW        int
	hits          []Hit // the widget's own, unmarked
}

// begin starts a frame: what the last frame drew is what can be reused.
// The maps of the frame before last are emptied and used again.
func (c *RenderCache) begin() {
	spare, spareBoxes := c.prev, c.prevBoxes
	if spare == nil {
		spare = make(map[cacheKey]cachedWidget, len(c.cur))
	}
	if spareBoxes == nil {
		spareBoxes = make(map[cacheKey]cachedBox, len(c.curBoxes))
	}
	clear(spare)
	clear(spareBoxes)
	c.prev, c.cur = c.cur, spare
	c.prevBoxes, c.curBoxes = c.curBoxes, spareBoxes
}

// SelfContained reports whether w is one of this package's widgets with
// no children: everything it draws and every tool it offers follows from
// its own fields (and, for drawing, its local state, size, focus and
// theme), so what was made from an equal value can be used again. An
// app's own widget may read more (the time, say).
func SelfContained(w Widget) bool { return cacheable(w) }

// cacheable reports whether w's drawing depends only on what the cache
// compares.
func cacheable(w Widget) bool {
	switch w.(type) {
	case Button, TextInput, TextArea, PasswordField, Checkbox, SelectList, Tabs, Menu,
		Table, Tree, Scrubber, Viewport, BarChart, LineChart, ScatterChart:
		return len(w.Children()) == 0
	}
	if _, ok := w.(Comparer); ok {
		return len(w.Children()) == 0
	}
	return false
}

// lookup returns the lines w drew last frame under the same conditions,
// and the local state its drawing left.
func (c *RenderCache) lookup(id string, w Widget, st *LocalState, rc RenderContext) (cachedWidget, bool) {
	e, ok := c.prev[cacheKey{id, rc.Height, rc.Fill, rc.Focused}]
	if !ok || e.width != rc.Width || e.height != rc.Height || e.fill != rc.Fill || e.focused != rc.Focused ||
		e.theme != rc.Theme || !sameLocal(e.before, *st) || !SameWidget(e.w, w) {
		return cachedWidget{}, false
	}
	return e, true
}

func (c *RenderCache) store(id string, e cachedWidget) {
	if c.cur != nil {
		k := cacheKey{id, e.height, e.fill, e.focused}
		c.cur[k] = e
		carry(c.prev, c.cur, k.other())
	}
}

// Len is how many widgets' drawing the cache keeps.
func (c *RenderCache) Len() int {
	return len(c.prev) + len(c.cur) + len(c.prevBoxes) + len(c.curBoxes)
}
