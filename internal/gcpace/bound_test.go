package gcpace

import (
	"context"
	"math"
	"math/big"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

const mib = 1 << 20

// runtimeGoal is the heap goal the runtime gives a collection that found
// live bytes live (roots with stacks and globals) under GC percent p and
// memory limit limit, overhead being the runtime's memory besides heap
// objects and free heap (mgcpacer.go: the smaller of the GOGC goal and
// the limit's, which is never below what is live; the runtime also keeps
// 3% of the limit's goal back, left out here: it only lowers the goal).
func runtimeGoal(p int, limit int64, live, roots, overhead uint64) uint64 {
	goal := live + roots*uint64(p)/100
	if limit < math.MaxInt64 {
		lg := live
		if uint64(limit) > overhead {
			lg = max(live, uint64(limit)-overhead)
		}
		goal = min(goal, lg)
	}
	return goal
}

// TestSettingsHoldTheBoundThroughALiveJump: whatever the rate, the
// headroom and the limit a user set, what the pacer sets from one
// collection's live heap keeps the runtime's goal for the next
// collection's, higher or lower, within Go's own goal for it plus half
// the headroom (the pacer's aim, within Bound); the limit is never above
// the user's, and never below Go's own goal for what it was set from.
func TestSettingsHoldTheBoundThroughALiveJump(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Sizes in MiB and bytes, so that draws are not all tiny.
		size := func(maxMiB uint64, label string) uint64 {
			return rapid.Uint64Range(0, maxMiB).Draw(t, label+" MiB")*mib + rapid.Uint64Range(0, mib-1).Draw(t, label+" bytes")
		}
		base := rapid.IntRange(25, 400).Draw(t, "base")
		rate := float64(size(64<<10, "rate a second"))
		interval := time.Duration(rapid.Int64Range(int64(100*time.Millisecond), int64(10*time.Second)).Draw(t, "interval"))
		// Stacks and globals stay; the heap found live jumps, up or down
		// (by a factor, so that near misses are drawn too).
		other := size(64, "stacks+globals")
		live := size(8<<10, "live")
		next := uint64(float64(live) * rapid.Float64Range(0, 10).Draw(t, "jump"))
		if rapid.Bool().Draw(t, "any next live") {
			next = size(8<<10, "next live")
		}
		roots, nextRoots := live+other, next+other
		if roots == 0 {
			roots, nextRoots = 1, nextRoots+1
		}
		overhead := size(512, "overhead")
		user := int64(math.MaxInt64)
		if rapid.Bool().Draw(t, "GOMEMLIMIT") {
			user = int64(mib + size(64<<10, "user limit"))
		}
		// The headroom: a fixed one, or the default, which follows the
		// least live heap over the window (steady) up to the memory's bound.
		var headroom func(roots uint64) uint64
		if rapid.Bool().Draw(t, "fixed headroom") {
			h := mib + size(8<<10, "headroom")
			headroom = func(uint64) uint64 { return h }
		} else {
			steady := size(8<<10, "steady roots")
			memBound := MinDefaultHeadroom + size(16<<10, "memory bound")
			headroom = func(r uint64) uint64 { return headroomWithin(min(r, steady), memBound) }
		}

		p, limit := Settings(base, user, rate, interval, live, roots, headroom(roots), overhead)
		if p < base {
			t.Fatalf("percent %d below GOGC %d", p, base)
		}
		if limit > user {
			t.Fatalf("limit %d above the user's %d", limit, user)
		}
		if p == base {
			if limit != user {
				t.Fatalf("not pacing, yet the limit is %d, not the user's %d", limit, user)
			}
			return
		}
		if own := Goal(base, live, roots) + overhead; own <= uint64(user) && uint64(limit) < own {
			t.Fatalf("limit %d below Go's own goal %d (+ overhead) for what is live", limit, own)
		}
		aim := Goal(base, next, nextRoots) + headroom(nextRoots)/2
		// One byte for the runtime's integer rounding of two products.
		if got := runtimeGoal(p, limit, next, nextRoots, overhead); got > aim+1 {
			t.Fatalf("percent %d, limit %d MiB: live %d -> %d MiB gives a goal of %d MiB, past Go's goal + half the headroom, %d MiB",
				p, limit/mib, live/mib, next/mib, got/mib, aim/mib)
		}
	})
}

// TestPercentAloneDoesNotHoldAJump is the reason for the limit: the
// percent set for a small live heap, applied to a live heap ten times as
// large, gives a goal far past the bound.
func TestPercentAloneDoesNotHoldAJump(t *testing.T) {
	const live, next, h = 32 * mib, 320 * mib, 512 * mib
	p := Percent(100, 4<<30, 2*time.Second, live, h/2)
	if got, bound := runtimeGoal(p, math.MaxInt64, next, next, 0), Bound(100, next, next, h); got <= bound {
		t.Fatalf("percent %d: goal %d MiB within the bound %d MiB with no limit", p, got/mib, bound/mib)
	}
	_, limit := Settings(100, math.MaxInt64, 4<<30, 2*time.Second, live, live, h, 0)
	if got, bound := runtimeGoal(p, limit, next, next, 0), Bound(100, next, next, h); got > bound {
		t.Fatalf("with the limit %d MiB: goal %d MiB past the bound %d MiB", limit/mib, got/mib, bound/mib)
	}
}

