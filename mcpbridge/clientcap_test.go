package mcpbridge_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// newCapEnv is an env on a loopback socket whose sessions take at most
// max clients.
func newCapEnv(t *testing.T, max int, o mcpbridge.Options) *env {
	t.Helper()
	o.MaxClients = max
	o.ToolCallsPerSecond, o.ToolCallBurst = 1e6, 1e6
	return newLifetimeEnv(t, o, session.Options{})
}

// newExactCapEnv is newCapEnv where a client that only opened never makes
// room (a probe idle for a minute): the counts a race leaves are exact
// however slow the machine.
func newExactCapEnv(t *testing.T, max int) *env {
	t.Helper()
	e := newCapEnv(t, max, mcpbridge.Options{})
	mcpbridge.SetProbeIdle(e.bridge, time.Minute)
	return e
}

// rawPost POSTs one JSON-RPC message to the session's Streamable endpoint
// (with the client session id sid, if any) and returns the status, the
// session id the answer names and its body.
func (e *env) rawPost(ctx context.Context, sid, body string) (int, string, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.mcpURL(e.session), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.session.Token())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := e.http.Client().Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b), err
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`

// rawOpen opens a Streamable client by hand (initialize, initialized) and
// returns its session id, or the status that refused it.
func (e *env) rawOpen(name string) (string, int) {
	code, sid, _, err := e.rawPost(context.Background(), "", fmt.Sprintf(initBody, name))
	if err != nil || code != http.StatusOK {
		return "", code
	}
	if code, _, _, err := e.rawPost(context.Background(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || code != http.StatusAccepted {
		return "", code
	}
	return sid, http.StatusOK
}

// rawList lists the tools as client sid: an act, not a handshake.
func (e *env) rawList(sid string) int {
	code, _, _, err := e.rawPost(context.Background(), sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if err != nil {
		return 0
	}
	return code
}

// rawStream opens client sid's standalone GET stream; it stays open until
// the returned func closes it.
func (e *env) rawStream(sid string) (int, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.mcpURL(e.session), nil)
	req.Header.Set("Authorization", "Bearer "+e.session.Token())
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := e.http.Client().Do(req)
	if err != nil {
		cancel()
		return 0, func() {}
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return resp.StatusCode, func() {}
	}
	go func() { _, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body)) }() // ends with the stream
	var once sync.Once
	end := func() { once.Do(func() { cancel(); resp.Body.Close() }) }
	e.t.Cleanup(end)
	return resp.StatusCode, end
}

// capWatch samples, until stopped, the most clients the session held at
// once by every count there is: the SDK's initialized sessions, the
// agents in presence and the bridge's slots.
type capWatch struct {
	stop              chan struct{}
	done              chan struct{}
	sdk, shown, slots atomic.Int32
}

func watchCap(e *env) *capWatch {
	w := &capWatch{stop: make(chan struct{}), done: make(chan struct{})}
	raise := func(v *atomic.Int32, n int) {
		for {
			old := v.Load()
			if int32(n) <= old || v.CompareAndSwap(old, int32(n)) {
				return
			}
		}
	}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			raise(&w.sdk, e.bridge.Clients(e.session.ID))
			raise(&w.shown, len(e.session.Agents()))
			raise(&w.slots, mcpbridge.HeldSlots(e.bridge, e.session.ID))
		}
	}()
	return w
}

func (w *capWatch) check(t *testing.T, max int) {
	t.Helper()
	close(w.stop)
	<-w.done
	if s, p, h := w.sdk.Load(), w.shown.Load(), w.slots.Load(); s > int32(max) || p > int32(max) || h > int32(max) {
		t.Fatalf("over the cap of %d at some instant: %d initialized sessions, %d agents shown, %d slots held", max, s, p, h)
	}
}

// race runs n copies of f at once (released together) and counts their
// results.
func race(n int, f func(i int) int) map[int]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int]int{}
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			code := f(i)
			mu.Lock()
			got[code]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return got
}

// busyClient is a go-sdk Streamable client holding its standalone GET
// stream that has listed the tools: at work.
func (e *env) busyClient(name string) *mcp.ClientSession {
	e.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.mcpURL(e.session), HTTPClient: &http.Client{Transport: e.http.bearer(e.session.Token())}}, nil)
	if err != nil {
		e.t.Fatalf("connect %s: %v", name, err)
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		e.t.Fatalf("%s lists: %v", name, err)
	}
	return cs
}

// TestClientCapHoldsUnderRacingInitializes: 50 initializes at once never
// put more clients in a session than its cap, by any count, at any
// instant; when every client is at work all 50 are refused and none of
// those is ended; when there is room, the newcomers (one-shot clients, not
// at work) take it and make room for each other, still within the cap.
func TestClientCapHoldsUnderRacingInitializes(t *testing.T) {
	const max = 4
	e := newCapEnv(t, max, mcpbridge.Options{})
	var busy []*mcp.ClientSession
	for i := range max {
		busy = append(busy, e.busyClient(fmt.Sprintf("busy-%d", i)))
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return mcpbridge.OpenStreams(e.bridge, e.session.ID) == max }, "the busy clients' streams never opened")

	w := watchCap(e)
	got := race(50, func(i int) int { _, code := e.rawOpen(fmt.Sprintf("racer-%d", i)); return code })
	w.check(t, max)
	if got[http.StatusTooManyRequests] != 50 {
		t.Fatalf("with every client at work, 50 racing initializes got %v; want 50 × 429", got)
	}
	for i, cs := range busy {
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatalf("busy client %d was ended to make room: %v", i, err)
		}
	}

	// Two leave: the racers share their two places.
	_ = busy[0].Close()
	_ = busy[1].Close()
	testkit.Eventually(t, 5*time.Second, func() bool {
		return e.bridge.Clients(e.session.ID) == max-2 && mcpbridge.HeldSlots(e.bridge, e.session.ID) <= max-2
	}, "closed clients kept their places")
	w = watchCap(e)
	got = race(50, func(i int) int { _, code := e.rawOpen(fmt.Sprintf("racer2-%d", i)); return code })
	w.check(t, max)
	if got[http.StatusOK] < 2 {
		t.Fatalf("with two places free, racing initializes got %v; want at least 2 admitted", got)
	}
	for i, cs := range busy[2:] {
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatalf("busy client %d was ended to make room: %v", i+2, err)
		}
	}
	if n := e.bridge.Clients(e.session.ID); n > max {
		t.Fatalf("%d clients attached after the race, cap %d", n, max)
	}
}

// rawSSE opens an SSE stream by hand and reads its endpoint event; the
// stream stays open until the returned func closes it.
func (e *env) rawSSE() (code int, endpoint string, end func()) {
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.http.URL+"/sessions/"+e.session.ID+"/sse", nil)
	req.Header.Set("Authorization", "Bearer "+e.session.Token())
	req.Header.Set("Accept", "text/event-stream")
	resp, err := e.http.Client().Do(req)
	if err != nil {
		cancel()
		return 0, "", func() {}
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return resp.StatusCode, "", func() {}
	}
	var once sync.Once
	end = func() { once.Do(func() { cancel(); resp.Body.Close() }) }
	e.t.Cleanup(end)
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return resp.StatusCode, "", end
		}
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:"); ok {
			endpoint = strings.TrimSpace(data)
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, br) }() // answers arrive here; ends with the stream
	return resp.StatusCode, endpoint, end
}

// ssePost POSTs one message to an SSE client's endpoint.
func (e *env) ssePost(endpoint, body string) int {
	req, _ := http.NewRequest(http.MethodPost, e.http.URL+endpoint, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.session.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.http.Client().Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSSEAndStreamableClientsShareOneCap: SSE streams (counted from their
// GET, before they initialize) and Streamable clients holding a GET are
// one count: with 2 Streamable clients at work and a cap of 4, 8 SSE
// streams opened at once admit 2, and once those initialize and work the
// session holds 4, at every instant.
func TestSSEAndStreamableClientsShareOneCap(t *testing.T) {
	const max = 4
	e := newExactCapEnv(t, max)
	e.busyClient("streamable-0")
	e.busyClient("streamable-1")
	w := watchCap(e)
	var mu sync.Mutex
	var endpoints []string
	got := race(8, func(int) int {
		code, ep, _ := e.rawSSE()
		if code == http.StatusOK {
			mu.Lock()
			endpoints = append(endpoints, ep)
			mu.Unlock()
		}
		return code
	})
	if got[http.StatusOK] != 2 || got[http.StatusTooManyRequests] != 6 {
		t.Fatalf("8 SSE streams at once beside 2 Streamable clients, cap 4: %v; want 2 × 200, 6 × 429", got)
	}
	for i, ep := range endpoints {
		if code := e.ssePost(ep, fmt.Sprintf(initBody, fmt.Sprintf("sse-%d", i))); code != http.StatusAccepted {
			t.Fatalf("SSE initialize: %d", code)
		}
		e.ssePost(ep, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		e.ssePost(ep, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return e.bridge.Clients(e.session.ID) == max }, "the admitted SSE clients never attached")
	// Full of clients at work: one more of either kind is refused.
	if code, _, _ := e.rawSSE(); code != http.StatusTooManyRequests {
		t.Fatalf("an SSE stream over a full session: %d", code)
	}
	if _, code := e.rawOpen("late"); code != http.StatusTooManyRequests {
		t.Fatalf("an initialize over a full session: %d", code)
	}
	w.check(t, max)
}

// TestProbeClientsDoNotLockOutAnAgent: two mcp-remote-style agents, each
// with the probe client it opens first and never closes (initialize,
// initialized, a standalone GET held open, nothing asked), fill a session
// of 4. A third agent still gets in: a probe quiet for ProbeIdle makes
// room; the agents at work keep theirs.
func TestProbeClientsDoNotLockOutAnAgent(t *testing.T) {
	const max = 4
	e := newCapEnv(t, max, mcpbridge.Options{})
	var probes []string
	var agents []*mcp.ClientSession
	for i := range 2 {
		sid, code := e.rawOpen(fmt.Sprintf("mcp-remote-fallback-test-%d", i))
		if code != http.StatusOK {
			t.Fatalf("probe %d: %d", i, code)
		}
		if code, _ := e.rawStream(sid); code != http.StatusOK {
			t.Fatalf("probe %d stream: %d", i, code)
		}
		probes = append(probes, sid)
		agents = append(agents, e.busyClient(fmt.Sprintf("desk-%d (via mcp-remote)", i)))
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return mcpbridge.OpenStreams(e.bridge, e.session.ID) == max }, "the streams never opened")
	third := time.Now()
	var cs *mcp.ClientSession
	testkit.Eventually(t, mcpbridge.ProbeIdle+5*time.Second, func() bool {
		c := mcp.NewClient(&mcp.Implementation{Name: "third", Version: "1"}, nil)
		var err error
		cs, err = c.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: e.mcpURL(e.session), HTTPClient: &http.Client{Transport: e.http.bearer(e.session.Token())}}, nil)
		return err == nil
	}, "a third agent was locked out by two probes")
	defer cs.Close()
	if time.Since(third) > mcpbridge.ProbeIdle+4*time.Second {
		t.Fatalf("the third agent waited %s", time.Since(third))
	}
	for i, a := range agents {
		if _, err := a.ListTools(context.Background(), nil); err != nil {
			t.Fatalf("agent %d at work was ended: %v", i, err)
		}
	}
	ended := 0
	for _, sid := range probes {
		if code := e.rawList(sid); code == http.StatusNotFound {
			ended++
		}
	}
	if ended != 1 {
		t.Fatalf("%d probes ended to make room for one agent; want 1", ended)
	}
	if n := e.bridge.Clients(e.session.ID); n > max {
		t.Fatalf("%d clients, cap %d", n, max)
	}
}
