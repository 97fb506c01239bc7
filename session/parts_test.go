package session

import (
	"context"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// TestPartsSignalTheSessionsWatchers checks that each part, started or
// restored, changes state under the session's lock and signals the
// session's own watchers: changes terminals show besides the model
// (presence, activity, control) reach WatchPresence and Watch, the others
// Watch alone.
func TestPartsSignalTheSessionsWatchers(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	started, _, err := m.Start("t", Owner{User: "u"}, app{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sv := started.Save()
	m.End(started.ID)
	restored, err := m.Restore("t", sv, app{}, ui.Restored{})
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, err := m.Start("t", Owner{User: "v"}, app{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Session{"started": fresh, "restored": restored} {
		t.Run(name, func(t *testing.T) {
			w, stopW := s.Watch()
			defer stopW()
			p, stopP := s.WatchPresence()
			defer stopP()
			drain := func(ch <-chan struct{}) bool {
				select {
				case <-ch:
					return true
				default:
					return false
				}
			}
			var pres *Presence
			s.SetApprovalSink(func(context.Context, ApprovalRequest) (Approval, error) { return ApprovedOnce, nil })
			for _, c := range []struct {
				part     string
				change   func()
				presence bool
			}{
				{"roster: join", func() { pres = s.Join(KindAgent, "a") }, true},
				{"roster: detach", func() { pres.Detach() }, true},
				{"activity: record", func() { s.Record(Action{Action: "click", Outcome: "ok"}) }, true},
				{"activity: control", func() { _ = s.SetControl(Control{Paused: true}) }, true},
				{"activity: recent", func() { s.NoteAction("w") }, false},
				{"share: attention", func() { s.SetAttention(Attention{Focus: "w"}) }, false},
				{"share: screen", func() { s.SetScreen("x", 1) }, false},
				{"share: pending", func() { _, _ = s.RequestApproval(context.Background(), ApprovalRequest{ID: "r"}) }, false},
				{"session: token", func() { _, _ = s.RotateToken() }, false},
			} {
				drain(w)
				drain(p)
				c.change()
				if !drain(w) {
					t.Errorf("%s: Watch not signalled", c.part)
				}
				if got := drain(p); got != c.presence {
					t.Errorf("%s: WatchPresence signalled %v, want %v", c.part, got, c.presence)
				}
			}
		})
	}
}
