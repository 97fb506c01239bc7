package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// TestClientIP: the one reading of a request's client address. From a
// trusted proxy it is the right-most X-Forwarded-For entry that is no
// trusted proxy, whatever the client wrote left of it; from anyone else
// the header means nothing.
func TestClientIP(t *testing.T) {
	trusted := trustedProxies(prefixes("127.0.0.1/32", "10.0.0.0/8", "2001:db8:1::/48"))
	for _, tc := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"direct, no header", "192.0.2.1:5000", nil, "192.0.2.1"},
		{"untrusted peer's header is ignored", "192.0.2.1:5000", []string{"203.0.113.7"}, "192.0.2.1"},
		{"trusted peer without a header is the client", "127.0.0.1:5000", nil, "127.0.0.1"},
		{"one proxy", "127.0.0.1:5000", []string{"203.0.113.7"}, "203.0.113.7"},
		{"a client's claim left of its own address", "127.0.0.1:5000", []string{"1.2.3.4, 203.0.113.7"}, "203.0.113.7"},
		{"a claim in a header line of its own", "127.0.0.1:5000", []string{"1.2.3.4", "203.0.113.7"}, "203.0.113.7"},
		{"a chain of trusted proxies", "127.0.0.1:5000", []string{"1.2.3.4, 203.0.113.7, 10.1.2.3, 10.9.9.9"}, "203.0.113.7"},
		{"a claim of a proxy's address is skipped", "127.0.0.1:5000", []string{"203.0.113.7, 10.1.2.3"}, "203.0.113.7"},
		{"only trusted proxies: the farthest", "127.0.0.1:5000", []string{"10.1.2.3, 10.9.9.9"}, "10.1.2.3"},
		{"garbage stops at the proxy that passed it", "127.0.0.1:5000", []string{"203.0.113.7, nonsense, 10.1.2.3"}, "10.1.2.3"},
		{"an empty entry too", "127.0.0.1:5000", []string{"203.0.113.7,"}, "127.0.0.1"},
		{"entries with ports", "127.0.0.1:5000", []string{"203.0.113.7:4711, [2001:db8::7]:443"}, "2001:db8::7"},
		{"IPv6 peer and client", "[2001:db8:1::5]:443", []string{"2001:db8:2::9"}, "2001:db8:2::9"},
		{"IPv4-mapped addresses are IPv4", "[::ffff:127.0.0.1]:5000", []string{"::ffff:203.0.113.7"}, "203.0.113.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tc.peer, Header: http.Header{}}
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := trusted.clientIP(r); got != tc.want {
				t.Errorf("clientIP = %q, want %q", got, tc.want)
			}
		})
	}
	// Trusting nobody, the peer is the client.
	r := &http.Request{RemoteAddr: "127.0.0.1:5000", Header: http.Header{"X-Forwarded-For": {"203.0.113.7"}}}
	if got := trustedProxies(nil).clientIP(r); got != "127.0.0.1" {
		t.Errorf("no trusted proxies: clientIP = %q, want the peer", got)
	}
}

// startProxiedHeadless is startHeadlessServer with the log kept in logs
// too.
func startProxiedHeadless(t *testing.T, opts Options, logs io.Writer) *Server {
	t.Helper()
	opts.SSH.Addr, opts.MCP.Addr, opts.DataDir = "127.0.0.1:0", "127.0.0.1:0", t.TempDir()
	opts.Headless.APIKeysFile = writeKeys(t, keyA, keyB)
	opts.MCP.ToolAuthorizer = withControl(authz.Allow(), authz.Allow(), authz.Allow())
	opts.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(logs, testkit.NewLogWriter(t)), nil))
	srv, err := New(demoApp(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

// demoApp is the demo app with its own policies.
func demoApp() App {
	return App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, Projections: demo.Projections(),
		ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy()}
}

// postMCP posts an initialize request to /mcp with the given bearer
// token and X-Forwarded-For ("": none) from the loopback address local.
func postMCP(t *testing.T, srv *Server, local, key, xff string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+srv.HTTPAddr()+"/mcp", strings.NewReader(initBody))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}).DialContext}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

