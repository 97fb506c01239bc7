package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// The Host a reverse proxy forwards, and the API key of /mcp.
const (
	proxyHost   = "raxol.example.com"
	proxyAPIKey = "proxy-key-0123456789abcdef0123456789abcdef"
)

// proxied is a server on 127.0.0.1 (as behind a reverse proxy on the same
// machine), a headless session on it and /mcp served with proxyAPIKey.
type proxied struct {
	srv *testServer
	se  *session.Session
}

func startProxied(t *testing.T, opts server.Options) proxied {
	t.Helper()
	keys := filepath.Join(t.TempDir(), "api_keys")
	if err := os.WriteFile(keys, []byte(proxyAPIKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.Headless.APIKeysFile = keys
	srv := startServer(t, opts)
	se, end, err := srv.StartHeadless(session.Owner{User: "proxy-test", KeyFingerprint: "SHA256:proxy-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(end)
	return proxied{srv: srv, se: se}
}

// endpoint is one of the MCP endpoints behind the proxy.
type endpoint struct {
	name, path, token, tool string
	sse                     bool
}

func (p proxied) endpoints() []endpoint {
	base := "/sessions/" + p.se.ID
	return []endpoint{
		{name: "session-streamable", path: base + "/mcp", token: p.se.Token(), tool: "raxol_screenshot"},
		{name: "session-sse", path: base + "/sse", token: p.se.Token(), tool: "raxol_screenshot", sse: true},
		{name: "headless-mcp", path: "/mcp", token: proxyAPIKey, tool: server.ToolList},
	}
}

// connectVia connects a go-sdk client to ep on the server's loopback
// address, every request carrying Host: host, and calls ep's tool.
func (p proxied) connectVia(ep endpoint, host string) error {
	hc := &http.Client{Transport: testkit.Host(testkit.Bearer(nil, ep.token), host)}
	url := "http://" + p.srv.HTTPAddr() + ep.path
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}
	if ep.sse {
		tr = &mcp.SSEClientTransport{Endpoint: url, HTTPClient: hc}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "proxied-agent", Version: "1"}, nil)
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ep.tool})
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", ep.tool, err)
	}
	if res.IsError {
		return fmt.Errorf("tools/call %s: error result %v", ep.tool, res.Content)
	}
	return nil
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// status sends ep's first request (an initialize POST, or the SSE GET)
// with Host: host and returns the status and, for a refusal, the body.
func (p proxied) status(t *testing.T, ep endpoint, host string) (int, string) {
	t.Helper()
	method, body := http.MethodPost, io.Reader(strings.NewReader(initializeBody))
	if ep.sse {
		method, body = http.MethodGet, nil
	}
	req, err := http.NewRequest(method, "http://"+p.srv.HTTPAddr()+ep.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Authorization", "Bearer "+ep.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	cl := &http.Client{Timeout: waitShort, Transport: &http.Transport{DisableKeepAlives: true}}
	defer cl.CloseIdleConnections()
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("%s %s Host %q: %v", method, ep.path, host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, "" // an SSE stream does not end
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// hostRefusal is what our own Host check answers (the SDK's says
// "Forbidden: invalid Host header").
const hostRefusal = "DNS rebinding protection"

// TestReverseProxyHost: a reverse proxy on the same machine connects over
// loopback and forwards the public Host. With --mcp-allowed-hosts naming
// it, a real client initializes and calls a tool on every MCP endpoint;
// without it, and for any other name, the request is refused 403 by our
// check and counted.
func TestReverseProxyHost(t *testing.T) {
	t.Run("allowed", func(t *testing.T) {
		t.Parallel()
		p := startProxied(t, server.Options{MCP: server.MCPOptions{AllowedHosts: []string{proxyHost}}})
		for _, ep := range p.endpoints() {
			if err := p.connectVia(ep, proxyHost); err != nil {
				t.Errorf("%s with Host %s: %v", ep.name, proxyHost, err)
			}
			if err := p.connectVia(ep, proxyHost+":443"); err != nil {
				t.Errorf("%s with Host %s:443: %v", ep.name, proxyHost, err)
			}
			if err := p.connectVia(ep, "evil.example"); err == nil {
				t.Errorf("%s with Host evil.example: connected", ep.name)
			}
			if code, body := p.status(t, ep, "evil.example"); code != http.StatusForbidden || !strings.Contains(body, hostRefusal) {
				t.Errorf("%s with Host evil.example: %d %q, want 403 %q", ep.name, code, body, hostRefusal)
			}
		}
	})
	t.Run("not-allowed", func(t *testing.T) {
		t.Parallel()
		p := startProxied(t, server.Options{})
		before := scrapeMetric(t, p.srv.HTTPAddr(), `raxol_mcp_rejections_total{reason="host"}`)
		for _, ep := range p.endpoints() {
			if err := p.connectVia(ep, proxyHost); err == nil {
				t.Errorf("%s with Host %s and no allowed hosts: connected", ep.name, proxyHost)
			}
			if code, body := p.status(t, ep, proxyHost); code != http.StatusForbidden || !strings.Contains(body, hostRefusal) {
				t.Errorf("%s with Host %s and no allowed hosts: %d %q, want 403 %q", ep.name, proxyHost, code, body, hostRefusal)
			}
			// Loopback names still work.
			if err := p.connectVia(ep, "localhost"); err != nil {
				t.Errorf("%s with Host localhost: %v", ep.name, err)
			}
		}
		after := scrapeMetric(t, p.srv.HTTPAddr(), `raxol_mcp_rejections_total{reason="host"}`)
		if after-before < 3 {
			t.Errorf(`raxol_mcp_rejections_total{reason="host"} went from %v to %v, want 3 more or so`, before, after)
		}
	})
}

// TestHostHeaderInputs: the answer for each form a Host can take on a
// loopback listener, on every MCP endpoint. A name is compared without
// case, port, IPv6 brackets and one trailing dot (the same DNS name); an
// allowed entry with a port admits that port only; an empty Host names
// nothing and is refused.
func TestHostHeaderInputs(t *testing.T) {
	// Every admitted initialize is a client: no cap gets in the way.
	p := startProxied(t, server.Options{MCP: server.MCPOptions{AllowedHosts: []string{proxyHost, "[2001:db8::1]", "Pinned.Example:8443"}, MaxClients: 1000}, Headless: server.HeadlessOptions{MaxClients: 1000}})
	cases := []struct {
		host  string
		admit bool
	}{
		{proxyHost, true},
		{proxyHost + ":443", true},
		{proxyHost + ":8443", true},
		{"RAXOL.Example.COM", true},
		{proxyHost + ".", true},
		{proxyHost + ".:443", true},
		{proxyHost + "..", false},
		{proxyHost + ".evil.example", false},
		{"evil." + proxyHost, false},
		{"evil.example", false},
		{"evil.example:443", false},
		{"[2001:db8::1]:443", true},
		{"[2001:DB8:0::1]", true},
		{"[2001:db8::2]", false},
		{"pinned.example:8443", true},
		{"pinned.example:443", false},
		{"pinned.example", false},
		{"localhost:1234", true},
		{"LOCALHOST", true},
		{"localhost.", true},
		{"localhost.evil.example", false},
		{"127.0.0.1:9", true},
		{"127.9.9.9", true},
		{"[::1]:8080", true},
		{"[::1]", true},
		{"[::ffff:127.0.0.1]:80", true},
		{"0.0.0.0", false},
		{"10.0.0.1", false},
	}
	for _, ep := range p.endpoints() {
		for _, c := range cases {
			code, body := p.status(t, ep, c.host)
			switch {
			case c.admit && code != http.StatusOK:
				t.Errorf("%s, Host %q: %d %q, want 200", ep.name, c.host, code, body)
			case !c.admit && (code != http.StatusForbidden || !strings.Contains(body, hostRefusal)):
				t.Errorf("%s, Host %q: %d %q, want 403 %q", ep.name, c.host, code, body, hostRefusal)
			}
		}
		// HTTP/1.0 may omit Host: it names no host, so it is refused.
		if code, body := rawNoHost(t, p.srv.HTTPAddr(), ep); code != http.StatusForbidden || !strings.Contains(body, hostRefusal) {
			t.Errorf("%s, HTTP/1.0 without Host: %d %q, want 403 %q", ep.name, code, body, hostRefusal)
		}
	}
}

// rawNoHost sends ep's first request as HTTP/1.0 without a Host header.
func rawNoHost(t *testing.T, addr string, ep endpoint) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, waitShort)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(waitShort))
	req := "GET " + ep.path + " HTTP/1.0\r\nAuthorization: Bearer " + ep.token + "\r\nAccept: text/event-stream\r\n\r\n"
	if !ep.sse {
		req = "POST " + ep.path + " HTTP/1.0\r\nAuthorization: Bearer " + ep.token +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
			fmt.Sprintf("Content-Length: %d\r\n\r\n", len(initializeBody)) + initializeBody
	}
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
