package mcpbridge

import (
	"testing"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// BenchmarkDeriveAfterTyping is the watcher's derivation of the demo's
// tools after each change an agent's type_into makes (the search's value).
func BenchmarkDeriveAfterTyping(b *testing.B) {
	var m ui.Model = demo.New()
	var cache deriveCache
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m, _ = m.Update(ui.TextInputChanged{ID: demo.IDSearch, Text: []string{"loop-1", "loop-2"}[i%2]})
		_ = deriveCached(guard.Scope{}, "demo", m.View(), nil, &cache)
	}
}
