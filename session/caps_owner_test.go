package session

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// ownerHeld is the number of slots owner's key holds now: live sessions
// and starts under way.
func (m *Manager) ownerHeld(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byOwner[key]
}

// ownerSlots is the number of owner keys holding any slot.
func (m *Manager) ownerSlots() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byOwner)
}

// TestCapsOwnerConcurrentStarts: starts of a few owners, released at once
// by a barrier, some of whose models fail or panic, never hold more than
// the cap of any owner at any instant (read by every start while its slot
// is reserved), leave at most the cap of sessions per owner, and once the
// sessions end no slot is left held.
func TestCapsOwnerConcurrentStarts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.IntRange(1, 4).Draw(t, "limit")
		owners := rapid.IntRange(1, 3).Draw(t, "owners")
		type start struct {
			owner int
			fate  int // 0: a model, 1: an error, 2: a panic
		}
		starts := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) start {
			return start{owner: rapid.IntRange(0, owners-1).Draw(t, "owner"), fate: rapid.IntRange(0, 2).Draw(t, "fate")}
		}), 1, 24).Draw(t, "starts")

		m := NewManager(nil)
		defer m.Close()
		var (
			mu      sync.Mutex
			peak    = map[string]int{}
			started = map[string]int{}
		)
		barrier := make(chan struct{})
		var wg sync.WaitGroup
		for _, st := range starts {
			o := Owner{User: "u", KeyFingerprint: fmt.Sprintf("SHA256:owner%d", st.owner)}
			wg.Go(func() {
				defer func() { _ = recover() }() // the panicking model's
				<-barrier
				_, ok, _ := m.StartFunc("app", o, func(string) (ui.Model, error) {
					n := m.ownerHeld(o.Key()) // this start's slot is reserved now
					mu.Lock()
					peak[o.Key()] = max(peak[o.Key()], n)
					mu.Unlock()
					switch st.fate {
					case 1:
						return nil, errors.New("no model")
					case 2:
						panic("the model panicked")
					}
					return app{}, nil
				}, limit)
				if ok {
					mu.Lock()
					started[o.Key()]++
					mu.Unlock()
				}
			})
		}
		close(barrier)
		wg.Wait()
		for k, n := range peak {
			if n > limit {
				t.Fatalf("owner %q held %d slots at once, cap %d", k, n, limit)
			}
		}
		for k, n := range started {
			if n > limit {
				t.Fatalf("owner %q started %d sessions, cap %d", k, n, limit)
			}
			if h := m.ownerHeld(k); h != n {
				t.Fatalf("owner %q holds %d slots with %d live sessions", k, h, n)
			}
		}
		for _, s := range m.List() {
			m.End(s.ID)
		}
		if n := m.ownerSlots(); n != 0 {
			t.Fatalf("%d owners still hold slots with no session live", n)
		}
	})
}

// TestCapsOwnerSlotGivenBackOnPanic: a model that panics leaves its
// owner's slot free: with a cap of 1 the owner starts a session after it.
func TestCapsOwnerSlotGivenBackOnPanic(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	o := Owner{User: "u", KeyFingerprint: "SHA256:x"}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the model's panic did not reach the caller")
			}
		}()
		_, _, _ = m.StartFunc("app", o, func(string) (ui.Model, error) { panic("boom") }, 1)
	}()
	if n := m.ownerHeld(o.Key()); n != 0 {
		t.Fatalf("%d slots held after the panic", n)
	}
	if _, ok, err := m.Start("app", o, app{}, 1); !ok || err != nil {
		t.Fatalf("start after the panic: ok %v, err %v", ok, err)
	}
}
