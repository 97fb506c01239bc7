package mcpbridge

import (
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Lookup finds the widget a derived tool name refers to in tree, applying
// the same rules as Derive (valid, first of its id, not excluded, not in a
// hidden overlay, not behind an open modal, offering that action now).
func Lookup(namespace string, tree ui.Node, name string) (ui.ToolProvider, ui.ToolSpec, bool) {
	tp, spec, err := resolve(guard.Scope{}, namespace, tree, name)
	return tp, spec, err == nil
}

// resolve is Lookup with the app's code run in g, saying why it found
// nothing: errNoTool, a shadowedError, or a *guard.Panic when the widget's
// Tools panicked.
func resolve(g guard.Scope, namespace string, tree ui.Node, name string) (ui.ToolProvider, ui.ToolSpec, error) {
	return resolveIn(g, newScanned(g, 0, tree), parseToolName(namespace, name))
}

// resolveIn is resolve of the parsed name t in a scanned tree.
func resolveIn(g guard.Scope, s *scanned, t toolName) (ui.ToolProvider, ui.ToolSpec, error) {
	if !t.valid {
		return nil, ui.ToolSpec{}, errNoTool
	}
	if r, ok := s.foundTool(t.name); ok {
		return r.tp, r.spec, nil
	}
	id, action := t.widgetID, t.action
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
			if w := es[i].widget; w != nil && ui.SelfContained(w) {
				// Its tools follow from its fields (toolsAt asked for
				// them once): so does what this name resolves to.
				s.keepFound(t.name, resolution{tp, spec})
			}
			return tp, spec, nil
		}
	}
	return nil, ui.ToolSpec{}, errNoTool
}

// resolveNow is resolve in the session's current tree.
func (c *sessionServer) resolveNow(t toolName) (ui.ToolProvider, ui.ToolSpec, error) {
	return resolveIn(c.sess.Guard(), c.scannedAt(c.sess.Dispatcher.Snapshot()), t)
}
