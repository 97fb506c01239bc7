package teaapp

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unsafe"

	"charm.land/bubbles/v2/filepicker"
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/list"
	"charm.land/bubbles/v2/paginator"
	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/table"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// This file holds the components' options and discover: the walk that
// finds the bubbles components inside a foreign model by reflection, and
// the reflection helpers that reach one of them again along its path.
// components_widget.go turns them into widgets; components_apply.go
// performs agents' actions on them.

// componentOptions are the components' options, set by Rename, Exclude,
// Sensitive, ActivateKey and WithAction. The zero value renames nothing,
// excludes nothing and adds no action.
type componentOptions struct {
	rename      map[string]string        // discovered path → tool id
	exclude     map[string]bool          // discovered path → left out
	sensitive   map[string]bool          // discovered path or tool id → sensitive
	activateKey map[string]string        // discovered path or tool id → key name
	actions     map[string][]extraAction // discovered path or tool id → extra actions
}

// extraAction is one action an app added to a component with WithAction.
type extraAction struct {
	spec  ui.ToolSpec
	apply func(m tea.Model, args map[string]any) (tea.Model, tea.Cmd, any, error)
}

// Rename gives the component found at path (its snake-case field path as
// discovered, "inputs_1") the tool id name. A name that is not a valid id
// is sanitised as discovered paths are.
func Rename(path, name string) Option {
	return func(c *config) {
		if c.comps.rename == nil {
			c.comps.rename = map[string]string{}
		}
		c.comps.rename[path] = name
	}
}

// Exclude leaves the component found at path out: no widget, no tools.
func Exclude(path string) Option {
	return func(c *config) {
		if c.comps.exclude == nil {
			c.comps.exclude = map[string]bool{}
		}
		c.comps.exclude[path] = true
	}
}

// Sensitive marks every tool of the component found at path (or renamed
// to path) {"sensitive": true}. A password-mode textinput is sensitive
// without it.
func Sensitive(path string) Option {
	return func(c *config) {
		if c.comps.sensitive == nil {
			c.comps.sensitive = map[string]bool{}
		}
		c.comps.sensitive[path] = true
	}
}

// ActivateKey sets the key that the activate action of the list or table
// found at path (or renamed to path) presses after selecting: a key name
// as bubbles key bindings spell it ("enter", "space", "ctrl+o", "l").
// Without it activate presses Enter.
func ActivateKey(path, keyName string) Option {
	return func(c *config) {
		if c.comps.activateKey == nil {
			c.comps.activateKey = map[string]string{}
		}
		c.comps.activateKey[path] = keyName
	}
}

// WithAction adds an action to the component named component (its
// discovered path or its tool id after Rename): spec describes the tool
// (an extra action is always a write: ReadOnly is ignored, since apply
// needs the model) and apply performs it on the model, on the session's
// dispatcher goroutine. The command apply returns is run as the model's
// own are. An action named like a built-in one replaces it.
func WithAction(component string, spec ui.ToolSpec, apply func(m tea.Model, args map[string]any) (tea.Model, tea.Cmd, any, error)) Option {
	return func(c *config) {
		if c.comps.actions == nil {
			c.comps.actions = map[string][]extraAction{}
		}
		spec.ReadOnly = false
		if spec.InputSchema == nil {
			spec.InputSchema = ui.ObjectSchema(nil)
		}
		c.comps.actions[component] = append(c.comps.actions[component], extraAction{spec: spec, apply: apply})
	}
}

// lookup returns what an option keyed by a discovered path or a tool id
// holds for the component f (discovered at path).
func lookup[V any](opts map[string]V, f found, path string) (V, bool) {
	if v, ok := opts[f.Name]; ok {
		return v, true
	}
	v, ok := opts[path]
	return v, ok
}

// componentPath returns the path f was discovered at, before Rename.
func (o *componentOptions) componentPath(f found) string {
	for p, n := range o.rename {
		if sanitizeName(n, f.Kind) == f.Name {
			return p
		}
	}
	return f.Name
}

// isSensitive reports whether the options mark f sensitive.
func (o *componentOptions) isSensitive(f found) bool {
	_, ok := lookup(o.sensitive, f, o.componentPath(f))
	return ok
}

// extraActions returns the actions WithAction added to f.
func (o *componentOptions) extraActions(f found) []extraAction {
	if len(o.actions) == 0 {
		return nil
	}
	p := o.componentPath(f)
	out := append([]extraAction(nil), o.actions[f.Name]...)
	if p != f.Name {
		out = append(out, o.actions[p]...)
	}
	return out
}

// activateKeyName returns the key activate presses for f.
func (o *componentOptions) activateKeyName(f found) string {
	if k, ok := lookup(o.activateKey, f, o.componentPath(f)); ok && k != "" {
		return k
	}
	return "enter"
}

