package mcpbridge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
)

// shownIn counts the entries named name among the session's agents and
// in the context resource as observer reads it.
func shownIn(t *testing.T, e *env, observer *mcp.ClientSession, name string) (inPresence, inContext int) {
	t.Helper()
	for _, a := range e.session.Agents() {
		if a.Name == name+" 1" {
			inPresence++
		}
	}
	res, err := observer.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: mcpbridge.URIContext})
	if err != nil {
		t.Fatalf("read context: %v", err)
	}
	var ctx struct {
		Attached []struct{ Name string } `json:"attached"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &ctx); err != nil {
		t.Fatal(err)
	}
	for _, a := range ctx.Attached {
		if a.Name == name+" 1" {
			inContext++
		}
	}
	return inPresence, inContext
}

// TestDepartedClientsLeavePresenceWithinSeconds: a Streamable client that
// closes its standalone stream and shows no other sign of life (a one-shot
// CLI that exited without DELETE) leaves the presence and the context
// resource within 5 s, though KeepAlive is 20 s; one that reconnects its
// stream within the grace is shown all along, once; one that comes back
// after the grace (its MCP session lives on) is shown again, once. It
// stays on the loopback socket, not in a bubble (see bubble_test.go): the
// only test of the grace over the wire, so its waits are wall-clock.
func TestDepartedClientsLeavePresenceWithinSeconds(t *testing.T) {
	e := newCapEnv(t, 8, mcpbridge.Options{}) // PresenceGrace 3s, KeepAlive 20s: the defaults
	observer := e.busyClient("observer")
	open := func(name string) (string, func()) {
		sid, code := e.rawOpen(name)
		if code != http.StatusOK {
			t.Fatalf("open %s: %d", name, code)
		}
		code, end := e.rawStream(sid)
		if code != http.StatusOK {
			t.Fatalf("%s stream: %d", name, code)
		}
		if code := e.rawList(sid); code != http.StatusOK {
			t.Fatalf("%s lists: %d", name, code)
		}
		return sid, end
	}
	shown := func(name string) (int, int) { return shownIn(t, e, observer, name) }

	gone, endGone := open("one-shot")
	back, endBack := open("reconnects")
	late, endLate := open("comes-back-late")
	for _, n := range []string{"one-shot", "reconnects", "comes-back-late"} {
		if p, c := shown(n); p != 1 || c != 1 {
			t.Fatalf("%s shown %d times in presence, %d in the context", n, p, c)
		}
	}
	left := time.Now()
	endGone()
	endBack()
	endLate()
	time.Sleep(time.Second) // "reconnects" is away a while, well within the 3 s grace
	if code, _ := e.rawStream(back); code != http.StatusOK {
		t.Fatalf("reconnected stream: %d", code)
	}
	testkit.Eventually(t, 6*time.Second, func() bool {
		p, c := shown("one-shot")
		return p == 0 && c == 0
	}, "a client whose stream closed is still shown")
	if d := time.Since(left); d > 5*time.Second {
		t.Fatalf("a departed client stayed shown for %s", d)
	}
	testkit.Eventually(t, 5*time.Second, func() bool { p, _ := shown("comes-back-late"); return p == 0 }, "the late one is still shown")
	// The one that reconnected in time stayed, once, with its session.
	if p, c := shown("reconnects"); p != 1 || c != 1 {
		t.Fatalf("a client that reconnected its stream within the grace shown %d times in presence, %d in the context", p, c)
	}
	if code := e.rawList(back); code != http.StatusOK {
		t.Fatalf("a client that reconnected lost its session: %d", code)
	}
	// The late one's MCP session lives on: it comes back, shown once.
	if code := e.rawList(late); code != http.StatusOK {
		t.Fatalf("a client back after the grace lost its session: %d", code)
	}
	if code, _ := e.rawStream(late); code != http.StatusOK {
		t.Fatalf("late stream: %d", code)
	}
	if p, c := shown("comes-back-late"); p != 1 || c != 1 {
		t.Fatalf("a client back after the grace shown %d times in presence, %d in the context", p, c)
	}
	_ = gone
}
