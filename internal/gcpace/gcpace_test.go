package gcpace

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name     string
		base     int
		rate     float64
		roots    uint64
		headroom uint64
		want     int
	}{
		{"idle", 100, 0, 200 * mib, 512 * mib, 100},
		{"slow enough for Go's own pacing", 100, 90 * mib, 200 * mib, 512 * mib, 100},   // 180 MiB in 2 s < 200
		{"fast: collections 2 s apart", 100, 300 * mib, 200 * mib, 512 * mib, 300},      // 600 MiB in 2 s
		{"faster than the headroom allows", 100, 2000 * mib, 200 * mib, 512 * mib, 356}, // 200 + 512 = 712 MiB
		{"a larger GOGC stands", 400, 300 * mib, 200 * mib, 512 * mib, 400},
		{"GOGC=off stands", -1, 300 * mib, 200 * mib, 512 * mib, -1},
		{"nothing live yet", 100, 300 * mib, 0, 512 * mib, 100},
		{"no headroom", 100, 300 * mib, 200 * mib, 0, 100},
	} {
		if got := Percent(c.base, c.rate, 2*time.Second, c.roots, c.headroom); got != c.want {
			t.Errorf("%s: Percent = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestPercentNeverExceedsHeadroom: whatever the rate, the goal the percent
// gives is at most headroom beyond Go's own.
func TestPercentNeverExceedsHeadroom(t *testing.T) {
	for _, roots := range []uint64{1 << 10, 1 << 20, 37 << 20, 1 << 30} {
		for _, rate := range []float64{0, 1 << 10, 1 << 25, 1 << 35} {
			for _, head := range []uint64{0, 1 << 20, 512 << 20} {
				p := Percent(100, rate, time.Second, roots, head)
				extra := float64(roots) * float64(p) / 100
				// One percent of rounding up.
				if p < 100 || extra > float64(roots)+float64(head)+float64(roots)/100 {
					t.Errorf("roots %d rate %g headroom %d: percent %d (goal +%.0f bytes)", roots, rate, roots, p, extra)
				}
			}
		}
	}
}

func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func forcedGCs() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var sink [][]byte

// TestRunRaisesUnderAllocationAndComesBack: while the process allocates
// fast, Run raises the GC percent; when it stops, the percent comes back to
// GOGC; when the context ends, Run returns with GOGC restored.
func TestRunRaisesUnderAllocationAndComesBack(t *testing.T) {
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []int
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Interval: time.Second, Tick: 20 * time.Millisecond, Headroom: 256 << 20, SettleAfter: 200 * time.Millisecond, MinSettleGap: 5 * time.Second,
			OnChange: func(p int) { mu.Lock(); seen = append(seen, p); mu.Unlock() }})
	}()
	raised := func() bool { return gogc() > 100 }
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: GC percent %d", what, gogc())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// allocate allocates about 200 MiB/s until the returned function is
	// called.
	allocate := func() (stop func()) {
		quit, finished := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(finished)
			for {
				select {
				case <-quit:
					return
				default:
				}
				for range 64 {
					sink = append(sink[:0], make([]byte, 32<<10))
				}
				time.Sleep(10 * time.Millisecond) // paces the allocation: 2 MiB per 10 ms
			}
		}()
		return func() { close(quit); <-finished }
	}

	stop := allocate()
	waitFor("allocating ~200 MiB/s", raised)
	forced := forcedGCs()
	stop()
	waitFor("after the allocation stopped", func() bool { return gogc() == 100 })

	// Quiet, and no collection comes: the pacer's do, at 200 ms and at
	// 800 ms, and no more.
	waitFor("two collections once quiet", func() bool { return forcedGCs() >= forced+2 })
	time.Sleep(time.Second) // negative check: a third collection would come within it; the real GC runs on no fake clock
	if n := forcedGCs() - forced; n != 2 {
		t.Fatalf("%d collections forced in one quiet spell, want 2", n)
	}

	// A second burst that raised the percent, and quiet again soon after:
	// the heap may have grown by the headroom, and the spell gives it back
	// at once (200 ms), well within the 5 s gap since the last spell's.
	stop = allocate()
	waitFor("allocating again", raised)
	forced = forcedGCs()
	stop()
	waitFor("after the second burst", func() bool { return gogc() == 100 })
	at := time.Now()
	waitFor("a collection soon after a raised burst", func() bool { return forcedGCs() > forced })
	if d := time.Since(at); d > 3*time.Second {
		t.Fatalf("the spell after a raised burst settled after %s, want it at about 200 ms, not after the 5 s gap", d)
	}

	stop = allocate()
	waitFor("allocating again", raised)
	cancel()
	<-done
	stop()
	if p := gogc(); p != 100 {
		t.Fatalf("GC percent %d after Run returned, want GOGC (100) back", p)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 6 || seen[len(seen)-1] != 100 {
		t.Fatalf("percents set %v: want raised, 100, three times", seen)
	}
}