// componentKinds maps each bubbles component type to its kind.
var componentKinds = map[reflect.Type]string{
	reflect.TypeFor[textinput.Model]():  "textinput",
	reflect.TypeFor[textarea.Model]():   "textarea",
	reflect.TypeFor[list.Model]():       "list",
	reflect.TypeFor[table.Model]():      "table",
	reflect.TypeFor[viewport.Model]():   "viewport",
	reflect.TypeFor[paginator.Model]():  "paginator",
	reflect.TypeFor[filepicker.Model](): "filepicker",
	reflect.TypeFor[progress.Model]():   "progress",
	reflect.TypeFor[spinner.Model]():    "spinner",
	reflect.TypeFor[help.Model]():       "help",
}

// Bounds of discover's walk.
const (
	maxDepth   = 8     // struct fields and elements followed from the model
	maxVisited = 20000 // values looked at in one walk
	maxNameLen = 64    // a tool id's length
)

// discover walks m by reflection (fields exported or not, pointers,
// interfaces, slices, arrays, nested structs; cycles and nil pointers
// safe; bounded in depth and in values visited) and returns every bubbles
// component in field order, named by field path in snake case (field
// inputs []textinput.Model gives "inputs_0", "inputs_1"; nested
// form.email gives "form_email"; an embedded struct adds no name), after
// the options' renames and exclusions. Names are unique: a duplicate gets
// a suffix "_2", "_3"...
func discover(m tea.Model, cfg *config) []found {
	out, _ := discoverStatic(m, cfg)
	return out
}

// discoverStatic is discover, and whether what it found follows from m's
// type alone: the walk met no pointer, interface or slice that may hold a
// component (nil, empty or not), and was not cut short, so every model
// of the type holds its components at the same paths.
func discoverStatic(m tea.Model, cfg *config) ([]found, bool) {
	if m == nil {
		return nil, false
	}
	var opts componentOptions
	if cfg != nil {
		opts = cfg.comps
	}
	w := walker{seen: map[uintptr]bool{}}
	if rv := reflect.ValueOf(m); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		w.seen[rv.Pointer()] = true
	}
	root, _ := rootValue(m, false)
	w.walk(root, nil, nil, 0)

	used := map[string]bool{}
	var out []found
	for _, r := range w.out {
		path := unique(sanitizeName(strings.Join(r.names, "_"), r.kind), used)
		if opts.exclude[path] {
			continue
		}
		name := path
		if n, ok := opts.rename[path]; ok {
			delete(used, path)
			name = unique(sanitizeName(n, r.kind), used)
		}
		out = append(out, found{Name: name, Kind: r.kind, Path: r.path})
	}
	return out, !w.dynamic && w.visited < maxVisited
}

// unique returns name, or name with the first free suffix "_2", "_3"...,
// and marks it used.
func unique(name string, used map[string]bool) string {
	n := name
	for i := 2; used[n]; i++ {
		suf := "_" + strconv.Itoa(i)
		base := name
		if len(base)+len(suf) > maxNameLen {
			base = strings.TrimRight(base[:maxNameLen-len(suf)], "_")
		}
		n = base + suf
	}
	used[n] = true
	return n
}

// sanitizeName turns a field path into a tool id matching
// ^[a-z][a-z0-9_]{0,63}$: CamelCase becomes camel_case, anything else
// than letters and digits an underscore. A name that would not start with
// a letter is prefixed with kind.
func sanitizeName(s, kind string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		r = unicode.ToLower(r)
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	n := b.String()
	for strings.Contains(n, "__") {
		n = strings.ReplaceAll(n, "__", "_")
	}
	n = strings.Trim(n, "_")
	if n == "" {
		n = kind
	} else if n[0] < 'a' || n[0] > 'z' {
		n = kind + "_" + n
	}
	if len(n) > maxNameLen {
		n = strings.TrimRight(n[:maxNameLen], "_")
	}
	return n
}

// rawFound is a component as the walk meets it, before naming.
type rawFound struct {
	kind  string
	path  []step
	names []string
}

// walker is one discover walk.
type walker struct {
	seen    map[uintptr]bool // pointers followed
	visited int
	out     []rawFound
	dynamic bool // a pointer, interface or slice that may hold a component was met
}

