package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// BenchmarkWriteCall is one agent's write tool call (demo.search.type_into,
// answered after the fold) over Streamable HTTP on loopback, in a server
// holding 1, 100 or 1,000 sessions: the cost of a call must not grow with
// the sessions beside it. "bare" is the floor: a go-sdk server with one
// echo tool, served and called the same way in the same process.
//
//	go test ./server -run '^$' -bench WriteCall -benchmem
func BenchmarkWriteCall(b *testing.B) { writeCalls(b, callLoop) }

// BenchmarkPacedCall is BenchmarkWriteCall one call at a time at a modest
// pace (one every 20 ms, the process otherwise idle between them, as for
// an agent at 5 calls/s): the latency of a single call, its p50 and p99 in
// microseconds, bare against raxol-ssh. ns/op is mostly the pause.
//
//	go test ./server -run '^$' -bench 'PacedCall/(bare|sessions=1$)' -benchtime 300x -cpu 2
func BenchmarkPacedCall(b *testing.B) { writeCalls(b, pacedLoop) }

// BenchmarkPacedCallAlternated is BenchmarkPacedCall with the bare and the
// raxol-ssh call alternated in one loop, so that both meet the same load
// of a shared machine: p50 and p99 of each, and the ratio of the p50s.
//
//	go test ./server -run '^$' -bench PacedCallAlternated -benchtime 400x -cpu 2
func BenchmarkPacedCallAlternated(b *testing.B) {
	bare := bareServer(b)
	srv := demoServer(b, 1)
	se, _, err := srv.StartHeadless(session.Owner{User: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	bc := testkit.ConnectBench(b, bare.URL, "")
	rc := testkit.ConnectBench(b, hs.URL+"/sessions/"+se.ID+"/mcp", se.Token())
	const pace = 10 * time.Millisecond
	ctx := context.Background()
	var lb, lr []time.Duration
	call := func(cs *mcp.ClientSession, tool string, i int) time.Duration {
		time.Sleep(pace)
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": fmt.Sprint("x", i%10)}})
		d := time.Since(t0)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		return d
	}
	i := 0
	for b.Loop() {
		i++
		lb = append(lb, call(bc, "echo", i))
		lr = append(lr, call(rc, "demo.search.type_into", i))
	}
	slices.Sort(lb)
	slices.Sort(lr)
	at := func(l []time.Duration, q float64) float64 { return float64(l[int(q*float64(len(l)-1))].Microseconds()) }
	b.ReportMetric(at(lb, 0.5), "bare-p50-us")
	b.ReportMetric(at(lb, 0.99), "bare-p99-us")
	b.ReportMetric(at(lr, 0.5), "raxol-p50-us")
	b.ReportMetric(at(lr, 0.99), "raxol-p99-us")
	b.ReportMetric(at(lr, 0.5)/at(lb, 0.5), "p50-ratio")
}

// bareServer is the floor: a go-sdk server with one echo tool over
// Streamable HTTP.
func bareServer(b *testing.B) *httptest.Server { return testkit.BareEchoServer(b) }

// demoServer serves the demo as BenchmarkWriteCall does, for up to n
// sessions of one user.
func demoServer(b *testing.B, n int) *server.Server {
	srv, err := server.New(server.App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() },
		Projections: demo.Projections(), ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy()},
		server.Options{DataDir: b.TempDir(), Logger: slog.New(slog.DiscardHandler),
			Limits: server.Limits{MaxSessionsPerUser: n},
			MCP:    server.MCPOptions{ToolCallsPerSecond: 1e9, ToolCallBurst: 1e9}}) // the floor has no rate limit
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

func writeCalls(b *testing.B, loop func(*testing.B, string, ...*mcp.ClientSession)) {
	b.Run("bare", func(b *testing.B) {
		benchCallsWith(b, bareServer(b).URL, "", "echo", loop)
	})
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			srv := demoServer(b, n)
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			var first *session.Session
			for i := range n {
				se, _, err := srv.StartHeadless(session.Owner{User: "bench"})
				if err != nil {
					b.Fatal(i, err)
				}
				if first == nil {
					first = se
				}
			}
			benchCallsWith(b, hs.URL+"/sessions/"+first.ID+"/mcp", first.Token(), "demo.search.type_into", loop)
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchCalls(b *testing.B, url, token, tool string) { benchCallsWith(b, url, token, tool, callLoop) }

func benchCallsWith(b *testing.B, url, token, tool string, loop func(*testing.B, string, ...*mcp.ClientSession)) {
	loop(b, tool, testkit.ConnectBench(b, url, token))
}

// callLoop makes b.N write calls of tool, round-robin over agents, and
// reports the process's CPU per call.
func callLoop(b *testing.B, tool string, agents ...*mcp.ClientSession) {
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	cpu0 := cpuTime()
	defer func() {
		// The process's CPU (client and server: the client's share is the
		// same in every sub-benchmark), per call, asynchronous work such as
		// re-deriving tools and diffing resources included.
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}()
	for b.Loop() {
		i++
		res, err := agents[i%len(agents)].CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": fmt.Sprint("x", i%10)}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// pacedLoop makes b.N write calls of tool, one every pace, and reports the
// p50 and p99 of a call's latency.
func pacedLoop(b *testing.B, tool string, agents ...*mcp.ClientSession) {
	const pace = 20 * time.Millisecond
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		i++
		time.Sleep(pace)
		t0 := time.Now()
		res, err := agents[i%len(agents)].CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": fmt.Sprint("x", i%10)}})
		lat = append(lat, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(at(0.5), "p50-us")
	b.ReportMetric(at(0.99), "p99-us")
}
