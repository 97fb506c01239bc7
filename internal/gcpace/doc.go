// Package gcpace spaces Go's garbage collections out while the heap is
// allocated fast, within a bounded amount of extra heap.
//
// In: a context that owns the pacer, and Options (the time it aims to keep
// between collections, the most heap it may add, how often it looks).
// Out: the process's GC percent (runtime/debug.SetGCPercent), raised while
// the allocation rate would otherwise start collections closer together
// than Options.Interval, with a memory limit (runtime/debug.SetMemoryLimit)
// set alongside; both back at the values the process started with (GOGC,
// GOMEMLIMIT) when the rate falls or the context ends. A server quiet for
// Options.SettleAfter (3 s) with no collection is collected and its memory
// given back (runtime/debug.FreeOSMemory), and again at 12 s: the garbage
// of the last burst and what its sessions freed as they went idle would
// otherwise be held until Go's periodic collection two minutes on. The
// next quiet spell gets its collections a minute later at the soonest,
// unless the pacer raised the percent since: then the heap may have grown
// by the headroom, and the spell's first collection gives it back at
// SettleAfter (an operator sees memory Go holds unused as RSS).
//
// The bound: the heap (bytes of heap objects) stays within Bound, Go's
// own goal for what the last collection found live (live + (live +
// stacks + globals) × GOGC/100) plus the headroom, at every instant, not
// only as of the pacer's last look. The pacer aims at Go's goal plus half
// the headroom; the other half is for what is allocated while a
// collection marks (the runtime lets the heap past its goal until the
// marking ends). A GC percent alone cannot hold that: the goal it gives is
// a multiple of whatever the next collection finds live, so a live heap
// that jumps between two looks (a flood of requests, each live until
// answered) takes the goal up with it, many times over. So while the
// percent is raised the pacer also sets a memory limit at Limit (that aim,
// plus the runtime's non-heap memory), and it looks again after every
// collection (a cleanup on an object made to be collected), not only
// every Tick: a higher live heap gets the limit the bound gives it at
// once, and the limit is never below what Go's own pacing gives what is
// live, so a live heap that has genuinely grown is collected no more
// often than GOGC would collect it. The pacer's limit is never above a
// GOMEMLIMIT (or a limit the command set from its cgroup), which it puts
// back when it stops pacing; under such a limit the heap also stays
// within it, as Go's own pacing does.
//
// Why: Go starts a collection each time the heap grows by GOGC percent of
// what is live, and each collection marks everything live. A server whose
// sessions are small (little is live) but whose requests allocate a lot
// (the MCP SDK's JSON decoding allocates a 32 KiB buffer per message)
// collects several times a second and spends a third of its CPU marking
// the same live heap over and over. Letting the heap grow further between
// collections trades bounded memory for that CPU; when the server is idle
// the pacer asks for nothing and memory is what Go's own pacing keeps.
// The default headroom is a multiple of what is live (as GOGC's goal
// is), from 512 MiB up to an eighth of the memory: a fixed one would let
// each request's share of the marking grow with the sessions the server
// holds (with a 512 MiB cap, the collector's part of a tool call in a
// closed loop of agents was 2.4 times as much at 1,000 sessions as at 100).
// It follows the least the live heap has been over the last minute
// (HeadroomWindow), not the live heap of the moment: what a flood of
// requests keeps live for a while must not widen the headroom with it
// (with the moment's live heap, a ping-batch flood that held 300 MiB live
// was allowed 2.4 GiB more).
//
// The setting is process-wide, so the command runs the pacer, not the
// library (server.Server never touches it).
package gcpace
