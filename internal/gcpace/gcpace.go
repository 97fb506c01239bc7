package gcpace

import (
	"bufio"
	"context"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Defaults for Options.
const (
	DefaultInterval = 2 * time.Second
	DefaultTick     = 250 * time.Millisecond
	// MinDefaultHeadroom is the default headroom of a server whose live
	// heap is small (under MinDefaultHeadroom / LiveFactor).
	MinDefaultHeadroom = 512 << 20
	// LiveFactor is how many times what the last collection found live
	// the default headroom grows to, above MinDefaultHeadroom: a
	// collection marks everything live, so a fixed headroom would make
	// each allocated byte's share of the marking grow with the live heap
	// (with the sessions a server holds). With the headroom a multiple
	// of it, as GOGC's own goal is, that share stays what a 64 MiB live
	// heap gets from the 512 MiB floor.
	LiveFactor = 8
)

const (
	// quietRate is the allocation rate, in bytes per second on average
	// since the quiet began, under which the pacer counts the server quiet.
	quietRate = 8 << 20
	// DefaultSettleAfter is Options.SettleAfter's default.
	DefaultSettleAfter = 3 * time.Second
	// DefaultMinSettleGap is Options.MinSettleGap's default.
	DefaultMinSettleGap = time.Minute
	// settles is how many collections one quiet spell gets at most: at
	// SettleAfter and at four times it (what sessions free once idle for
	// a few seconds, after the first).
	settles = 2
)

// Options configures Run.
type Options struct {
	// Interval is the shortest time between collections the pacer aims
	// for (DefaultInterval if zero).
	Interval time.Duration
	// Headroom is the most heap the pacer lets grow beyond the goal Go's
	// own pacing sets; 0 is DefaultHeadroom(roots) at each look, roots
	// being what the last collection found live.
	Headroom uint64
	// Tick is how often the pacer reads the allocation rate (DefaultTick
	// if zero).
	Tick time.Duration
	// SettleAfter is how long the server must be quiet (GOGC's pace,
	// under 8 MiB allocated a second on average) with no collection
	// before the pacer collects and gives the memory back
	// (DefaultSettleAfter if zero); it does again at four times
	// SettleAfter, and no more that spell.
	SettleAfter time.Duration
	// MinSettleGap is the least time from one quiet spell's collections
	// to the next spell's (DefaultMinSettleGap if zero).
	MinSettleGap time.Duration
	// OnChange, if set, is called with each GC percent the pacer sets.
	OnChange func(percent int)
}

// DefaultHeadroom is LiveFactor times roots (what the last collection
// found live: heap, stacks and globals), at least MinDefaultHeadroom, and
// at most an eighth of the memory the process may use (its cgroup's limit,
// else the machine's memory, and at most a quarter of a GOMEMLIMIT).
func DefaultHeadroom(roots uint64) uint64 { return headroomWithin(roots, MemoryBound()) }

func headroomWithin(roots, bound uint64) uint64 {
	return min(max(MinDefaultHeadroom, LiveFactor*roots), bound)
}

// MemoryBound is the most headroom the default allows whatever is live:
// an eighth of the memory the process may use (MinDefaultHeadroom if that
// cannot be read), at most a quarter of a GOMEMLIMIT.
func MemoryBound() uint64 {
	h := uint64(MinDefaultHeadroom)
	if m := memoryAvailable(); m > 0 {
		h = m / 8
	}
	if lim := debug.SetMemoryLimit(-1); lim > 0 && lim < math.MaxInt64 {
		h = min(h, uint64(lim)/4)
	}
	return h
}

// memoryAvailable is the cgroup's memory limit (v2, else v1), else
// MemTotal from /proc/meminfo, else 0.
func memoryAvailable() uint64 {
	total := memTotal()
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if v, ok := cgroupLimit(string(b), total); ok {
			return v
		}
	}
	return total
}

// cgroupLimit reads a cgroup memory limit file's contents: "max" (v2) or
// a number at least the machine's memory (v1's "unlimited") is no limit.
func cgroupLimit(contents string, total uint64) (uint64, bool) {
	v, err := strconv.ParseUint(strings.TrimSpace(contents), 10, 64)
	if err != nil || v == 0 || (total > 0 && v >= total) {
		return 0, false
	}
	return v, true
}

