package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/store"
)

// heldStore is a real bbolt store whose Puts can be held: while held,
// each Put announces its session id on arrived and waits for release.
type heldStore struct {
	store.Store
	arrived chan string

	mu   sync.Mutex
	gate chan struct{} // nil: Puts pass
}

func newHeldStore(t *testing.T) *heldStore {
	t.Helper()
	return openHeldStore(t, filepath.Join(t.TempDir(), server.SnapshotFileName))
}

func openHeldStore(t *testing.T, path string) *heldStore {
	t.Helper()
	b, err := store.OpenBolt(path, store.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &heldStore{Store: b, arrived: make(chan string, 64)}
}

// reopen opens the file of h (closed by the server that used it) again.
func reopen(t *testing.T, h *heldStore) *heldStore {
	t.Helper()
	return openHeldStore(t, h.Store.(*store.Bolt).Path())
}

func (h *heldStore) Put(ctx context.Context, id string, data []byte) error {
	h.mu.Lock()
	gate := h.gate
	h.mu.Unlock()
	if gate != nil {
		h.arrived <- id
		<-gate
	}
	return h.Store.Put(ctx, id, data)
}

// hold makes Puts wait until the returned func is called.
func (h *heldStore) hold() (release func()) {
	gate := make(chan struct{})
	h.mu.Lock()
	h.gate = gate
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.gate = nil
			h.mu.Unlock()
			close(gate)
		})
	}
}

// savedToken returns the token hash the store's record of id holds, or ""
// with ok false when there is no record.
func (h *heldStore) savedToken(t *testing.T, id string) (hash string, ok bool) {
	t.Helper()
	data, err := h.Store.Get(context.Background(), id)
	if errors.Is(err, store.ErrNotFound) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		TokenSHA256 string `json:"token_sha256"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r.TokenSHA256, true
}

func tokenHash(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

var panelTokenRe = regexp.MustCompile(`Bearer token \(Authorization: Bearer <token>\):\s*\n\s*([A-Za-z0-9_-]{43})`)

// heldServer serves the saving demo on st; the saver's tick is an hour
// away, so every write the test sees is one made at once.
func heldServer(t *testing.T, st store.Store) *testServer {
	t.Helper()
	return startApp(t, savingDemo(1), server.Options{
		SSH:       server.SSHOptions{ResumeGrace: time.Minute},
		Snapshots: server.SnapshotOptions{Store: st, Every: time.Hour},
	})
}

// TestDurableRotationAcknowledgedAfterSave: ctrl+r revokes the old token
// at once, but the owner's screen shows the new token only after the
// store has the record with it. The store holds the rotation's write; the
// screen still shows the old token then, and the new one once released,
// when the record already names it.
func TestDurableRotationAcknowledgedAfterSave(t *testing.T) {
	t.Parallel()
	st := newHeldStore(t)
	srv := heldServer(t, st)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)

	// Saved before the owner is shown the token.
	first := se.Token()
	owner.Key(keyCtrlO)
	screen := owner.WaitFor(t, "Bearer token (", waitLong)
	if m := panelTokenRe.FindStringSubmatch(screen); m == nil || m[1] != first {
		t.Fatalf("attach panel without the session's token:\n%s", screen)
	}
	if h, ok := st.savedToken(t, id); !ok || h != tokenHash(first) {
		t.Fatalf("the attach panel shows the token and the store holds %q (record %v), want its hash", h, ok)
	}

	release := st.hold()
	defer release()
	owner.Key("\x12") // ctrl+r
	select {
	case got := <-st.arrived:
		if got != id {
			t.Fatalf("the store was written for %s, want %s", got, id)
		}
	case <-time.After(waitLong):
		t.Fatal("ctrl+r wrote nothing to the store")
	}
	// The write is held: the old token is refused already, and nobody is
	// shown the new one.
	if se.CheckToken(first) {
		t.Error("the old token still works while the rotation is being saved")
	}
	if tok := se.Token(); tok != "" {
		t.Errorf("the new token is readable (%q) before it is saved", tok)
	}
	if m := panelTokenRe.FindStringSubmatch(owner.Screen()); m == nil || m[1] != first {
		t.Fatalf("the owner's screen changed before the save:\n%s", owner.Screen())
	}
	release()

	var fresh string
	owner.WaitFor(t, func(s string) bool {
		m := panelTokenRe.FindStringSubmatch(s)
		if m != nil && m[1] != first {
			fresh = m[1]
			return true
		}
		return false
	}, waitLong)
	if h, ok := st.savedToken(t, id); !ok || h != tokenHash(fresh) {
		t.Fatalf("the new token is shown but the store holds %q (record %v)", h, ok)
	}
	if !se.CheckToken(fresh) || se.Token() != fresh {
		t.Fatal("the shown token is not the session's")
	}
}

// TestDurableRotationsNeverRegress: rotations from the session's API (as
// the terminal calls it) while the saver flushes every millisecond and the
// owner keeps the model changing, so that a flush has a record encoded
// with the old token in hand when the rotation saves the new one: from the
// moment RotateToken returns, the store names the token it returned, never
// an earlier one (looked at right after it returns and again just before
// the next rotation).
func TestDurableRotationsNeverRegress(t *testing.T) {
	t.Parallel()
	st := newHeldStore(t)
	srv := startApp(t, savingDemo(1), server.Options{
		SSH:       server.SSHOptions{ResumeGrace: time.Minute},
		Snapshots: server.SnapshotOptions{Store: st, Every: time.Millisecond},
	})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	owner.Key(keyTab)
	se, _ := srv.Sessions().Get(id)
	check := func(i int, tok, when string) {
		t.Helper()
		if h, ok := st.savedToken(t, id); !ok || h != tokenHash(tok) {
			t.Fatalf("rotation %d, %s: the store holds %q (record %v), not the returned token's hash", i, when, h, ok)
		}
	}
	for i := range 200 {
		tok, err := se.RotateToken()
		if err != nil {
			t.Fatalf("rotation %d: %v", i, err)
		}
		check(i, tok, "as it returned")
		owner.Type("x") // a model change: the next flush has a record to write
		for range 3 {
			time.Sleep(time.Millisecond) // a flush may land between the checks
			check(i, tok, "a little later")
		}
	}
}

// TestDurableEndDeletesBeforeReported: when the owner quits (ctrl+c), the
// session's record is gone from the store before their connection is
// closed: a crash after the owner saw the session end cannot bring it (and
// its token) back.
func TestDurableEndDeletesBeforeReported(t *testing.T) {
	t.Parallel()
	st := newHeldStore(t)
	srv := heldServer(t, st)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	owner.Key(keyCtrlO)
	owner.WaitFor(t, "Bearer token (", waitLong)
	if _, ok := st.savedToken(t, id); !ok {
		t.Fatal("no record of the session once its token was shown")
	}
	owner.Key(keyCtrlC)
	owner.WaitExit(t, waitLong)
	if h, ok := st.savedToken(t, id); ok {
		t.Fatalf("the owner quit and was disconnected, and the store still holds the session (token %s)", h)
	}
	if ids, err := st.List(context.Background()); err != nil || len(ids) != 0 {
		t.Fatalf("saved %v (%v) after the only session ended", ids, err)
	}
}

// savedControl returns the control the store's record of id holds.
func (h *heldStore) savedControl(t *testing.T, id string) (paused, focusOnly bool) {
	t.Helper()
	data, err := h.Store.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Control struct {
			Paused    bool `json:"paused"`
			FocusOnly bool `json:"focus_only"`
		} `json:"control"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r.Control.Paused, r.Control.FocusOnly
}

