package server_test

import (
	"strings"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// maxPendingPrompts is how many prompts the owner's terminal holds at
// once (tui's maxPendingApprovals): join requests beyond it are refused
// at once.
const maxPendingPrompts = 16

// pendingJoins counts the join requests se lists as pending.
func pendingJoins(se *session.Session) int {
	n := 0
	for _, p := range se.Pending() {
		if p.Kind == session.PendingJoin {
			n++
		}
	}
	return n
}

// TestCapsJoinRequestsUnderConcurrency: 30 strangers ask at once (one
// barrier) to join a session whose owner is at the terminal: the join
// requests the session lists as pending (what its agents read), sampled
// while they race, never pass what the owner's terminal holds; the ones
// over it are refused at once with the one line for a refused join; the
// ones left wait for the owner; once they leave, none is listed.
func TestCapsJoinRequestsUnderConcurrency(t *testing.T) {
	t.Parallel()
	const racers = 30
	srv := startServer(t, server.Options{Limits: server.Limits{MaxPerIP: 100}})
	owner := connect(t, srv.SSHAddr(), clientOpts{user: "owner"})
	id := waitDemo(t, owner)
	se, ok := srv.Sessions().Get(id)
	if !ok {
		t.Fatal("no session")
	}

	stop := make(chan struct{})
	peaks, wait := peakOf(stop, map[string]func() int{"pending": func() int { return pendingJoins(se) }})
	rs := race(t, srv.SSHAddr(), racers, true, func(int) clientOpts { return clientOpts{user: "stranger", command: "join " + id} })
	ended := func() (n int) {
		for _, r := range rs {
			if r.done() {
				n++
			}
		}
		return n
	}
	testkit.Eventually(t, waitLong, func() bool { return ended()+pendingJoins(se) == racers },
		"%d joiners ended, %d listed pending, of %d", ended(), pendingJoins(se), racers)
	close(stop)
	wait()

	if got := peaks["pending"].Load(); got > maxPendingPrompts {
		t.Errorf("%d join requests listed pending at one instant; the owner's terminal holds %d", got, maxPendingPrompts)
	}
	if n := pendingJoins(se); n != maxPendingPrompts {
		t.Errorf("%d join requests pending once the race settled, want %d", n, maxPendingPrompts)
	}
	for i, r := range rs {
		if why := r.refusal(); r.done() && !strings.Contains(why, "no such session, or you may not join it") {
			t.Errorf("joiner %d ended with %q", i, why)
		}
	}

	closeAll(rs)
	testkit.Eventually(t, waitLong, func() bool { return pendingJoins(se) == 0 },
		"%d join requests still listed after every joiner left", pendingJoins(se))
}
