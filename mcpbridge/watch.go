package mcpbridge

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// safeSync is sync behind a last line of defence: the app code it runs is
// guarded where it is called, and anything that slips through costs this
// round of updates, not the process.
func (c *sessionServer) safeSync() { _ = c.sess.Guard().Do(metrics.HookOther, "", c.sync) }

// sync derives the tools of the current tree, applies the focus lens,
// keeps the registered tools equal to the advertised set (the SDK sends
// notifications/tools/list_changed when that set changes), and pushes
// resource updates to subscribers.
func (c *sessionServer) sync() {
	snap := c.sess.Dispatcher.Snapshot()
	att := c.sess.Attention()
	// Screen, attention and presence changes wake sync too; the tools of
	// a tree are derived once per snapshot.
	d := &c.derived
	if d.version != snap.Version || d.tools == nil {
		sc := c.scannedAt(snap)
		d.tools = deriveIn(c.sess.Guard(), c.b.opts.Namespace, sc, c.warnOnce, &d.cache)
		d.lens = lensTools(d.tools)
		d.treeIDs, d.modal = treeIDs(sc), modalIDs(sc)
		d.version = snap.Version
	}
	derived := d.tools
	in := lensInputs{tools: d.lens, tree: d.treeIDs, modal: d.modal, recent: c.sess.Recent()}
	same := c.memo.made(in)
	if same && c.memo.att.Focus == att.Focus && c.memo.att.Hover == att.Hover { // the lens's inputs only
		// Nothing the lens looks at changed (an agent typed into a
		// field, say): the advertised tools follow from what they
		// followed from last time.
		c.mu.Lock()
		c.synced = snap.Version
		c.mu.Unlock()
		c.res.update(snap)
		return
	}
	if !same || len(c.memo.picks) >= maxLensPicks {
		clear(c.memo.picks)
	}
	pick, ok := c.memo.picks[att]
	if !ok {
		pick.selected = lens.Select(in.tools, lens.Input{
			Mode:     c.b.opts.LensMode,
			MaxTools: c.b.opts.MaxTools,
			Tree:     in.tree,
			Focused:  att.Focus,
			Hover:    att.Hover,
			Recent:   in.recent,
			Modal:    in.modal,
		})
		pick.advertised = lens.Names(pick.selected)
	}
	selected, advertised := pick.selected, pick.advertised
	// What this selection was made from, once it is in place (a panic
	// before leaves neither, and the next sync selects again).
	done := func() {
		c.memo.remember(in, att, pick)
		c.res.update(snap)
	}

	c.mu.Lock()
	if slices.Equal(advertised, c.advertised) {
		// The same tools as now, in the same order (the focus moved
		// among widgets the lens keeps either way): nothing to register
		// or remove; tools/list orders by the new selection.
		c.selected, c.selectedFocus = selected, att.Focus
		c.synced = snap.Version
		c.mu.Unlock()
		done()
		return
	}
	want := c.want // sync only, so reused
	if want == nil {
		want = map[string]bool{}
		c.want = want
	}
	clear(want)
	for _, n := range advertised {
		if !isSessionTool(n) {
			want[n] = true
		}
	}
	var remove []string
	for n := range c.registered {
		if !want[n] {
			remove = append(remove, n)
			// Unmarked first: until RemoveTools runs, discover_tools lists
			// it as well, rather than neither list having it.
			delete(c.registered, n)
		}
	}
	var add []Derived
	for _, d := range derived {
		if want[d.Name] && !c.registered[d.Name] {
			add = append(add, d)
		}
	}
	c.mu.Unlock()

	for _, d := range add {
		// Calls never reach this handler: the middleware resolves every
		// derived tool against the tree current at call time.
		c.server.AddTool(internedToolDef(d), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return errorResult(ErrKindInternalError, "derived tool called outside the bridge"), nil
		})
	}
	// Marked only once listed, for the same reason.
	c.mu.Lock()
	for _, d := range add {
		c.registered[d.Name] = true
	}
	c.advertised = advertised
	c.selected, c.selectedFocus = selected, att.Focus
	c.mu.Unlock()
	if len(remove) > 0 {
		c.server.RemoveTools(remove...)
	}
	c.mu.Lock()
	c.synced = snap.Version
	c.mu.Unlock()
	done()
}

