package server

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// TestMCPEndpointBodyDeadlineAndHost: on /mcp over a real socket, a body
// trickled a byte at a time is answered 408 at Options.MCP.BodyTimeout,
// one in pieces within it is served, a JSON-RPC batch over
// Options.MCP.MaxBatch is answered 400, and a Host with a malformed port
// is answered 400 before anything else is looked at.
func TestMCPEndpointBodyDeadlineAndHost(t *testing.T) {
	srv := startHeadlessServer(t, Options{MCP: MCPOptions{BodyTimeout: 400 * time.Millisecond}})
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"trickle","version":"1"}}}`
	head := func(host string) string {
		return strings.Join([]string{
			"POST /mcp HTTP/1.1",
			"Host: " + host,
			"Authorization: Bearer " + keyA,
			"Content-Type: application/json",
			"Accept: application/json, text/event-stream",
			"Content-Length: " + strconv.Itoa(len(body)),
		}, "\r\n")
	}
	code, took := testkit.RawHTTP(t, srv.HTTPAddr(), []string{head("localhost")}, strings.Split(body, ""), 40*time.Millisecond)
	if code != http.StatusRequestTimeout || took > 3*time.Second {
		t.Fatalf("a trickled body on /mcp: %d after %s; want 408 at the 400ms deadline", code, took)
	}
	n := len(body) / 3
	if code, _ := testkit.RawHTTP(t, srv.HTTPAddr(), []string{head("localhost")}, []string{body[:n], body[n : 2*n], body[2*n:]}, 20*time.Millisecond); code != http.StatusOK {
		t.Fatalf("a body in pieces within the deadline on /mcp: %d", code)
	}
	batch := "[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"ping"},`, DefaultMCPMaxBatch+1), ",") + "]"
	batchHead := strings.Replace(head("localhost"), "Content-Length: "+strconv.Itoa(len(body)), "Content-Length: "+strconv.Itoa(len(batch)), 1)
	if code, _ := testkit.RawHTTP(t, srv.HTTPAddr(), []string{batchHead}, []string{batch}, 0); code != http.StatusBadRequest {
		t.Fatalf("a batch of %d on /mcp: %d, want 400", DefaultMCPMaxBatch+1, code)
	}
	for _, h := range []string{"localhost:80,evil.example", "localhost:65536", "127.0.0.1:x", "[::1]:0"} {
		if code, _ := testkit.RawHTTP(t, srv.HTTPAddr(), []string{head(h)}, []string{body}, 0); code != http.StatusBadRequest {
			t.Errorf("Host %q on /mcp: %d, want 400", h, code)
		}
		// With an Origin (which the Origin check compares with the Host)
		// the malformed Host is still what is refused.
		withOrigin := strings.Replace(head(h), "\r\nContent-Type:", "\r\nOrigin: http://localhost\r\nContent-Type:", 1)
		if code, _ := testkit.RawHTTP(t, srv.HTTPAddr(), []string{withOrigin}, []string{body}, 0); code != http.StatusBadRequest {
			t.Errorf("Host %q on /mcp with an Origin: %d, want 400", h, code)
		}
	}
}
