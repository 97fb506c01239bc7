package main

// The heap bound under a flood of ping batches (issue 24, item 3): the
// GC pacer the command runs, and the memory limit it gives the runtime,
// hold the heap under the bound internal/gcpace documents at every
// instant of a flood, not only as of the pacer's last look. The GC is
// process-wide, so each case runs the command in a process of its own
// (this test binary again, with floodChildEnv set), which floods itself
// over loopback and samples its own heap with runtime/metrics.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/gcpace"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// floodChildEnv makes TestHeapFloodChild flood; its value is the file the
// child writes its report to. The child's other settings:
//
//	RAXOL_TEST_FLOOD_FOR       how long the agents flood (default 3s)
//	RAXOL_TEST_FLOOD_AGENTS    how many agents (default 4)
//	RAXOL_TEST_FLOOD_IN_FLIGHT batches each agent has in flight (default 2)
//	RAXOL_TEST_FLOOD_BATCH     pings a batch (default 20000: a body just
//	                           under the 1 MiB cap)
//	RAXOL_TEST_FLOOD_HEADROOM  --gc-headroom-mib (default: the default pacer)
const floodChildEnv = "RAXOL_TEST_HEAP_FLOOD_REPORT"

// floodReport is what a child measured. Heap is bytes of heap objects
// (/memory/classes/heap/objects: live, and dead but not yet swept).
type floodReport struct {
	Baseline    uint64  // heap before the flood, after a collection
	Headroom    uint64  // the pacer's default headroom for the heap before the flood
	Peak        uint64  // the most heap seen
	PeakTotal   uint64  // the most Go memory seen (what a memory limit counts)
	MaxLive     uint64  // the most a collection found live
	MaxGoal     uint64  // the highest heap goal the runtime had
	MaxG        int     // the most goroutines seen at a sample
	WorstRatio  float64 // heap / bound at the worst sample
	Over        int     // samples with the heap over the bound
	GoalOver    int     // samples with the runtime's heap goal over the bound
	OverLimit   int     // samples with the Go memory over MemoryLimit
	Samples     int
	MemoryLimit int64  // the limit the process ran under (GOMEMLIMIT)
	After       uint64 // heap once the flood is over and the pacer has collected (or 20 s on)
	AfterGC     uint64 // heap after a collection then: what the flood left live
	BatchSize   int    // pings a batch
	Batches     int64  // batches answered
	Answers     int64  // ping answers read
	Failed      int64  // batches not answered 200
	LastFailure string
	Trace       []string // samples around the worst one
}

type heapSample struct {
	at                                             time.Duration
	objects, live, roots, goal, total, gogc, cycle uint64
	limit                                          int64
	bound                                          uint64
}

func (s heapSample) String() string {
	return fmt.Sprintf("%6dms heap %5d MiB bound %5d live %4d roots %4d goal %5d gogc %5d limit %5d cycle %d",
		s.at.Milliseconds(), s.objects>>20, s.bound>>20, s.live>>20, s.roots>>20, s.goal>>20, s.gogc, s.limit>>20, s.cycle)
}

var heapMetrics = []string{
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/live:bytes",
	"/gc/scan/stack:bytes",
	"/gc/scan/globals:bytes",
	"/gc/heap/goal:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/gc/gogc:percent",
	"/gc/gomemlimit:bytes",
	"/gc/cycles/total:gc-cycles",
}

func readHeap(s []metrics.Sample) heapSample {
	metrics.Read(s)
	v := func(i int) uint64 { return s[i].Value.Uint64() }
	return heapSample{objects: v(0), live: v(1), roots: v(1) + v(2) + v(3), goal: v(4), total: v(5) - v(6),
		gogc: v(7), limit: int64(v(8)), cycle: v(9)}
}

// countingWriter counts the occurrences of a word in what is written to
// it, across writes.
type countingWriter struct {
	word, tail []byte
	n          int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	buf := append(w.tail, p...)
	w.n += int64(bytes.Count(buf, w.word))
	// Keep what could begin a word the next write ends (never a whole one).
	w.tail = append(w.tail[:0], buf[max(0, len(buf)-len(w.word)+1):]...)
	return len(p), nil
}

