package mcpbridge

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

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
	out := make([]entry, 0, scanHint.Load())
	var add func(n ui.Node)
	add = func(n ui.Node) {
		if n == nil {
			return
		}
		e := entry{node: n}
		if w, ok := n.(ui.Widget); ok {
			e.widget = w
			e.id, _ = guard.Call(g, metrics.HookWidgetID, "", w.WidgetID)
		}
		if o, ok := n.(ui.Overlay); ok {
			shown, err := guard.Call(g, metrics.HookOther, e.id, o.Shown)
			if err != nil || !shown {
				return
			}
			e.overlay = true
		}
		i := len(out)
		out = append(out, e)
		kids, _ := guard.Call(g, metrics.HookChildren, e.id, n.Children)
		for _, k := range kids {
			add(k)
		}
		out[i].end = len(out)
	}
	add(tree)
	if n := int64(len(out)); n > scanHint.Load() && n <= maxScanHint {
		scanHint.Store(n) // the next scan's room: trees of one app are alike
	}
	return out
}

// scanHint is the most entries a scan has found (up to maxScanHint): what
// the next scan allocates room for at once, instead of growing to it.
var scanHint atomic.Int64

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

// derive is Derive with the app's code run in g. A widget behind an open
// modal (shadowed) derives nothing: agents can do only what the human can
// reach. A widget whose Tools panics derives nothing either.
func derive(g guard.Scope, namespace string, tree ui.Node, warn WarnFunc) []Derived {
	return deriveCached(g, namespace, tree, warn, nil)
}

// deriveCache keeps, for a session's watcher, the tools each
// self-contained widget (ui.SelfContained) derived from the last tree:
// agents change one widget at a time, and the others' tools are the same.
// The tools it hands out are shared: read them, never change them. It is
// not safe for concurrent use.
type deriveCache struct {
	prev, cur map[string]derivedWidget
}

type derivedWidget struct {
	w     ui.Widget
	tools []Derived
}

// deriveCached is derive, with the tools of self-contained widgets equal
// to the last tree's taken from c (nil: none).
func deriveCached(g guard.Scope, namespace string, tree ui.Node, warn WarnFunc, c *deriveCache) []Derived {
	return deriveIn(g, namespace, newScanned(g, 0, tree), warn, c)
}

// deriveIn is deriveCached in a scanned tree.
func deriveIn(g guard.Scope, namespace string, s *scanned, warn WarnFunc, c *deriveCache) []Derived {
	if c != nil {
		// The map of the derivation before last is emptied and used again.
		spare := c.prev
		if spare == nil {
			spare = make(map[string]derivedWidget, len(c.cur))
		}
		clear(spare)
		c.prev, c.cur = c.cur, spare
	}
	if warn == nil {
		warn = func(string, ...any) {}
	}
	es, rc := s.es, s.rc
	var out []Derived
	seen := map[string]bool{}
	for i, e := range es {
		// Every widget claims its id, whether or not it offers tools: the
		// first widget with an id is the one Lookup (and ui.Find) resolve
		// it to, so a later tool provider with the same id must derive
		// nothing, or its tools would be advertised but not callable.
		if e.widget == nil {
			continue
		}
		tp, isProvider := e.node.(ui.ToolProvider)
		id := e.id
		switch {
		case !widgetIDRe.MatchString(id):
			if isProvider {
				warn("widget id is not 1-64 of [A-Za-z0-9_-]; it derives no tools", "widget_id", id, "type", fmt.Sprintf("%T", e.node))
			}
			continue
		case seen[id]:
			warn("widget id appears twice in the tree; the second derives no tools", "widget_id", id, "type", fmt.Sprintf("%T", e.node))
			continue
		}
		seen[id] = true
		if !isProvider || !rc.covers(i) {
			continue
		}
		if ex, err := guard.Call(g, metrics.HookOther, id, func() bool { return excluded(e.node) }); err != nil || ex {
			continue
		}
		self := c != nil && ui.SelfContained(e.widget)
		if self {
			if d, ok := c.prev[id]; ok && ui.SameWidget(d.w, e.widget) {
				out = append(out, d.tools...)
				c.cur[id] = d
				continue
			}
		}
		specs, err := s.toolsAt(g, i, id, tp)
		if err != nil {
			continue
		}
		first := len(out)
		for _, spec := range specs {
			if !actionRe.MatchString(spec.Action) {
				warn("action name is not a lowercase letter followed by up to 31 of [a-z0-9_]; it derives no tool", "widget_id", id, "action", spec.Action)
				continue
			}
			wt := fmt.Sprintf("%T", e.node)
			out = append(out, Derived{
				Name:        namespace + "." + id + "." + spec.Action,
				WidgetID:    id,
				Action:      spec.Action,
				WidgetType:  wt,
				Description: Clean(spec.Description),
				Schema:      cleanSchema(spec.InputSchema), // a fresh copy: Derived shares nothing (TestLawPurity)
				Sensitive:   spec.Annotations["sensitive"] == true,
				Destructive: spec.Annotations["destructiveHint"] == true,
				ReadOnly:    spec.ReadOnly,
			})
		}
		if self {
			c.cur[id] = derivedWidget{w: e.widget, tools: out[first:len(out):len(out)]}
		}
	}
	return out
}

