package mcpbridge_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCall measures one tools/call round trip from a go-sdk
// client over Streamable HTTP on loopback: a read (answered from the
// current tree) and a write (folded by the dispatcher before it answers).
func BenchmarkToolCall(b *testing.B) {
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"read", "app.name.get_value", nil},
		{"write", "app.name.type_into", map[string]any{"text": "x"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newBenchEnv(b)
			cs, _ := e.connect(false)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
