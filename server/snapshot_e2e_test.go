package server_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/store"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// savingDemo is the demo with its snapshot codec at version v.
func savingDemo(v int) server.App {
	app := demoApp()
	app.Snapshots = server.JSONCodec[demo.Model](v)
	return app
}

func stop(t *testing.T, srv *testServer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// agentAt connects a go-sdk client to session id's Streamable HTTP URL on
// httpAddr with token, or returns the error.
func agentAt(t *testing.T, httpAddr, id, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "snapshot-agent", Version: "0.1"}, nil)
	hc := &http.Client{Transport: testkit.Bearer(nil, token)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + httpAddr + "/sessions/" + id + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, nil
}

// savedIDs lists what the bbolt file under dir holds (the server must be
// stopped: the file is locked while it runs).
func savedIDs(t *testing.T, dir string) []string {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(dir, server.SnapshotFileName), store.BoltOptions{})
	if err != nil {
		t.Fatalf("open the snapshot store: %v", err)
	}
	defer st.Close()
	ids, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestSnapshotSurvivesRestart: text typed over SSH and an agent's change
// come back after a shutdown and a new start on the same data directory;
// `resume <id>` shows them, and the agent's URL and token work again.
func TestSnapshotSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := server.Options{DataDir: dir, SSH: server.SSHOptions{ResumeGrace: time.Minute}}
	srv := startApp(t, savingDemo(1), opts)
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, owner)
	owner.Key(keyTab)
	owner.Type("typed-by-human")
	owner.WaitFor(t, "Search: typed-by-human", waitLong)
	se, _ := srv.Sessions().Get(id)
	token := se.Token()
	ag, err := agentAt(t, srv.HTTPAddr(), id, token)
	if err != nil {
		t.Fatal(err)
	}
	testkit.MustCall(t, ag, "demo.services.select_row", map[string]any{"index": 1})
	owner.WaitFor(t, "Selected auth", waitLong)
	stop(t, srv)
	if ids := savedIDs(t, dir); len(ids) != 1 || ids[0] != id {
		t.Fatalf("saved %v, want [%s]", ids, id)
	}

	restartAt := time.Now()
	srv2 := startApp(t, savingDemo(1), opts)
	if got := scrapeMetric(t, srv2.HTTPAddr(), `raxol_sessions_restored_total{reason="restart"}`); got != 1 {
		t.Fatalf("restored %v sessions, want 1", got)
	}
	// Someone else's key gets the unknown-session line.
	other := connectCmd(t, srv2.SSHAddr(), clientOpts{user: "alice"}, "resume "+id)
	if stderr := requireTurnedAway(t, other); strings.TrimRight(stderr, "\r\n") != noSuchSessionLine {
		t.Fatalf("resume with another key: stderr %q", stderr)
	}
	// The owner's plain login offers it in the picker; they leave it
	// there and resume it by id.
	picker := connect(t, srv2.SSHAddr(), clientOpts{user: "alice", key: key})
	picker.WaitFor(t, func(s string) bool { return strings.Contains(s, "detached sessions") && strings.Contains(s, id) }, waitLong)
	picker.Key("\x03")
	back := connectCmd(t, srv2.SSHAddr(), clientOpts{user: "alice", key: key}, "resume "+id)
	if got := waitDemo(t, back); got != id {
		t.Fatalf("resumed %s, want %s", got, id)
	}
	back.WaitFor(t, "Search: typed-by-human", waitLong)
	back.WaitFor(t, "Selected auth", waitLong)
	se2, ok := srv2.Sessions().Get(id)
	if !ok {
		t.Fatal("restored session not live")
	}
	if !se2.Created.Equal(se.Created) {
		t.Errorf("created %v, want %v", se2.Created, se.Created)
	}
	// The activity log came back with the session.
	found := false
	for _, a := range se2.Activity() {
		if a.Agent && a.Widget == "services" && a.At.Before(restartAt) && a.Action == "select_row" {
			found = true
		}
	}
	if !found {
		t.Errorf("the agent's action is not in the restored activity log: %+v", se2.Activity())
	}
	// The agent comes back with the same URL and token.
	ag2, err := agentAt(t, srv2.HTTPAddr(), id, token)
	if err != nil {
		t.Fatalf("agent with the same token after the restart: %v", err)
	}
	testkit.MustCall(t, ag2, "demo.services.select_row", map[string]any{"index": 2})
	back.WaitFor(t, "Selected billing", waitLong)
	// A wrong token is still refused.
	if _, err := agentAt(t, srv2.HTTPAddr(), id, token+"x"); err == nil {
		t.Fatal("a wrong token was let in after the restart")
	}
}

