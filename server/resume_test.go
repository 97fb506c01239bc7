package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// terminals returns how many terminals se lists.
func terminals(se *session.Session) int {
	n := 0
	for _, a := range se.Attached() {
		if a.Kind == session.KindTerminal {
			n++
		}
	}
	return n
}

// agentShown reports whether the status bar on screen s counts the
// test's one agent.
func agentShown(s string) bool {
	return strings.Contains(s, "agents: 1") || strings.Contains(s, "agent: e2e-agent")
}

// drop cuts c's TCP connection abruptly, as a dead link does: no channel
// close, no exit, nothing.
func drop(t testing.TB, c *client) {
	t.Helper()
	if err := c.conn.Close(); err != nil {
		t.Fatalf("drop: %v", err)
	}
}

// waitDetached waits until se has no terminal attached.
func waitDetached(t testing.TB, se *session.Session) {
	t.Helper()
	testkit.Eventually(t, waitLong, func() bool { return terminals(se) == 0 }, "the dropped terminal to detach")
}

// waitClientClosed waits until the agent's MCP client was closed.
func waitClientClosed(t testing.TB, ag *agent) {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = ag.cs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitLong):
		t.Fatal("the agent's client was not closed")
	}
}

// TestResumeAfterDrop: the owner's connection drops while an agent is
// attached; the agent keeps working; `resume` with the owner's key gets
// the same session back with the agent's changes, another key cannot.
func TestResumeAfterDrop(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: time.Minute}})
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)
	owner.WaitFor(t, agentShown, waitLong)
	ag.call("demo.search.type_into", map[string]any{"text": "before"})
	owner.WaitFor(t, "Search: before", waitLong)

	drop(t, owner)
	waitDetached(t, se)
	if _, ok := srv.Sessions().Get(id); !ok {
		t.Fatal("the session ended when its owner's connection dropped")
	}
	// The agent works on through the gap.
	ag.call("demo.search.clear", nil)
	ag.call("demo.search.type_into", map[string]any{"text": "during-gap"})
	if v := searchValue(t, se); v != "during-gap" {
		t.Fatalf("search value %q during the gap", v)
	}

	// Someone else's key: the unknown-session line, and nothing changes.
	mallory := connectCmd(t, srv.SSHAddr(), clientOpts{user: "alice"}, "resume "+id)
	if stderr := requireTurnedAway(t, mallory); strings.TrimRight(stderr, "\r\n") != noSuchSessionLine {
		t.Fatalf("resume with another key: stderr %q", stderr)
	}
	if terminals(se) != 0 {
		t.Fatal("another key attached to the detached session")
	}

	// The owner's key: the same session, its state, the agent still there.
	back := connectCmd(t, srv.SSHAddr(), clientOpts{user: "alice", key: key}, "resume "+id)
	if got := waitDemo(t, back); got != id {
		t.Fatalf("resumed session %s, want %s", got, id)
	}
	back.WaitFor(t, "Search: during-gap", waitLong)
	back.WaitFor(t, agentShown, waitLong)
	ag.call("demo.search.type_into", map[string]any{"text": "after-resume"})
	back.WaitFor(t, "Search: after-resume", waitLong)
	// The resumed terminal is the primary one again: the agent's screen is
	// what it shows.
	testkit.Eventually(t, waitLong, func() bool {
		s, _, ok := se.Screen()
		return ok && strings.Contains(s, "after-resume")
	}, "the session's screen to follow the resumed terminal")
	if n := srv.Sessions().Count(); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
}

// TestResumeGraceExpires: a detached session ends when the grace period
// passes; its agent's client is closed, and resume finds nothing.
func TestResumeGraceExpires(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: 500 * time.Millisecond}})
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)
	owner.WaitFor(t, agentShown, waitLong)

	start := time.Now()
	drop(t, owner)
	testkit.Eventually(t, waitLong, func() bool { _, ok := srv.Sessions().Get(id); return !ok }, "the detached session to end")
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("the session ended %v after the drop, grace 500ms", d)
	}
	waitClientClosed(t, ag)
	late := connectCmd(t, srv.SSHAddr(), clientOpts{user: "alice", key: key}, "resume "+id)
	requireTurnedAway(t, late)
}

