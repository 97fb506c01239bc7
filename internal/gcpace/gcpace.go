package gcpace

import (
	"bufio"
	"context"
	"math"
	"math/bits"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for Options.
const (
	DefaultInterval = 2 * time.Second
	DefaultTick     = 250 * time.Millisecond
	// MinDefaultHeadroom is the default headroom of a server whose live
	// heap is small (under MinDefaultHeadroom / LiveFactor).
	MinDefaultHeadroom = 512 << 20
	// HeadroomWindow is how far back the default headroom looks for the
	// least the live heap has been: the headroom follows a live heap that
	// stays (sessions held), not one a burst of requests raises.
	HeadroomWindow = time.Minute
	// LiveFactor is how many times the live heap (the least over
	// HeadroomWindow) the default headroom grows to, above
	// MinDefaultHeadroom: a
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
	// own pacing sets (see Bound); 0 is DefaultHeadroom(roots) at each
	// look, roots being the least the last collections found live over
	// HeadroomWindow.
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
	// to the next spell's (DefaultMinSettleGap if zero), unless the
	// percent was raised in between: a spell after pacing settles at
	// SettleAfter.
	MinSettleGap time.Duration
	// OnChange, if set, is called with each GC percent the pacer sets.
	OnChange func(percent int)
	// OnLimit, if set, is called with each memory limit the pacer sets
	// (the limit the process had when it stops pacing).
	OnLimit func(limit int64)
}

// DefaultHeadroom is LiveFactor times roots (what is live: heap, stacks
// and globals; Run passes the least over HeadroomWindow), at least
// MinDefaultHeadroom, and
// at most an eighth of the memory the process may use (its cgroup's limit,
// else the machine's memory, and at most a quarter of a GOMEMLIMIT).
func DefaultHeadroom(roots uint64) uint64 { return headroomWithin(roots, MemoryBound()) }

func headroomWithin(roots, bound uint64) uint64 {
	return min(max(MinDefaultHeadroom, LiveFactor*roots), bound)
}

// MemoryBound is the most headroom the default allows whatever is live:
// an eighth of the memory the process may use (MinDefaultHeadroom if that
// cannot be read), at most a quarter of a GOMEMLIMIT (the process's
// memory limit: not the one Run sets while it paces).
func MemoryBound() uint64 {
	h := uint64(MinDefaultHeadroom)
	if m := memoryAvailable(); m > 0 {
		h = m / 8
	}
	lim := pacerLimits.Load()
	if lim == 0 {
		lim = debug.SetMemoryLimit(-1)
	}
	if lim > 0 && lim < math.MaxInt64 {
		h = min(h, uint64(lim)/4)
	}
	return h
}

// memoryAvailable is the cgroup's memory limit (v2, else v1), else
// MemTotal from /proc/meminfo, else 0.
func memoryAvailable() uint64 {
	if v, ok := CgroupMemoryLimit(); ok {
		return v
	}
	return memTotal()
}

// CgroupMemoryLimit is the memory limit of the process's cgroup (v2's
// memory.max, else v1's memory.limit_in_bytes), when it has one below the
// machine's memory.
func CgroupMemoryLimit() (uint64, bool) {
	total := memTotal()
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if v, ok := cgroupLimit(string(b), total); ok {
			return v, true
		}
	}
	return 0, false
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

// Run paces collections until ctx is done, then puts the GC percent and
// the memory limit back to what they were. It returns at once if
// collection is off (GOGC=off).
//
// While it raises the GC percent it also sets a memory limit
// (runtime/debug.SetMemoryLimit) at [Limit]: the percent spaces the
// collections out, and the limit holds the heap to [Bound] even when what
// is live jumps before the pacer looks again (the percent alone
// multiplies any live heap, old or new). It looks again every Tick and
// after every collection, so both follow what each collection finds live.
func Run(ctx context.Context, o Options) {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Tick <= 0 {
		o.Tick = DefaultTick
	}
	// The default headroom follows the least the live heap has been over
	// the last HeadroomWindow, not the live heap of the moment: a flood
	// whose requests are live for a while raises what is live, and the
	// headroom must not grow with it (Go's own goal does).
	var steady minWindow
	headroom := func(uint64) uint64 { return o.Headroom }
	if o.Headroom == 0 {
		bound := MemoryBound() // once: it reads files
		headroom = func(roots uint64) uint64 { return headroomWithin(min(roots, steady.min()), bound) }
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
	user := debug.SetMemoryLimit(-1)
	cur, curLimit := base, user
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
	setLimit := func(l int64) {
		if l == curLimit {
			return
		}
		pacerLimits.Store(user) // what MemoryBound reads while this limit is set
		debug.SetMemoryLimit(l)
		curLimit = l
		if o.OnLimit != nil {
			o.OnLimit(l)
		}
	}
	// The percent comes down before the limit goes, and the limit is set
	// before the percent goes up: the goal is never the raised percent's
	// without the limit.
	defer func() {
		set(base)
		setLimit(user)
		pacerLimits.Store(0)
	}()

	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	type reading struct{ allocs, live, roots, cycles, overhead uint64 }
	read := func() reading {
		metrics.Read(samples)
		v := func(i int) uint64 {
			if samples[i].Value.Kind() != metrics.KindUint64 {
				return 0
			}
			return samples[i].Value.Uint64()
		}
		// What the memory limit counts besides heap objects and the free
		// heap it may hold them in (the runtime's own split).
		var overhead uint64
		if total, other := v(5), v(6)+v(7)+v(8); total > other {
			overhead = total - other
		}
		return reading{allocs: v(0), live: v(1), roots: v(1) + v(2) + v(3), cycles: v(4), overhead: overhead}
	}
	var rate float64 // bytes per second: rises at once, falls by a fifth a tick
	// pace sets the percent for rate and, while it is raised, the limit
	// that bounds the heap, from what the last collection found live.
	pace := func(r reading) {
		p, l := Settings(base, user, rate, o.Interval, r.live, r.roots, headroom(r.roots), r.overhead)
		if p == base {
			set(base)
			setLimit(user)
			return
		}
		setLimit(l)
		// Small raises are not worth a change (each moves the heap goal);
		// a lower percent is always taken, so that the goal it gives the
		// next collection's live heap stays within the bound.
		if p < cur || p > cur+cur/10 {
			set(p)
		}
	}
	collected, stopNotify := notifyCollections()
	defer stopNotify()
	t := time.NewTicker(o.Tick)
	defer t.Stop()
	lastAllocs := read().allocs
	last := time.Now()
	var quietSince time.Time
	var quietCycles uint64 // collections counted when the quiet (re)started, or at its last settle
	var quietAllocs uint64 // bytes allocated in all when the quiet (re)started
	settled := 0           // collections of this quiet spell so far
	var lastSettle time.Time
	// paced says the percent was raised since the last settle: the heap
	// may have grown to the headroom, which a quiet spell gives back at
	// once rather than after MinSettleGap.
	paced := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-collected:
			// A collection ended: what is live changed, the rate did not.
			if cur != base {
				pace(read())
			}
		case now := <-t.C:
			r := read()
			allocs, cycles := r.allocs, r.cycles
			if dt := now.Sub(last).Seconds(); dt > 0 {
				rate = max(float64(allocs-lastAllocs)/dt, 0.8*rate)
			}
			lastAllocs, last = allocs, now
			steady.add(now, r.roots, HeadroomWindow)
			pace(r)
			// A quiet server may hold the garbage of its last burst, and
			// what its sessions freed as they went idle, until Go's
			// periodic collection two minutes on: once the quiet has lasted
			// SettleAfter since it began or since the last collection,
			// collect and give the memory back; again at four times that.
			switch {
			case cur != base: // pacing: not quiet
				quietSince, paced = time.Time{}, true
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
			// spell's: a server busy in bursts a few seconds apart at
			// GOGC's pace must not pay a full collection for each quiet
			// gap. A spell after the pacer raised the percent does not
			// wait: the heap may have grown by the headroom (hundreds of
			// MiB), and an operator sees it as RSS until it is given back;
			// one collection per burst is little beside the many the
			// raised percent saved during it.
			if wait := o.SettleAfter << (2 * settled); settled < settles && now.Sub(quietSince) >= wait &&
				(settled > 0 || paced || lastSettle.IsZero() || now.Sub(lastSettle) >= o.MinSettleGap) {
				settled++
				debug.FreeOSMemory()
				quietCycles = read().cycles
				lastSettle, paced = now, false
			}
		}
	}
}

// minWindow is the least of the values added over a sliding window of
// time (a monotonic queue: each value is dropped once a later one is no
// larger, or once it is older than the window).
type minWindow struct {
	at   []time.Time
	vals []uint64
}

func (w *minWindow) add(now time.Time, v uint64, window time.Duration) {
	i := len(w.vals)
	for i > 0 && w.vals[i-1] >= v {
		i--
	}
	w.at, w.vals = append(w.at[:i], now), append(w.vals[:i], v)
	j := 0
	for j < len(w.at)-1 && now.Sub(w.at[j]) > window {
		j++
	}
	if j > 0 {
		w.at, w.vals = append(w.at[:0], w.at[j:]...), append(w.vals[:0], w.vals[j:]...)
	}
}

// min is the least value in the window, or the largest uint64 when empty.
func (w *minWindow) min() uint64 {
	if len(w.vals) == 0 {
		return math.MaxUint64
	}
	return w.vals[0]
}

// pacerLimits is the memory limit a user set (GOMEMLIMIT, or
// debug.SetMemoryLimit before Run) while Run has one of its own in place,
// else 0: what MemoryBound reads instead of the runtime's.
var pacerLimits atomic.Int64

// gcSentinel is an object made to be collected: its cleanup says a
// collection ended. It holds a pointer and is larger than the tiny
// allocator's blocks, so it is an object of its own.
type gcSentinel struct {
	_ *byte
	_ [24]byte
}

// notifyCollections returns a channel that receives (without blocking the
// runtime: one pending value at most) after each garbage collection, and
// a function that stops it. The notice is a cleanup (runtime.AddCleanup)
// of an unreachable object made anew each time, run by the runtime's
// cleanup goroutine once the collection that found it has swept it; after
// stop, the one cleanup still armed ends the chain at the next collection.
func notifyCollections() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	var stopped atomic.Bool
	var arm func()
	arm = func() {
		runtime.AddCleanup(new(gcSentinel), func(struct{}) {
			if stopped.Load() {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
			arm()
		}, struct{}{})
	}
	arm()
	return ch, func() { stopped.Store(true) }
}

// Settings is what the pacer sets at a look: the GC percent (base when
// rate needs no more than Go's own pacing) and the memory limit (user's
// then; [Limit] while the percent is raised). The percent is [Percent]
// for half the headroom, and the limit aims the heap at the same, the
// other half being for what is allocated while a collection marks (the
// runtime lets the heap past its goal until the marking ends); live and
// roots are what the last collection found, overhead what the runtime's
// memory counts besides heap objects and free heap.
func Settings(base int, user int64, rate float64, interval time.Duration, live, roots, headroom, overhead uint64) (percent int, limit int64) {
	p := Percent(base, rate, interval, roots, headroom/2)
	if p == base {
		return base, user
	}
	return p, Limit(user, base, live, roots, headroom, overhead)
}

// Goal is Go's own heap goal (GOGC=base) when the last collection found
// live bytes of heap live and roots bytes of heap, stacks and globals:
// live + roots × base / 100.
func Goal(base int, live, roots uint64) uint64 {
	if base < 0 {
		return math.MaxUint64
	}
	return satAdd(live, mulDiv(roots, uint64(base), 100))
}

// mulDiv is a × b / c rounded down (c > 0), saturating.
func mulDiv(a, b, c uint64) uint64 {
	q, r := a/c, a%c
	hi, lo := bits.Mul64(q, b)
	if hi != 0 {
		return math.MaxUint64
	}
	hi, rlo := bits.Mul64(r, b)
	frac, _ := bits.Div64(hi, rlo, c) // r < c, so r × b < c × 2^64: no overflow
	return satAdd(lo, frac)
}

// Bound is the most heap (bytes of heap objects, live and not yet swept)
// the pacer lets the process hold: Go's own goal for what the last
// collection found live, plus the headroom.
//
// The pacer aims at Go's goal plus half the headroom, at every instant:
// the GC percent it sets never gives more for the live heap it was set
// from or a smaller one, and the memory limit it sets with it ([Limit])
// holds the heap there when the live heap grows before the pacer looks
// again (it looks every Tick and after every collection). The other half
// is for what is allocated while a collection marks: the runtime lets the
// heap past its goal until the marking ends, under Go's own pacing too. A
// collection that finds more live raises the bound as it raises Go's own
// goal; the default headroom does not grow with it (see HeadroomWindow).
func Bound(base int, live, roots, headroom uint64) uint64 {
	return satAdd(Goal(base, live, roots), headroom)
}

// Limit is the memory limit the pacer sets while it raises the GC
// percent: Go's own goal plus half the headroom, plus overhead (what the
// runtime's memory counts besides heap objects and free heap: stacks,
// metadata, fragmentation, as measured at the look); never above user
// (the limit the process had, GOMEMLIMIT) and, being at least Go's own
// goal plus overhead, never below what Go's own pacing gives what is
// live: a live heap that has grown gets collections no more often than
// GOGC gives it, once the pacer has looked at it (after the collection
// that found it).
func Limit(user int64, base int, live, roots, headroom, overhead uint64) int64 {
	l := satAdd(satAdd(Goal(base, live, roots), headroom/2), overhead)
	if l > uint64(math.MaxInt64) || (user >= 0 && int64(l) > user) {
		return user
	}
	return int64(l)
}

func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
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
	p := math.Floor(want * 100 / float64(roots))
	// The headroom's percent, in integers and rounded down: the goal
	// never passes the headroom.
	capped := float64(base) + float64(mulDiv(headroom, 100, roots))
	return max(base, int(min(p, capped)))
}