func TestMulDiv(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := rapid.Uint64().Draw(t, "a"), rapid.Uint64().Draw(t, "b")
		c := rapid.Uint64Range(1, math.MaxUint64).Draw(t, "c")
		want := new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
		want.Div(want, new(big.Int).SetUint64(c))
		if !want.IsUint64() {
			if got := mulDiv(a, b, c); got != math.MaxUint64 {
				t.Fatalf("mulDiv(%d, %d, %d) = %d, want saturation", a, b, c, got)
			}
			return
		}
		if got := mulDiv(a, b, c); got != want.Uint64() {
			t.Fatalf("mulDiv(%d, %d, %d) = %d, want %d", a, b, c, got, want.Uint64())
		}
	})
}

// TestMinWindow: the window's least value is the least of those added
// within the window, by brute force.
func TestMinWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		window := time.Duration(rapid.IntRange(1, 100).Draw(t, "window"))
		var w minWindow
		type entry struct {
			at time.Time
			v  uint64
		}
		var all []entry
		now := time.Unix(0, 0)
		for i := range rapid.IntRange(1, 200).Draw(t, "adds") {
			now = now.Add(time.Duration(rapid.IntRange(0, 30).Draw(t, "dt")))
			v := rapid.Uint64Range(0, 50).Draw(t, "v")
			w.add(now, v, window)
			all = append(all, entry{now, v})
			want := uint64(math.MaxUint64)
			for _, e := range all {
				if now.Sub(e.at) <= window {
					want = min(want, e.v)
				}
			}
			if got := w.min(); got != want {
				t.Fatalf("add %d: min %d, want %d", i, got, want)
			}
		}
	})
}

// TestNotifyCollections: a notice after each collection, and none once
// stopped (the one cleanup still armed ends the chain).
func TestNotifyCollections(t *testing.T) {
	ch, stop := notifyCollections()
	for i := range 3 {
		runtime.GC()
		// The cleanup that sends a notice arms the next one: when it runs
		// (on its own goroutine) after the next collection has begun, the
		// new sentinel outlives that collection and the notice waits for
		// the one after, as in a running process. So collections go on
		// while the test waits (failed once in CI under load: no notice in
		// 10 s after a single collection).
		tick := time.NewTicker(50 * time.Millisecond)
		deadline := time.After(10 * time.Second)
	wait:
		for {
			select {
			case <-ch:
				break wait
			case <-tick.C:
				runtime.GC()
			case <-deadline:
				t.Fatalf("no notice after collection %d", i)
			}
		}
		tick.Stop()
	}
	stop()
	// Notices from cleanups that began before stop was seen (one per
	// collection, the test's or the runtime's own, queued on a loaded
	// machine) may still come: drain until none has for 200 ms.
	for quiet := false; !quiet; {
		select {
		case <-ch:
		case <-time.After(200 * time.Millisecond):
			quiet = true
		}
	}
	runtime.GC()
	runtime.GC()
	select {
	case <-ch:
		t.Fatal("notices go on after stop")
	case <-time.After(200 * time.Millisecond):
	}
}

// TestRunSetsTheLimitAndPutsItBack: while the pacer raises the percent it
// sets a memory limit below the user's GOMEMLIMIT (at Limit for what is
// live), MemoryBound still reads the user's; when the pacer stops, the
// user's limit and GOGC are back.
func TestRunSetsTheLimitAndPutsItBack(t *testing.T) {
	for _, user := range []int64{math.MaxInt64, 16 << 30} {
		base := debug.SetGCPercent(100)
		old := debug.SetMemoryLimit(user)
		bound := MemoryBound()
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		var limits []int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(ctx, Options{Interval: time.Second, Tick: 20 * time.Millisecond, Headroom: 256 << 20, SettleAfter: time.Hour,
				OnLimit: func(l int64) { mu.Lock(); limits = append(limits, l); mu.Unlock() }})
		}()
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
		stop := func() {
			cancel()
			<-done
			select {
			case <-quit:
			default:
				close(quit)
			}
			<-finished
		}
		deadline := time.Now().Add(10 * time.Second)
		for gogc() == 100 || debug.SetMemoryLimit(-1) == user {
			if time.Now().After(deadline) {
				stop()
				debug.SetMemoryLimit(old)
				debug.SetGCPercent(base)
				t.Fatalf("GOMEMLIMIT %d: no pacing while allocating (GC percent %d, limit %d)", user, gogc(), debug.SetMemoryLimit(-1))
			}
			time.Sleep(5 * time.Millisecond) // poll interval
		}
		if l := debug.SetMemoryLimit(-1); l >= user || l <= 0 {
			t.Errorf("GOMEMLIMIT %d: the pacer's limit is %d", user, l)
		}
		if b := MemoryBound(); b != bound {
			t.Errorf("GOMEMLIMIT %d: MemoryBound %d while pacing, %d before", user, b, bound)
		}
		stop()
		if l, p := debug.SetMemoryLimit(-1), gogc(); l != user || p != 100 {
			t.Errorf("GOMEMLIMIT %d: after Run, limit %d and GC percent %d", user, l, p)
		}
		mu.Lock()
		if len(limits) < 2 || limits[len(limits)-1] != user {
			t.Errorf("GOMEMLIMIT %d: limits set %v, want the pacer's then the user's", user, limits)
		}
		for _, l := range limits {
			if l > user {
				t.Errorf("GOMEMLIMIT %d: the pacer set %d", user, l)
			}
		}
		mu.Unlock()
		debug.SetMemoryLimit(old)
		debug.SetGCPercent(base)
	}
}
