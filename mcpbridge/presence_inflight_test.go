package mcpbridge_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
)

// TestAClientAtWorkStaysShownWithoutItsStream: a Streamable client whose
// standalone stream goes away while one of its calls is still running (a
// raxol_wait_for of 6 s) is at work, not gone: it is still shown, once,
// past the presence grace, and leaves within the grace of the call's end
// once it shows no other sign of life. The grace's timer alone would hide
// it at 3 s (TestDepartedClientsLeavePresenceWithinSeconds covers a
// client that comes back by a request or a stream, which cancels it).
func TestAClientAtWorkStaysShownWithoutItsStream(t *testing.T) {
	e := newCapEnv(t, 8, mcpbridge.Options{}) // PresenceGrace 3s, KeepAlive 20s: the defaults
	observer := e.busyClient("observer")
	sid, code := e.rawOpen("long-call")
	if code != http.StatusOK {
		t.Fatalf("open: %d", code)
	}
	code, endStream := e.rawStream(sid)
	if code != http.StatusOK {
		t.Fatalf("stream: %d", code)
	}
	const wait = 6 * time.Second
	answered := make(chan int, 1)
	go func() {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":{"text":"never on the screen","timeout_ms":%d}}}`,
			mcpbridge.ToolWaitFor, wait.Milliseconds())
		code, _, _, _ := e.rawPost(context.Background(), sid, body)
		answered <- code
	}()
	testkit.Eventually(t, 5*time.Second, func() bool { return mcpbridge.Waiting(e.bridge, e.session.ID) == 1 }, "the call never began waiting")
	endStream()
	lost := time.Now()

	// Past the grace, the call still running: shown, once.
	time.Sleep(mcpbridge.DefaultPresenceGrace + time.Second) // a negative check: nothing signals a hide that does not happen
	if p, c := shownIn(t, e, observer, "long-call"); p != 1 || c != 1 {
		t.Fatalf("a client with a call running %s after its stream went away is shown %d times in presence, %d in the context; want once",
			time.Since(lost).Round(100*time.Millisecond), p, c)
	}
	select {
	case code := <-answered:
		t.Fatalf("the wait ended early (%d): the check above did not run while it was at work", code)
	default:
	}
	if code := <-answered; code != http.StatusOK {
		t.Fatalf("the wait answered %d", code)
	}
	done := time.Now()
	// The call over and nothing more from it: gone within the grace
	// (plus the keepalive's look) of its last sign of life.
	testkit.Eventually(t, mcpbridge.DefaultPresenceGrace+5*time.Second, func() bool {
		p, c := shownIn(t, e, observer, "long-call")
		return p == 0 && c == 0
	}, "a client whose call ended with its stream gone is still shown %s later", time.Since(done).Round(time.Second))
}
