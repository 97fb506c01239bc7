package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// newLifetimeEnv is an env with the bridge options o (Namespace "app").
func newLifetimeEnv(t *testing.T, o mcpbridge.Options, so session.Options) *env {
	t.Helper()
	e := &env{t: t, metrics: metrics.New()}
	so.OnEnd = func(s *session.Session) { e.bridge.SessionEnded(s.ID) }
	e.mgr = session.NewManager(&so)
	o.Namespace, o.Metrics = "app", e.metrics
	e.bridge = newTestBridge(t, e.mgr, o)
	e.http = serveHTTP(t, e.bridge)
	t.Cleanup(func() { e.bridge.Close(); e.http.Close(); e.mgr.Close() })
	var ok bool
	var err error
	if e.session, ok, err = e.mgr.Start("app", session.Owner{User: "u"}, form{}, 0); err != nil || !ok {
		t.Fatal(ok, err)
	}
	return e
}

func (e *env) mcpURL(s *session.Session) string { return e.http.URL + "/sessions/" + s.ID + "/mcp" }

// quietClient is a go-sdk Streamable client that opens no standalone GET
// stream (like mcp-go's default): the server can never ping it.
func (e *env) quietClient(name string, rt http.RoundTripper) *mcp.ClientSession {
	e.t.Helper()
	if rt == nil {
		rt = e.http.bearer(e.session.Token())
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.mcpURL(e.session), HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		e.t.Fatalf("connect %s: %v", name, err)
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func tryCall(cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "app.name.get_value"})
	if err == nil && res.IsError {
		err = fmt.Errorf("tool error: %v", res.Content)
	}
	return err
}

// dialRawSSE is a hand-written SSE client on the session that never
// answers the server's requests (pings), as mcp-go over SSE.
func (e *env) dialRawSSE() *testkit.SSEClient { return e.dialRawSSEAnswering(false) }

// dialRawSSEAnswering is dialRawSSE, with a client that answers pings if
// answerPings.
func (e *env) dialRawSSEAnswering(answerPings bool) *testkit.SSEClient {
	e.t.Helper()
	return testkit.DialSSE(e.t, e.http.Client(), e.http.URL, "/sessions/"+e.session.ID+"/sse", e.session.Token(), answerPings, 5*time.Second)
}

// TestQuietClientsKeepTheirSession: an agent that thinks for a while
// without a standalone GET stream, or without answering pings, keeps its
// client session: its next call is served on it.
func TestQuietClientsKeepTheirSession(t *testing.T) {
	bubble(t, func(t *testing.T) {
		const keepAlive = 50 * time.Millisecond
		e := newLifetimeEnv(t, mcpbridge.Options{KeepAlive: keepAlive}, session.Options{})

		cs := e.quietClient("no-get", nil)
		id := cs.ID()
		if err := tryCall(cs); err != nil {
			t.Fatal(err)
		}
		sse := e.dialRawSSE()
		sse.Initialize(t, "raw-sse")
		if err := sse.CallTool("app.name.get_value"); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 5*time.Second, func() bool { return len(e.session.Agents()) == 2 }, "both clients attached")

		time.Sleep(8 * keepAlive) // several keepalive rounds, no request
		if err := tryCall(cs); err != nil {
			t.Fatalf("Streamable client without a GET stream, after thinking: %v", err)
		}
		if cs.ID() != id {
			t.Fatalf("session id changed: %q -> %q", id, cs.ID())
		}
		if err := sse.CallTool("app.name.get_value"); err != nil {
			t.Fatalf("SSE client that never answers pings, after thinking: %v", err)
		}
		if n := len(e.session.Agents()); n != 2 {
			t.Fatalf("%d agents present, want 2", n)
		}
		if sse.Pings.Load() < 3 {
			t.Fatalf("the SSE client was pinged %d times in 8 intervals", sse.Pings.Load())
		}
	})
}

