package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// The one line a join or resume gets when it cannot go ahead.
const noSuchSessionLine = "raxol-ssh: no such session, or you may not join it"

// connectCmd dials addr and runs command (an exec request with a PTY, as
// `ssh -t host command` sends) instead of a shell; the client is closed
// when the test ends.
func connectCmd(t testing.TB, addr string, o clientOpts, command string) *client {
	t.Helper()
	o.command = command
	return connect(t, addr, o)
}

// joinAs connects with key as user and runs `join id`.
func joinAs(t testing.TB, srv *testServer, user string, key gossh.Signer, id string, w, h int) *client {
	t.Helper()
	return connectCmd(t, srv.SSHAddr(), clientOpts{user: user, key: key, w: w, h: h}, "join "+id)
}

// lastLine returns the last non-empty line of s, without its line end.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\r\n"), "\n")
	return strings.TrimRight(lines[len(lines)-1], "\r")
}

// requireTurnedAway waits for c to end with a non-zero status and the
// unknown-session line as the last thing on its stderr.
func requireTurnedAway(t testing.TB, c *client) string {
	t.Helper()
	err, stderr := c.WaitExit(t, waitLong)
	requireNonZeroExit(t, err)
	if got := lastLine(stderr); got != noSuchSessionLine {
		t.Fatalf("stderr %q: last line %q, want %q", stderr, got, noSuchSessionLine)
	}
	return stderr
}

// joinPrompt is what the owner's terminal shows for a join request.
const joinPrompt = "Someone asks to join your session"

// askJoin has stranger ask to join the owner's session id and waits for
// the prompt on the owner's screen.
func askJoin(t testing.TB, srv *testServer, owner *client, user, id string, w, h int) *client {
	t.Helper()
	c := joinAs(t, srv, user, newKey(t), id, w, h)
	owner.WaitFor(t, func(s string) bool { return armedPrompt(joinPrompt)(s) && strings.Contains(s, user) }, waitLong)
	return c
}

// hasAttached reports whether se lists a terminal named name.
func hasAttached(se *session.Session, name string) bool {
	for _, a := range se.Attached() {
		if a.Kind == session.KindTerminal && a.Name == name {
			return true
		}
	}
	return false
}

// TestJoinOwnSecondTerminal: the owner's key joins directly, both
// terminals drive and show one model, and when the first leaves with
// ctrl+c the second carries on as the primary terminal (join prompts go
// there).
func TestJoinOwnSecondTerminal(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	key := newKey(t)
	first := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	id := waitDemo(t, first)
	second := joinAs(t, srv, "alice", key, id, 90, 28)
	if got := waitDemo(t, second); got != id {
		t.Fatalf("second terminal shows session %s, want %s", got, id)
	}
	if strings.Contains(second.Stderr(), "asking") {
		t.Fatalf("the owner's own key was asked to wait: %q", second.Stderr())
	}
	if n := srv.Sessions().Count(); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
	se, _ := srv.Sessions().Get(id)

	first.Key(keyTab)
	first.Type("one")
	second.WaitFor(t, "Search: one", waitLong)
	second.Key(keyTab) // its own focus (and cursor): tabs -> search
	second.Type("two")
	sameSearchEverywhere(t, se, len("onetwo"), first, second)

	// The first (primary) terminal quits; the session lives on with the second.
	first.Key(keyCtrlC)
	if err, stderr := first.WaitExit(t, waitLong); err != nil {
		t.Fatalf("first terminal: exit %v, stderr %q", err, stderr)
	}
	testkit.Eventually(t, waitLong, func() bool {
		n := 0
		for _, a := range se.Attached() {
			if a.Kind == session.KindTerminal {
				n++
			}
		}
		return n == 1
	}, "one terminal attached after the first left")
	if _, ok := srv.Sessions().Get(id); !ok || second.Exited() {
		t.Fatal("the session ended when one of two owner terminals quit")
	}
	// The second terminal took over: a join request is asked there.
	bob := askJoin(t, srv, second, "bob", id, 0, 0)
	second.Type("n")
	requireTurnedAway(t, bob)
	second.WaitFor(t, func(s string) bool { return !strings.Contains(s, joinPrompt) }, waitLong)
	second.Type("!")
	v := sameSearchEverywhere(t, se, len("onetwo!"), second)
	// Its screen is what agents see now.
	testkit.Eventually(t, waitLong, func() bool {
		s, _, _ := se.Screen()
		return strings.Contains(ansi.Strip(s), "Search: "+v)
	}, "the session's screen to follow the terminal that took over")
}

