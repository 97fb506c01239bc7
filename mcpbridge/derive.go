package mcpbridge

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"

	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Derived is one tool derived from a widget of the current tree.
type Derived struct {
	// Name is <namespace>.<widget id>.<action>.
	Name     string
	WidgetID string
	Action   string
	// WidgetType is the widget's Go type name, e.g. "ui.TextInput".
	WidgetType  string
	Description string
	// Schema is the sanitised input schema.
	Schema map[string]any
	// Sensitive is set when the provider annotated the action sensitive.
	Sensitive bool
	// Destructive is set when the provider annotated it destructiveHint.
	Destructive bool
	// ReadOnly is set when the provider declared the action a read
	// (ui.ToolSpec.ReadOnly): advertised readOnlyHint, answered without
	// the dispatcher, allowed while agents are paused.
	ReadOnly bool
}

// WarnFunc receives derivation warnings (slog-style key/value args).
type WarnFunc func(msg string, args ...any)

// SlogWarn returns a WarnFunc that logs at warn level; nil logs nothing.
func SlogWarn(l *slog.Logger) WarnFunc {
	if l == nil {
		return nil
	}
	return func(msg string, args ...any) { l.Warn("mcp derivation: "+msg, args...) }
}

// Derive walks tree in pre-order and returns the tools its widgets offer
// now. A widget id or action name that is not valid, or a widget id seen
// before on any widget (tool provider or not), derives nothing and is
// reported to warn; an Exclude widget derives nothing (its children are
// still walked); a hidden overlay and its content derive nothing; while a
// modal is open, every widget outside it (shadowed) derives nothing. A
// panic in the app's code costs only the node that raised it. warn may be
// nil.
func Derive(namespace string, tree ui.Node, warn WarnFunc) []Derived {
	return derive(guard.Scope{}, namespace, tree, warn)
}

// excluded reports whether the widget asked to hide its tools.
func excluded(n ui.Node) bool {
	type excluder interface{ MCPExcluded() bool }
	if e, ok := n.(excluder); ok {
		return e.MCPExcluded()
	}
	return exclude(n)
}

// exclude reads a widget's Exclude field, as the built-in widgets have it.
func exclude(n ui.Node) bool {
	v := reflect.ValueOf(n)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return false
	}
	i := excludeField(v.Type())
	return i != nil && v.FieldByIndex(i).Bool()
}

// excludeFields holds, by struct type, the index of its Exclude field
// when it is a bool (FieldByName's), or an empty index: looked up once
// per type, not for every widget of every tree.
var excludeFields sync.Map // reflect.Type -> []int

func excludeField(t reflect.Type) []int {
	if i, ok := excludeFields.Load(t); ok {
		if i := i.([]int); len(i) > 0 {
			return i
		}
		return nil
	}
	var i []int
	if f, ok := t.FieldByName("Exclude"); ok && f.Type.Kind() == reflect.Bool {
		i = f.Index
	}
	excludeFields.Store(t, i)
	if len(i) == 0 {
		return nil
	}
	return i
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
	n         int             // how many tools the last derivation gave
	seen      map[string]bool // deriveIn's, kept for the next
}

type derivedWidget struct {
	w     ui.Widget
	specs []ui.ToolSpec // what its Tools returned (shared, read only)
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
	var seen map[string]bool
	if c != nil {
		// As many tools as last time, most likely; the ids seen map is
		// the cache's, emptied.
		out = make([]Derived, 0, c.n)
		if c.seen == nil {
			c.seen = map[string]bool{}
		}
		seen = c.seen
		clear(seen)
		defer func() { c.n = len(out) }()
	} else {
		seen = map[string]bool{}
	}
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
		self := c != nil && ui.SelfContained(e.widget)
		if self {
			// The same widget as last time derives what it derived (it
			// was not excluded then, and its fields say it is not now).
			if d, ok := c.prev[id]; ok && ui.SameWidget(d.w, e.widget) {
				out = append(out, d.tools...)
				c.cur[id] = d
				continue
			}
		}
		if ex, err := guard.Call(g, metrics.HookOther, id, func() bool { return excluded(e.node) }); err != nil || ex {
			continue
		}
		specs, err := s.toolsAt(g, i, id, tp)
		if err != nil {
			continue
		}
		if self {
			if d, ok := c.prev[id]; ok && reflect.TypeOf(d.w) == reflect.TypeOf(e.widget) && sameSpecs(d.specs, specs) {
				// The widget changed (an agent typed into it), its tools
				// did not: they are derived from equal specs alike.
				out = append(out, d.tools...)
				c.cur[id] = derivedWidget{w: e.widget, specs: specs, tools: d.tools}
				continue
			}
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
				Schema:      schemaOf(c, spec.InputSchema),
				Sensitive:   spec.Annotations["sensitive"] == true,
				Destructive: spec.Annotations["destructiveHint"] == true,
				ReadOnly:    spec.ReadOnly,
			})
		}
		if self {
			c.cur[id] = derivedWidget{w: e.widget, specs: specs, tools: out[first:len(out):len(out)]}
		}
	}
	return out
}

// sameSpecs reports whether two lists of tool specs are equal, schemas
// and annotations compared by value.
func sameSpecs(a, b []ui.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Action != y.Action || x.Description != y.Description || x.ReadOnly != y.ReadOnly ||
			!sameJSON(x.InputSchema, y.InputSchema) || !sameJSON(x.Annotations, y.Annotations) {
			return false
		}
	}
	return true
}

// sameJSON reports whether two JSON-like values (as schemas hold them)
// are equal: maps, slices, strings, booleans and numbers compared
// without reflection, anything else by reflect.DeepEqual. A nil map
// equals an empty one (both clean to the same schema).
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case []string:
		y, ok := b.([]string)
		return ok && slices.Equal(x, y)
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

// schemaOf is a derived tool's cleaned schema: a fresh copy for Derive
// (c nil: what it returns shares nothing, TestLawPurity), the one shared by
// every session for a session's watcher (an interned spec's, intern.go).
func schemaOf(c *deriveCache, raw map[string]any) map[string]any {
	if c != nil {
		return cleanedSchema(raw)
	}
	return cleanSchema(raw)
}