// floodAgent initializes a Streamable client session at url with token,
// then posts batches of n pings with no MCP-Protocol-Version header (so
// the SDK serves a batch) until stop, reading every answer whole; at stop
// it ends its client session (DELETE).
func floodAgent(url, token string, n, inFlight int, stop <-chan struct{}, rep *floodReport, mu *sync.Mutex) {
	client := &http.Client{Timeout: 3 * time.Minute}
	do := func(method string, body []byte, sid string) (*http.Response, error) {
		req, err := http.NewRequest(method, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		return client.Do(req)
	}
	fail := func(what string) {
		mu.Lock()
		rep.Failed++
		rep.LastFailure = what
		mu.Unlock()
	}
	resp, err := do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`), "")
	if err != nil {
		fail(err.Error())
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		fail("initialize: " + resp.Status)
		return
	}
	if resp, err := do(http.MethodPost, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), sid); err == nil {
		resp.Body.Close()
	}
	defer func() {
		if resp, err := do(http.MethodDelete, nil, sid); err == nil {
			resp.Body.Close()
		}
	}()
	var wg sync.WaitGroup
	for k := range inFlight {
		wg.Go(func() {
			id := k * 50_000_000 // ids unique among the batches in flight, bodies under the 1 MiB cap
			var b bytes.Buffer
			for {
				select {
				case <-stop:
					return
				default:
				}
				b.Reset()
				b.WriteByte('[')
				for i := range n {
					if i > 0 {
						b.WriteByte(',')
					}
					id++
					b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ping"}`)
				}
				b.WriteByte(']')
				resp, err := do(http.MethodPost, b.Bytes(), sid)
				if err != nil {
					fail(err.Error())
					return
				}
				answers := &countingWriter{word: []byte(`"result"`)}
				_, err = io.Copy(answers, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || err != nil {
					fail(fmt.Sprintf("batch: %s %v", resp.Status, err))
					return
				}
				mu.Lock()
				rep.Batches++
				rep.Answers += answers.n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestHeapFloodChild is the child of TestHeapBoundUnderPingFlood: with
// floodChildEnv set it boots the command (its GC pacer and memory limit
// included), floods it with ping batches from its agents, sampling the
// heap every 2 ms, and writes what it measured; without, it does nothing.
func TestHeapFloodChild(t *testing.T) {
	out := os.Getenv(floodChildEnv)
	if out == "" {
		return // run by TestHeapBoundUnderPingFlood, in a process of its own
	}
	agents, batch, inFlight, dur := 4, 20000, 2, 3*time.Second
	if n, err := strconv.Atoi(os.Getenv("RAXOL_TEST_FLOOD_IN_FLIGHT")); err == nil {
		inFlight = n
	}
	if n, err := strconv.Atoi(os.Getenv("RAXOL_TEST_FLOOD_AGENTS")); err == nil {
		agents = n
	}
	if n, err := strconv.Atoi(os.Getenv("RAXOL_TEST_FLOOD_BATCH")); err == nil {
		batch = n
	}
	if d, err := time.ParseDuration(os.Getenv("RAXOL_TEST_FLOOD_FOR")); err == nil {
		dur = d
	}
	rep := floodReport{BatchSize: batch, MemoryLimit: debug.SetMemoryLimit(-1)}
	dir := t.TempDir()
	keys := filepath.Join(dir, "api_keys")
	const key = "0123456789abcdef0123456789abcdef"
	if err := os.WriteFile(keys, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The batch cap (--mcp-max-batch, 16 by default) would refuse these
	// batches: raised, they make what is live jump, the case the pacer's
	// bound must hold through whatever raises it.
	args := []string{"--data-dir", filepath.Join(dir, "data"), "--ssh-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
		"--mcp-max-batch", strconv.Itoa(batch)}
	if h := os.Getenv("RAXOL_TEST_FLOOD_HEADROOM"); h != "" {
		args = append(args, "--gc-headroom-mib", h)
	}
	httpAddr, _ := bootCommand(t, args, env(map[string]string{"RAXOL_API_KEYS_FILE": keys, "GOMEMLIMIT": os.Getenv("GOMEMLIMIT")}))
	c := mcp.NewClient(&mcp.Implementation{Name: "flood-control", Version: "1"}, nil)
	ctl, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + httpAddr + "/mcp",
		HTTPClient: &http.Client{Transport: testkit.Bearer(nil, key)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	started, isErr := callJSON(t, ctl, "raxol_start", nil)
	if isErr {
		t.Fatalf("raxol_start: %v", started)
	}
	url, token := started["mcp_url"].(string), started["token"].(string)

	samples := make([]metrics.Sample, len(heapMetrics))
	for i, n := range heapMetrics {
		samples[i].Name = n
	}
	runtime.GC()
	before := readHeap(samples)
	rep.Baseline = before.objects
	// The default headroom follows the least the live heap has been over
	// the last minute: once the pacer has looked at this heap, at most
	// this much. A fixed one is what --gc-headroom-mib says.
	rep.Headroom = gcpace.DefaultHeadroom(before.roots)
	if h, err := strconv.Atoi(os.Getenv("RAXOL_TEST_FLOOD_HEADROOM")); err == nil && h > 0 {
		rep.Headroom = uint64(h) << 20
	}
	time.Sleep(2 * gcpace.DefaultTick) // the pacer looks at this heap twice before the flood; it reports no event

	stop := make(chan struct{})
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range agents {
		wg.Go(func() { floodAgent(url, token, batch, inFlight, stop, &rep, &mu) })
	}
	floodDone := make(chan struct{})
	go func() { wg.Wait(); close(floodDone) }()
	time.AfterFunc(dur, func() { close(stop) })

	var trace []heapSample
	worst := 0
	var lastCycle, lastBound, prevBound uint64
	start := time.Now()
	for sampling := true; sampling; {
		select {
		case <-floodDone:
			sampling = false
		case <-time.After(2 * time.Millisecond):
		}
		s := readHeap(samples)
		s.at = time.Since(start)
		// The heap counts what a collection found dead until it is
		// swept: that was allocated under the bound before the
		// collection, so until the next one the bound is the higher.
		s.bound = gcpace.Bound(100, s.live, s.roots, rep.Headroom)
		if s.cycle != lastCycle {
			lastCycle, prevBound = s.cycle, lastBound
		}
		lastBound = s.bound
		s.bound = max(s.bound, prevBound)
		trace = append(trace, s)
		mu.Lock()
		rep.Samples++
		rep.Peak = max(rep.Peak, s.objects)
		rep.PeakTotal = max(rep.PeakTotal, s.total)
		rep.MaxLive = max(rep.MaxLive, s.live)
		rep.MaxGoal = max(rep.MaxGoal, s.goal)
		rep.MaxG = max(rep.MaxG, runtime.NumGoroutine())
		if r := float64(s.objects) / float64(s.bound); r > rep.WorstRatio {
			rep.WorstRatio, worst = r, len(trace)-1
		}
		if s.objects > s.bound {
			rep.Over++
		}
		if s.goal > s.bound {
			rep.GoalOver++
		}
		if s.total > uint64(rep.MemoryLimit) {
			rep.OverLimit++
		}
		mu.Unlock()
	}
	for _, s := range trace[max(0, worst-30):min(len(trace), worst+10)] {
		rep.Trace = append(rep.Trace, s.String())
	}
	// After the flood the pacer collects the quiet server (at 3 s) and
	// gives the memory back, unless it did so less than a minute before
	// (before the flood, on a slow machine): then Go's own pacing keeps
	// the garbage until its next collection.
	deadline := time.Now().Add(20 * time.Second)
	for {
		rep.After = readHeap(samples).objects
		if rep.After < rep.Baseline+32<<20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
	// What the flood left live: on a loaded machine the server may still
	// be working through what the clients sent, and their sessions close
	// once it has, so collect until it is back near the start (or 30 s).
	for deadline := time.Now().Add(30 * time.Second); ; {
		runtime.GC()
		rep.AfterGC = readHeap(samples).objects
		if rep.AfterGC < rep.Baseline+32<<20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond) // poll interval between forced collections
	}
	if f := os.Getenv("RAXOL_TEST_FLOOD_HEAPPROFILE"); f != "" {
		w, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		_ = pprof.WriteHeapProfile(w)
		w.Close()
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runFloodChild runs TestHeapFloodChild in a process of its own with
// environ added, and returns its report.
func runFloodChild(t *testing.T, environ ...string) floodReport {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHeapFloodChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), floodChildEnv+"="+report, "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, environ...)
	var out testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("flood child: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("flood child wrote no report: %v\n%s", err, out.String())
	}
	var rep floodReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	trace := rep.Trace
	rep.Trace = nil
	t.Logf("%s: peak heap %d MiB, Go memory %d MiB, most live %d MiB, highest goal %d MiB, worst heap/bound %.3f over %d samples; %d batches, %d answers; after: %d MiB, collected %d MiB (before: %d MiB)\n%+v",
		strings.Join(environ, " "), rep.Peak>>20, rep.PeakTotal>>20, rep.MaxLive>>20, rep.MaxGoal>>20, rep.WorstRatio, rep.Samples, rep.Batches, rep.Answers,
		rep.After>>20, rep.AfterGC>>20, rep.Baseline>>20, rep)
	if t.Failed() || rep.Over > 0 || rep.GoalOver > 0 || rep.OverLimit > 0 {
		t.Logf("samples around the worst:\n%s", strings.Join(trace, "\n"))
	}
	return rep
}

// TestHeapBoundUnderPingFlood: four agents, two batches in flight each,
// flood one session with batches of 20,000 pings (each body just under
// the 1 MiB cap, the batch cap raised to let them in) for 3 s. With the
// default pacer the heap stays under gcpace.Bound (Go's own goal for what
// the last collection found live, plus the headroom) at every sample
// while the flood raises what is live, and comes back near where it was
// once the flood is over and collected; the runtime's heap goal stays
// under the bound too (so a faster flood would). With GOMEMLIMIT set, a flood of
// the batches the server takes by default (16 pings, 32 in flight per
// agent) keeps the Go memory under the limit at every sample.
// gDescriptor is what the runtime keeps of a goroutine once it exited: its
// g (a 512-byte size class; checked with a heap profile of a flooded
// server, all of the heap left was runtime.malg's).
const gDescriptor = 512

func TestHeapBoundUnderPingFlood(t *testing.T) {
	check := func(t *testing.T, rep floodReport, jump bool) {
		t.Helper()
		if rep.Failed > 0 || rep.Batches == 0 || rep.Answers != rep.Batches*int64(rep.BatchSize) {
			t.Fatalf("the flood was not served: %d batches, %d answers, %d failed (%s)", rep.Batches, rep.Answers, rep.Failed, rep.LastFailure)
		}
		// The case in question: what is live jumps during the flood.
		if jump && rep.MaxLive < rep.Baseline+32<<20 {
			t.Fatalf("the flood raised the live heap only to %d MiB (from %d MiB)", rep.MaxLive>>20, rep.Baseline>>20)
		}
		if rep.Over > 0 {
			t.Errorf("the heap went past the bound at %d of %d samples (worst %.2f times it; peak %d MiB)", rep.Over, rep.Samples, rep.WorstRatio, rep.Peak>>20)
		}
		// Where the runtime would let the heap grow before it collects:
		// under the bound too, so that a flood faster than this machine
		// can send (here, under -race, a few batches a second) stays
		// under it as well. Without the pacer's memory limit a live
		// heap that jumps takes the goal with it (2 GiB against a bound
		// of 0.8 here) while the heap sampled is still far below.
		if rep.GoalOver > 0 {
			t.Errorf("the runtime's heap goal went past the bound at %d of %d samples (highest goal %d MiB)", rep.GoalOver, rep.Samples, rep.MaxGoal>>20)
		}
		// The server keeps nothing of the flood: once collected, the heap
		// is back near where it was, but for the goroutine descriptors Go
		// itself keeps for reuse (runtime.malg: a dead goroutine's g is
		// never freed), one per goroutine the flood had at once (a batch's
		// requests are handled concurrently; a slow machine has more in
		// flight; 45 MiB of them stayed once on CI under -race).
		if kept := uint64(rep.MaxG) * gDescriptor; rep.AfterGC > rep.Baseline+32<<20+kept {
			t.Errorf("after the flood, collected, the heap is %d MiB, from %d MiB before (allowing %d MiB for the %d goroutines' descriptors)",
				rep.AfterGC>>20, rep.Baseline>>20, kept>>20, rep.MaxG)
		}
	}
	t.Run("default pacer", func(t *testing.T) {
		check(t, runFloodChild(t), true)
	})
	t.Run("GOMEMLIMIT", func(t *testing.T) {
		const limit = 768 << 20
		// As the server is served by default (batches of at most 16,
		// --mcp-max-batch), with many in flight: 20,000-ping batches keep
		// hundreds of MiB outside the heap (their handlers' stacks and
		// buffers), which no GC setting bounds and the batch cap refuses.
		rep := runFloodChild(t, fmt.Sprintf("GOMEMLIMIT=%dMiB", limit>>20), "RAXOL_TEST_FLOOD_BATCH=16", "RAXOL_TEST_FLOOD_IN_FLIGHT=32")
		check(t, rep, false)
		if rep.MemoryLimit != limit {
			t.Fatalf("the child ran with a memory limit of %d, want GOMEMLIMIT's %d", rep.MemoryLimit, limit)
		}
		if rep.OverLimit > 0 {
			t.Errorf("the Go memory went past GOMEMLIMIT at %d of %d samples (peak %d MiB)", rep.OverLimit, rep.Samples, rep.PeakTotal>>20)
		}
	})
	if os.Getenv("RAXOL_TEST_FLOOD_COMPARE") != "" {
		// For docs/BENCHMARKS.md: Go's own pacing under the same flood.
		t.Run("Go's own pacing", func(t *testing.T) { runFloodChild(t, "RAXOL_TEST_FLOOD_HEADROOM=0") })
	}
}