// TestSSEClientLeavesWithItsStream: an SSE client whose stream closes
// (the agent exited) ends at once, ping answered or not: it leaves
// presence and frees its slot. The SDK closes its session when the GET
// returns, but that Close waits for a keepalive ping in flight, which a
// client that never answers pings (mcp-go) never ends.
func TestSSEClientLeavesWithItsStream(t *testing.T) {
	for _, answer := range []bool{true, false} {
		t.Run(fmt.Sprintf("answers pings %v", answer), func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				const keepAlive = time.Second
				e := newLifetimeEnv(t, mcpbridge.Options{KeepAlive: keepAlive}, session.Options{})
				c := e.dialRawSSEAnswering(answer)
				c.Initialize(t, "raw-sse")
				time.Sleep(keepAlive + keepAlive/2) // a ping sent, unanswered by the deaf one
				synctest.Wait()
				if c.Pings.Load() != 1 || len(e.session.Agents()) != 1 {
					t.Fatalf("%d pings, %d agents before the stream closed", c.Pings.Load(), len(e.session.Agents()))
				}
				c.Close()
				<-c.Done
				synctest.Wait() // no time passes
				if n := len(e.session.Agents()); n != 0 {
					t.Fatalf("%d agents present after the stream closed", n)
				}
				if n := e.bridge.Clients(e.session.ID); n != 0 {
					t.Fatalf("%d client sessions after the stream closed", n)
				}
			})
		})
	}
}

// TestIdleClientsAreClosed: a client that makes no request for the idle
// timeout is closed, on both transports; one that keeps working is not.
func TestIdleClientsAreClosed(t *testing.T) {
	const idle = 400 * time.Millisecond
	e := newLifetimeEnv(t, mcpbridge.Options{KeepAlive: 50 * time.Millisecond, ClientIdleTimeout: idle}, session.Options{})

	quiet := e.quietClient("quiet", nil)
	busy := e.quietClient("busy", nil)
	quietSSE := e.dialRawSSE()
	quietSSE.Initialize(t, "raw-sse")
	busySSE := e.dialRawSSE()
	busySSE.Initialize(t, "raw-sse")
	testkit.Eventually(t, 5*time.Second, func() bool { return len(e.session.Agents()) == 4 }, "all four clients attached")

	deadline := time.Now().Add(3 * idle)
	for time.Now().Before(deadline) {
		if err := tryCall(busy); err != nil {
			t.Fatalf("a working Streamable client: %v", err)
		}
		if err := busySSE.CallTool("app.name.get_value"); err != nil {
			t.Fatalf("a working SSE client: %v", err)
		}
		time.Sleep(idle / 4) // the busy clients' pace: a call well within each idle period
	}
	select {
	case <-quietSSE.Done:
	case <-time.After(5 * time.Second):
		t.Fatal("an idle SSE client's stream is still open")
	}
	if err := tryCall(quiet); err == nil {
		t.Fatal("an idle Streamable client was still served")
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return len(e.session.Agents()) == 2 }, "the idle clients are still in presence")
	for _, a := range e.session.Agents() {
		if !strings.HasPrefix(a.Name, "busy") && !strings.HasPrefix(a.Name, "raw-sse") {
			t.Fatalf("left in presence: %+v", e.session.Agents())
		}
	}
}

// noDelete drops DELETE requests, like a CLI that exits without ending
// its client session.
type noDelete struct{ base http.RoundTripper }

func (n noDelete) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete {
		return nil, errors.New("the CLI exited")
	}
	return n.base.RoundTrip(r)
}

func agentNames(s *session.Session) []string {
	var out []string
	for _, a := range s.Agents() {
		out = append(out, a.Name)
	}
	return out
}