const wrongKey = "wrong-key-wrong-key-wrong"

// TestForwardedForMovesTheWrongKeyBudget: behind a trusted proxy the
// budget of wrong /mcp API keys is the forwarded client's: one client
// using it up is refused (429) while another client of the same proxy,
// and the proxy itself, are not. A client that writes a claim of its own
// left of its address still spends and is refused as itself, and a claim
// of a trusted proxy's address is skipped. The log names the client.
func TestForwardedForMovesTheWrongKeyBudget(t *testing.T) {
	var logs testkit.SyncBuffer
	srv := startProxiedHeadless(t, Options{
		MCP:    MCPOptions{TrustedProxies: prefixes("127.0.0.1/32", "10.0.0.0/8")},
		Limits: Limits{MaxAuthFailures: 2, AuthFailureWindow: time.Hour},
	}, &logs)
	for i := range 2 {
		if code := postMCP(t, srv, "127.0.0.1", wrongKey, "203.0.113.7"); code != http.StatusUnauthorized {
			t.Fatalf("wrong key %d from 203.0.113.7: %d, want 401", i, code)
		}
	}
	for _, tc := range []struct {
		name, xff string
		want      int
	}{
		{"the client over its budget", "203.0.113.7", http.StatusTooManyRequests},
		{"the same client claiming another address left of its own", "1.2.3.4, 203.0.113.7", http.StatusTooManyRequests},
		{"the same client through a second trusted proxy", "203.0.113.7, 10.0.0.5", http.StatusTooManyRequests},
		{"another client of the proxy", "203.0.113.8", http.StatusUnauthorized},
		{"the address the spoofer claimed, which spent nothing", "1.2.3.4", http.StatusUnauthorized},
		{"the proxy itself", "", http.StatusUnauthorized},
	} {
		if code := postMCP(t, srv, "127.0.0.1", wrongKey, tc.xff); code != tc.want {
			t.Errorf("%s (X-Forwarded-For %q): %d, want %d", tc.name, tc.xff, code, tc.want)
		}
	}
	// A right key is served whatever the budget.
	if code := postMCP(t, srv, "127.0.0.1", keyA, "203.0.113.7"); code != http.StatusOK {
		t.Errorf("right key from the throttled client: %d, want 200", code)
	}
	if !strings.Contains(logs.String(), `msg="wrong /mcp API key" remote=203.0.113.7 throttled=true`) {
		t.Errorf("no log of the throttled client by its address:\n%s", logs.String())
	}
}

// TestForwardedForFromAnUntrustedPeerIsIgnored: when the peer is not a
// trusted proxy, X-Forwarded-For changes nothing: wrong keys claiming
// three addresses all spend the peer's one budget.
func TestForwardedForFromAnUntrustedPeerIsIgnored(t *testing.T) {
	var logs testkit.SyncBuffer
	srv := startProxiedHeadless(t, Options{
		MCP:    MCPOptions{TrustedProxies: prefixes("10.0.0.0/8")},
		Limits: Limits{MaxAuthFailures: 2, AuthFailureWindow: time.Hour},
	}, &logs)
	for i, xff := range []string{"203.0.113.7", "203.0.113.8"} {
		if code := postMCP(t, srv, "127.0.0.1", wrongKey, xff); code != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: %d, want 401", i, code)
		}
	}
	if code := postMCP(t, srv, "127.0.0.1", wrongKey, "203.0.113.9"); code != http.StatusTooManyRequests {
		t.Errorf("a fresh claimed address from an untrusted peer: %d, want 429 (the peer's budget is used up)", code)
	}
	if strings.Contains(logs.String(), "203.0.113.") || !strings.Contains(logs.String(), "remote=127.0.0.1 ") {
		t.Errorf("the log does not show the peer's own address only:\n%s", logs.String())
	}
}

