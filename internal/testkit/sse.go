package testkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// SSEClient is a hand-written MCP client over the SSE transport (a GET
// stream, requests POSTed to the endpoint it names) that answers the
// server's own requests (pings) only when asked to: by default it ignores
// them, as mcp-go's SSE client does.
type SSEClient struct {
	// Pings counts the requests the server sent it.
	Pings atomic.Int32
	// Done is closed when its stream has ended.
	Done <-chan struct{}

	endpoint string
	token    string
	client   *http.Client
	answer   bool
	wait     time.Duration
	replies  chan map[string]any
	nextID   int
	close    func()
}

// DialSSE opens an SSE stream at base+path (a session's "/sessions/<id>/sse")
// with token as its bearer, through client, and reads the endpoint event.
// answerPings makes it answer the server's requests; wait bounds how long
// RPC waits for an answer. The stream ends at the test's cleanup, or at
// Close.
func DialSSE(t testing.TB, client *http.Client, base, path, token string, answerPings bool, wait time.Duration) *SSEClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("SSE GET: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		resp.Body.Close()
		t.Fatalf("SSE GET: %d", resp.StatusCode)
	}
	done := make(chan struct{})
	c := &SSEClient{Done: done, token: token, client: client, answer: answerPings, wait: wait,
		replies: make(chan map[string]any, 16)}
	c.close = func() { cancel(); resp.Body.Close() }
	br := bufio.NewReader(resp.Body)
	name, data, err := sseEvent(br)
	if err != nil || name != "endpoint" {
		c.close()
		t.Fatalf("first SSE event %q %q: %v", name, data, err)
	}
	c.endpoint = base + data
	go func() { // owned by the test: ends with the stream (Close, cleanup)
		defer close(done)
		for {
			_, data, err := sseEvent(br)
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal([]byte(data), &m) != nil {
				continue
			}
			if _, isReq := m["method"]; isReq {
				if id, hasID := m["id"]; hasID {
					c.Pings.Add(1)
					if c.answer {
						b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{}})
						_, _ = c.Post(string(b))
					}
				}
				continue
			}
			select {
			case c.replies <- m:
			default: // nobody waits for it
			}
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return c
}

// sseEvent reads the next event off an SSE stream.
func sseEvent(br *bufio.Reader) (name, data string, err error) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && (name != "" || data != ""):
			return name, data, nil
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
}

// Close ends its stream, as a client that exits does.
func (c *SSEClient) Close() { c.close() }

// Post sends one JSON-RPC message to its endpoint and returns the HTTP
// status.
func (c *SSEClient) Post(body string) (int, error) {
	req, _ := http.NewRequest(http.MethodPost, c.endpoint, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// RPC sends a request and waits for its response on the stream.
func (c *SSEClient) RPC(method, params string) (map[string]any, error) {
	c.nextID++
	id := c.nextID
	code, err := c.Post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	if err != nil {
		return nil, err
	}
	if code != http.StatusAccepted {
		return nil, fmt.Errorf("POST %s: %d", method, code)
	}
	timeout := time.After(c.wait)
	for {
		select {
		case m := <-c.replies:
			if m["id"] == float64(id) {
				if m["error"] != nil {
					return nil, fmt.Errorf("%s: %v", method, m["error"])
				}
				return m, nil
			}
		case <-c.Done:
			return nil, errors.New("stream closed")
		case <-timeout:
			return nil, fmt.Errorf("%s: no answer", method)
		}
	}
}

// Initialize opens its MCP session as client name.
func (c *SSEClient) Initialize(t testing.TB, name string) {
	t.Helper()
	if _, err := c.RPC("initialize", `{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"`+name+`","version":"1"}}`); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || code != http.StatusAccepted {
		t.Fatalf("initialized: %d %v", code, err)
	}
}

// CallTool calls tool with no arguments; a tool error is an error.
func (c *SSEClient) CallTool(tool string) error {
	m, err := c.RPC("tools/call", `{"name":"`+tool+`","arguments":{}}`)
	if err != nil {
		return err
	}
	if res, _ := m["result"].(map[string]any); res == nil || res["isError"] == true {
		return fmt.Errorf("tools/call: %v", m)
	}
	return nil
}
