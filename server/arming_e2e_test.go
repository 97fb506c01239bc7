package server_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestTypingDoesNotAnswerAPromptThatAppearsMidTyping: the human is typing
// answer letters (s, a, y, d, n...) into the search input, non-stop, over a
// real SSH PTY when an agent's call puts an approval prompt up. The letters
// typed as it appears, and for a while after the human could see it, do
// not answer it: the call keeps waiting. Once the human stops and the
// prompt is armed, a deliberate key answers it.
func TestTypingDoesNotAnswerAPromptThatAppearsMidTyping(t *testing.T) {
	t.Parallel()
	// Longer than the default so that a loaded machine's delays cannot
	// push the letters typed after the prompt showed past the arming.
	const arming = 2 * time.Second
	srv := startServer(t, server.Options{MCP: server.MCPOptions{ApprovalTimeout: 30 * time.Second}, SSH: server.SSHOptions{PromptArming: arming}})
	human := connect(t, srv.SSHAddr(), clientOpts{})
	id := waitDemo(t, human)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)
	human.Key(keyTab) // focus the search input
	human.WaitFor(t, "Search:", waitLong)

	// The human types without pause.
	stop := make(chan struct{})
	var typed atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			if _, err := io.WriteString(human.stdin, string("sayrodn"[i%7])); err != nil {
				return
			}
			typed.Add(1)
		}
	})
	time.Sleep(200 * time.Millisecond) // the human is well into typing

	// Mid-typing, the agent asks.
	res := make(chan map[string]any, 1)
	go func() {
		r, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpbridge.ToolSendKey, Arguments: map[string]any{"keys": []any{"tab"}}})
		if err != nil {
			res <- map[string]any{"transport_error": err.Error()}
			return
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &m)
		res <- m
	}()
	// The call must not be answered before the prompt even shows.
	for deadline := time.Now().Add(waitLong); !strings.Contains(human.Screen(), "wants to run raxol_send_key"); {
		select {
		case m := <-res:
			t.Fatalf("letters typed as the prompt appeared answered it: %v", m)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no prompt:\n%s", human.Screen())
		}
	}
	seen := typed.Load()
	time.Sleep(arming / 4) // the human keeps typing a moment after it shows
	close(stop)
	wg.Wait()
	if after := typed.Load() - seen; after < 5 {
		t.Fatalf("only %d letters were typed after the prompt showed", after)
	}
	select {
	case m := <-res:
		t.Fatalf("letters typed as the prompt appeared answered it: %v", m)
	case <-time.After(200 * time.Millisecond):
	}
	if !strings.Contains(human.Screen(), "wants to run raxol_send_key") {
		t.Fatalf("the prompt is gone:\n%s", human.Screen())
	}

	// Armed, it takes a deliberate answer.
	human.WaitFor(t, armedPrompt("wants to run raxol_send_key"), waitLong)
	human.Type("d")
	select {
	case m := <-res:
		if m["error"] != "authorization_required" || !strings.Contains(m["detail"].(string), "refused") {
			t.Fatalf("the deliberate refusal gave %v", m)
		}
	case <-time.After(waitLong):
		t.Fatal("the armed prompt did not take the answer")
	}
}
