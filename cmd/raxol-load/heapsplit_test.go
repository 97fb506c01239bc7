package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestHeapsplitOwners: each sample goes to the owner of its frame nearest
// the allocation, and the figures are divided by --per.
func TestHeapsplitOwners(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	fns := []*profile.Function{
		fn(1, "github.com/charmbracelet/ultraviolet.NewBuffer"),
		fn(2, "github.com/raxol-ssh/raxol-ssh/tui.(*screen).compose"),
		fn(3, "golang.org/x/crypto/ssh.newTransport"),
		fn(4, "bufio.NewReaderSize"),
		fn(5, "runtime.malg"),
	}
	loc := func(id uint64, f *profile.Function) *profile.Location {
		return &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
	}
	locs := []*profile.Location{loc(1, fns[0]), loc(2, fns[1]), loc(3, fns[2]), loc(4, fns[3]), loc(5, fns[4])}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{locs[0], locs[1]}, Value: []int64{1, 4 << 20}}, // ultraviolet under tui: the screen copy
			{Location: []*profile.Location{locs[3], locs[2]}, Value: []int64{1, 2 << 20}}, // bufio under ssh: the transport
			{Location: []*profile.Location{locs[4]}, Value: []int64{1, 1 << 20}},          // no owner
		},
		Location: locs,
		Function: fns,
	}
	path := filepath.Join(t.TempDir(), "heap.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var out bytes.Buffer
	if err := runHeapsplit([]string{"--per", "4", path}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"1024.0   57.1%  the terminal's screen copy",
		"512.0   28.6%  SSH transport",
		"256.0   14.3%  other",
		"1792.0  total",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if err := runHeapsplit([]string{path, "extra"}, &out); err == nil {
		t.Error("two profiles: no error")
	}
}
