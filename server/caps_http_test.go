package server

import (
	"bufio"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// httpRacer is one raw HTTP connection of a race: it sends head (and
// whatever body it has), then reads the answer's status, if one comes.
type httpRacer struct {
	mu     sync.Mutex
	c      net.Conn     // nil until dialed
	status atomic.Int32 // 0 until an answer's status line is read; -1: failed
}

// raceHTTP opens n connections to addr at once (released by one barrier),
// sends head on each and reads their answers in the background; the
// connections stay open until the test ends or closeHTTP.
func raceHTTP(t *testing.T, addr string, n int, head string) []*httpRacer {
	t.Helper()
	rs := make([]*httpRacer, n)
	for i := range rs {
		rs[i] = &httpRacer{}
	}
	t.Cleanup(func() { closeHTTP(rs) })
	barrier := make(chan struct{})
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() {
			<-barrier
			c, err := net.DialTimeout("tcp", addr, waitShortInternal)
			if err != nil {
				r.status.Store(-1)
				return
			}
			r.mu.Lock()
			r.c = c
			r.mu.Unlock()
			if _, err := c.Write([]byte(head)); err != nil {
				r.status.Store(-1)
				return
			}
			go func() { // ends when the connection is closed
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					r.status.CompareAndSwap(0, -1)
					return
				}
				// (Not resp.Body.Close: it would read a stream to its end.)
				r.status.Store(int32(resp.StatusCode))
			}()
		})
	}
	close(barrier)
	wg.Wait()
	return rs
}

func closeHTTP(rs []*httpRacer) {
	for _, r := range rs {
		r.mu.Lock()
		if r.c != nil {
			_ = r.c.Close()
		}
		r.mu.Unlock()
	}
}

// statuses counts the racers by the status they got (0: none yet).
func statuses(rs []*httpRacer) map[int]int {
	m := map[int]int{}
	for _, r := range rs {
		m[int(r.status.Load())]++
	}
	return m
}

// TestCapsProxiedRequestsUnderConcurrency: requests of one client through
// a trusted proxy, all sent at once and each holding its place (an SSE
// stream of a session's endpoint, which stays open until the client
// closes it), with MaxHTTPPerIP 3: exactly 3 are let through and held at
// the same instant (none of them ends before the test closes it), the
// others are refused with 429 at once; once they all went, every place is
// back: the same race again lets 3 through.
func TestCapsProxiedRequestsUnderConcurrency(t *testing.T) {
	const limit, racers = 3, 20
	srv := startHeadlessServer(t, Options{
		MCP:    MCPOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, MaxClients: 64},
		Limits: Limits{MaxHTTPPerIP: limit},
	})
	started := testkit.MustCall(t, control(t, srv, keyA), ToolStart, nil)
	id, token := started["id"].(string), started["token"].(string)
	head := "GET /sessions/" + id + "/sse HTTP/1.1\r\nHost: " + srv.HTTPAddr() + "\r\nAuthorization: Bearer " + token +
		"\r\nX-Forwarded-For: 203.0.113.9\r\nAccept: text/event-stream\r\n\r\n"

	for round := range 2 {
		rs := raceHTTP(t, srv.HTTPAddr(), racers, head)
		testkit.Eventually(t, waitShortInternal, func() bool {
			st := statuses(rs)
			return st[http.StatusTooManyRequests]+st[http.StatusOK] == racers
		}, "round %d: statuses %v", round, statuses(rs))
		if st := statuses(rs); st[http.StatusTooManyRequests] != racers-limit || st[http.StatusOK] != limit {
			t.Errorf("round %d: statuses %v, want %d refused and %d streams held", round, st, racers-limit, limit)
		}
		if n := srv.proxied.inFlight("203.0.113.9"); n != limit {
			t.Errorf("round %d: the server counts %d requests in flight for the client, want %d", round, n, limit)
		}
		closeHTTP(rs)
		// Every place is given back once the server has seen each stream
		// close (its handler returns then), not at the client's close.
		testkit.Eventually(t, waitShortInternal, func() bool { return srv.proxied.inFlight("203.0.113.9") == 0 },
			"round %d: the places given back: %d held", round, srv.proxied.inFlight("203.0.113.9"))
	}
	// Another client through the same proxy has its own places.
	other := strings.Replace(head, "203.0.113.9", "203.0.113.10", 1)
	rs := raceHTTP(t, srv.HTTPAddr(), 1, other)
	testkit.Eventually(t, waitShortInternal, func() bool { return statuses(rs)[http.StatusOK] == 1 }, "another client: %v", statuses(rs))
}