// TestResumePicker: the owner's next plain login offers the detached
// session; enter resumes it. Another key gets a new session at once, and
// "n" starts a new one.
func TestResumePicker(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: time.Minute}})
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)
	owner.Key(keyTab)
	owner.Type("kept")
	owner.WaitFor(t, "Search: kept", waitLong)
	drop(t, owner)
	waitDetached(t, se)

	// Someone else logs in: no picker, a new session.
	other := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	if got := waitDemo(t, other); got == id {
		t.Fatal("another key got the detached session")
	}

	again := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	again.WaitFor(t, func(s string) bool { return strings.Contains(s, "detached sessions") && strings.Contains(s, id) }, waitLong)
	again.Key(keyEnter)
	if got := waitDemo(t, again); got != id {
		t.Fatalf("the picker resumed %s, want %s", got, id)
	}
	again.WaitFor(t, "Search: kept", waitLong)
	testkit.Eventually(t, waitLong, func() bool { return terminals(se) == 1 }, "the resumed terminal attached")

	// Detached again: "n" starts a new session instead, and the detached
	// one stays (and still counts for the owner).
	drop(t, again)
	waitDetached(t, se)
	fresh := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	fresh.WaitFor(t, "detached sessions", waitLong)
	fresh.Type("n")
	if got := waitDemo(t, fresh); got == id {
		t.Fatal(`"n" resumed the detached session`)
	}
	if _, ok := srv.Sessions().Get(id); !ok || srv.Sessions().Count() != 3 {
		t.Fatalf("want the detached session and two others live, have %d", srv.Sessions().Count())
	}
}

// TestDetachedSessionsCountForTheCap: the per-user session cap counts
// detached sessions; the picker still lets the owner resume.
func TestDetachedSessionsCountForTheCap(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: time.Minute}, Limits: server.Limits{MaxSessionsPerUser: 1}})
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)
	drop(t, owner)
	waitDetached(t, se)

	c := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	c.WaitFor(t, "detached sessions", waitLong)
	c.Type("n")
	requireRefused(t, c, "too many sessions")

	c2 := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	c2.WaitFor(t, "detached sessions", waitLong)
	c2.Key(keyEnter)
	if got := waitDemo(t, c2); got != id {
		t.Fatalf("resumed %s, want %s", got, id)
	}
}

// TestDetachedSessionsCountForTheKeyUnderAnyName: a key's detached
// session counts against its cap whatever user name comes next, and that
// name's login offers it for resuming (else the key would be locked out
// until the grace passed); a client without the key gets neither.
func TestDetachedSessionsCountForTheKeyUnderAnyName(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: time.Minute}, Limits: server.Limits{MaxSessionsPerUser: 2}})
	key := newKey(t)
	first := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, first)
	se, _ := srv.Sessions().Get(id)
	drop(t, first)
	waitDetached(t, se)
	// Another name with the key is offered it too; "n" starts a second
	// session.
	bob := connect(t, srv.SSHAddr(), clientOpts{user: "bob", key: key})
	bob.WaitFor(t, func(s string) bool { return strings.Contains(s, "detached sessions") && strings.Contains(s, id) }, waitLong)
	bob.Type("n")
	if got := waitDemo(t, bob); got == id {
		t.Fatal(`"n" resumed the detached session`)
	}

	// The cap of 2 is full (one detached, one attached): a third name's
	// new session is refused, but it is offered the detached one.
	c := connect(t, srv.SSHAddr(), clientOpts{user: "carol", key: key})
	c.WaitFor(t, func(s string) bool { return strings.Contains(s, "detached sessions") && strings.Contains(s, id) }, waitLong)
	c.Type("n")
	requireRefused(t, c, "too many sessions")
	c2 := connect(t, srv.SSHAddr(), clientOpts{user: "dave", key: key})
	c2.WaitFor(t, "detached sessions", waitLong)
	c2.Key(keyEnter)
	if got := waitDemo(t, c2); got != id {
		t.Fatalf("resumed %s, want %s", got, id)
	}
	// resume under yet another name is the owner's too, once detached again.
	drop(t, c2)
	waitDetached(t, se)
	back := connectCmd(t, srv.SSHAddr(), clientOpts{user: "erin", key: key}, "resume "+id)
	if got := waitDemo(t, back); got != id {
		t.Fatalf("resume as another name got %s, want %s", got, id)
	}
	// Another key under the first name is someone else.
	drop(t, back)
	waitDetached(t, se)
	other := connectCmd(t, srv.SSHAddr(), clientOpts{user: "alice"}, "resume "+id)
	requireTurnedAway(t, other)
	if n := srv.Sessions().Count(); n != 2 {
		t.Fatalf("%d live sessions, want 2", n)
	}
}