// derivation is the tools the watcher derived from snapshot version,
// and what the lens selects them by (sync only).
type derivation struct {
	version uint64
	tools   []Derived
	lens    []lens.Tool // lensTools(tools)
	cache   deriveCache // tools of unchanged widgets
	treeIDs []string    // widgetIDs of that snapshot's tree
	modal   []string    // modalIDs of it
}

// lensInputs is what a lens selection is made from besides the human's
// attention: the same for every sync of a snapshot (the human's focus
// moving, say); lens.Select reads it and never changes it.
type lensInputs struct {
	tools  []lens.Tool
	tree   []string
	modal  []string
	recent []string
}

// lensMemo is what the last lens selection was made from, and the
// selections made from those inputs, by attention (sync only). A sync with
// the same inputs and attention selects the same, whatever else the
// snapshot changed (a field's text); the human moving the focus back to a
// widget finds its selection in picks without selecting again.
type lensMemo struct {
	in   lensInputs
	att  session.Attention
	done bool // in and att hold a selection's inputs
	// picks is emptied when anything but the attention changes, and when
	// full (maxLensPicks).
	picks map[session.Attention]lensPick
}

// made reports whether the last selection was made from in (whatever the
// attention).
func (m *lensMemo) made(in lensInputs) bool {
	return m.done && slices.Equal(m.in.tools, in.tools) && slices.Equal(m.in.tree, in.tree) &&
		slices.Equal(m.in.modal, in.modal) && slices.Equal(m.in.recent, in.recent)
}

// remember records pick, selected from in for att, once it is in place.
func (m *lensMemo) remember(in lensInputs, att session.Attention, pick lensPick) {
	m.in, m.att, m.done = in, att, true
	if m.picks == nil {
		m.picks = map[session.Attention]lensPick{}
	}
	m.picks[att] = pick
}

// lensPick is one lens selection and the names it advertises.
type lensPick struct {
	selected   []lens.Tool
	advertised []string
}

// maxLensPicks bounds lensMemo.picks: a human's attention moves among a
// screen's widgets, and the hovered one changes it too.
const maxLensPicks = 64

// disconnectHTTP closes the clients that authenticated with a bearer token
// over HTTP, after the human rotated it; the old token no longer opens
// anything. Clients on a transport the process declared (stdio) did not
// use the token and stay.
func (c *sessionServer) disconnectHTTP() {
	for ss := range c.server.Sessions() {
		if _, declared := declaredContext(ss.ID()); !declared {
			c.closeClient(ss)
		}
	}
}

// warnOnce reports each distinct derivation warning once per session.
func (c *sessionServer) warnOnce(msg string, args ...any) {
	key := fmt.Sprint(append([]any{msg}, args...)...)
	c.mu.Lock()
	seen := c.warned[key] || len(c.warned) >= 256
	c.warned[key] = true
	c.mu.Unlock()
	if !seen {
		c.log.Warn("mcp derivation: "+msg, args...)
	}
}

func lensTools(derived []Derived) []lens.Tool {
	tools := []lens.Tool{{Name: ToolScreenshot}, {Name: ToolWaitFor}, {Name: ToolSendKey}, {Name: ToolDiscover}, {Name: ToolShow}}
	for _, d := range derived {
		tools = append(tools, lens.Tool{Name: d.Name, WidgetID: d.WidgetID})
	}
	return tools
}

// treeIDs is widgetIDs of the scanned tree, read from its scan.
func treeIDs(sc *scanned) []string {
	var ids []string
	if len(sc.widgets) > 0 {
		ids = make([]string, len(sc.widgets))
	}
	for i, w := range sc.widgets {
		ids[i] = w.id
	}
	return ids
}

// modalIDs lists the open modal and every widget in it, or nil when no
// modal is open.
func modalIDs(s *scanned) []string {
	es, rc := s.es, s.rc
	if !rc.open {
		return nil
	}
	ids := []string{}
	for _, e := range es[rc.lo:rc.hi] {
		if e.widget != nil {
			ids = append(ids, e.id)
		}
	}
	return ids
}

func toolDef(d Derived) *mcp.Tool {
	read := d.ReadOnly
	ann := &mcp.ToolAnnotations{ReadOnlyHint: read, IdempotentHint: read, OpenWorldHint: new(false)}
	if d.Destructive {
		ann.DestructiveHint = new(true)
	} else if read {
		ann.DestructiveHint = new(false)
	}
	t := &mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.Schema, Annotations: ann}
	if d.Sensitive {
		t.Meta = mcp.Meta{"sensitive": true}
	}
	return t
}
