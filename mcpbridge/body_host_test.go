package mcpbridge_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
)

// TestTrickledBodyIsCutAtItsDeadline: a body sent a byte at a time is
// answered 408 once BodyTimeout has passed, however slowly it keeps
// coming; a body that arrives in pieces within the deadline is served.
func TestTrickledBodyIsCutAtItsDeadline(t *testing.T) {
	e := newCapEnv(t, 8, mcpbridge.Options{BodyTimeout: 500 * time.Millisecond})
	body := fmt.Sprintf(initBody, "trickler")
	head := func(n int) string {
		return strings.Join([]string{
			"POST /sessions/" + e.session.ID + "/mcp HTTP/1.1",
			"Host: localhost",
			"Authorization: Bearer " + e.session.Token(),
			"Content-Type: application/json",
			"Accept: application/json, text/event-stream",
			"Content-Length: " + strconv.Itoa(n),
		}, "\r\n")
	}
	bytewise := strings.Split(body, "")
	code, took := testkit.RawHTTP(t, strings.TrimPrefix(e.http.URL, "http://"), []string{head(len(body))}, bytewise, 50*time.Millisecond) // would take ~9 s
	if code != http.StatusRequestTimeout {
		t.Fatalf("a trickled body got %d after %s; want 408", code, took)
	}
	if took > 3*time.Second {
		t.Fatalf("a trickled body was held %s with a 500ms deadline", took)
	}
	if n := testutil.ToFloat64(e.metrics.MCPRejections.WithLabelValues("body_timeout")); n != 1 {
		t.Fatalf("raxol_mcp_rejections_total{reason=body_timeout} = %v after one", n)
	}
	// A body that never comes is cut too.
	if code, _ := testkit.RawHTTP(t, strings.TrimPrefix(e.http.URL, "http://"), []string{head(len(body))}, nil, 0); code != http.StatusRequestTimeout {
		t.Fatalf("a body that never came got %d; want 408", code)
	}
	// Four pieces within the deadline are a request like any other.
	n := len(body) / 4
	pieces := []string{body[:n], body[n : 2*n], body[2*n : 3*n], body[3*n:]}
	if code, _ := testkit.RawHTTP(t, strings.TrimPrefix(e.http.URL, "http://"), []string{head(len(body))}, pieces, 20*time.Millisecond); code != http.StatusOK {
		t.Fatalf("a body in pieces within the deadline got %d", code)
	}
	// A chunked body is bounded the same way.
	chunked := strings.Replace(head(0), "Content-Length: 0", "Transfer-Encoding: chunked", 1)
	var chunks []string
	for _, c := range bytewise {
		chunks = append(chunks, "1\r\n"+c+"\r\n")
	}
	if code, _ := testkit.RawHTTP(t, strings.TrimPrefix(e.http.URL, "http://"), []string{chunked}, append(chunks, "0\r\n\r\n"), 50*time.Millisecond); code != http.StatusRequestTimeout {
		t.Fatalf("a trickled chunked body got %d; want 408", code)
	}
}

// TestMalformedHostsAreRefused: a Host that is not a name or address with
// at most a valid port is answered 400, on the wire; well-formed ones are
// judged by the DNS-rebinding check as before.
func TestMalformedHostsAreRefused(t *testing.T) {
	e := newCapEnv(t, 8, mcpbridge.Options{AllowedHosts: []string{"pinned.example"}})
	do := func(host string) int {
		head := strings.Join([]string{
			"POST /sessions/" + e.session.ID + "/mcp HTTP/1.1",
			"Host: " + host,
			"Authorization: Bearer " + e.session.Token(),
			"Content-Type: application/json",
			"Accept: application/json, text/event-stream",
			"Content-Length: 40",
		}, "\r\n")
		code, _ := testkit.RawHTTP(t, strings.TrimPrefix(e.http.URL, "http://"), []string{head}, []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}, 0)
		return code
	}
	for _, h := range []string{
		"localhost:80,evil.example", "localhost:99999", "localhost:0", "localhost:-1", "localhost:8a",
		"localhost:+80", "localhost:080080", "[::1", "[::1]x", "[::1]:70000", "::1", "[127.0.0.1]",
		"evil.example@localhost", "localhost/evil", "localhost:80:80", "local%68ost", "localhost;evil",
	} {
		if code := do(h); code != http.StatusBadRequest {
			t.Errorf("Host %q: %d, want 400", h, code)
		}
	}
	for h, want := range map[string]int{
		"localhost": http.StatusOK, "localhost:8080": http.StatusOK, "127.0.0.1:1": http.StatusOK,
		"[::1]:65535": http.StatusOK, "LOCALHOST.": http.StatusOK, "localhost:": http.StatusOK,
		"pinned.example": http.StatusOK, "evil.example": http.StatusForbidden, "evil_host.example:443": http.StatusForbidden,
	} {
		if code := do(h); code != want {
			t.Errorf("Host %q: %d, want %d", h, code, want)
		}
	}
}