// sameSearchEverywhere waits until the search input's value has n
// characters (all that were typed), and every terminal shows that value;
// it returns the value. (The cursor in a text input is each terminal's
// own, so where one terminal's typing lands is its business.)
func sameSearchEverywhere(t testing.TB, se *session.Session, n int, terms ...*client) string {
	t.Helper()
	var v string
	testkit.Eventually(t, waitLong, func() bool { v = searchValue(t, se); return len(v) == n },
		"search value of %d characters", n)
	for _, c := range terms {
		c.WaitFor(t, "Search: "+v, waitLong)
	}
	return v
}

// TestJoinAsObserver: a stranger's request shows the prompt; approved as
// observer, the stranger sees every change but its keys change nothing.
func TestJoinAsObserver(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)

	bob := askJoin(t, srv, owner, "bob", id, 0, 0)
	// The stranger's notice may arrive just after the owner's prompt.
	testkit.Eventually(t, waitLong, func() bool { return strings.Contains(bob.Stderr(), "asking the session's owner") },
		"the waiting stranger to be told")
	owner.Type("o")
	if got := waitDemo(t, bob); got != id {
		t.Fatalf("observer shows session %s, want %s", got, id)
	}
	bob.WaitFor(t, "observer", waitLong)
	testkit.Eventually(t, waitLong, func() bool { return hasAttached(se, "bob (observer)") }, "the observer in presence")
	owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, joinPrompt) }, waitLong)

	// The owner's typing appears on the observer's screen.
	owner.Key(keyTab)
	owner.Type("seen")
	bob.WaitFor(t, "Search: seen", waitLong)

	// The observer's keys change nothing; ctrl+c (its last key) leaves.
	bob.Key(keyTab)
	bob.Type("zzz")
	bob.Key(keyEnter)
	bob.Key(keyCtrlC)
	if err, stderr := bob.WaitExit(t, waitLong); err != nil {
		t.Fatalf("observer leaving: exit %v, stderr %q", err, stderr)
	}
	if v := searchValue(t, se); v != "seen" {
		t.Fatalf("search value %q after the observer typed, want %q", v, "seen")
	}
	testkit.Eventually(t, waitLong, func() bool { return !hasAttached(se, "bob (observer)") }, "the observer to leave presence")
	if owner.Exited() {
		t.Fatal("the owner's terminal ended when the observer left")
	}
}

// TestJoinAsDriver: approved as driver, the stranger's keys apply.
func TestJoinAsDriver(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)
	se, _ := srv.Sessions().Get(id)

	carol := askJoin(t, srv, owner, "carol", id, 0, 0)
	owner.Type("r")
	waitDemo(t, carol)
	carol.WaitFor(t, "driver", waitLong)
	testkit.Eventually(t, waitLong, func() bool { return hasAttached(se, "carol (driver)") }, "the driver in presence")
	carol.Key(keyTab)
	carol.Type("drv")
	owner.WaitFor(t, "Search: drv", waitLong)
	if o := se.Dispatcher.Snapshot().Origin.String(); o != "human:carol" {
		t.Errorf("origin of the driver's keys = %q, want human:carol", o)
	}
}

// TestJoinRefusedLikeUnknown: a refused stranger, an unknown id and a
// resume of someone else's session all get the same one line and a
// non-zero exit.
func TestJoinRefusedLikeUnknown(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)

	dave := askJoin(t, srv, owner, "dave", id, 0, 0)
	owner.Type("n")
	requireTurnedAway(t, dave)
	owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, joinPrompt) }, waitLong)

	unknown := joinAs(t, srv, "dave", newKey(t), "AAAAAAAAAAAAAAAAAAAAAAAA", 0, 0)
	if stderr := requireTurnedAway(t, unknown); strings.TrimRight(stderr, "\r\n") != noSuchSessionLine {
		t.Fatalf("unknown id: stderr %q, want exactly %q", stderr, noSuchSessionLine)
	}
	other := connectCmd(t, srv.SSHAddr(), clientOpts{user: "alice"}, "resume "+id)
	if stderr := requireTurnedAway(t, other); strings.TrimRight(stderr, "\r\n") != noSuchSessionLine {
		t.Fatalf("resume of someone else's session: stderr %q, want exactly %q", stderr, noSuchSessionLine)
	}
	bad := connectCmd(t, srv.SSHAddr(), clientOpts{}, "join")
	err, stderr := bad.WaitExit(t, waitLong)
	requireNonZeroExit(t, err)
	if !strings.Contains(stderr, "join <session-id>") {
		t.Fatalf("a join without an id: stderr %q", stderr)
	}
	if owner.Exited() || srv.Sessions().Count() != 1 {
		t.Fatal("the owner's session was disturbed")
	}
}

