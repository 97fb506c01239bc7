package mcpbridge_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// Tests of timeouts, keepalives and rate limits run in a testing/synctest
// bubble (see bubble): their clock is virtual, so waiting 30 seconds for a
// timeout costs nothing, and "nothing arrives" is checked with
// synctest.Wait instead of a guessed sleep. Their bridge is served over
// HTTP on in-memory connections (testkit.PipeServer), the same net/http
// server and go-sdk clients as on a loopback socket; the other tests keep
// the loopback socket (httptest), so every capability is still tested
// over the real wire.

// bubbles holds the *testing.T of each test running in a bubble.
var bubbles sync.Map // *testing.T -> struct{}

// bubble runs f in a synctest bubble; the envs f makes serve in memory.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		bubbles.Store(t, struct{}{})
		t.Cleanup(func() { bubbles.Delete(t) })
		f(t)
	})
}

// testServer is where a test's bridge is served: a loopback socket, or
// memory inside a bubble.
type testServer struct {
	URL string
	// rt reaches the server: http.DefaultTransport for a socket.
	rt         http.RoundTripper
	close      func()
	closeConns func()
}

// serveHTTP serves h for t: on a loopback socket (httptest.Server), or in
// memory when t runs in a bubble.
func serveHTTP(t testing.TB, h http.Handler) *testServer {
	if tt, ok := t.(*testing.T); ok {
		if _, in := bubbles.Load(tt); in {
			s := testkit.NewPipeServer(h)
			return &testServer{URL: s.URL, rt: s.Transport(), close: s.Close, closeConns: s.CloseClientConnections}
		}
	}
	s := httptest.NewServer(h)
	return &testServer{URL: s.URL, rt: http.DefaultTransport, close: s.Close, closeConns: s.CloseClientConnections}
}

// Close stops the server and closes its connections.
func (s *testServer) Close() { s.close() }

// CloseClientConnections closes every connection open to the server.
func (s *testServer) CloseClientConnections() { s.closeConns() }

// Client is an HTTP client that reaches the server (http.DefaultClient's
// transport for a socket).
func (s *testServer) Client() *http.Client { return &http.Client{Transport: s.rt} }

// bearer is a RoundTripper to the server that sends token.
func (s *testServer) bearer(token string) http.RoundTripper { return testkit.Bearer(s.rt, token) }