// TestHostWellFormedAgreesWithURLs: what HostWellFormed accepts is an
// authority url.Parse reads back as itself, with a port of 1 to 65535 or
// none; names and ports built by the grammar are accepted.
func TestHostWellFormedAgreesWithURLs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := rapid.StringOfN(rapid.SampledFrom([]rune("ab-._:[]1::,@/% 0\x00é9")), 0, 24, -1).Draw(t, "host")
		if !mcpbridge.HostWellFormed(h) || h == "" {
			return
		}
		u, err := url.Parse("http://" + h + "/")
		if err != nil || u.Host != h {
			t.Fatalf("accepted %q, which url.Parse reads as %v, %v", h, u, err)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted %q with port %q", h, p)
			}
		}
		if u.Hostname() == "" {
			t.Fatalf("accepted %q with no host name", h)
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.StringMatching(`[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?(\.[a-z0-9]{1,8}){0,3}\.?`).Draw(t, "name")
		if rapid.Bool().Draw(t, "v6") {
			name = "[" + rapid.SampledFrom([]string{"::1", "2001:db8::1", "fe80::1:2"}).Draw(t, "ip6") + "]"
		}
		h := name
		if rapid.Bool().Draw(t, "port") {
			h += ":" + strconv.Itoa(rapid.IntRange(1, 65535).Draw(t, "p"))
		}
		if !mcpbridge.HostWellFormed(h) {
			t.Fatalf("refused the well-formed %q", h)
		}
	})
}

// pingBatch is a JSON-RPC batch of n pings, with leading white space.
func pingBatch(n int) string {
	var b strings.Builder
	b.WriteString(" \n[")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)
	}
	b.WriteByte(']')
	return b.String()
}

// TestBatchesAreCapped: a JSON-RPC batch (served by the SDK to a client
// that sends no MCP-Protocol-Version header) of more than MaxBatch
// messages is answered 400 and counted, one of MaxBatch is served whole;
// the SDK keeps every batched message live until the batch is answered,
// so a 20,000-ping body under the size cap held ~20 MiB.
func TestBatchesAreCapped(t *testing.T) {
	e := newCapEnv(t, 8, mcpbridge.Options{})
	sid, code := e.rawOpen("batcher")
	if code != http.StatusOK {
		t.Fatal(code)
	}
	for _, n := range []int{mcpbridge.DefaultMaxBatch + 1, 1000, 20000} {
		code, _, body, err := e.rawPost(context.Background(), sid, pingBatch(n))
		if err != nil || code != http.StatusBadRequest || !strings.Contains(body, "batch") {
			t.Fatalf("a batch of %d: %d %q %v; want 400", n, code, body, err)
		}
	}
	if n := testutil.ToFloat64(e.metrics.MCPRejections.WithLabelValues("batch_too_large")); n != 3 {
		t.Fatalf("raxol_mcp_rejections_total{reason=batch_too_large} = %v after 3", n)
	}
	code, _, body, err := e.rawPost(context.Background(), sid, pingBatch(mcpbridge.DefaultMaxBatch))
	if err != nil || code != http.StatusOK {
		t.Fatalf("a batch of %d: %d %v", mcpbridge.DefaultMaxBatch, code, err)
	}
	if got := strings.Count(body, `"result":{}`); got != mcpbridge.DefaultMaxBatch {
		t.Fatalf("a batch of %d got %d answers:\n%s", mcpbridge.DefaultMaxBatch, got, body)
	}
	// Not batches: a single message, and an array inside one, pass.
	if code, _, _, _ := e.rawPost(context.Background(), sid, `{"jsonrpc":"2.0","id":99,"method":"ping","params":{"_meta":{"x":[`+strings.Repeat("1,", 100)+`1]}}}`); code != http.StatusOK {
		t.Fatalf("a message holding an array: %d", code)
	}
}
