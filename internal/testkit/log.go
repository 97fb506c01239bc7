package testkit

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// LogWriter sends each line written to it to t.Log until Stop, then drops
// them (t.Log after the test has completed panics).
type LogWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

// NewLogWriter returns a LogWriter for t that stops when the test ends.
func NewLogWriter(t testing.TB) *LogWriter {
	w := &LogWriter{t: t}
	t.Cleanup(w.Stop)
	return w
}

func (w *LogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// Stop drops every later line.
func (w *LogWriter) Stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