// TestOneShotClientsNeverLockASession: a CLI that opens a client session
// per call and never ends it does not fill the session: at the cap the
// least recently active idle client makes room. Only when every client is
// busy is a new one refused, with Retry-After.
func TestOneShotClientsNeverLockASession(t *testing.T) {
	e := newLifetimeEnv(t, mcpbridge.Options{}, session.Options{}) // MaxClients 8
	rt := noDelete{e.http.bearer(e.session.Token())}
	var want []string
	for i := range 12 {
		name := fmt.Sprintf("oneshot-%d", i)
		cs := e.quietClient(name, rt)
		if err := tryCall(cs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if i >= 4 {
			want = append(want, name+" 1")
		}
		if i == 11 {
			// The context resource lists only who is still there.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpbridge.URIContext})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Attached []struct{ Kind, Name string }
			}
			if err := json.Unmarshal([]byte(res.Contents[0].Text), &doc); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range doc.Attached {
				got = append(got, a.Name)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("context attached %v, want %v", got, want)
			}
		}
		_ = cs.Close() // its DELETE never arrives
	}
	if got := agentNames(e.session); !slices.Equal(got, want) {
		t.Fatalf("presence %v, want the 8 latest %v", got, want)
	}
	if n := e.bridge.Clients(e.session.ID); n != 8 {
		t.Fatalf("%d client sessions, want 8", n)
	}

	// Eight busy clients (each with its standalone GET stream) replace
	// the idle ones...
	for range 8 {
		e.connect(false)
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return mcpbridge.OpenStreams(e.bridge, e.session.ID) == 8 }, "eight busy clients with their streams open")
	if got := agentNames(e.session); len(got) != 8 || slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "oneshot") }) {
		t.Fatalf("presence %v, want 8 test-agents", got)
	}
	// ...and a ninth is refused, on either transport, with Retry-After.
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ninth","version":"1"}}}`
	for _, r := range []*http.Request{
		must(http.NewRequest(http.MethodPost, e.mcpURL(e.session), strings.NewReader(initBody))),
		must(http.NewRequest(http.MethodGet, e.http.URL+"/sessions/"+e.session.ID+"/sse", nil)),
	} {
		r.Header.Set("Authorization", "Bearer "+e.session.Token())
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := e.http.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s with 8 busy clients: %d, Retry-After %q", r.Method, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if n := len(e.session.Agents()); n != 8 {
		t.Fatalf("a refused client changed presence: %d agents", n)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// rawDelete sends a DELETE for client session sid to session s's path,
// with the bearer token tok if not "".
func (e *env) rawDelete(s *session.Session, tok, sid string) int {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, e.mcpURL(s), nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := e.http.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestDeleteByTheLiveSessionID: a DELETE that names a live client session
// of that very session path ends it without the bearer token (mcp-go
// sends none); one with a wrong id, or the id of another session's client,
// ends nothing.
func TestDeleteByTheLiveSessionID(t *testing.T) {
	e := newLifetimeEnv(t, mcpbridge.Options{}, session.Options{})
	a := e.quietClient("alice", nil)
	other, _, err := e.mgr.Start("app", session.Owner{User: "v"}, form{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bob", Version: "1"}, nil)
	b, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.mcpURL(other),
		HTTPClient: &http.Client{Transport: e.http.bearer(other.Token())}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := tryCall(b); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		what, tok, sid string
		want           int
	}{
		{"a wrong id, no token", "", a.ID() + "x", http.StatusUnauthorized},
		{"a wrong id, this session's token", e.session.Token(), "nope", http.StatusNotFound},
		{"another session's client id, no token", "", b.ID(), http.StatusUnauthorized},
		{"another session's client id, this session's token", e.session.Token(), b.ID(), http.StatusNotFound},
		{"another session's client id and token", other.Token(), b.ID(), http.StatusUnauthorized},
	} {
		if code := e.rawDelete(e.session, tc.tok, tc.sid); code != tc.want {
			t.Errorf("DELETE with %s: %d, want %d", tc.what, code, tc.want)
		}
	}
	if err := tryCall(b); err != nil {
		t.Fatalf("the other session's client after foreign DELETEs: %v", err)
	}
	if err := tryCall(a); err != nil {
		t.Fatalf("this session's client after wrong DELETEs: %v", err)
	}
	if len(other.Agents()) != 1 || len(e.session.Agents()) != 1 {
		t.Fatalf("presence changed: %v / %v", agentNames(e.session), agentNames(other))
	}

	// Its own id, without the token: it ends, and leaves at once.
	if code := e.rawDelete(e.session, "", a.ID()); code != http.StatusNoContent {
		t.Fatalf("DELETE with the live id and no token: %d, want 204", code)
	}
	if n := len(e.session.Agents()); n != 0 {
		t.Fatalf("%d agents still present right after the DELETE", n)
	}
	if err := tryCall(a); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("a call after the DELETE: %v, want session not found", err)
	}
	if code := e.rawDelete(e.session, "", a.ID()); code == http.StatusNoContent {
		t.Fatal("a second DELETE of the same id succeeded")
	}
	if err := tryCall(b); err != nil {
		t.Fatalf("the other session's client: %v", err)
	}
}

// TestPresenceTellsWhenAgentsLastActed: the context resource gives each
// agent its last_active time and shows a quiet one idle; reading the
// context is not acting.
func TestPresenceTellsWhenAgentsLastActed(t *testing.T) {
	bubble(t, func(t *testing.T) {
		const idleAfter = 300 * time.Millisecond
		e := newLifetimeEnv(t, mcpbridge.Options{}, session.Options{AgentIdleAfter: idleAfter})
		cs := e.quietClient("claude-code", nil)
		attached := func() map[string]any {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpbridge.URIContext})
			if err != nil {
				t.Fatal(err)
			}
			var doc struct{ Attached []map[string]any }
			if err := json.Unmarshal([]byte(res.Contents[0].Text), &doc); err != nil || len(doc.Attached) != 1 {
				t.Fatalf("context %s: %v", res.Contents[0].Text, err)
			}
			return doc.Attached[0]
		}
		before := time.Now().Truncate(time.Second)
		if err := tryCall(cs); err != nil {
			t.Fatal(err)
		}
		got := attached()
		at, err := time.Parse(time.RFC3339, fmt.Sprint(got["last_active"]))
		if err != nil || at.Before(before) || at.After(time.Now()) || got["idle"] != false {
			t.Fatalf("attached entry after a call: %v (%v)", got, err)
		}
		time.Sleep(idleAfter + 100*time.Millisecond)
		if got := attached(); got["idle"] != true {
			t.Fatalf("attached entry after %v quiet: %v", idleAfter, got)
		}
		if a := e.session.Agents(); len(a) != 1 || !a[0].Idle {
			t.Fatalf("presence after quiet: %+v", a)
		}
		if err := tryCall(cs); err != nil {
			t.Fatal(err)
		}
		if got := attached(); got["idle"] != false {
			t.Fatalf("attached entry after acting again: %v", got)
		}
	})
}

