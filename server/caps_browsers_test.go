package server_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// TestCapsBrowsersPerSessionUnderConcurrency: the live channels of a
// session's browsers (Limits.MaxBrowsersPerSession) hold under a race as
// every other cap does: with a cap of 3 and one channel open, 20 opened at
// once by the admitted browser admit 2 and refuse 18 with 429, the
// browsers in the session's presence never more than 3 at any instant
// (sampled while they race), and every place is given back once they
// close. Raced twice.
func TestCapsBrowsersPerSessionUnderConcurrency(t *testing.T) {
	const limit, racers = 3, 20
	srv := startServer(t, server.Options{Limits: server.Limits{MaxBrowsersPerSession: limit}})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	b := openView(t, srv, owner, id)
	admitBrowser(t, owner, "o")
	waitEvent(t, b.events, "role", func(string) bool { return true })
	se, _ := srv.Session(id)
	browsers := func() int {
		n := 0
		for _, a := range se.Attached() {
			if a.Kind == session.KindBrowser {
				n++
			}
		}
		return n
	}
	testkit.Eventually(t, waitLong, func() bool { return browsers() == 1 }, "the browser's first channel in presence")

	for round := range 2 {
		var peak atomic.Int32
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				if n := int32(browsers()); n > peak.Load() {
					peak.Store(n)
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		barrier := make(chan struct{})
		for range racers {
			wg.Go(func() {
				<-barrier
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/events", nil)
				resp, err := (&http.Client{Jar: b.http.Jar}).Do(req)
				code := -1
				if err == nil {
					code = resp.StatusCode
					if code != http.StatusOK {
						resp.Body.Close()
					} else {
						// Held open (its body read in the background) until cancel.
						go func() {
							defer resp.Body.Close()
							buf := make([]byte, 4096)
							for {
								if _, err := resp.Body.Read(buf); err != nil {
									return
								}
							}
						}()
					}
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			})
		}
		close(barrier)
		wg.Wait()
		// The admitted channels join presence once they have said their role.
		testkit.Eventually(t, waitLong, func() bool { return browsers() == limit }, "round %d: the admitted channels in presence (%d)", round, browsers())
		close(stop)
		<-sampled
		if codes[http.StatusOK] != limit-1 || codes[http.StatusTooManyRequests] != racers-limit+1 {
			t.Errorf("round %d: %d channels at once beside one open, cap %d: %v; want %d × 200, %d × 429",
				round, racers, limit, codes, limit-1, racers-limit+1)
		}
		if p := peak.Load(); p > limit {
			t.Errorf("round %d: %d browsers in the session at one instant, cap %d", round, p, limit)
		}
		cancel()
		testkit.Eventually(t, waitLong, func() bool { return browsers() == 1 }, "round %d: the raced channels' places given back (%d in presence)", round, browsers())
	}
}
