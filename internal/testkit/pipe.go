package testkit

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// PipeServer is an HTTP server like httptest.Server whose connections are
// in memory (net.Pipe) instead of loopback sockets: the same net/http
// server and client on both sides, so that a test can run it inside a
// testing/synctest bubble (a goroutine blocked on a socket is never
// durably blocked, one blocked on a pipe is). Its connections claim the
// loopback addresses 127.0.0.1:port, as a loopback listener's would.
//
// Use [PipeServer.Client] or [PipeServer.Transport] to reach it; other
// clients (http.DefaultClient) cannot dial its URL. Make it, its clients
// and everything they start inside the same bubble, and Close it before
// the bubble ends.
type PipeServer struct {
	// URL is http://127.0.0.1:port, with a port no socket uses.
	URL string

	srv  *http.Server
	ln   *pipeListener
	tr   *http.Transport
	once sync.Once
}

// pipePorts hands out the fake ports of PipeServers, so that two of them
// have distinct URLs (origins).
var pipePorts atomic.Int32

// NewPipeServer starts serving h on in-memory connections.
func NewPipeServer(h http.Handler) *PipeServer {
	port := 40000 + int(pipePorts.Add(1))%20000
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	ln := &pipeListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{}), open: map[*pipeConn]struct{}{}}
	s := &PipeServer{URL: "http://" + addr.String(), srv: &http.Server{Handler: h}, ln: ln}
	s.tr = &http.Transport{DialContext: ln.dial, ForceAttemptHTTP2: false}
	go func() { _ = s.srv.Serve(ln) }() // ends with Close
	return s
}

// Transport is the RoundTripper that dials s.
func (s *PipeServer) Transport() http.RoundTripper { return s.tr }

// Client returns an HTTP client that dials s.
func (s *PipeServer) Client() *http.Client { return &http.Client{Transport: s.tr} }

// CloseClientConnections closes every connection open to s, as
// httptest.Server's does.
func (s *PipeServer) CloseClientConnections() { s.ln.closeAll() }

// Close stops the server, closes every connection to it and its
// transport's idle ones.
func (s *PipeServer) Close() {
	s.once.Do(func() {
		_ = s.srv.Close()
		s.ln.closeAll()
		s.tr.CloseIdleConnections()
	})
}

type pipeListener struct {
	addr  *net.TCPAddr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once

	mu   sync.Mutex
	open map[*pipeConn]struct{}
	next int
}

var errPipeClosed = errors.New("testkit: pipe server closed")

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return l.addr }

// dial makes a connection to the server: one end for the client, the
// other accepted by the server.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	cli, srv := net.Pipe()
	l.mu.Lock()
	l.next++
	remote := &net.TCPAddr{IP: l.addr.IP, Port: 1024 + l.next%60000}
	sc := &pipeConn{Conn: srv, local: l.addr, remote: remote, l: l}
	cc := &pipeConn{Conn: cli, local: remote, remote: l.addr}
	l.open[sc] = struct{}{}
	l.mu.Unlock()
	select {
	case l.conns <- sc:
		return cc, nil
	case <-l.done:
		_ = sc.Close()
		_ = cc.Close()
		return nil, errPipeClosed
	case <-ctx.Done():
		_ = sc.Close()
		_ = cc.Close()
		return nil, ctx.Err()
	}
}

func (l *pipeListener) closeAll() {
	l.mu.Lock()
	open := make([]*pipeConn, 0, len(l.open))
	for c := range l.open {
		open = append(open, c)
	}
	l.mu.Unlock()
	for _, c := range open {
		_ = c.Close()
	}
}

// pipeConn is one end of a net.Pipe with TCP addresses.
type pipeConn struct {
	net.Conn
	local, remote net.Addr
	l             *pipeListener // the server's end only
}

func (c *pipeConn) LocalAddr() net.Addr  { return c.local }
func (c *pipeConn) RemoteAddr() net.Addr { return c.remote }

func (c *pipeConn) Close() error {
	if c.l != nil {
		c.l.mu.Lock()
		delete(c.l.open, c)
		c.l.mu.Unlock()
	}
	return c.Conn.Close()
}