// TestDurablePauseAcknowledgedAfterSave: ctrl+p (agents paused) is in
// force at once, and the status bar says so only after the store has the
// record with it; ctrl+f likewise, and handing control back too. A
// restart on the same store brings the session back paused.
func TestDurablePauseAcknowledgedAfterSave(t *testing.T) {
	t.Parallel()
	st := newHeldStore(t)
	srv := heldServer(t, st)
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)

	step := func(k, shown string, paused, focusOnly bool) {
		t.Helper()
		release := st.hold()
		defer release()
		owner.Key(k)
		select {
		case <-st.arrived:
		case <-time.After(waitLong):
			t.Fatalf("%q wrote nothing to the store", k)
		}
		if c := se.Control(); c.Paused != paused || c.FocusOnly != focusOnly {
			t.Fatalf("%q: control %+v while it is being saved, want it in force", k, c)
		}
		if shown != "" && strings.Contains(owner.Screen(), shown) {
			t.Fatalf("%q: the status bar shows %q before the save:\n%s", k, shown, owner.Screen())
		}
		if shown == "" && !strings.Contains(owner.Screen(), "agents: focused widget only") {
			t.Fatalf("%q: the status bar changed before the save:\n%s", k, owner.Screen())
		}
		release()
		if shown != "" {
			owner.WaitFor(t, shown, waitLong)
		} else {
			owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, "agents: focused widget only") }, waitLong)
		}
		if p, f := st.savedControl(t, id); p != paused || f != focusOnly {
			t.Fatalf("%q acknowledged, and the store holds paused=%v focus_only=%v", k, p, f)
		}
	}
	step("\x06", "agents: focused widget only", false, true) // ctrl+f
	step("\x06", "", false, false)                           // ctrl+f again: back
	step("\x10", "AGENTS PAUSED", true, false)               // ctrl+p

	token := se.Token()
	stop(t, srv)
	srv2 := heldServer(t, reopen(t, st))
	se2, ok := srv2.Sessions().Get(id)
	if !ok {
		t.Fatal("the session was not restored")
	}
	if !se2.Control().Paused {
		t.Fatalf("restored with control %+v, want paused", se2.Control())
	}
	ag, err := agentAt(t, srv2.HTTPAddr(), id, token)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ag.CallTool(context.Background(), &mcp.CallToolParams{Name: "demo.services.select_row", Arguments: map[string]any{"index": 1}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "paused") {
		t.Fatalf("a write of the restored, paused session's agent: %v %+v", err, res)
	}
	back := connectCmd(t, srv2.SSHAddr(), clientOpts{user: "alice", key: key}, "resume "+id)
	back.WaitFor(t, "AGENTS PAUSED", waitLong)
}
