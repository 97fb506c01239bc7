package testkit

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"
)

// Goroutines counts the goroutines of the process whose stacks name any
// of funcs (a substring of a frame, e.g. "dispatcher.(*Dispatcher).loop").
// It counts the whole process: a test that uses it must not run in
// parallel with others that start such goroutines.
func Goroutines(t testing.TB, funcs ...string) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	n := 0
	for g := range strings.SplitSeq(b.String(), "\n\n") {
		for _, f := range funcs {
			if strings.Contains(g, f) {
				n++
				break
			}
		}
	}
	return n
}
