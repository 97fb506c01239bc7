package mcpbridge

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// BenchmarkDeriveAndLens is the tool side of one snapshot: derive every
// widget's tools from the tree and let the lens choose what to advertise,
// for trees of 100, 1,000 and 10,000 widgets. It must grow linearly.
//
//	go test ./mcpbridge -run '^$' -bench DeriveAndLens -benchmem
func BenchmarkDeriveAndLens(b *testing.B) {
	g := guard.New(slog.New(slog.DiscardHandler), nil).Session("bench")
	for _, n := range []int{100, 1000, 10000} {
		items := make([]ui.Node, 0, n)
		ids := make([]string, 0, n)
		for i := range n {
			id := fmt.Sprintf("w%d", i)
			ids = append(ids, id)
			if i%2 == 0 {
				items = append(items, ui.TextInput{ID: id, Label: "Field", Value: "text"})
			} else {
				items = append(items, ui.Button{ID: id, Label: "Press", OnClick: struct{}{}})
			}
		}
		tree := ui.Column{Items: items}
		b.Run(fmt.Sprintf("widgets=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := derive(g, "app", tree, nil)
				sel := lens.Select(lensTools(d), lens.Input{Mode: lens.ModeFocused, Tree: ids, Focused: ids[n/2]})
				if len(sel) == 0 {
					b.Fatal("nothing selected")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/widget")
		})
	}
}

// BenchmarkDeriveAfterTyping is the watcher's derivation of the demo's
// tools after each change an agent's type_into makes (the search's value).
//
//	go test ./mcpbridge -run '^$' -bench DeriveAfterTyping -benchmem
func BenchmarkDeriveAfterTyping(b *testing.B) {
	var m ui.Model = demo.New()
	var cache deriveCache
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m, _ = m.Update(ui.TextInputChanged{ID: demo.IDSearch, Text: []string{"loop-1", "loop-2"}[i%2]})
		_ = deriveCached(guard.Scope{}, "demo", m.View(), nil, &cache)
	}
}
