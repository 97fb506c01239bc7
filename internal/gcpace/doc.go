// Package gcpace spaces Go's garbage collections out while the heap is
// allocated fast, within a bounded amount of extra heap.
//
// In: a context that owns the pacer, and Options (the time it aims to keep
// between collections, the most heap it may add, how often it looks).
// Out: the process's GC percent (runtime/debug.SetGCPercent), raised while
// the allocation rate would otherwise start collections closer together
// than Options.Interval, and back at the value the process started with
// (GOGC) when the rate falls or the context ends. A server quiet for
// Options.SettleAfter (3 s) with no collection is collected and its memory
// given back (runtime/debug.FreeOSMemory), and again at 12 s: the garbage
// of the last burst and what its sessions freed as they went idle would
// otherwise be held until Go's periodic collection two minutes on. The
// next quiet spell gets its collections a minute later at the soonest.
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
//
// The setting is process-wide, so the command runs the pacer, not the
// library (server.Server never touches it).
package gcpace
