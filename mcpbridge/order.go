package mcpbridge

import (
	"context"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/lens"
)

// MetaFocused is the _meta key that marks, in tools/list, the tools of the
// widget the human has focused: `"_meta": {"focused": true}`. Only those
// tools carry it; descriptions never say anything about focus.
const MetaFocused = "focused"

// order is the receiving middleware that makes tools/list return the
// tools in the lens's order (the session tools, then the focused widget's
// tools, then the rest by attention) and marks the focused widget's tools
// with [MetaFocused].
//
// The SDK returns the registered tools sorted by name, and its tool
// values are shared by every client session: a marked tool is a copy, and
// the result is a new one, so nothing registered changes and focus moves
// neither re-register tools nor send notifications/tools/list_changed.
// It runs inside the gate, which then filters the ordered copy per entry
// and keeps the order.
//
// Pages are cut by the SDK from the name order, so with more tools than
// its page size (1000) the order holds within each page; a session
// advertises at most MaxTools (about 15), one page.
func (c *sessionServer) order(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		c.mu.Lock()
		selected, focus := c.selected, c.selectedFocus
		c.mu.Unlock()
		rank, focused := ranks(selected, focus)
		return orderTools(res, rank, focused), nil
	}
}

// ranks is each selected tool's position in the lens's order, and the
// selected tools of the focused widget. selected is the lens's, never
// changed once published (sync makes a new one each time).
func ranks(selected []lens.Tool, focus string) (map[string]int, map[string]bool) {
	rank := make(map[string]int, len(selected))
	focused := map[string]bool{}
	for i, t := range selected {
		rank[t.Name] = i
		if focus != "" && t.WidgetID == focus {
			focused[t.Name] = true
		}
	}
	return rank, focused
}

// orderTools returns a tools/list result with its tools sorted by rank
// (tools without one last, in their own order), those named in focused
// replaced by copies marked [MetaFocused]; other results are returned as
// they are. res and its tools are not modified.
func orderTools(res mcp.Result, rank map[string]int, focused map[string]bool) mcp.Result {
	lr, ok := res.(*mcp.ListToolsResult)
	if !ok || lr == nil {
		return res
	}
	out := *lr
	out.Tools = slices.Clone(lr.Tools)
	pos := func(t *mcp.Tool) int {
		if r, ok := rank[t.Name]; ok {
			return r
		}
		return len(rank)
	}
	slices.SortStableFunc(out.Tools, func(a, b *mcp.Tool) int { return pos(a) - pos(b) })
	for i, t := range out.Tools {
		if !focused[t.Name] {
			continue
		}
		marked := *t
		marked.Meta = maps.Clone(t.Meta)
		if marked.Meta == nil {
			marked.Meta = mcp.Meta{}
		}
		marked.Meta[MetaFocused] = true
		out.Tools[i] = &marked
	}
	return &out
}
