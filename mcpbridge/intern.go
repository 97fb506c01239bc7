package mcpbridge

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Tool definitions shared by the process's sessions. Every session of an
// app derives the same tools from the same widgets, and each held its own
// copy of every schema three times over: the widget's tool specs (kept by
// the scan and the derivation cache), the cleaned schema of each derived
// tool, and the *mcp.Tool registered for it. Equal ones are kept once
// here, read only, for every session:
//
//   - internSpecs: a widget's specs with their schema and annotations
//     maps replaced by equal ones from the table (copies the table owns:
//     app code that changes a map it returned changes nothing here);
//   - cleanedSchema: the cleaned schema of an interned raw schema, made
//     once; of any other, a fresh one;
//   - internedToolDef: the *mcp.Tool of a derived tool whose schema is an
//     interned cleaned one, made once; else a fresh one.
//
// Everything handed out is shared: read it, never change it (the SDK
// keeps and lists the *mcp.Tool as it is; order marks a copy). The table
// holds at most maxInterned specs (an app whose schemas change with its
// data, an enum of rows say, fills it once; what comes after is used as
// it is, unshared) and is never emptied, so an identity it hands out
// stays valid.
var maxInterned = 4096 // interned.mu; a variable for tests

// specKey is what interned specs are found by; their schema and
// annotations are then compared by value.
type specKey struct{ action, description string }

type internedSpec struct {
	schema, annotations map[string]any
}

var interned struct {
	mu    sync.Mutex
	specs map[specKey][]internedSpec
	n     int
	// kinds says which maps, by identity, are the table's raw and cleaned
	// schemas; cleaned holds the cleaned schema of each raw one, and
	// tools the *mcp.Tool of each derived tool whose schema is a cleaned
	// one.
	kinds   map[unsafe.Pointer]schemaKind
	cleaned map[unsafe.Pointer]map[string]any
	tools   map[toolDefKey]*mcp.Tool
}

type schemaKind uint8

const (
	rawSchemaKind   schemaKind = iota + 1 // a spec's, interned by internSpecs
	cleanSchemaKind                       // made by cleanedSchema from a raw one
)

// toolDefKey is everything toolDef reads of a Derived, the schema by
// identity.
type toolDefKey struct {
	name, description                string
	schema                           unsafe.Pointer
	sensitive, destructive, readOnly bool
}

// mapID is a map's identity.
func mapID(m map[string]any) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }

// internSpecs returns specs with each schema and annotations map replaced
// by an equal one shared by the process; specs itself is not changed.
func internSpecs(specs []ui.ToolSpec) []ui.ToolSpec {
	if len(specs) == 0 {
		return specs
	}
	out := make([]ui.ToolSpec, len(specs))
	copy(out, specs)
	interned.mu.Lock()
	defer interned.mu.Unlock()
	for i := range out {
		s := &out[i]
		if e, ok := internSpecLocked(specKey{s.Action, s.Description}, s.InputSchema, s.Annotations); ok {
			s.InputSchema, s.Annotations = e.schema, e.annotations
		}
	}
	return out
}

func internSpecLocked(k specKey, schema, annotations map[string]any) (internedSpec, bool) {
	for _, e := range interned.specs[k] {
		if sameJSON(e.schema, schema) && sameJSON(e.annotations, annotations) && (e.schema == nil) == (schema == nil) &&
			(e.annotations == nil) == (annotations == nil) {
			return e, true
		}
	}
	if interned.n >= maxInterned {
		return internedSpec{}, false
	}
	e := internedSpec{schema: cloneJSONMap(schema), annotations: cloneJSONMap(annotations)}
	if interned.specs == nil {
		interned.specs = map[specKey][]internedSpec{}
		interned.kinds = map[unsafe.Pointer]schemaKind{}
	}
	interned.specs[k] = append(interned.specs[k], e)
	interned.n++
	if e.schema != nil {
		interned.kinds[mapID(e.schema)] = rawSchemaKind
	}
	return e, true
}

// cloneJSONMap is a deep copy of a JSON-like map (nil stays nil).
func cloneJSONMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneJSONValue(v)
	}
	return out
}

func cloneJSONValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneJSONMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSONValue(e)
		}
		return out
	case []string:
		return append([]string(nil), x...)
	}
	return v
}

// cleanedSchema is cleanSchema(raw): made once and shared when raw is an
// interned schema (internSpecs), fresh otherwise.
func cleanedSchema(raw map[string]any) map[string]any {
	if raw == nil {
		return cleanSchema(raw)
	}
	id := mapID(raw)
	interned.mu.Lock()
	defer interned.mu.Unlock()
	if interned.kinds[id] != rawSchemaKind {
		return cleanSchema(raw)
	}
	if s, ok := interned.cleaned[id]; ok {
		return s
	}
	s := cleanSchema(raw)
	if interned.cleaned == nil {
		interned.cleaned = map[unsafe.Pointer]map[string]any{}
	}
	interned.cleaned[id] = s
	interned.kinds[mapID(s)] = cleanSchemaKind
	return s
}

// internedToolDef is toolDef(d): made once and shared when d's schema is
// one cleanedSchema shares, fresh otherwise.
func internedToolDef(d Derived) *mcp.Tool {
	if d.Schema == nil {
		return toolDef(d)
	}
	id := mapID(d.Schema)
	interned.mu.Lock()
	defer interned.mu.Unlock()
	if interned.kinds[id] != cleanSchemaKind {
		return toolDef(d)
	}
	k := toolDefKey{d.Name, d.Description, id, d.Sensitive, d.Destructive, d.ReadOnly}
	if t, ok := interned.tools[k]; ok {
		return t
	}
	if len(interned.tools) >= maxInterned {
		return toolDef(d)
	}
	t := toolDef(d)
	if interned.tools == nil {
		interned.tools = map[toolDefKey]*mcp.Tool{}
	}
	interned.tools[k] = t
	return t
}
