package testkit

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallTool calls tool name on cs (10 s at most) and returns its answer:
// the text, decoded as a JSON object ({"text": text} when it is not one),
// the text itself, and whether it is an error result. A failed call (a
// protocol or transport error) fails the test.
func CallTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (out map[string]any, text string, isError bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if json.Unmarshal([]byte(text), &out) != nil || out == nil {
		out = map[string]any{"text": text}
	}
	return out, text, res.IsError
}

// MustCall is CallTool for a call that must succeed: an error result
// fails the test.
func MustCall(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, text, isErr := CallTool(t, cs, name, args)
	if isErr {
		t.Fatalf("%s: error result %s", name, text)
	}
	return out
}

// ConnectBench connects a go-sdk client to url over Streamable HTTP, with
// no standalone stream (a benchmark's agent only calls), with a bearer
// token unless token is ""; closed when tb ends.
func ConnectBench(tb testing.TB, url, token string) *mcp.ClientSession {
	tb.Helper()
	hc := http.DefaultClient
	if token != "" {
		hc = &http.Client{Transport: Bearer(nil, token)}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cs.Close() })
	return cs
}

// BareEchoServer is the benchmarks' floor: a bare go-sdk server with one
// echo tool ({"text"} back as text) over Streamable HTTP, closed when tb
// ends.
func BareEchoServer(tb testing.TB) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	tb.Cleanup(hs.Close)
	return hs
}