// TestQuietSpellsAtGOGCPaceKeepTheGap: bursts the pacer does not raise
// the percent for (GOGC's own pacing spaces their collections enough)
// leave no headroom to give back: a quiet spell after one waits
// MinSettleGap since the last spell's collections, so a server busy in
// such bursts a few seconds apart pays no full collection for each gap.
func TestQuietSpellsAtGOGCPaceKeepTheGap(t *testing.T) {
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)
	ctx, cancel := context.WithCancel(context.Background())
	var changes atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Collections 50 ms apart are fine: a burst of ~20 MiB/s on a
		// heap of a few MiB is never paced.
		Run(ctx, Options{Interval: 50 * time.Millisecond, Tick: 20 * time.Millisecond, Headroom: 256 << 20,
			SettleAfter: 200 * time.Millisecond, MinSettleGap: 4 * time.Second,
			OnChange: func(int) { changes.Add(1) }})
	}()
	defer func() { cancel(); <-done }()
	burst := func() {
		for range 50 { // ~20 MiB/s for half a second: over quietRate
			for range 6 {
				sink = append(sink[:0], make([]byte, 32<<10))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitForced := func(what string, than uint64, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for forcedGCs() <= than {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no collection within %s", what, within)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	forced := forcedGCs()
	burst()
	waitForced("the first quiet spell", forced, 3*time.Second)
	time.Sleep(time.Second) // the spell's second settle (at 800 ms)
	forced = forcedGCs()
	burst()
	time.Sleep(time.Second) // negative check: past the settle (200 ms), within the 4 s gap
	if n := forcedGCs() - forced; n != 0 {
		t.Fatalf("%d collections forced within the gap after a burst at GOGC's pace", n)
	}
	if n := changes.Load(); n != 0 {
		t.Fatalf("the pacer changed the percent %d times: the bursts were meant to stay at GOGC's pace", n)
	}
}

func TestRunLeavesGCOffAlone(t *testing.T) {
	base := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(base)
	done := make(chan struct{})
	go func() { defer close(done); Run(context.Background(), Options{}) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run with GOGC=off did not return")
	}
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GC percent %d after Run with GOGC=off", p)
	}
}

// TestDefaultHeadroom: the default headroom is LiveFactor times what is
// live, from MinDefaultHeadroom up to the memory's bound, so that a
// collection's marking per byte allocated does not grow with the live
// heap (the sessions a server holds) until the memory bounds it.
func TestDefaultHeadroom(t *testing.T) {
	old := debug.SetMemoryLimit(64 << 30)
	defer debug.SetMemoryLimit(old)
	bound := MemoryBound()
	if bound < MinDefaultHeadroom {
		t.Fatalf("MemoryBound = %d MiB on a machine with a 64 GiB GOMEMLIMIT", bound>>20)
	}
	for _, live := range []uint64{0, 16 << 20, 64 << 20, 100 << 20, 190 << 20, 1 << 30, 8 << 30} {
		want := min(max(MinDefaultHeadroom, LiveFactor*live), bound)
		if got := DefaultHeadroom(live); got != want {
			t.Errorf("DefaultHeadroom(%d MiB) = %d MiB, want %d", live>>20, got>>20, want>>20)
		}
	}
	// Where the memory allows it, two servers, one with three times what
	// the other holds live, get goals as many times their live heaps
	// apart when allocating fast: the same marking per byte allocated.
	const rate = 4 << 30 // bytes a second: far beyond any headroom in 2 s
	small, big := uint64(64<<20), uint64(192<<20)
	if LiveFactor*big <= bound {
		ps := Percent(100, rate, 2*time.Second, small, DefaultHeadroom(small))
		pb := Percent(100, rate, 2*time.Second, big, DefaultHeadroom(big))
		if ps != pb {
			t.Errorf("GC percent %d at %d MiB live, %d at %d MiB: want the same", ps, small>>20, pb, big>>20)
		}
	}
	debug.SetMemoryLimit(400 << 20)
	if h := DefaultHeadroom(1 << 30); h > 100<<20 {
		t.Fatalf("with GOMEMLIMIT 400 MiB, DefaultHeadroom = %d, want at most a quarter", h)
	}
}

func TestCgroupLimit(t *testing.T) {
	const total = 24 << 30
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"536870912\n", 512 << 20, true},
		{"max\n", 0, false},
		{"9223372036854771712\n", 0, false}, // v1, no limit
		{"", 0, false},
		{"0", 0, false},
	} {
		if got, ok := cgroupLimit(c.in, total); got != c.want || ok != c.ok {
			t.Errorf("cgroupLimit(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
