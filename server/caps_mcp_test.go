package server

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
)

// peak samples f until stop is closed and returns the largest value it
// saw; done is closed once it has stopped sampling.
func peak(f func() int, stop <-chan struct{}) (max *atomic.Int64, done <-chan struct{}) {
	max = new(atomic.Int64)
	d := make(chan struct{})
	go func() {
		defer close(d)
		for {
			if v := int64(f()); v > max.Load() {
				max.Store(v)
			}
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	return max, d
}

// TestCapsHeadlessClientsUnderConcurrentInitialize: 50 go-sdk clients
// released at once by a barrier all initialize on /mcp, whose cap is 4:
// at no instant are more than 4 attached (the SDK's own count of
// initialized client sessions, sampled while they race), exactly the
// ones that were not refused with 429 are attached, and once they all
// close every place is given back: a new client attaches.
func TestCapsHeadlessClientsUnderConcurrentInitialize(t *testing.T) {
	const limit, racers = 4, 50
	srv := startHeadlessServer(t, Options{Headless: HeadlessOptions{MaxClients: limit}})
	url := "http://" + srv.HTTPAddr() + "/mcp"

	stop := make(chan struct{})
	attached, sampled := peak(func() int { return mcpbridge.InitializedSessions(srv.control.server) }, stop)
	held, heldDone := peak(srv.control.clientCount, stop)

	barrier := make(chan struct{})
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		sessions []*mcp.ClientSession
		refused  int
		others   []error
	)
	for range racers {
		wg.Go(func() {
			c := mcp.NewClient(&mcp.Implementation{Name: "racer", Version: "1"}, nil)
			// Each racer has its own connections: the address's HTTP cap
			// (256) is far away, and nothing is serialized on a pool.
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			<-barrier
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: testkit.Bearer(tr, keyA)}}, nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				sessions = append(sessions, cs)
			case strings.Contains(err.Error(), "Too Many Requests"):
				refused++
			default:
				others = append(others, err)
			}
		})
	}
	close(barrier)
	wg.Wait()
	close(stop)
	<-sampled
	<-heldDone
	t.Cleanup(func() {
		for _, cs := range sessions {
			_ = cs.Close()
		}
	})

	if len(others) > 0 {
		t.Fatalf("%d clients failed otherwise than refused, first: %v", len(others), others[0])
	}
	if got := attached.Load(); got > limit {
		t.Errorf("%d clients attached at one instant, cap %d", got, limit)
	}
	if got := held.Load(); got > limit {
		t.Errorf("%d places held at one instant, cap %d", got, limit)
	}
	if len(sessions) > limit || len(sessions)+refused != racers {
		t.Errorf("%d attached and %d refused of %d, cap %d", len(sessions), refused, racers, limit)
	}
	if len(sessions) == 0 {
		t.Error("no client attached at all")
	}
	if n := mcpbridge.InitializedSessions(srv.control.server); n != len(sessions) {
		t.Errorf("the SDK holds %d client sessions, %d clients were let in", n, len(sessions))
	}
	// The attached ones work.
	for _, cs := range sessions {
		testkit.MustCall(t, cs, ToolList, nil)
	}

	for _, cs := range sessions {
		_ = cs.Close()
	}
	testkit.Eventually(t, waitShortInternal, func() bool {
		return srv.control.clientCount() == 0 && mcpbridge.InitializedSessions(srv.control.server) == 0
	}, "every place given back: %d held, %d SDK sessions", srv.control.clientCount(), mcpbridge.InitializedSessions(srv.control.server))
	for range limit {
		control(t, srv, keyB)
	}
	if n := srv.control.clientCount(); n != limit {
		t.Fatalf("%d places held by %d new clients", n, limit)
	}
}

// waitShortInternal is how long the internal tests wait for a condition
// (generous: -race on two cores).
const waitShortInternal = 10 * time.Second

// TestCapsHeadlessStartsUnderConcurrency: raxol_start called at once (one
// barrier) by 24 clients of one API key, whose cap is 3 sessions: never
// more than 3 of its sessions live at any instant (sampled while they
// race), exactly 3 started and the rest told the limit; once stopped, the
// key starts 3 again.
func TestCapsHeadlessStartsUnderConcurrency(t *testing.T) {
	const limit, racers = 3, 24
	srv := startHeadlessServer(t, Options{Limits: Limits{MaxSessionsPerUser: limit}})
	clients := make([]*mcp.ClientSession, racers)
	for i := range clients {
		clients[i] = control(t, srv, keyA)
	}
	stop := make(chan struct{})
	live, sampled := peak(srv.Sessions().Count, stop)
	barrier := make(chan struct{})
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ids     []string
		limited int
		others  []any
	)
	for _, cs := range clients {
		wg.Go(func() {
			<-barrier
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolStart})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				others = append(others, err)
			case !res.IsError:
				ids = append(ids, res.StructuredContent.(map[string]any)["id"].(string))
			case strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"limit"`):
				limited++
			default:
				others = append(others, res.Content[0].(*mcp.TextContent).Text)
			}
		})
	}
	close(barrier)
	wg.Wait()
	close(stop)
	<-sampled
	if len(others) > 0 {
		t.Fatalf("%d starts failed otherwise than the limit, first: %v", len(others), others[0])
	}
	if got := live.Load(); got > limit {
		t.Errorf("%d sessions of one key live at one instant, cap %d", got, limit)
	}
	if len(ids) != limit || limited != racers-limit {
		t.Errorf("%d started, %d told the limit, want %d and %d", len(ids), limited, limit, racers-limit)
	}
	for _, id := range ids {
		testkit.MustCall(t, clients[0], ToolStop, map[string]any{"id": id})
	}
	testkit.Eventually(t, waitShortInternal, func() bool { return srv.Sessions().Count() == 0 }, "%d sessions after stopping", srv.Sessions().Count())
	for range limit {
		testkit.MustCall(t, clients[0], ToolStart, nil)
	}
}

// TestCapsHeadlessSessionsWithoutAClientHoldNoPlace: a POST without a
// session id that is no initialize (a ping, as the go-sdk client's
// server/discover probe is answered) opens an SDK session but no client;
// ten of them on /mcp capped at 2 leave no place held and no session
// open, and a client still attaches.
func TestCapsHeadlessSessionsWithoutAClientHoldNoPlace(t *testing.T) {
	srv := startHeadlessServer(t, Options{Headless: HeadlessOptions{MaxClients: 2}})
	url := "http://" + srv.HTTPAddr() + "/mcp"
	for i := range 10 {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+keyA)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			t.Fatalf("ping %d without a session id refused 429: the earlier ones hold places", i)
		}
	}
	// The last request's place is given back as its handler returns,
	// just after the client read the answer.
	testkit.Eventually(t, 5*time.Second, func() bool { return srv.control.clientCount() == 0 },
		"%d places held by sessions with no client", srv.control.clientCount())
	open := func() int {
		n := 0
		for range srv.control.server.Sessions() {
			n++
		}
		return n
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return open() == 0 }, "%d SDK sessions left open by requests that opened no client", open())
	c := mcp.NewClient(&mcp.Implementation{Name: "after-pings", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: testkit.Bearer(nil, keyA)}}, nil)
	if err != nil {
		t.Fatalf("a client after ten pings: %v", err)
	}
	cs.Close()
}
