package teaapp

import (
	"runtime"
	"testing"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// bytesPer is the heap allocated per call of fn, over n calls.
func bytesPer(n int, fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	for range n {
		fn()
	}
	runtime.ReadMemStats(&b)
	return (b.TotalAlloc - a.TotalAlloc) / uint64(n)
}

// A value model's components are read where the model holds them: no copy
// of the model (7.8 KB here) nor of the component (a textinput.Model is
// 7.8 KB too) per read, and what is read is the model's own state, which a
// change (setComponent, on a copy) leaves as it was.
func TestComponentsReadWithoutCopies(t *testing.T) {
	ti := textinput.New()
	ti.SetValue("hi")
	var m tea.Model = benchProgram{search: ti}
	comps := discover(m, &config{})
	if len(comps) != 1 || comps[0].Name != "search" {
		t.Fatalf("discover: %+v", comps)
	}
	c, err := componentRef(m, comps[0])
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.(*textinput.Model)
	if !ok || p.Value() != "hi" {
		t.Fatalf("componentRef: %T %v", c, c)
	}
	if n := bytesPer(200, func() { _, _ = componentRef(m, comps[0]) }); n > 512 {
		t.Errorf("componentRef allocates %d bytes a read: a copy", n)
	}
	if n := bytesPer(200, func() { _ = discover(m, &config{}) }); n > 2048 {
		t.Errorf("discover allocates %d bytes a walk: a copy of the model", n)
	}
	next, err := setComponent(m, comps[0], func(ptr any) error { ptr.(*textinput.Model).SetValue("changed"); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(benchProgram).search.Value(); got != "hi" || p.Value() != "hi" {
		t.Errorf("the model read changed with its copy: %q, read %q", got, p.Value())
	}
	if got := next.(benchProgram).search.Value(); got != "changed" {
		t.Errorf("the changed copy holds %q", got)
	}
}