// TestCapsHTTPConnectionsPerAddressUnderConcurrency: connections from one
// address opened at once, each sending a keep-alive request and staying
// open, with MaxHTTPPerIP 3: the server's count of the address's
// connections, sampled while they race, never passes 3, 3 are served and
// the rest refused with 429; once they close the count is back to 0 and
// the same race serves 3 again.
func TestCapsHTTPConnectionsPerAddressUnderConcurrency(t *testing.T) {
	const limit, racers = 3, 20
	srv := startHeadlessServer(t, Options{Limits: Limits{MaxHTTPPerIP: limit}})
	head := "GET /healthz HTTP/1.1\r\nHost: " + srv.HTTPAddr() + "\r\n\r\n"
	for round := range 2 {
		stop := make(chan struct{})
		held, sampled := peak(func() int { return srv.HTTPConnectionsFrom("127.0.0.1") }, stop)
		rs := raceHTTP(t, srv.HTTPAddr(), racers, head)
		testkit.Eventually(t, waitShortInternal, func() bool { return statuses(rs)[0] == 0 },
			"round %d: statuses %v", round, statuses(rs))
		close(stop)
		<-sampled
		if got := held.Load(); got > limit {
			t.Errorf("round %d: %d connections of one address held at one instant, cap %d", round, got, limit)
		}
		if st := statuses(rs); st[http.StatusOK] != limit || st[http.StatusTooManyRequests] != racers-limit {
			t.Errorf("round %d: statuses %v, want %d served and %d refused", round, st, limit, racers-limit)
		}
		closeHTTP(rs)
		testkit.Eventually(t, waitShortInternal, func() bool { return srv.HTTPConnectionsFrom("127.0.0.1") == 0 },
			"round %d: %d connections still counted after they closed", round, srv.HTTPConnectionsFrom("127.0.0.1"))
	}
}

// TestCapsHTTPConnectionsInTotalUnderConcurrency: 20 connections opened at
// once, each sending a keep-alive request and staying open, with
// MaxHTTPConnections 4: the connections the server holds (counted by the
// per-address count, whose cap is far) never pass 4 at any instant while
// they race, 4 are served and the others wait; as the served ones close,
// the waiting ones are served 4 at a time; at the end none is held.
func TestCapsHTTPConnectionsInTotalUnderConcurrency(t *testing.T) {
	const limit, racers = 4, 20
	srv := startHeadlessServer(t, Options{Limits: Limits{MaxHTTPConnections: limit, MaxHTTPPerIP: 1000}})
	head := "GET /healthz HTTP/1.1\r\nHost: " + srv.HTTPAddr() + "\r\n\r\n"
	stop := make(chan struct{})
	held, sampled := peak(func() int { return srv.HTTPConnectionsFrom("127.0.0.1") }, stop)
	rs := raceHTTP(t, srv.HTTPAddr(), racers, head)
	for served := limit; served <= racers; served += limit {
		testkit.Eventually(t, waitShortInternal, func() bool { return statuses(rs)[http.StatusOK] == served },
			"want %d served, statuses %v", served, statuses(rs))
		if n := srv.HTTPConnectionsFrom("127.0.0.1"); n != limit {
			t.Errorf("%d connections held with %d served, want %d", n, served, limit)
		}
		var done []*httpRacer
		for _, r := range rs {
			if r.status.Load() == http.StatusOK {
				done = append(done, r)
			}
		}
		closeHTTP(done) // closing one already closed does nothing
	}
	testkit.Eventually(t, waitShortInternal, func() bool { return srv.HTTPConnectionsFrom("127.0.0.1") == 0 },
		"%d connections held after all closed", srv.HTTPConnectionsFrom("127.0.0.1"))
	close(stop)
	<-sampled
	if got := held.Load(); got > limit {
		t.Errorf("%d connections held at one instant, cap %d", got, limit)
	}
	if st := statuses(rs); st[http.StatusOK] != racers {
		t.Errorf("statuses %v, want all %d served in turn", st, racers)
	}
}