// walk looks for components in v (addressable, or reached through an
// exported path), reached along path and named by names.
func (w *walker) walk(v reflect.Value, path []step, names []string, depth int) {
	if !v.IsValid() || w.visited >= maxVisited {
		return
	}
	w.visited++
	t := v.Type()
	if kind, ok := componentKinds[t]; ok {
		w.out = append(w.out, rawFound{kind: kind, path: clonePath(path), names: append([]string(nil), names...)})
		return
	}
	if !mayContain(t) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice:
		w.dynamic = true
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		p := v.Pointer()
		if w.seen[p] {
			return
		}
		w.seen[p] = true
		w.walk(v.Elem(), append(path, step{-1, -1}), names, depth)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		w.walk(addressable(v.Elem()), append(path, step{-1, -1}), names, depth)
	case reflect.Struct:
		if depth >= maxDepth {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			n := names
			if !sf.Anonymous {
				n = append(names, sf.Name)
			} else if k, ok := componentKinds[sf.Type]; ok {
				n = append(names, k)
			}
			w.walk(expose(v.Field(i)), append(path, step{i, -1}), n, depth+1)
		}
	case reflect.Slice, reflect.Array:
		if depth >= maxDepth {
			return
		}
		for i := 0; i < v.Len() && w.visited < maxVisited; i++ {
			w.walk(v.Index(i), append(path, step{-1, i}), append(names, strconv.Itoa(i)), depth+1)
		}
	}
}

// clonePath copies p: the walk reuses its backing array.
func clonePath(p []step) []step { return append([]step(nil), p...) }

// mayContainCache memoizes mayContain by type.
var mayContainCache sync.Map // reflect.Type → bool

// mayContain reports whether a value of type t may hold a component: the
// walk skips the rest (strings, numbers, the standard library's and
// Charm's own types, interfaces no component or model implements).
func mayContain(t reflect.Type) bool {
	if v, ok := mayContainCache.Load(t); ok {
		return v.(bool)
	}
	r := mayContainIn(t, map[reflect.Type]bool{})
	mayContainCache.Store(t, r)
	return r
}

// mayContainIn is mayContain, with the types being decided (recursive
// types) counted as holding none.
func mayContainIn(t reflect.Type, busy map[reflect.Type]bool) bool {
	if _, ok := componentKinds[t]; ok {
		return true
	}
	if busy[t] {
		return false
	}
	busy[t] = true
	defer delete(busy, t)
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return mayContainIn(t.Elem(), busy)
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return true
		}
		if _, ok := t.MethodByName("Update"); ok {
			return true
		}
		if _, ok := t.MethodByName("View"); ok {
			return true
		}
		for ct := range componentKinds {
			if ct.Implements(t) || reflect.PointerTo(ct).Implements(t) {
				return true
			}
		}
		return false
	case reflect.Struct:
		if foreignPackage(t.PkgPath()) {
			return false
		}
		for i := 0; i < t.NumField(); i++ {
			if mayContainIn(t.Field(i).Type, busy) {
				return true
			}
		}
	}
	return false
}

// foreignPackage reports whether types of the package at pkg cannot hold
// a program's components: the standard library's and Charm's packages.
// A program's own package may have any path ("main", "myapp/ui").
func foreignPackage(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return stdlibRoots[first] ||
		strings.HasPrefix(pkg, "charm.land/") ||
		strings.HasPrefix(pkg, "github.com/charmbracelet/")
}

// stdlibRoots are the first elements of the standard library's package
// paths.
var stdlibRoots = map[string]bool{
	"archive": true, "bufio": true, "bytes": true, "cmp": true, "compress": true,
	"container": true, "context": true, "crypto": true, "database": true, "debug": true,
	"embed": true, "encoding": true, "errors": true, "expvar": true, "flag": true,
	"fmt": true, "go": true, "hash": true, "html": true, "image": true, "index": true,
	"internal": true, "io": true, "iter": true, "log": true, "maps": true, "math": true,
	"mime": true, "net": true, "os": true, "path": true, "plugin": true, "reflect": true,
	"regexp": true, "runtime": true, "slices": true, "sort": true, "strconv": true,
	"strings": true, "structs": true, "sync": true, "syscall": true, "testing": true,
	"text": true, "time": true, "unicode": true, "unique": true, "unsafe": true,
	"vendor": true, "weak": true,
}

// expose returns f (a field of an addressable struct) as a value that can
// be read and set even when the field is unexported.
func expose(f reflect.Value) reflect.Value {
	if f.CanSet() {
		return f
	}
	if f.CanAddr() {
		return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	}
	return f
}

// addressable returns v, or an addressable copy of it.
func addressable(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return v
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

// rootValue returns the value the paths of m's components start from,
// addressable, and the function that gives the next model once it was
// changed: for a pointer model, the model itself (changed in place); for
// a value model, the changed copy. For reads (write false) a value model
// is read where the interface holds it (readRoot), not copied.
func rootValue(m tea.Model, write bool) (reflect.Value, func() tea.Model) {
	rv := reflect.ValueOf(m)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem(), func() tea.Model { return m }
	}
	if !write {
		return readRoot(m, rv), func() tea.Model { return m }
	}
	if rv.IsValid() && rv.Type().Size() > unsafe.Sizeof(uintptr(0)) {
		// The copy is changed, then handed out as the next model as it
		// is: an interface of m's type holding a pointer to it, as Go
		// boxes such a value (readRoot), not copied into a box again.
		p := reflect.New(rv.Type())
		p.Elem().Set(rv)
		return p.Elem(), func() tea.Model {
			next := m
			(*[2]unsafe.Pointer)(unsafe.Pointer(&next))[1] = p.UnsafePointer()
			return next
		}
	}
	c := addressable(rv)
	return c, func() tea.Model {
		if n, ok := c.Interface().(tea.Model); ok {
			return n
		}
		return m
	}
}

