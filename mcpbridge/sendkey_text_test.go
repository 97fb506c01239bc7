package mcpbridge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestSendKeyTypesTextIntoTheFocusedInput: over a real server with an
// SSH terminal attached, raxol_send_key's text is typed into the focused
// TextInput character by character, before its keys; the human's screen
// and the answer show it.
func TestSendKeyTypesTextIntoTheFocusedInput(t *testing.T) {
	srv, term, se := realServer(t, noteServerApp(), server.MCPOptions{ToolAuthorizer: authz.AllowAll(), ReadAuthorizer: authz.AllowAll()}, secret)
	a := connectAgent(t, srv, se, false)
	if text, _, isErr := a.call(mcpbridge.ToolSendKey, map[string]any{"keys": []any{"end"}}); isErr {
		t.Fatalf("send_key end: %s", text)
	}
	text, out, isErr := a.call(mcpbridge.ToolSendKey, map[string]any{"text": "-héllo wörld!", "keys": []any{"backspace"}})
	if isErr || out["pressed"] != float64(14) {
		t.Fatalf("send_key text: %s", text)
	}
	want := secret + "-héllo wörld"
	if got := se.Dispatcher.Snapshot().Model.(noteApp).Note; got != want {
		t.Fatalf("the note is %q, want %q", got, want)
	}
	if !strings.Contains(out["screen"].(string), want) {
		t.Fatalf("the answer's screen lacks the text: %q", out["screen"])
	}
	term.WaitFor(want)

	// The longest text a call types goes through the terminal in time.
	if text, _, isErr := a.call(mcpbridge.ToolSendKey, map[string]any{"keys": []any{"ctrl+u"}}); isErr {
		t.Fatalf("send_key ctrl+u: %s", text)
	}
	start := time.Now()
	long := strings.Repeat("ab", 2048)
	if text, out, isErr := a.call(mcpbridge.ToolSendKey, map[string]any{"text": long}); isErr || out["pressed"] != float64(len(long)) {
		t.Fatalf("send_key of %d characters: %.200s", len(long), text)
	}
	t.Logf("typed %d characters through the terminal in %v", len(long), time.Since(start))
	if got := se.Dispatcher.Snapshot().Model.(noteApp).Note; got != long {
		t.Fatalf("the note holds %d characters, want %d", len(got), len(long))
	}
}
