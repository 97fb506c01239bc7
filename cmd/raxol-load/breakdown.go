package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// A breakdown of where a server's memory is, per session: what Go's
// metrics say of it (the heap in use, the part of it a collection frees,
// goroutine stacks, memory Go holds but does not use, the runtime's own)
// and, given the server's pid, what the kernel says (anonymous and
// file-backed RSS, the peak).

// memSample is one reading of a server's memory.
type memSample struct {
	raw                                                     map[string]float64 // the metrics as scraped, before any collection
	rss, heapInuse, stackInuse, heapIdle, heapReleased, sys float64
	goroutines                                              float64
	live                                                    float64 // heap in use after a forced collection; 0 if not forced
	anon, file, hwm                                         float64 // /proc/<pid>/status, bytes; 0 without a pid
}

// readMemory reads the server's memory from its metrics (added up over
// several), then, given its pprof base URL, forces a collection (the heap
// profile's gc=1, saved to profile when not "") and reads the heap in use
// again: what the collection freed was garbage.
func readMemory(metricsURLs []string, pprofBase, profile string, pid int) (memSample, error) {
	m, err := scrapeAll(metricsURLs)
	if err != nil {
		return memSample{}, err
	}
	s := memSample{raw: m, goroutines: m["go_goroutines"],
		rss: m["process_resident_memory_bytes"], heapInuse: m["go_memstats_heap_inuse_bytes"],
		stackInuse: m["go_memstats_stack_inuse_bytes"], heapIdle: m["go_memstats_heap_idle_bytes"],
		heapReleased: m["go_memstats_heap_released_bytes"], sys: m["go_memstats_sys_bytes"]}
	if pid > 0 {
		s.anon, s.file, s.hwm = procMemory(pid)
	}
	if pprofBase == "" {
		return s, nil
	}
	url := strings.TrimRight(pprofBase, "/") + "/debug/pprof/heap?gc=1"
	if profile == "" {
		resp, err := http.Get(url)
		if err != nil {
			return s, err
		}
		resp.Body.Close()
	} else if err := fetchProfile(url, profile); err != nil {
		return s, err
	}
	after, err := scrapeAll(metricsURLs)
	if err != nil {
		return s, err
	}
	s.live = after["go_memstats_heap_inuse_bytes"]
	return s, nil
}

// procMemory is the process's anonymous and file-backed RSS and its peak
// RSS, from /proc/<pid>/status (zeros if it cannot be read).
func procMemory(pid int) (anon, file, hwm float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		kib, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		switch k {
		case "RssAnon":
			anon = kib * 1024
		case "RssFile":
			file = kib * 1024
		case "VmHWM":
			hwm = kib * 1024
		}
	}
	return anon, file, hwm
}

// perSession is the breakdown of s against base (the server before any
// session), per session (or per whatever n counts), in KiB; against a
// base read after a forced collection too, what was live in each.
func (s memSample) perSession(base memSample, n float64) string {
	k := func(a, b float64) string { return fmt.Sprintf("%.1f", (a-b)/n/1024) }
	if base.live > 0 && s.live > 0 {
		// Both after a forced collection: compare what was live.
		return fmt.Sprintf("live=%s rss=%s stacks=%s KiB goroutines=%.1f", k(s.live, base.live), k(s.rss, base.rss), k(s.stackInuse, base.stackInuse),
			(s.goroutines-base.goroutines)/n)
	}
	out := fmt.Sprintf("rss=%s heap_inuse=%s stacks=%s held_unused=%s", k(s.rss, base.rss), k(s.heapInuse, base.heapInuse),
		k(s.stackInuse, base.stackInuse), k(s.heapIdle-s.heapReleased, base.heapIdle-base.heapReleased))
	if s.live > 0 {
		out += fmt.Sprintf(" live=%s garbage=%.1f", k(s.live, base.heapInuse), (s.heapInuse-s.live)/n/1024)
	}
	if s.anon > 0 {
		out += fmt.Sprintf(" rss_anon=%s rss_file=%s peak_rss=%s", k(s.anon, base.anon), k(s.file, base.file), k(s.hwm, base.hwm))
	}
	return out + fmt.Sprintf(" KiB goroutines=%.1f", (s.goroutines-base.goroutines)/n)
}