// TestSnapshotRotatedTokenStaysRevoked: a token rotated before the
// restart does not work after it; the new one does.
func TestSnapshotRotatedTokenStaysRevoked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := server.Options{DataDir: dir, SSH: server.SSHOptions{ResumeGrace: time.Minute}}
	srv := startApp(t, savingDemo(1), opts)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)
	old := se.Token()
	fresh, err := se.RotateToken()
	if err != nil {
		t.Fatal(err)
	}
	stop(t, srv)
	srv2 := startApp(t, savingDemo(1), opts)
	if _, err := agentAt(t, srv2.HTTPAddr(), id, old); err == nil {
		t.Fatal("the rotated-away token works after the restart")
	}
	if _, err := agentAt(t, srv2.HTTPAddr(), id, fresh); err != nil {
		t.Fatalf("the current token after the restart: %v", err)
	}
}

// TestSnapshotOtherVersionRefused: snapshots written by an older model
// version are skipped, counted and logged; the server starts and serves.
func TestSnapshotOtherVersionRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := server.Options{DataDir: dir, SSH: server.SSHOptions{ResumeGrace: time.Minute}}
	srv := startApp(t, savingDemo(1), opts)
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, owner)
	stop(t, srv)

	srv2 := startApp(t, savingDemo(2), opts)
	if got := scrapeMetric(t, srv2.HTTPAddr(), `raxol_snapshot_failures_total{reason="decode"}`); got != 1 {
		t.Fatalf("decode failures %v, want 1", got)
	}
	if n := srv2.Sessions().Count(); n != 0 {
		t.Fatalf("%d sessions restored from a snapshot of another version", n)
	}
	back := connectCmd(t, srv2.SSHAddr(), clientOpts{user: "alice", key: key}, "resume "+id)
	if stderr := requireTurnedAway(t, back); strings.TrimRight(stderr, "\r\n") != noSuchSessionLine {
		t.Fatalf("resume of a refused snapshot: stderr %q", stderr)
	}
	// The server serves new sessions as usual.
	c := connect(t, srv2.SSHAddr(), clientOpts{user: "bob"})
	waitDemo(t, c)
}

// TestNoCodecEndsSessionsAtRestart: an app without a codec saves nothing
// (no file) and its sessions are gone after a restart, as always.
func TestNoCodecEndsSessionsAtRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := server.Options{DataDir: dir, SSH: server.SSHOptions{ResumeGrace: time.Minute}}
	srv := startServer(t, opts)
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, owner)
	stop(t, srv)
	if _, err := os.Stat(filepath.Join(dir, server.SnapshotFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an app without a codec made %s: %v", server.SnapshotFileName, err)
	}
	srv2 := startServer(t, opts)
	back := connectCmd(t, srv2.SSHAddr(), clientOpts{user: "alice", key: key}, "resume "+id)
	if stderr := requireTurnedAway(t, back); strings.TrimRight(stderr, "\r\n") != noSuchSessionLine {
		t.Fatalf("resume after a restart without a codec: stderr %q", stderr)
	}
}

// TestSnapshotEndedSessionsLeaveTheStore: a session whose owner quits, one
// whose grace expires and a stopped headless one are deleted from the
// store; many sessions come and go and the store holds none of them.
func TestSnapshotEndedSessionsLeaveTheStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := server.Options{DataDir: dir, SSH: server.SSHOptions{ResumeGrace: 300 * time.Millisecond},
		Snapshots: server.SnapshotOptions{Every: 20 * time.Millisecond}}
	srv := startApp(t, savingDemo(1), opts)
	for i := range 6 {
		c := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
		id := waitDemo(t, c)
		c.Key(keyTab)
		c.Type("x")
		c.WaitFor(t, "Search: x", waitLong)
		testkit.Eventually(t, waitLong, func() bool {
			return scrapeMetric(t, srv.HTTPAddr(), "raxol_snapshots_saved_total") >= float64(i+1)
		}, "the session to be saved")
		if i%2 == 0 {
			c.Key("\x03") // ctrl+c: the owner quits
		} else {
			drop(t, c) // detached; its grace expires
		}
		testkit.Eventually(t, waitLong, func() bool {
			_, live := srv.Sessions().Get(id)
			return !live
		}, "the session to end")
		c.Close()
	}
	time.Sleep(200 * time.Millisecond) // a few saver ticks: the deletes (the store can be read only once the server stopped)
	stop(t, srv)
	if ids := savedIDs(t, dir); len(ids) != 0 {
		t.Fatalf("ended sessions still saved: %v", ids)
	}
}