// errNoTool: the tree offers no such tool now.
var errNoTool = errors.New("no such tool in the current view")

// shadowedError: the tool's widget is behind the open modal.
type shadowedError struct{ widget, modal string }

func (e shadowedError) Error() string {
	return fmt.Sprintf("widget %q is behind the open modal %q; dismiss or confirm the modal first", e.widget, e.modal)
}

// resolve is Lookup with the app's code run in g, saying why it found
// nothing: errNoTool, a shadowedError, or a *guard.Panic when the widget's
// Tools panicked.
func resolve(g guard.Scope, namespace string, tree ui.Node, name string) (ui.ToolProvider, ui.ToolSpec, error) {
	return resolveIn(g, namespace, newScanned(g, 0, tree), name)
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

	mu    sync.Mutex
	tools map[int]toolsOf // by entry index; self-contained widgets only
}

type toolsOf struct {
	specs []ui.ToolSpec
	err   error
}

func newScanned(g guard.Scope, version uint64, tree ui.Node) *scanned {
	es := scan(g, tree)
	return &scanned{version: version, es: es, rc: reachOf(es)}
}

// toolsAt is the Tools of entry i (tp, with id), run in g; those of a
// self-contained widget (ui.SelfContained: they follow from its fields)
// are asked for once.
func (s *scanned) toolsAt(g guard.Scope, i int, id string, tp ui.ToolProvider) ([]ui.ToolSpec, error) {
	if w := s.es[i].widget; w == nil || !ui.SelfContained(w) {
		return guard.Call(g, metrics.HookTools, id, tp.Tools)
	}
	s.mu.Lock()
	t, ok := s.tools[i]
	s.mu.Unlock()
	if ok {
		return t.specs, t.err
	}
	specs, err := guard.Call(g, metrics.HookTools, id, tp.Tools)
	s.mu.Lock()
	if s.tools == nil {
		s.tools = map[int]toolsOf{}
	}
	s.tools[i] = toolsOf{specs, err}
	s.mu.Unlock()
	return specs, err
}

// resolveIn is resolve in a scanned tree.
func resolveIn(g guard.Scope, namespace string, s *scanned, name string) (ui.ToolProvider, ui.ToolSpec, error) {
	id, action, ok := SplitName(namespace, name)
	if !ok || !widgetIDRe.MatchString(id) || !actionRe.MatchString(action) {
		return nil, ui.ToolSpec{}, errNoTool
	}
	es := s.es
	i := first(es, id) // only the first widget with an id counts
	if i < 0 {
		return nil, ui.ToolSpec{}, errNoTool
	}
	tp, ok := es[i].node.(ui.ToolProvider)
	if !ok {
		return nil, ui.ToolSpec{}, errNoTool
	}
	if ex, err := guard.Call(g, metrics.HookOther, id, func() bool { return excluded(tp) }); err != nil || ex {
		return nil, ui.ToolSpec{}, errNoTool
	}
	if rc := s.rc; !rc.covers(i) {
		modal := rc.modal
		if modal == "" {
			modal = "overlay"
		}
		return nil, ui.ToolSpec{}, shadowedError{widget: id, modal: modal}
	}
	specs, err := s.toolsAt(g, i, id, tp)
	if err != nil {
		return nil, ui.ToolSpec{}, err
	}
	for _, spec := range specs {
		if spec.Action == action {
			return tp, spec, nil
		}
	}
	return nil, ui.ToolSpec{}, errNoTool
}
