package dispatcher

import (
	"context"
	"errors"
	"testing"

	tea "charm.land/bubbletea/v2"
	"pgregory.net/rapid"
)

// TestPropertyFoldSum: for random Sends and Calls of increments, with
// panicking messages mixed in, the final count is the sum of the envelopes
// without a panic, and every successful envelope publishes exactly one new,
// higher version.
func TestPropertyFoldSum(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d := New(counter{}, &Options{QueueSize: 1024})
		defer d.Close()
		ctx := context.Background()

		want, good := 0, 0
		var lastVersion uint64 = 1
		ops := rapid.IntRange(1, 60).Draw(rt, "ops")
		for range ops {
			n := rapid.IntRange(0, 4).Draw(rt, "msgs")
			msgs := make([]tea.Msg, n)
			sum, panics := 0, false
			for i := range msgs {
				if rapid.IntRange(0, 9).Draw(rt, "kind") == 0 {
					msgs[i] = boom{}
					panics = true
					continue
				}
				k := rapid.IntRange(-5, 10).Draw(rt, "inc")
				msgs[i] = inc{k}
				sum += k
			}
			ok := !panics && n > 0
			if rapid.Bool().Draw(rt, "call") {
				err := d.Call(ctx, agent, msgs...)
				switch {
				case panics && !errors.Is(err, ErrUpdateFailed):
					rt.Fatalf("Call with a panicking message: %v", err)
				case !panics && err != nil:
					rt.Fatalf("Call: %v", err)
				}
				v := d.Snapshot().Version
				if ok && v <= lastVersion {
					rt.Fatalf("version %d after a successful Call, previous %d", v, lastVersion)
				}
				if v < lastVersion {
					rt.Fatalf("version went back from %d to %d", lastVersion, v)
				}
				lastVersion = v
			} else if err := d.Send(agent, msgs...); err != nil {
				rt.Fatalf("Send: %v", err)
			}
			if ok {
				want += sum
				good++
			}
		}
		if err := d.Call(ctx, agent); err != nil {
			rt.Fatal(err)
		}
		s := d.Snapshot()
		if got := s.Model.(counter).n; got != want {
			rt.Fatalf("n = %d, want %d", got, want)
		}
		if s.Version != uint64(1+good) {
			rt.Fatalf("version = %d, want %d", s.Version, 1+good)
		}
	})
}
