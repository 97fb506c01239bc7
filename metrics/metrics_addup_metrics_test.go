package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestTerminalsOpenIsRegisteredAndMoves: raxol_terminals_open is in the
// registry, TerminalsAdd moves it both ways, and a nil *Metrics ignores
// it.
func TestTerminalsOpenIsRegisteredAndMoves(t *testing.T) {
	m := New()
	m.TerminalsAdd(1)
	m.TerminalsAdd(1)
	m.TerminalsAdd(-1)
	if got := testutil.ToFloat64(m.TerminalsOpen); got != 1 {
		t.Fatalf("raxol_terminals_open = %v, want 1", got)
	}
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() == "raxol_terminals_open" {
			found = len(mf.GetMetric()) == 1 && mf.GetMetric()[0].GetGauge().GetValue() == 1
		}
	}
	if !found {
		t.Fatal("raxol_terminals_open = 1 is not in the registry")
	}
	var none *Metrics
	none.TerminalsAdd(1) // must not panic
}
