package server

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// The lifecycle's timers on synctest's virtual clock: a server made with
// New and never listening, sessions started with StartHeadless, terminals
// that are lifecycle entries without a connection. Hours pass in
// microseconds; the end-to-end tests check the same rules over real SSH.

func clockServer(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.DataDir = t.TempDir()
	opts.Logger = slog.New(slog.DiscardHandler)
	srv, err := New(App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() },
		ToolPolicy: authz.AllowAll(), ReadPolicy: authz.AllowAll()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return srv
}

func live(srv *Server, id string) bool { _, ok := srv.sessions.Get(id); return ok }

// TestResumeGraceOnTheClock: a session whose owner's last terminal dropped
// lives exactly the resume grace, and a terminal back in time keeps it.
func TestResumeGraceOnTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := clockServer(t, Options{SSH: SSHOptions{ResumeGrace: time.Hour}})
		owner := session.Owner{User: "alice", KeyFingerprint: "SHA256:alice"}
		detach := func() *liveSession {
			se, err := srv.startSession(owner, ui.Identity{})
			if err != nil {
				t.Fatal(err)
			}
			ls, ok := srv.life.add(se)
			term := newTerminal(nil, tui.RoleOwner)
			if !ok || !srv.life.reserve(ls, term) {
				t.Fatal("no terminal for a new session")
			}
			srv.life.leave(ls, term, false) // dropped, not quit
			return ls
		}
		ls := detach()
		time.Sleep(time.Hour - time.Second)
		synctest.Wait()
		if !live(srv, ls.se.ID) {
			t.Fatal("the session ended before its grace passed")
		}
		if got := srv.life.detachedFor(owner.Key()); len(got) != 1 || got[0].ID != ls.se.ID {
			t.Fatalf("detached sessions %v, want the one waiting", got)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if live(srv, ls.se.ID) {
			t.Fatal("the session outlived its grace")
		}
		if r := session.EndReason(ls.se); r != "the session ended: its owner did not come back in time" {
			t.Fatalf("end reason %q", r)
		}

		// Back with a minute to spare: the grace timer stops.
		ls = detach()
		time.Sleep(time.Hour - time.Minute)
		back := newTerminal(nil, tui.RoleOwner)
		if !srv.life.reserve(ls, back) {
			t.Fatal("the owner could not come back within the grace")
		}
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		if !live(srv, ls.se.ID) {
			t.Fatal("a resumed session ended at its old grace")
		}
		srv.life.leave(ls, back, true) // the owner quits: it ends at once
		synctest.Wait()
		if live(srv, ls.se.ID) {
			t.Fatal("the owner's quit did not end the session")
		}
	})
}

// TestHeadlessReapOnTheClock: a session raxol_start started ends after the
// idle timeout with nobody attached and nothing changing, not before, and
// activity puts its end off.
func TestHeadlessReapOnTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 30 * time.Minute
		srv := clockServer(t, Options{Headless: HeadlessOptions{IdleTimeout: idle}})
		owner := session.Owner{User: "apikey"}
		se, _, err := srv.StartHeadless(owner)
		if err != nil {
			t.Fatal(err)
		}
		if !srv.life.addStarted(se, owner.Key()) {
			t.Fatal("addStarted refused a live session")
		}
		time.Sleep(idle - time.Minute)
		synctest.Wait()
		if !live(srv, se.ID) {
			t.Fatal("reaped before the idle timeout")
		}
		// A change to the model counts as activity.
		if err := se.Dispatcher.Call(context.Background(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "bot"}, ui.TextInputChanged{ID: demo.IDSearch, Text: "x"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(idle - time.Minute)
		synctest.Wait()
		if !live(srv, se.ID) {
			t.Fatal("reaped although it changed within the idle timeout")
		}
		if got := srv.life.startedFor(owner.Key()); len(got) != 1 {
			t.Fatalf("raxol_list would show %d sessions, want 1", len(got))
		}
		time.Sleep(idle)
		synctest.Wait()
		if live(srv, se.ID) {
			t.Fatal("an idle headless session was not reaped")
		}
		if got := srv.life.startedFor(owner.Key()); len(got) != 0 {
			t.Fatalf("a reaped session is still listed: %v", got)
		}
	})
}
