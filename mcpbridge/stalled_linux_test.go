//go:build linux

package mcpbridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
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

// TestStalledClientDoesNotStopTheSession: an agent whose stream stops
// being read (a suspended laptop, a dead link without a reset) must not
// hold up the session's notifications to its other agents: writes to a
// client are bounded by WriteTimeout.
func TestStalledClientDoesNotStopTheSession(t *testing.T) {
	m := metrics.New()
	var bridge *mcpbridge.Bridge
	mgr := session.NewManager(&session.Options{OnEnd: func(s *session.Session) { bridge.SessionEnded(s.ID) }})
	bridge = mcpbridge.New(mgr, mcpbridge.Options{
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
	url := srv.URL + "/sessions/" + se.ID + "/mcp"
	const uri = "app://state/form"

	// The stalled client: initialized and subscribed over plain HTTP, then
	// a GET stream on a socket with a tiny receive buffer that is never read.
	code, sid := rawPost(t, url, se.Token(), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stalled","version":"1"}}}`)
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session id %q", code, sid)
	}
	rawPost(t, url, se.Token(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code, _ := rawPost(t, url, se.Token(), sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":%q}}`, uri)); code != http.StatusOK {
		t.Fatalf("subscribe: %d", code)
	}
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	stalled, err := d.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fmt.Fprintf(stalled, "GET /sessions/%s/mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n",
		se.ID, srv.Listener.Addr().String(), se.Token(), sid)
	// Read the response head, then never read again.
	head := make([]byte, 0, 512)
	for !strings.Contains(string(head), "\r\n\r\n") {
		b := make([]byte, 1)
		if _, err := stalled.Read(b); err != nil {
			t.Fatalf("stream head: %v", err)
		}
		head = append(head, b...)
	}
	if !strings.HasPrefix(string(head), "HTTP/1.1 200") {
		t.Fatalf("stream refused: %q", head)
	}

	// The healthy client, subscribed to the same resource.
	e := &env{t: t, metrics: m, mgr: mgr, bridge: bridge, http: srv, session: se}
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
	waitFor(t, func() bool { return len(se.Agents()) == 1 })
}
