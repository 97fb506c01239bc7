package session

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// TestDurableRotationWaitsForTheSaver: RotateToken returns after the
// saver, which sees the new token in force (the old refused) and not yet
// readable; a saver's error is returned wrapping ErrNotSaved, with the
// new token in force all the same.
func TestDurableRotationWaitsForTheSaver(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	s, _, _ := m.Start("t", Owner{User: "u"}, app{}, 0)
	old := s.Token()
	var during struct {
		shown     string
		oldWorks  bool
		hashMoved bool
	}
	fail := error(nil)
	s.SetSaver(func() error {
		during.shown = s.Token()
		during.oldWorks = s.CheckToken(old)
		during.hashMoved = s.TokenHash() != newToken(old).hash
		return fail
	})
	tok, err := s.RotateToken()
	if err != nil || tok == old || s.Token() != tok || !s.CheckToken(tok) {
		t.Fatalf("rotate: %q %v", tok, err)
	}
	if during.shown != "" || during.oldWorks || !during.hashMoved {
		t.Fatalf("while saving: token readable %q, old works %v, hash moved %v", during.shown, during.oldWorks, during.hashMoved)
	}
	fail = errors.New("disk full")
	tok2, err := s.RotateToken()
	if !errors.Is(err, ErrNotSaved) || !errors.Is(err, fail) {
		t.Fatalf("a failed save: %v", err)
	}
	if s.Token() != tok2 || s.CheckToken(tok) || !s.CheckToken(tok2) {
		t.Fatal("after a failed save the new token is not in force")
	}
	s.SetSaver(nil)
	if _, err := s.RotateToken(); err != nil {
		t.Fatalf("without a saver: %v", err)
	}
}

// TestDurableControlWaitsForTheSaver: SetControl saves a change (in force
// while it is saved) and only a change; restore brings the control back.
func TestDurableControlWaitsForTheSaver(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := NewManager(nil)
		defer m.Close()
		s, _, _ := m.Start("t", Owner{User: "u"}, app{}, 0)
		saves := 0
		var seen Control
		s.SetSaver(func() error { saves++; seen = s.Control(); return nil })
		cur := Control{}
		for i, n := 0, rapid.IntRange(1, 20).Draw(rt, "n"); i < n; i++ {
			c := Control{Paused: rapid.Bool().Draw(rt, "paused"), FocusOnly: rapid.Bool().Draw(rt, "focus")}
			before := saves
			if err := s.SetControl(c); err != nil {
				rt.Fatal(err)
			}
			switch {
			case c == cur && saves != before:
				rt.Fatalf("an unchanged control %+v was saved", c)
			case c != cur && (saves != before+1 || seen != c):
				rt.Fatalf("control %+v: %d saves, the saver saw %+v", c, saves-before, seen)
			}
			cur = c
		}
		sv := s.Save()
		m.End(s.ID)
		r, err := m.Restore("t", sv, app{}, ui.Restored{At: time.Now()})
		if err != nil {
			rt.Fatal(err)
		}
		if r.Control() != cur {
			rt.Fatalf("restored control %+v, saved %+v", r.Control(), cur)
		}
	})
}
