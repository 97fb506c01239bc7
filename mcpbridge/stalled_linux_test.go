//go:build linux

package mcpbridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// rawPost sends one JSON-RPC message to a Streamable endpoint and returns
// the response's status and Mcp-Session-Id.
func rawPost(t *testing.T, url, token, sid, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Read the one event (or JSON body) the request answers with.
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil || strings.HasPrefix(line, "data:") || strings.HasPrefix(line, "{") {
			break
		}
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

// dialStalled opens a TCP connection with a tiny receive buffer to srv,
// sends an HTTP GET for path and reads the response head and, when
// untilEvent is set, the first SSE event; what it returns is never read
// again.
func dialStalled(t *testing.T, srv *httptest.Server, path, token string, header string, untilEvent bool) (net.Conn, string) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n%s\r\n",
		path, srv.Listener.Addr().String(), token, header)
	// One byte at a time, so that nothing past what we wait for is read.
	var got []byte
	end := "\r\n\r\n"
	for !strings.Contains(string(got), end) {
		b := make([]byte, 1)
		if _, err := c.Read(b); err != nil {
			t.Fatalf("stream head: %v (read %q)", err, got)
		}
		got = append(got, b...)
		if untilEvent && strings.Contains(string(got), "\r\n\r\n") {
			end = "\n\n"
			if i := strings.Index(string(got), "\r\n\r\n"); !strings.Contains(string(got[i+4:]), "data:") {
				continue
			}
		}
	}
	if !strings.HasPrefix(string(got), "HTTP/1.1 200") {
		t.Fatalf("stream refused: %q", got)
	}
	return c, string(got)
}

// rawPostSSE posts one message to an SSE session's endpoint; the answer
// goes to the stream.
func rawPostSSE(t *testing.T, url, token, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestStalledClientDoesNotStopTheSession: an agent whose stream stops
// being read (a suspended laptop, a dead link without a reset) must not
// hold up the session's notifications to its other agents: writes to a
// client are bounded by WriteTimeout. Over Streamable HTTP (its GET
// stream) and over SSE.
func TestStalledClientDoesNotStopTheSession(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := "streamable"
		if sse {
			name = "sse"
		}
		t.Run(name, func(t *testing.T) { testStalledClient(t, sse) })
	}
}

func testStalledClient(t *testing.T, sse bool) {
	m := metrics.New()
	var bridge *mcpbridge.Bridge
	mgr := session.NewManager(&session.Options{OnEnd: func(s *session.Session) { bridge.SessionEnded(s.ID) }})
	bridge = newTestBridge(t, mgr, mcpbridge.Options{
		Namespace:    "app",
		Projections:  map[string]func(ui.Model) any{"form": func(m ui.Model) any { return m }},
		Metrics:      m,
		WriteTimeout: 300 * time.Millisecond,
		KeepAlive:    200 * time.Millisecond,
	})
	// Small socket buffers on the server side too, so that a client that
	// stops reading blocks the server's writes soon.
	srv := httptest.NewUnstartedServer(bridge)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	se, ok, err := mgr.Start("app", session.Owner{User: "u"}, form{}, 0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	t.Cleanup(func() {
		bridge.Close()
		srv.Close()
		mgr.Close()
	})
	const uri = "app://state/form"
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stalled","version":"1"}}}`
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	subscribe := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":%q}}`, uri)

	if sse {
		// The stream first, then the messages posted to the endpoint it
		// names; their small answers fit the buffers unread.
		_, ev := dialStalled(t, srv, "/sessions/"+se.ID+"/sse", se.Token(), "", true)
		i := strings.Index(ev, "data: ")
		endpoint := strings.TrimSpace(strings.SplitN(ev[i+len("data: "):], "\n", 2)[0])
		if !strings.HasPrefix(endpoint, "/") {
			endpoint = strings.TrimPrefix(endpoint, srv.URL)
		}
		for _, body := range []string{initialize, initialized, subscribe} {
			if code := rawPostSSE(t, srv.URL+endpoint, se.Token(), body); code/100 != 2 {
				t.Fatalf("post %s: %d", body, code)
			}
		}
		testkit.Eventually(t, 5*time.Second, func() bool { return len(se.Agents()) == 1 }, "the stalled SSE client never attached")
	} else {
		url := srv.URL + "/sessions/" + se.ID + "/mcp"
		code, sid := rawPost(t, url, se.Token(), "", initialize)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d, session id %q", code, sid)
		}
		rawPost(t, url, se.Token(), sid, initialized)
		if code, _ := rawPost(t, url, se.Token(), sid, subscribe); code != http.StatusOK {
			t.Fatalf("subscribe: %d", code)
		}
		dialStalled(t, srv, "/sessions/"+se.ID+"/mcp", se.Token(),
			"Mcp-Session-Id: "+sid+"\r\nMcp-Protocol-Version: 2025-11-25\r\n", false)
	}

	// The healthy client, subscribed to the same resource.
	e := &env{t: t, metrics: m, mgr: mgr, bridge: bridge, http: &testServer{URL: srv.URL, rt: http.DefaultTransport}, session: se}
	cs, n := e.connect(false)
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}

	// Large changes fill the stalled client's buffers quickly.
	big := strings.Repeat("x", 32<<10)
	origin := dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "h"}
	last := ""
	for i := range 300 {
		last = fmt.Sprintf("%d-%s", i, big)
		if err := se.Dispatcher.Call(context.Background(), origin, ui.TextInputChanged{ID: "name", Text: last}); err != nil {
			t.Fatal(err)
		}
	}
	// The healthy client gets the last change soon: the watcher is not
	// stuck writing to the stalled one.
	want := fmt.Sprintf("%d-", 299)
	deadline := time.After(10 * time.Second)
	for got := false; !got; {
		select {
		case <-n.updateCh:
		case <-deadline:
			n.mu.Lock()
			defer n.mu.Unlock()
			t.Fatalf("the healthy client stopped getting updates after %d", len(n.updates))
		}
		n.mu.Lock()
		b, _ := json.Marshal(n.updates[len(n.updates)-1].Meta["patch"])
		n.mu.Unlock()
		got = strings.Contains(string(b), want)
	}
	// And the stalled client is dropped: only the healthy one is present.
	testkit.Eventually(t, 5*time.Second, func() bool { return len(se.Agents()) == 1 }, "the stalled client is still present")
}
