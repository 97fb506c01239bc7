package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/server/internal/saver"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// BenchmarkSnapshotFlush is what saving costs: n sessions of the demo
// each changed once, then one flush of the saver writing all n to the
// bbolt file (fsync per write). ns/save and B/save are per session saved;
// the changes themselves are not timed.
//
//	go test ./server -run '^$' -bench SnapshotFlush -benchtime 20x
func BenchmarkSnapshotFlush(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			srv, p := startSnapshotted(b, JSONCodec[demo.Model](1), Limits{MaxSessionsPerUser: n + 1})
			p.Stop() // flushes are the benchmark's
			ses := make([]*session.Session, n)
			for i := range ses {
				se, _, err := srv.StartHeadless(session.Owner{User: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				p.Track(se, false, "bench")
				ses[i] = se
			}
			ctx := context.Background()
			p.Flush(ctx) // the first save of each
			bytes0 := testutil.ToFloat64(srv.metrics.SnapshotBytes)
			saves0 := testutil.ToFloat64(srv.metrics.SnapshotsSaved)
			b.ResetTimer()
			var spent time.Duration
			for i := range b.N {
				for _, se := range ses {
					if err := se.Dispatcher.Call(ctx, dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "bench"},
						ui.TextInputChanged{ID: demo.IDSearch, Text: fmt.Sprint("change ", i)}); err != nil {
						b.Fatal(err)
					}
				}
				start := time.Now()
				p.Flush(ctx)
				spent += time.Since(start)
			}
			saves := testutil.ToFloat64(srv.metrics.SnapshotsSaved) - saves0
			if saves != float64(b.N*n) {
				b.Fatalf("%v saves, want %d", saves, b.N*n)
			}
			b.ReportMetric(float64(spent.Nanoseconds())/saves, "ns/save")
			b.ReportMetric((testutil.ToFloat64(srv.metrics.SnapshotBytes)-bytes0)/saves, "B/save")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// startSnapshotted starts the demo with codec on a data dir of its own,
// the saver's tick an hour apart (the test's or benchmark's saves and
// flushes are the only ones), HTTP on loopback; it is shut down at
// cleanup.
func startSnapshotted(tb testing.TB, codec *SnapshotCodec, limits Limits) (*Server, *saver.Saver) {
	tb.Helper()
	app := App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() },
		Projections: demo.Projections(), ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy(),
		Snapshots: codec}
	srv, err := New(app, Options{DataDir: tb.TempDir(), Logger: slog.New(slog.DiscardHandler),
		Snapshots: SnapshotOptions{Every: time.Hour}, Limits: limits})
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.StartOn(nil, ln); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv, srv.persist.Load()
}
