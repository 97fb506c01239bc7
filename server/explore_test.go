package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

func TestExplore(t *testing.T) {
	for _, resize := range []bool{false, true} {
		m := metrics.New()
		srv := startServer(t, server.Options{Metrics: m})
		a := connect(t, srv.SSHAddr(), clientOpts{w: 220, h: 70, noRead: true, proxy: true})
		eventually(t, waitShort, func() bool { return counterValue(t, m.SessionsOpen) == 1 && counterValue(t, m.BytesWritten) > 0 }, "x")
		sessA := srv.Sessions().List()[0]
		a.proxy.stall()
		last := time.Now()
		start := time.Now()
		for i := 0; i < 1500; i++ {
			sessA.Dispatcher.Call(context.Background(), testOrigin, ui.TabChanged{ID: "tabs", Index: i % 4})
			if resize {
				a.sess.WindowChange(70, 220-i%2)
			}
			time.Sleep(5 * time.Millisecond)
			if time.Since(last) > 500*time.Millisecond {
				last = time.Now()
				t.Logf("resize=%v %v i=%d bytes=%.0f frames=%.0f fwd=%d", resize, time.Since(start), i, counterValue(t, m.BytesWritten), counterValue(t, m.FramesWritten), a.proxy.forwarded())
			}
		}
	}
}
