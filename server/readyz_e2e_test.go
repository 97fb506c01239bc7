package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestReadyzDuringADrain: /readyz answers 200 "ready" while the server
// serves and 503 "draining" from the moment a drain starts, for as long
// as live connections hold it (here a session being told to stop, and a
// logged-in connection that never opened one), so that a load balancer
// sends new sessions elsewhere; /healthz keeps its own answers (200 "ok",
// then 503 "draining").
func TestReadyzDuringADrain(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{DrainTimeout: 3 * time.Second})
	addr := srv.HTTPAddr()
	if code, body := httpGet(t, addr, "/readyz"); code != http.StatusOK || strings.TrimSpace(body) != "ready" {
		t.Fatalf("GET /readyz while serving = %d %q, want 200 ready", code, body)
	}
	if code, body := httpGet(t, addr, "/healthz"); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Fatalf("GET /healthz while serving = %d %q, want 200 ok", code, body)
	}
	live := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, live)
	holder, err := dialSSH(t, srv.SSHAddr(), clientOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()

	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	testkit.Eventually(t, waitShort, func() bool {
		code, body := httpGet(t, addr, "/readyz")
		return code == http.StatusServiceUnavailable && strings.TrimSpace(body) == "draining"
	}, "GET /readyz is not 503 draining during the drain")
	if code, body := httpGet(t, addr, "/healthz"); code != http.StatusServiceUnavailable || strings.TrimSpace(body) != "draining" {
		t.Errorf("GET /healthz during the drain = %d %q, want 503 draining as before", code, body)
	}
	if d := time.Since(start); d >= 3*time.Second {
		t.Fatalf("the drain was over (%v) before /readyz was checked", d)
	}
	if _, stderr := live.WaitExit(t, waitShort); !strings.Contains(stderr+live.Screen(), "server is stopping") {
		t.Errorf("the live session was not told the server is stopping: stderr %q", stderr)
	}
	select {
	case err := <-done:
		// The logged-in connection held the SSH drain to its timeout.
		if err != nil && !strings.Contains(err.Error(), "ssh drain") {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(waitLong):
		t.Fatal("Shutdown did not return")
	}
}
