package dispatcher

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// waitNoLoop waits until no dispatcher loop runs in the process.
func waitNoLoop(t *testing.T, what string) {
	t.Helper()
	testkit.Eventually(t, loopLinger+2*time.Second, func() bool {
		return testkit.Goroutines(t, "dispatcher.(*Dispatcher).loop") == 0
	}, "%s: a dispatcher loop still runs", what)
}

// TestIdleDispatcherHoldsNoGoroutine: with nothing queued for a while no
// goroutine runs the loop; a message starts one, which folds it and ends.
func TestIdleDispatcherHoldsNoGoroutine(t *testing.T) {
	d := newD(t, nil)
	waitNoLoop(t, "after New")
	if err := d.Send(agent, inc{3}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for model(d).n != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("a message sent to an idle dispatcher was not folded: n = %d", model(d).n)
		}
		time.Sleep(time.Millisecond)
	}
	waitNoLoop(t, "after the fold")
	if err := d.Call(t.Context(), agent, inc{1}); err != nil || model(d).n != 4 {
		t.Fatalf("Call on an idle dispatcher: %v, n = %d", err, model(d).n)
	}
}

// TestNoMessageIsLeftInTheQueue: senders that keep letting the loop go
// idle and start again (Send only, never a Call that would start it
// itself) get every message folded: none is left queued with no loop to
// fold it.
func TestNoMessageIsLeftInTheQueue(t *testing.T) {
	d := newD(t, &Options{QueueSize: 4096, linger: -1}) // the loop ends whenever the queue is empty
	const senders, each = 8, 400
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(s), 1))
			for i := 0; i < each; {
				switch err := d.Send(agent, inc{1}); {
				case err == nil:
					i++
				case errors.Is(err, ErrQueueFull):
					time.Sleep(time.Microsecond)
					continue
				default:
					t.Error(err)
					return
				}
				if r.IntN(4) == 0 {
					time.Sleep(time.Duration(r.IntN(50)) * time.Microsecond) // random gaps: the queue drains and refills
				}
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for model(d).n != senders*each {
		if time.Now().After(deadline) {
			t.Fatalf("folded %d of %d messages; %d still queued", model(d).n, senders*each, len(d.queue))
		}
		time.Sleep(time.Millisecond)
	}
}

// TestResolverSeesTheLatestSnapshotsTree: the tree a resolver is given is
// the Tree of the snapshot Snapshot returns from inside it, through folds,
// envelopes that fold nothing, rolled-back envelopes and a View that
// panics (the last good tree is kept).
func TestResolverSeesTheLatestSnapshotsTree(t *testing.T) {
	d := newD(t, nil)
	check := func(what string) {
		t.Helper()
		var same bool
		var version uint64
		err := d.CallFunc(t.Context(), agent, func(tree ui.Node) ([]tea.Msg, error) {
			s := d.Snapshot()
			same, version = reflect.DeepEqual(s.Tree, tree), s.Version
			return nil, nil
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !same {
			t.Fatalf("%s: the resolver's tree is not snapshot %d's", what, version)
		}
	}
	check("first snapshot")
	for i, msgs := range [][]tea.Msg{
		{inc{1}},
		{},       // folds nothing
		{boom{}}, // rolled back
		{inc{2}, inc{3}},
		{setViewPanic(true)},
		{inc{4}}, // the model moves, the tree stays the last good one
		{setViewPanic(false), inc{5}},
	} {
		_ = d.Call(t.Context(), agent, msgs...)
		check(fmt.Sprintf("after envelope %d", i))
	}
}