// TestMaxHTTPPerIPBehindAProxy: connections from a trusted proxy are not
// capped per address (they are every client's), and requests through it
// are capped per forwarded client instead: one client with a request in
// flight at a cap of 1 gets 429 for another, while other clients of the
// proxy are served. An untrusted address is still capped per connection.
func TestMaxHTTPPerIPBehindAProxy(t *testing.T) {
	srv := startHeadlessServer(t, Options{
		MCP:    MCPOptions{TrustedProxies: prefixes("127.0.0.1/32")},
		Limits: Limits{MaxHTTPPerIP: 1},
	})
	dialFrom := func(local string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", srv.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	get := func(local, xff string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+srv.HTTPAddr()+"/healthz", nil)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}).DialContext}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// 203.0.113.7's request stays in flight: /mcp waits for the rest of
	// its body.
	held := dialFrom("127.0.0.1")
	if _, err := fmt.Fprintf(held, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nX-Forwarded-For: 203.0.113.7\r\n"+
		"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", srv.HTTPAddr(), keyA); err != nil {
		t.Fatal(err)
	}
	idle := dialFrom("127.0.0.1") // a third connection from the proxy, idle
	_ = idle
	testkit.Eventually(t, 10*time.Second, func() bool {
		code, body := get("127.0.0.1", "203.0.113.7")
		return code == http.StatusTooManyRequests && strings.Contains(body, "too many requests in flight from your address")
	}, "a second request of a client with one in flight was not refused")
	if code, body := get("127.0.0.1", "203.0.113.8"); code != http.StatusOK {
		t.Errorf("another client of the proxy, which holds three connections at a cap of 1: %d %q, want 200", code, body)
	}
	if !strings.Contains(scrape(t, srv), `raxol_mcp_rejections_total{reason="too_many_connections"} 1`+"\n") {
		t.Errorf("the refusal is not counted as too_many_connections")
	}
	_ = held.Close()
	testkit.Eventually(t, 10*time.Second, func() bool { code, _ := get("127.0.0.1", "203.0.113.7"); return code == http.StatusOK },
		"the client is still refused after its request ended")

	// A direct client is capped per connection, as before.
	_ = dialFrom("127.0.0.2")
	testkit.Eventually(t, 10*time.Second, func() bool {
		code, body := get("127.0.0.2", "")
		return code == http.StatusTooManyRequests && strings.Contains(body, "too many connections from your address")
	}, "a second connection from an untrusted address was not refused")
}

// TestReadinessStates: /readyz says "starting" while StartOn brings the
// listeners up (too brief to catch from outside: the state is set here),
// "ready" before any start (an embedder serving Middleware and Handler
// itself) and while serving, "draining" from Shutdown on.
func TestReadinessStates(t *testing.T) {
	srv, err := New(demoApp(), Options{DataDir: t.TempDir(), SSH: SSHOptions{Addr: "127.0.0.1:0"}, MCP: MCPOptions{Addr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	readyz := func() (int, string) {
		w := httptest.NewRecorder()
		srv.ReadyHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return w.Code, strings.TrimSpace(w.Body.String())
	}
	if code, body := readyz(); code != http.StatusOK || body != "ready" {
		t.Errorf("before Start: %d %q, want 200 ready", code, body)
	}
	srv.readiness.Store(readyStarting)
	if code, body := readyz(); code != http.StatusServiceUnavailable || body != "starting" {
		t.Errorf("starting: %d %q, want 503 starting", code, body)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if code, body := readyz(); code != http.StatusOK || body != "ready" {
		t.Errorf("serving: %d %q, want 200 ready", code, body)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, body := readyz(); code != http.StatusServiceUnavailable || body != "draining" {
		t.Errorf("after Shutdown: %d %q, want 503 draining", code, body)
	}
}
