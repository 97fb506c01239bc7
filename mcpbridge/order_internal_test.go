package mcpbridge

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOrderToolsCopies: orderTools orders and marks a copy; the result,
// its slice, the tools and their _meta stay as the SDK made them.
func TestOrderToolsCopies(t *testing.T) {
	a := &mcp.Tool{Name: "a"}
	b := &mcp.Tool{Name: "b", Meta: mcp.Meta{"sensitive": true}}
	c := &mcp.Tool{Name: "c"}
	in := &mcp.ListToolsResult{Tools: []*mcp.Tool{a, b, c}, NextCursor: "x"}
	rank := map[string]int{"c": 0, "b": 1}
	res := orderTools(in, rank, map[string]bool{"b": true}).(*mcp.ListToolsResult)

	var got []string
	for _, tl := range res.Tools {
		got = append(got, tl.Name)
	}
	if want := []string{"c", "b", "a"}; !slices.Equal(got, want) {
		t.Fatalf("order %q, want %q (ranked first, the unranked after)", got, want)
	}
	if res.NextCursor != "x" {
		t.Fatalf("cursor %q lost", res.NextCursor)
	}
	if m := res.Tools[1].Meta; m[MetaFocused] != true || m["sensitive"] != true {
		t.Fatalf("marked _meta %v, want focused and sensitive", m)
	}
	if res.Tools[1] == b || res.Tools[0] != c || res.Tools[2] != a {
		t.Fatal("a marked tool must be a copy, an unmarked one needs none")
	}
	if in.Tools[0] != a || in.Tools[1] != b || in.Tools[2] != c || len(b.Meta) != 1 || a.Meta != nil {
		t.Fatalf("the input changed: %v, b's _meta %v", in.Tools, b.Meta)
	}
	if other := (&mcp.ListResourcesResult{}); orderTools(other, rank, nil) != mcp.Result(other) {
		t.Fatal("another result must pass as it is")
	}
}
