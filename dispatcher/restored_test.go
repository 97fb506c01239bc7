package dispatcher

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// TestRestoredFoldsInsteadOfInit: a restored model folds Options.Restored
// first, its command runs, and Init (whose commands ran in the model's
// earlier life) does not.
func TestRestoredFoldsInsteadOfInit(t *testing.T) {
	initRan := make(chan struct{}, 1)
	m := counter{n: 5, initCmd: func() tea.Msg { initRan <- struct{}{}; return nil }}
	d := New(m, &Options{Restored: withCmd{cmd: func() tea.Msg { return inc{n: 2} }}})
	t.Cleanup(d.Close)
	deadline := time.Now().Add(5 * time.Second)
	for model(d).n != 7 {
		if time.Now().After(deadline) {
			t.Fatalf("n = %d, want 7 (5 restored + 2 from the Restored message's command)", model(d).n)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-initRan:
		t.Fatal("Init ran for a restored model")
	case <-time.After(50 * time.Millisecond):
	}
}

// TestRestoredPanicKeepsTheModel: a model whose Update panics on the
// Restored message comes back as it was decoded.
func TestRestoredPanicKeepsTheModel(t *testing.T) {
	d := New(counter{n: 3}, &Options{Restored: boom{secret: "s"}})
	t.Cleanup(d.Close)
	if n := model(d).n; n != 3 {
		t.Fatalf("n = %d, want the decoded 3", n)
	}
	if got := treeText(d.Snapshot()); got != "3" {
		t.Fatalf("tree %q", got)
	}
}
