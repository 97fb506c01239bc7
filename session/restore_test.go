package session

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

func TestSaveAndRestore(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	owner := Owner{User: "alice", KeyFingerprint: "SHA256:abc", RemoteAddr: "127.0.0.1:1"}
	s, ok, err := m.Start("app", owner, app{}, 0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	tok := s.Token()
	s.Record(Action{Origin: "agent:x", Agent: true, Widget: "w", Action: "click", Summary: "clicked", Outcome: "ok"})
	sv := s.Save()
	m.End(s.ID)

	// A restored session answers to the same token, knows only its hash,
	// and keeps what the first one had.
	r, err := m.Restore("app", sv, app{}, ui.Restored{At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != s.ID || r.Owner != owner || !r.Created.Equal(s.Created) {
		t.Fatalf("restored %s %+v %v", r.ID, r.Owner, r.Created)
	}
	if !r.CheckToken(tok) || r.CheckToken(tok+"x") || r.CheckToken("") {
		t.Fatal("token check after restore")
	}
	if r.Token() != "" {
		t.Fatal("a restored session knows its token in the clear")
	}
	if acts := r.Activity(); len(acts) != 1 || acts[0].Widget != "w" {
		t.Fatalf("activity %+v", acts)
	}
	if _, err := m.Restore("app", sv, app{}, ui.Restored{}); !errors.Is(err, ErrExists) {
		t.Fatalf("restoring a live id: %v", err)
	}
	// Rotation gives a fresh token, shown again, and the old one stops.
	fresh, err := r.RotateToken()
	if err != nil {
		t.Fatal(err)
	}
	if r.Token() != fresh || r.CheckToken(tok) || !r.CheckToken(fresh) || r.TokenHash() != sha256.Sum256([]byte(fresh)) {
		t.Fatal("rotation after restore")
	}
}

// TestRestoreCleansWhatItTakes: a saved record is outside input: bad ids
// are refused, activity text is cleaned and bounded, the log capped.
func TestRestoreCleansWhatItTakes(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	for _, id := range []string{"", "short", strings.Repeat("a", 23) + "/", strings.Repeat("a", 25), "\x1b[2Jaaaaaaaaaaaaaaaaaaaaaa"} {
		if _, err := m.Restore("app", Saved{ID: id}, app{}, ui.Restored{}); err == nil {
			t.Errorf("id %q restored", id)
		}
	}
	if _, err := m.Restore("app", Saved{ID: strings.Repeat("b", 24)}, nil, ui.Restored{}); err == nil {
		t.Error("nil model restored")
	}
	acts := make([]Action, MaxActivity+50)
	for i := range acts {
		acts[i] = Action{Origin: "agent:\x1b]0;pwned\x07evil", Summary: strings.Repeat("s", 5000), Action: "click"}
	}
	r, err := m.Restore("app", Saved{ID: strings.Repeat("c", 24), Activity: acts}, app{}, ui.Restored{})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Activity()
	if len(got) != MaxActivity {
		t.Fatalf("%d entries, want %d", len(got), MaxActivity)
	}
	if a := got[0]; strings.ContainsAny(a.Origin, "\x1b\x07") || len([]rune(a.Summary)) > maxSummary {
		t.Fatalf("entry not cleaned: %q (%d runes)", a.Origin, len([]rune(a.Summary)))
	}
}
