package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"

	"github.com/google/pprof/profile"
)

// heapsplit reads a heap profile (raxol-load --pprof saves them, taken
// after a forced collection) and splits what was live among the parts of a
// session that own it: each sample goes to the first part that names one
// of its frames, from the allocating frame outwards, so a buffer the SSH
// library allocates for a terminal's write counts as the SSH transport's.
//
//	go run ./cmd/raxol-load heapsplit --per 1000 OUT/raxol-1/idle-heap.pprof
func runHeapsplit(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("heapsplit", flag.ContinueOnError)
	per := fs.Float64("per", 1, "divide by this many (sessions, agents): the figures are KiB each")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: raxol-load heapsplit [--per N] HEAP_PROFILE")
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("%s: not a heap profile (no inuse_space)", fs.Arg(0))
	}
	byPart := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		total += v
		byPart[partOf(s)] += v
	}
	names := make([]string, 0, len(byPart))
	for n := range byPart {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return int(byPart[b] - byPart[a]) })
	fmt.Fprintf(w, "live heap by owner, KiB per %g (sampled: the profile's estimate)\n", *per)
	for _, n := range names {
		fmt.Fprintf(w, "%9.1f  %5.1f%%  %s\n", float64(byPart[n])/1024 / *per, 100*float64(byPart[n])/float64(max(total, 1)), n)
	}
	fmt.Fprintf(w, "%9.1f  total\n", float64(total)/1024 / *per)
	return nil
}

// heapParts are the owners heapsplit tells apart, each by the functions
// that are its own.
var heapParts = []struct {
	name string
	re   *regexp.Regexp
}{
	{"the terminal's screen copy (ultraviolet cell buffers)", regexp.MustCompile(`charmbracelet/ultraviolet`)},
	{"SSH transport and channels (x/crypto/ssh, charm ssh, crypto)", regexp.MustCompile(`^golang\.org/x/crypto/ssh|^charm\.land/ssh|^crypto/`)},
	{"Bubble Tea program", regexp.MustCompile(`^charm\.land/bubbletea`)},
	{"MCP (go-sdk, mcpbridge)", regexp.MustCompile(`modelcontextprotocol|raxol-ssh/mcpbridge|google/jsonschema-go`)},
	{"HTTP (net/http)", regexp.MustCompile(`^net/http`)},
	{"the app: dispatcher, model, widgets, lens", regexp.MustCompile(`raxol-ssh/(dispatcher|demo|ui|lens|teaapp)\.`)},
	{"session", regexp.MustCompile(`raxol-ssh/session\.`)},
	{"terminal model (tui)", regexp.MustCompile(`raxol-ssh/tui\.`)},
	{"server (connections, admission, lifecycle)", regexp.MustCompile(`raxol-ssh/server\.`)},
}

// partOf is the owner of a sample: the first part one of its frames
// belongs to, from the allocating frame outwards.
func partOf(s *profile.Sample) string {
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			for _, part := range heapParts {
				if part.re.MatchString(ln.Function.Name) {
					return part.name
				}
			}
		}
	}
	return "other (runtime, metrics)"
}
