package mcpbridge

import (
	"sync"
	"sync/atomic"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// entry is one node of a scanned tree, in pre-order.
type entry struct {
	node   ui.Node
	widget ui.Widget // nil for layout nodes
	id     string    // the widget's id; "" when WidgetID panicked
	// overlay is set for a shown overlay (hidden ones are not scanned).
	overlay bool
	// end is the index after the last entry of the node's subtree.
	end int
}

// scan lists the nodes of tree in pre-order, leaving out hidden overlays
// and their content, as the human sees the tree. App code it calls
// (Children, WidgetID, Shown) runs in g: a node whose Children panics is
// kept without its children, a widget whose WidgetID panics gets no id, an
// overlay whose Shown panics counts as hidden.
func scan(g guard.Scope, tree ui.Node) []entry {
	return scanAll(g, tree).es
}

// widgetRef is a widget of a tree, hidden overlays' content included, and
// its id ("" when its WidgetID panicked).
type widgetRef struct {
	w  ui.Widget
	id string
}

// scanResult is what one walk of a tree finds.
type scanResult struct {
	es []entry // scan's
	// widgets is every widget of the tree in pre-order, hidden overlays'
	// content included (as widgetIDs walks it).
	widgets []widgetRef
	// exact is set when no WidgetID or Children panicked: the first of
	// widgets with an id is the one ui.Find finds.
	exact bool
}

// scanAll is scan, and the widgets of hidden overlays too (scanResult),
// in the same walk.
func scanAll(g guard.Scope, tree ui.Node) scanResult {
	out := make([]entry, 0, scanHint.Load())
	widgets := make([]widgetRef, 0, widgetHint.Load())
	exact := true
	widget := func(w ui.Widget) string {
		id, err := guard.Call(g, metrics.HookWidgetID, "", w.WidgetID)
		exact = exact && err == nil
		widgets = append(widgets, widgetRef{w, id})
		return id
	}
	children := func(n ui.Node, id string) []ui.Node {
		kids, err := guard.Call(g, metrics.HookChildren, id, n.Children)
		exact = exact && err == nil
		return kids
	}
	// hidden walks a hidden overlay's content: not the human's, but its
	// widgets are the tree's.
	var hidden func(n ui.Node)
	hidden = func(n ui.Node) {
		if n == nil {
			return
		}
		id := ""
		if w, ok := n.(ui.Widget); ok {
			id = widget(w)
		}
		for _, k := range children(n, id) {
			hidden(k)
		}
	}
	var add func(n ui.Node)
	add = func(n ui.Node) {
		if n == nil {
			return
		}
		e := entry{node: n}
		if w, ok := n.(ui.Widget); ok {
			e.widget = w
			e.id = widget(w)
		}
		if o, ok := n.(ui.Overlay); ok {
			shown, err := guard.Call(g, metrics.HookOther, e.id, o.Shown)
			if err != nil || !shown {
				for _, k := range children(n, e.id) {
					hidden(k)
				}
				return
			}
			e.overlay = true
		}
		i := len(out)
		out = append(out, e)
		for _, k := range children(n, e.id) {
			add(k)
		}
		out[i].end = len(out)
	}
	add(tree)
	if n := int64(len(out)); n > scanHint.Load() && n <= maxScanHint {
		scanHint.Store(n) // the next scan's room: trees of one app are alike
	}
	if n := int64(len(widgets)); n > widgetHint.Load() && n <= maxScanHint {
		widgetHint.Store(n)
	}
	return scanResult{es: out, widgets: widgets, exact: exact}
}

// scanHint is the most entries a scan has found (up to maxScanHint): what
// the next scan allocates room for at once, instead of growing to it.
var scanHint atomic.Int64

// widgetHint is scanHint for scanResult.widgets.
var widgetHint atomic.Int64

const maxScanHint = 1024

// reach is the part of a scanned tree the human can reach: the open modal
// (the last shown overlay, as ui.ActiveOverlay) and its content, or all of
// it.
type reach struct {
	lo, hi int
	modal  string // the open modal's id ("" when none is open)
	open   bool
}

func reachOf(es []entry) reach {
	r := reach{hi: len(es)}
	for i, e := range es {
		if e.overlay {
			r = reach{lo: i, hi: e.end, modal: e.id, open: true}
		}
	}
	return r
}

func (r reach) covers(i int) bool { return i >= r.lo && i < r.hi }

// first returns the index of the first widget with id (whatever it is),
// or -1.
func first(es []entry, id string) int {
	for i, e := range es {
		if e.widget != nil && e.id == id && id != "" {
			return i
		}
	}
	return -1
}

// scanned is a tree scanned once, with the reach of its open modal and the
// tools of its self-contained widgets asked for so far: a session's calls
// and its watcher share one per snapshot (sessionServer.scannedAt) instead of
// walking the tree and asking widgets for their tools several times a
// call. Safe for concurrent use; what it hands out is shared, read only.
type scanned struct {
	version uint64
	es      []entry
	rc      reach
	// widgets and exact are scanAll's.
	widgets []widgetRef
	exact   bool

	mu    sync.Mutex
	tools map[int]toolsOf // by entry index; self-contained widgets only
	// found holds the tools resolved in this tree (resolveIn) by their
	// full name: a call resolves its tool several times (the gate, the
	// call, the fold, its answer, the activity log) in one or two
	// snapshots. Self-contained widgets' only, as tools is, and only
	// what was found.
	found map[string]resolution
}

// resolution is a tool found in a scanned tree.
type resolution struct {
	tp   ui.ToolProvider
	spec ui.ToolSpec
}

// maxFound bounds scanned.found: a snapshot's calls name a few tools.
const maxFound = 64

// foundTool is the resolution of name memoized in s, if any.
func (s *scanned) foundTool(name string) (resolution, bool) {
	s.mu.Lock()
	r, ok := s.found[name]
	s.mu.Unlock()
	return r, ok
}

// keepFound memoizes the resolution of name in s.
func (s *scanned) keepFound(name string, r resolution) {
	s.mu.Lock()
	if s.found == nil {
		s.found = map[string]resolution{}
	}
	if len(s.found) < maxFound {
		s.found[name] = r
	}
	s.mu.Unlock()
}

type toolsOf struct {
	specs []ui.ToolSpec
	err   error
}

func newScanned(g guard.Scope, version uint64, tree ui.Node) *scanned {
	r := scanAll(g, tree)
	return &scanned{version: version, es: r.es, rc: reachOf(r.es), widgets: r.widgets, exact: r.exact}
}

// toolsAt is the Tools of entry i (tp, with id), run in g; those of a
// self-contained widget (ui.SelfContained: they follow from its fields)
// are asked for once.
func (s *scanned) toolsAt(g guard.Scope, i int, id string, tp ui.ToolProvider) ([]ui.ToolSpec, error) {
	if w := s.es[i].widget; w == nil || !ui.SelfContained(w) {
		specs, err := guard.Call(g, metrics.HookTools, id, tp.Tools)
		return internSpecs(specs), err
	}
	s.mu.Lock()
	t, ok := s.tools[i]
	s.mu.Unlock()
	if ok {
		return t.specs, t.err
	}
	specs, err := guard.Call(g, metrics.HookTools, id, tp.Tools)
	specs = internSpecs(specs) // equal specs shared by every session (intern.go)
	s.mu.Lock()
	if s.tools == nil {
		s.tools = map[int]toolsOf{}
	}
	s.tools[i] = toolsOf{specs, err}
	s.mu.Unlock()
	return specs, err
}

// find is ui.Find(tree, id) in the scanned tree, without walking it
// again (unless app code panicked in the scan: ui.Find would too).
func (s *scanned) find(tree ui.Node, id string) (ui.Widget, bool) {
	if !s.exact {
		return ui.Find(tree, id)
	}
	for _, w := range s.widgets {
		if w.id == id {
			return w.w, true
		}
	}
	return nil, false
}

// scannedAt is snap's tree scanned, once per snapshot for the calls and
// the watcher together.
func (c *sessionServer) scannedAt(snap dispatcher.Snapshot) *scanned {
	if s := c.scans.Load(); s != nil && s.version == snap.Version {
		return s
	}
	s := newScanned(c.sess.Guard(), snap.Version, snap.Tree)
	c.scans.Store(s)
	return s
}
