package mcpbridge_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
)

// TestMalformedHostsAreRefusedWhateverTheOrigin: a malformed Host is
// answered 400 also when the request carries an Origin (which the Origin
// check compares with the Host, and would refuse 403 first); a
// well-formed Host from another origin is still 403.
func TestMalformedHostsAreRefusedWhateverTheOrigin(t *testing.T) {
	e := newCapEnv(t, 8, mcpbridge.Options{})
	do := func(host, origin string) int {
		head := strings.Join([]string{
			"POST /sessions/" + e.session.ID + "/mcp HTTP/1.1",
			"Host: " + host,
			"Origin: " + origin,
			"Authorization: Bearer " + e.session.Token(),
			"Content-Type: application/json",
			"Accept: application/json, text/event-stream",
			"Content-Length: 40",
		}, "\r\n")
		code, _ := testkit.RawHTTP(t, strings.TrimPrefix(e.http.URL, "http://"), []string{head}, []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}, 0)
		return code
	}
	for _, h := range []string{"localhost:80,evil.example", "localhost:99999", "localhost:8a", "[::1"} {
		if code := do(h, "http://localhost"); code != http.StatusBadRequest {
			t.Errorf("Host %q with an Origin: %d, want 400", h, code)
		}
	}
	if code := do("localhost:8080", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("a well-formed Host from another origin: %d, want 403", code)
	}
	if code := do("localhost:8080", "http://localhost:8080"); code != http.StatusOK {
		t.Errorf("a well-formed Host from its own origin: %d, want 200", code)
	}
}