// TestOwnerQuitEndsSessionForEveryone: ctrl+c in the owner's only terminal
// ends the session for the other terminals too, and its agents.
func TestOwnerQuitEndsSessionForEveryone(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: time.Minute}})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)
	ag := attachAgent(t, srv, se, false)
	obs := askJoin(t, srv, owner, "bob", id, 0, 0)
	owner.Type("o")
	waitDemo(t, obs)

	owner.Key(keyCtrlC)
	if err, stderr := owner.WaitExit(t, waitLong); err != nil {
		t.Fatalf("owner: exit %v, stderr %q", err, stderr)
	}
	err, stderr := obs.WaitExit(t, waitLong)
	if err != nil || !strings.Contains(stderr, "the owner ended the session") {
		t.Fatalf("observer: exit %v, stderr %q; want exit 0 and the owner ended the session", err, stderr)
	}
	if _, ok := srv.Sessions().Get(id); ok {
		t.Fatal("the session outlived its owner's quit")
	}
	waitClientClosed(t, ag)
}

// TestDroppedOwnerWithObserver: when the owner drops, an observer stays
// and is told; it sees the owner come back.
func TestDroppedOwnerWithObserver(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: time.Minute}})
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, owner)
	obs := askJoin(t, srv, owner, "bob", id, 0, 0)
	owner.Type("o")
	waitDemo(t, obs)

	drop(t, owner)
	obs.WaitFor(t, "the owner is disconnected", waitLong)
	back := connectCmd(t, srv.SSHAddr(), clientOpts{user: "alice", key: key}, "resume "+id)
	waitDemo(t, back)
	obs.WaitFor(t, func(s string) bool { return !strings.Contains(s, "the owner is disconnected") }, waitLong)
	back.Key(keyTab)
	back.Type("hi")
	obs.WaitFor(t, "Search: hi", waitLong)
}

// TestNoResumeGraceEndsAtOnce: without a resume grace (a negative one), a
// dropped owner ends the session, as before.
func TestNoResumeGraceEndsAtOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: -1}})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	drop(t, owner)
	testkit.Eventually(t, waitLong, func() bool { _, ok := srv.Sessions().Get(id); return !ok }, "the session to end")
}

// TestDrainWithDetachedAndJoinedSessions: Shutdown ends detached sessions
// and sessions with several terminals, in time, leaving no goroutine
// behind. Not parallel: goleak looks at the whole process.
func TestDrainWithDetachedAndJoinedSessions(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: time.Minute}, DrainTimeout: 5 * time.Second})
	keyA, keyB := newKey(t), newKey(t)
	a := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: keyA})
	idA := waitDemo(t, a)
	seA, _ := srv.Sessions().Get(idA)
	ag := attachAgent(t, srv, seA, false)
	drop(t, a)
	waitDetached(t, seA)

	b := connect(t, srv.SSHAddr(), clientOpts{user: "bob", key: keyB})
	idB := waitDemo(t, b)
	b2 := joinAs(t, srv, "bob", keyB, idB, 0, 0)
	waitDemo(t, b2)
	waiting := askJoin(t, srv, b, "carol", idB, 0, 0)

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	for _, c := range []*client{b, b2, waiting} {
		c.WaitExit(t, waitShort)
	}
	if n := srv.Sessions().Count(); n != 0 {
		t.Errorf("%d live sessions after Shutdown", n)
	}
	_ = ag.cs.Close()
	for _, c := range []*client{a, b, b2, waiting} {
		c.Close()
	}
	goleak.VerifyNone(t, ignore)
}
