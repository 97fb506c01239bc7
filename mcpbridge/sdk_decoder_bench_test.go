package mcpbridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk's own cost of decoding a request, without raxol-ssh: see
// docs/bench/go-sdk-decoder.md. go-sdk v1.8.0's internal/json.Unmarshal
// makes a new segmentio Decoder, with a new 32 KiB buffer, per call, so
// each unmarshal costs ~32.9 KB whatever the message's size. When an SDK
// upgrade fixes it, these numbers drop from ~200 KB to ~11 KB a call.

// BenchmarkSDKDecoderDecodeMessage: jsonrpc.DecodeMessage, the SDK's
// public decoder of one JSON-RPC message, unmarshals twice (the message,
// then its method string): ~65.6 KB for a 100-byte request on v1.8.0.
func BenchmarkSDKDecoderDecodeMessage(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonrpc.DecodeMessage(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSDKDecoderToolsCall: one tools/call POST through a bare
// go-sdk Streamable HTTP handler (ServeHTTP in process, no network, a
// session initialized beforehand), the tool registered typed
// (mcp.AddTool, as the floor's echo: 8 SDK unmarshals a call on v1.8.0)
// or raw (Server.AddTool decoding its own arguments, as the bridge's
// tools: 6).
func BenchmarkSDKDecoderToolsCall(b *testing.B) {
	type echoIn struct {
		Text string `json:"text"`
	}
	for _, tool := range []string{"typed", "raw"} {
		b.Run("tool="+tool, func(b *testing.B) {
			s := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
			if tool == "typed" {
				mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoIn) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
				})
			} else {
				s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
					func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						var a echoIn
						if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
							return nil, err
						}
						return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
					})
			}
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
			b.Cleanup(func() { // goleak (TestMain): end the session's goroutines
				for ss := range s.Sessions() {
					_ = ss.Close()
				}
			})
			post := func(sid, body string) *httptest.ResponseRecorder {
				r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewBufferString(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				if sid != "" {
					r.Header.Set("Mcp-Session-Id", sid)
					r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}
			w := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
			sid := w.Header().Get("Mcp-Session-Id")
			if w.Code != http.StatusOK || sid == "" {
				b.Fatalf("initialize: %d %s", w.Code, w.Body)
			}
			if w := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`); w.Code/100 != 2 {
				b.Fatalf("initialized: %d %s", w.Code, w.Body)
			}
			bodies := make([]string, 1024)
			for i := range bodies {
				bodies[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
			}
			if w := post(sid, bodies[0]); w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"hello"`)) {
				b.Fatalf("tools/call: %d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if w := post(sid, bodies[i%len(bodies)]); w.Code != http.StatusOK {
					b.Fatalf("tools/call: %d %s", w.Code, w.Body)
				}
			}
		})
	}
}
