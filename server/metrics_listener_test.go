package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestMetricsOnTheirOwnListener: with MetricsAddr, /metrics and /healthz
// are served there and not on the MCP port, which still serves MCP; the
// registry is the server's (a rejection on the MCP port is counted there);
// /healthz there says "draining" for as long as the drain lasts, and the
// listener is closed once Shutdown returns.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	var logs testkit.SyncBuffer
	srv := startServer(t, server.Options{MetricsAddr: "127.0.0.1:0", DrainTimeout: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	mAddr, hAddr := srv.MetricsAddr(), srv.HTTPAddr()
	if mAddr == hAddr {
		t.Fatalf("MetricsAddr %s is the HTTP listener's", mAddr)
	}
	if want := `metrics="` + mAddr + ` (not on the http listener)"`; !strings.Contains(postureLine(t, &logs), want) {
		t.Errorf("posture line does not contain %s:\n%s", want, logs.String())
	}
	if code, body := httpGet(t, mAddr, "/healthz"); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("metrics listener GET /healthz = %d %q, want 200 ok", code, body)
	}
	if v := scrapeMetric(t, mAddr, "raxol_sessions_open"); v != 0 {
		t.Errorf("raxol_sessions_open = %v, want 0", v)
	}
	for _, path := range []string{"/metrics", "/healthz"} {
		if code, _ := httpGet(t, hAddr, path); code != http.StatusNotFound {
			t.Errorf("MCP listener GET %s = %d, want 404", path, code)
		}
	}
	for _, path := range []string{"/sessions/x/mcp", "/mcp"} {
		if code, _ := httpGet(t, mAddr, path); code != http.StatusNotFound {
			t.Errorf("metrics listener GET %s = %d, want 404", path, code)
		}
	}
	// The MCP port still serves MCP, and counts its refusals in the
	// registry the metrics listener serves.
	req, _ := http.NewRequest(http.MethodPost, "http://"+hAddr+"/sessions/x/mcp", strings.NewReader(`{}`))
	req.Host = "evil.example"
	resp, err := (&http.Client{Timeout: waitShort}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("MCP listener POST with Host evil.example = %d, want 403", resp.StatusCode)
	}
	if v := scrapeMetric(t, mAddr, `raxol_mcp_rejections_total{reason="host"}`); v != 1 {
		t.Errorf(`raxol_mcp_rejections_total{reason="host"} = %v on the metrics listener, want 1`, v)
	}

	// A request that never finishes its headers holds the HTTP drain for
	// the drain timeout; meanwhile /healthz answers 503.
	held, err := net.Dial("tcp", hAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := io.WriteString(held, "GET /healthz HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	testkit.Eventually(t, waitShort, func() bool {
		code, body := httpGet(t, mAddr, "/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "draining")
	}, "metrics listener /healthz = 503 draining during the drain")
	select {
	case err := <-done:
		if err != nil && !strings.Contains(err.Error(), "http drain") {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(waitLong):
		t.Fatal("Shutdown did not return")
	}
	if c, err := net.DialTimeout("tcp", mAddr, time.Second); err == nil {
		c.Close()
		t.Errorf("metrics listener %s still accepts after Shutdown", mAddr)
	}
}

// TestMetricsShareTheHTTPListenerByDefault: without MetricsAddr both are
// on the HTTP listener, as before, and MetricsAddr reports it.
func TestMetricsShareTheHTTPListenerByDefault(t *testing.T) {
	t.Parallel()
	var logs testkit.SyncBuffer
	srv := startServer(t, server.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if want := `metrics="on the http listener"`; !strings.Contains(postureLine(t, &logs), want) {
		t.Errorf("posture line does not contain %s:\n%s", want, logs.String())
	}
	if srv.MetricsAddr() != srv.HTTPAddr() {
		t.Errorf("MetricsAddr %s, want the HTTP listener's %s", srv.MetricsAddr(), srv.HTTPAddr())
	}
	if code, _ := httpGet(t, srv.HTTPAddr(), "/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz = %d, want 200", code)
	}
	scrapeMetric(t, srv.HTTPAddr(), "raxol_sessions_open")
}

// postureLine returns the "raxol-ssh serving" line of logs.
func postureLine(t *testing.T, logs *testkit.SyncBuffer) string {
	t.Helper()
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `msg="raxol-ssh serving"`) {
			return l
		}
	}
	t.Fatalf("no posture line in the log:\n%s", logs.String())
	return ""
}

// TestMetricsListenError: a MetricsAddr that cannot be listened on fails
// Start with the cause, and closes the listeners already opened.
func TestMetricsListenError(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// Fixed SSH and HTTP ports (free a moment ago) to see them closed.
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}
	sshAddr, httpAddr := free(), free()
	srv, err := newServerOpts(t, server.Options{SSH: server.SSHOptions{Addr: sshAddr}, MCP: server.MCPOptions{Addr: httpAddr}, MetricsAddr: taken.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	err = srv.Start()
	if err == nil {
		_ = srv.Shutdown(context.Background())
		t.Fatal("Start with a MetricsAddr in use succeeded")
	}
	if !strings.Contains(err.Error(), "Options.MetricsAddr: listen") || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Start: %v, want the metrics listener and the cause named", err)
	}
	for _, addr := range []string{sshAddr, httpAddr} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("%s still taken after the failed Start: %v", addr, err)
			continue
		}
		l.Close()
	}
}