// readRoot returns a value model m (rv is reflect.ValueOf(m)) as an
// addressable value to read from, without copying it: a value larger than
// a pointer is held by the interface as a pointer to a copy of its own
// (Go's interfaces hold only pointer-shaped values directly), which
// nothing changes once made, so it is read there. A smaller value is
// copied (it costs nothing). What readRoot returns must never be
// written: a value model changes by a new copy (rootValue with write).
func readRoot(m tea.Model, rv reflect.Value) reflect.Value {
	if !rv.IsValid() {
		return rv
	}
	if rv.Type().Size() <= unsafe.Sizeof(uintptr(0)) {
		return addressable(rv)
	}
	data := (*[2]unsafe.Pointer)(unsafe.Pointer(&m))[1]
	return reflect.NewAt(rv.Type(), data).Elem()
}

// errMoved is the error for a component that is no longer where discover
// found it.
func errMoved(name string) error {
	return fmt.Errorf("component %s is no longer in the program's model", name)
}

// at follows path from v (addressable) and calls fn with the component
// there, addressable. When write is set, a value reached through an
// interface is changed on a copy that is stored back; with cow (a value
// model, changed on a copy) so is a slice on the path, so the caller's
// model does not see the change through a shared backing array.
func at(v reflect.Value, path []step, write bool, fn func(c reflect.Value) error) error {
	return atPath(v, path, write, false, fn)
}

// atPath is at, with cow.
func atPath(v reflect.Value, path []step, write, cow bool, fn func(c reflect.Value) error) error {
	if len(path) == 0 {
		return fn(v)
	}
	s, rest := path[0], path[1:]
	switch {
	case s.Field >= 0:
		if v.Kind() != reflect.Struct || s.Field >= v.NumField() {
			return errMovedPath
		}
		return atPath(expose(v.Field(s.Field)), rest, write, cow, fn)
	case s.Index >= 0:
		if (v.Kind() != reflect.Slice && v.Kind() != reflect.Array) || s.Index >= v.Len() {
			return errMovedPath
		}
		if write && cow && v.Kind() == reflect.Slice && v.CanSet() {
			n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(n, v)
			if err := atPath(n.Index(s.Index), rest, write, cow, fn); err != nil {
				return err
			}
			v.Set(n)
			return nil
		}
		return atPath(v.Index(s.Index), rest, write, cow, fn)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return errMovedPath
		}
		return atPath(v.Elem(), rest, write, false, fn)
	case reflect.Interface:
		if v.IsNil() {
			return errMovedPath
		}
		c := addressable(v.Elem())
		if err := atPath(c, rest, write, cow, fn); err != nil {
			return err
		}
		if write && v.CanSet() {
			v.Set(c)
		}
		return nil
	}
	return errMovedPath
}

// errMovedPath is at's error when the path leads nowhere now.
var errMovedPath = fmt.Errorf("the path leads nowhere")

// componentRef returns a pointer to the component f in m
// (*textinput.Model, *list.Model...) to read it where it is, without
// copying it: for reading only, and only until m changes (a value model
// is never changed in place; a pointer model is by its next Update).
func componentRef(m tea.Model, f found) (any, error) {
	root, _ := rootValue(m, false)
	var out any
	err := at(root, f.Path, false, func(c reflect.Value) error {
		if _, ok := componentKinds[c.Type()]; !ok {
			return errMovedPath
		}
		if !c.CanAddr() {
			c = addressable(c)
		}
		out = c.Addr().Interface()
		return nil
	})
	if err != nil {
		return nil, errMoved(f.Name)
	}
	return out, nil
}

// setComponent changes the component f in m with fn, given a pointer to
// it (*textinput.Model...), and returns the next model: m itself for a
// pointer model, a changed copy for a value model.
func setComponent(m tea.Model, f found, fn func(ptr any) error) (tea.Model, error) {
	root, next := rootValue(m, true)
	cow := reflect.ValueOf(m).Kind() != reflect.Pointer
	err := atPath(root, f.Path, true, cow, func(c reflect.Value) error {
		if _, ok := componentKinds[c.Type()]; !ok || !c.CanAddr() {
			return errMovedPath
		}
		return fn(c.Addr().Interface())
	})
	if err == errMovedPath {
		return m, errMoved(f.Name)
	}
	if err != nil {
		return m, err
	}
	return next(), nil
}