// TestSnapshotTooLarge: a session over the cap is not saved, is counted
// and runs on.
func TestSnapshotTooLarge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := server.Options{DataDir: dir, SSH: server.SSHOptions{ResumeGrace: time.Minute},
		Snapshots: server.SnapshotOptions{MaxBytes: 200, Every: 20 * time.Millisecond}}
	srv := startApp(t, savingDemo(1), opts)
	c := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	waitDemo(t, c)
	testkit.Eventually(t, waitLong, func() bool {
		return scrapeMetric(t, srv.HTTPAddr(), `raxol_snapshot_failures_total{reason="too_large"}`) >= 1
	}, "the oversized snapshot to be counted")
	c.Key(keyTab)
	c.Type("still-running")
	c.WaitFor(t, "Search: still-running", waitLong)
	if n := scrapeMetric(t, srv.HTTPAddr(), "raxol_snapshots_saved_total"); n != 0 {
		t.Fatalf("%v snapshots saved over the cap", n)
	}
	stop(t, srv)
	if ids := savedIDs(t, dir); len(ids) != 0 {
		t.Fatalf("saved over the cap: %v", ids)
	}
}

// TestJSONCodec: the demo's model round-trips, another version and a
// model of another type are refused with clear errors.
func TestJSONCodec(t *testing.T) {
	c := server.JSONCodec[demo.Model](3)
	m, _ := demo.New().Update(ui.TextInputChanged{ID: demo.IDSearch, Text: "kept"})
	m, _ = m.Update(ui.PasswordFieldChanged{ID: demo.IDToken, Text: "s3cret"})
	b, err := c.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret") {
		t.Fatal("the password field's text was saved")
	}
	back, err := c.Decode(3, b)
	if err != nil {
		t.Fatal(err)
	}
	w, ok := ui.Find(back.View(), demo.IDSearch)
	if !ok || w.(ui.TextInput).Value != "kept" {
		t.Fatalf("search after the round trip: %+v", w)
	}
	if _, err := c.Decode(2, b); !errors.Is(err, server.ErrSnapshotVersion) {
		t.Fatalf("another version: %v", err)
	}
	if _, err := c.Decode(3, []byte("{not json")); err == nil {
		t.Fatal("garbage decoded")
	}
	if _, err := c.Encode(counterApp().New(ui.Identity{})); err == nil {
		t.Fatal("a model of another type encoded")
	}
}

// TestSnapshotGarbageInTheStore: records that are not JSON, name another
// session or app, or hold a model the codec cannot read are skipped and
// counted; the server starts and serves.
func TestSnapshotGarbageInTheStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := store.OpenBolt(filepath.Join(dir, server.SnapshotFileName), store.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for id, rec := range map[string]string{
		"aaaaaaaaaaaaaaaaaaaaaaaa": "\x00\xffnot json",
		"bbbbbbbbbbbbbbbbbbbbbbbb": `{"format":1,"app":"demo","version":1,"id":"cccccccccccccccccccccccc","token_sha256":"00","saved_at":"2099-01-01T00:00:00Z","model":"e30="}`,
		"dddddddddddddddddddddddd": `{"format":1,"app":"other","version":1,"id":"dddddddddddddddddddddddd","saved_at":"2099-01-01T00:00:00Z","model":"e30="}`,
		"eeeeeeeeeeeeeeeeeeeeeeee": `{"format":1,"app":"demo","version":1,"id":"eeeeeeeeeeeeeeeeeeeeeeee","token_sha256":"` + strings.Repeat("ab", 32) + `","ssh_owned":true,"saved_at":"2099-01-01T00:00:00Z","model":"bm90IGpzb24="}`,
		"ffffffffffffffffffffffff": `{"format":99}`,
	} {
		if err := st.Put(ctx, id, []byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.Close()
	srv := startApp(t, savingDemo(1), server.Options{DataDir: dir, SSH: server.SSHOptions{ResumeGrace: time.Minute}})
	if got := scrapeMetric(t, srv.HTTPAddr(), `raxol_snapshot_failures_total{reason="decode"}`); got != 5 {
		t.Fatalf("%v decode failures counted, want 5", got)
	}
	if n := srv.Sessions().Count(); n != 0 {
		t.Fatalf("%d sessions restored from garbage", n)
	}
	c := connect(t, srv.SSHAddr(), clientOpts{user: "bob"})
	waitDemo(t, c)
}
