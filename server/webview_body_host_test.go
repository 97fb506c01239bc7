package server_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestBrowserBodiesAndHostsAreBoundedLikeTheAgents: what a browser posts
// (view/input, view/answer, view/remove) is read within
// MCPOptions.BodyTimeout and cut with 408 past it, as /mcp's bodies are:
// a driver trickling an event a byte at a time held its connection for as
// long as it kept sending; and a Host with a malformed port is refused
// 400 on the browser's paths as on the agents'.
func TestBrowserBodiesAndHostsAreBoundedLikeTheAgents(t *testing.T) {
	srv := startServer(t, server.Options{MCP: server.MCPOptions{BodyTimeout: 500 * time.Millisecond}})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	driver := openView(t, srv, owner, id)
	admitBrowser(t, owner, "r")
	waitEvent(t, driver.events, "role", func(d string) bool { return strings.Contains(d, `"role":"driver"`) })
	u, _ := url.Parse(driver.base)
	var cookies []string
	for _, c := range driver.http.Jar.Cookies(u) {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	post := func(path, host string, body string) []string {
		return []string{
			"POST /sessions/" + id + path + " HTTP/1.1",
			"Host: " + host,
			"Origin: " + driver.origin,
			"Cookie: " + strings.Join(cookies, "; "),
			"Content-Type: application/json",
			"Content-Length: " + strconv.Itoa(len(body)),
		}
	}
	host := srv.HTTPAddr()
	event := `{"id":"search","kind":"paste","text":"slow"}`
	for _, path := range []string{"/view/input", "/view/answer", "/view/remove"} {
		code, took := testkit.RawHTTP(t, host, post(path, host, event), strings.Split(event, ""), 100*time.Millisecond) // ~4.5 s
		if code != http.StatusRequestTimeout || took > 3*time.Second {
			t.Errorf("a body trickled to %s: %d after %s; want 408 at the 500ms deadline", path, code, took)
		}
	}
	// In time, an event is served.
	if code, _ := testkit.RawHTTP(t, host, post("/view/input", host, event), []string{event}, 0); code != http.StatusOK {
		t.Errorf("an event within the deadline: %d", code)
	}
	for _, h := range []string{"127.0.0.1:80,evil.example", "127.0.0.1:99999", "127.0.0.1:8a", "[::1"} {
		if code, _ := testkit.RawHTTP(t, host, post("/view/input", h, event), []string{event}, 0); code != http.StatusBadRequest {
			t.Errorf("Host %q on the browser's path: %d, want 400", h, code)
		}
	}
}