// TestIdleTimeoutEndsQuietClientsOnTime: with the default idle timeout
// (30 minutes, on the bubble's virtual clock), a client that makes no
// request is still served a second before it, and closed a second after,
// on both transports; clients that call every ten minutes stay.
// TestIdleClientsAreClosed checks the same over a loopback socket with a
// short timeout.
func TestIdleTimeoutEndsQuietClientsOnTime(t *testing.T) {
	bubble(t, func(t *testing.T) {
		const idle = 30 * time.Minute // the default
		e := newLifetimeEnv(t, mcpbridge.Options{}, session.Options{})
		quiet := e.quietClient("quiet", nil)
		busy := e.quietClient("busy", nil)
		quietSSE := e.dialRawSSEAnswering(true)
		quietSSE.Initialize(t, "raw-sse")
		deafSSE := e.dialRawSSE() // never answers pings
		deafSSE.Initialize(t, "raw-sse")
		busySSE := e.dialRawSSE()
		busySSE.Initialize(t, "raw-sse")
		synctest.Wait()
		if n := len(e.session.Agents()); n != 5 {
			t.Fatalf("%d agents attached, want 5", n)
		}
		work := func() {
			t.Helper()
			if err := tryCall(busy); err != nil {
				t.Fatalf("a working Streamable client: %v", err)
			}
			if err := busySSE.CallTool("app.name.get_value"); err != nil {
				t.Fatalf("a working SSE client: %v", err)
			}
		}
		closed := func(c *testkit.SSEClient) bool {
			select {
			case <-c.Done:
				return true
			default:
				return false
			}
		}
		for range 2 {
			time.Sleep(idle / 3)
			work()
		}
		time.Sleep(idle - 2*(idle/3) - time.Second) // the quiet ones: a second to go
		synctest.Wait()
		if closed(quietSSE) || closed(deafSSE) {
			t.Fatal("a quiet SSE client was closed before its idle timeout")
		}
		if n := len(e.session.Agents()); n != 5 {
			t.Fatalf("%d agents a second before the idle timeout, want 5", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !closed(quietSSE) {
			t.Fatal("an idle SSE client's stream is still open a second after its timeout")
		}
		if err := tryCall(quiet); err == nil {
			t.Fatal("an idle Streamable client was still served a second after its timeout")
		}
		// An SSE client that never answers pings is closed late: each
		// keepalive ping waits its whole interval (20s) for the answer,
		// and the idle check runs only between pings, where it races the
		// next tick. Ten minutes is 30 of those rounds.
		select {
		case <-deafSSE.Done:
		case <-time.After(10 * time.Minute):
			t.Fatal("an idle SSE client that ignores pings is still open ten minutes after its timeout")
		}
		work()
		for range 6 {
			time.Sleep(idle / 3)
			work()
		}
		got := agentNames(e.session)
		if len(got) != 2 || !slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "busy") }) ||
			!slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "raw-sse") }) {
			t.Fatalf("presence after three idle timeouts of work: %v, want the two busy clients", got)
		}
	})
}