// TestJoinThreeSizes: three terminals of different sizes show the same
// model, each drawn at its own size.
func TestJoinThreeSizes(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	key := newKey(t)
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key, w: 100, h: 30})
	id := waitDemo(t, owner)
	small := joinAs(t, srv, "alice", key, id, 60, 20)
	small.WaitFor(t, "session "+id, waitLong)
	big := askJoin(t, srv, owner, "erin", id, 120, 40)
	owner.Type("r")
	big.WaitFor(t, "session "+id, waitLong)

	owner.Key(keyTab)
	owner.Type("abc")
	for name, c := range map[string]*client{"owner": owner, "small": small, "big": big} {
		s := c.WaitFor(t, "Search: abc", waitLong)
		lines := c.Lines()
		if len(lines) != c.h {
			t.Errorf("%s: %d lines, want %d", name, len(lines), c.h)
		}
		for _, l := range strings.Split(s, "\n") {
			if w := len([]rune(l)); w > c.w {
				t.Errorf("%s: line wider (%d) than its terminal (%d): %q", name, w, c.w, l)
			}
		}
	}
	// Each keeps its own size through a resize of one.
	small.Resize(70, 22)
	small.WaitFor(t, "Search: abc", waitLong)
	big.Key(keyTab)
	big.Type("!")
	se, _ := srv.Sessions().Get(id)
	sameSearchEverywhere(t, se, len("abc!"), owner, small, big)
}

// TestJoinRequestWithdrawn: a requester who disconnects while waiting
// takes the prompt off the owner's screen; one nobody answers is refused
// after the join timeout, and the prompt goes away too.
func TestJoinRequestWithdrawn(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{SSH: server.SSHOptions{JoinTimeout: 1500 * time.Millisecond}})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)

	frank := askJoin(t, srv, owner, "frank", id, 0, 0)
	frank.Close()
	owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, joinPrompt) }, waitLong)

	// Unanswered: refused at the timeout with the same line.
	start := time.Now()
	gina := askJoin(t, srv, owner, "gina", id, 0, 0)
	requireTurnedAway(t, gina)
	if d := time.Since(start); d < time.Second {
		t.Errorf("an unanswered request was refused after %v, timeout 1.5s", d)
	}
	owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, joinPrompt) }, waitLong)
	// The keys the owner types now reach the app, not a stale prompt.
	owner.Key(keyTab)
	owner.Type("ok")
	owner.WaitFor(t, "Search: ok", waitLong)
}

// TestJoinFloodLimited: join requests beyond 5 a minute from one key are
// turned away, whether the ids exist or not; other keys are not affected.
func TestJoinFloodLimited(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	id := waitDemo(t, owner)

	key := newKey(t)
	for i := range 5 {
		c := joinAs(t, srv, "mallory", key, strings.Repeat(string(rune('A'+i)), 24), 0, 0)
		requireTurnedAway(t, c)
	}
	c := joinAs(t, srv, "mallory", key, id, 0, 0)
	err, stderr := c.WaitExit(t, waitLong)
	requireNonZeroExit(t, err)
	if want := "raxol-ssh: too many join requests; try again later"; strings.TrimRight(stderr, "\r\n") != want {
		t.Fatalf("6th request: stderr %q, want %q", stderr, want)
	}
	if strings.Contains(owner.Screen(), joinPrompt) {
		t.Fatal("a request over the limit reached the owner")
	}
	// Another key still gets through to the owner.
	other := askJoin(t, srv, owner, "trent", id, 0, 0)
	owner.Type("n")
	requireTurnedAway(t, other)
}