// memTotal is MemTotal from /proc/meminfo, or 0.
func memTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			fields := strings.Fields(rest)
			if len(fields) >= 1 {
				if kb, err := strconv.ParseUint(fields[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// Run paces collections until ctx is done, then puts the GC percent back
// to what it was. It returns at once if collection is off (GOGC=off).
func Run(ctx context.Context, o Options) {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Tick <= 0 {
		o.Tick = DefaultTick
	}
	headroom := func(uint64) uint64 { return o.Headroom }
	if o.Headroom == 0 {
		bound := MemoryBound() // once: it reads files
		headroom = func(roots uint64) uint64 { return headroomWithin(roots, bound) }
	}
	if o.SettleAfter <= 0 {
		o.SettleAfter = DefaultSettleAfter
	}
	if o.MinSettleGap <= 0 {
		o.MinSettleGap = DefaultMinSettleGap
	}
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 {
		return
	}
	cur := base
	set := func(p int) {
		if p == cur {
			return
		}
		debug.SetGCPercent(p)
		cur = p
		if o.OnChange != nil {
			o.OnChange(p)
		}
	}
	defer func() {
		if cur != base {
			set(base)
		}
	}()

	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	read := func() (allocs, roots, cycles uint64) {
		metrics.Read(samples)
		v := func(i int) uint64 {
			if samples[i].Value.Kind() != metrics.KindUint64 {
				return 0
			}
			return samples[i].Value.Uint64()
		}
		return v(0), v(1) + v(2) + v(3), v(4)
	}
	t := time.NewTicker(o.Tick)
	defer t.Stop()
	lastAllocs, _, _ := read()
	last := time.Now()
	var rate float64 // bytes per second: rises at once, falls by a fifth a tick
	var quietSince time.Time
	var quietCycles uint64 // collections counted when the quiet (re)started, or at its last settle
	var quietAllocs uint64 // bytes allocated in all when the quiet (re)started
	settled := 0           // collections of this quiet spell so far
	var lastSettle time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			allocs, roots, cycles := read()
			if dt := now.Sub(last).Seconds(); dt > 0 {
				rate = max(float64(allocs-lastAllocs)/dt, 0.8*rate)
			}
			lastAllocs, last = allocs, now
			p := Percent(base, rate, o.Interval, roots, headroom(roots))
			// Small moves are not worth a change (each moves the heap goal).
			if p == base || p > cur+cur/10 || p < cur-cur/10 {
				set(p)
			}
			// A quiet server may hold the garbage of its last burst, and
			// what its sessions freed as they went idle, until Go's
			// periodic collection two minutes on: once the quiet has lasted
			// SettleAfter since it began or since the last collection,
			// collect and give the memory back; again at four times that.
			switch {
			case cur != base: // pacing: not quiet
				quietSince = time.Time{}
				continue
			case quietSince.IsZero(),
				now.Sub(quietSince) >= time.Second && float64(allocs-quietAllocs)/now.Sub(quietSince).Seconds() > quietRate:
				// A quiet spell begins (again, if it was busier than quiet).
				quietSince, quietCycles, quietAllocs, settled = now, cycles, allocs, 0
			case cycles != quietCycles:
				// A collection came: count from it (the spell keeps the
				// settles it has left).
				quietSince, quietCycles, quietAllocs = now, cycles, allocs
			}
			// A spell's first settle waits MinSettleGap after the last
			// spell's: a server busy in bursts a few seconds apart must not
			// pay a full collection for each quiet gap.
			if wait := o.SettleAfter << (2 * settled); settled < settles && now.Sub(quietSince) >= wait &&
				(settled > 0 || lastSettle.IsZero() || now.Sub(lastSettle) >= o.MinSettleGap) {
				settled++
				debug.FreeOSMemory()
				_, _, quietCycles = read()
				lastSettle = now
			}
		}
	}
}

// Percent is the GC percent that puts interval between collections at
// rate bytes allocated per second, given the bytes a collection's goal is
// figured on (roots: the heap the last collection found live, stacks and
// globals; Go's goal is live + roots × percent / 100). It is never below
// base (Go's own pacing) and never lets the heap goal grow more than
// headroom beyond base's.
func Percent(base int, rate float64, interval time.Duration, roots, headroom uint64) int {
	if base < 0 || roots == 0 {
		return base
	}
	baseExtra := float64(roots) * float64(base) / 100
	want := rate * interval.Seconds()
	if want <= baseExtra {
		return base
	}
	want = min(want, baseExtra+float64(headroom))
	return max(base, int(math.Ceil(want*100/float64(roots))))
}
