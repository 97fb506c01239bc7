package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// The lines a bridged terminal gets when the bridge cannot go on.
const (
	serverWentAwayLine       = "raxol-ssh: the session's server went away"
	directoryUnavailableLine = "raxol-ssh: the cluster directory is unavailable; try again"
	serverStoppingLine       = "raxol-ssh: the server is stopping"
)

// waitDirectory waits until n's directory has an entry for id for which
// ok holds.
func waitDirectory(t testing.TB, n *clusterNode, id string, ok func(cluster.SessionEntry) bool) {
	t.Helper()
	testkit.Eventually(t, waitLong, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), waitShort)
		defer cancel()
		all, err := n.ClusterSessions(ctx)
		if err != nil {
			return false
		}
		for _, e := range all {
			if e.ID == id && ok(e) {
				return true
			}
		}
		return false
	}, "the directory of node %s to list session %s", n.id, id)
}

func anyEntry(cluster.SessionEntry) bool { return true }

// click presses the counter's +1 button on c's terminal (focused at once,
// or after a tab) until want is on watcher's screen.
func click(t testing.TB, c, watcher *client, want string) {
	t.Helper()
	for _, keys := range []string{keyEnter, keyTab + keyEnter, keyTab + keyEnter} {
		c.send(keys)
		deadline := time.Now().Add(waitShort)
		for time.Now().Before(deadline) {
			if strings.Contains(watcher.Screen(), want) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Fatalf("%q never on the screen:\n%s", want, watcher.Screen())
}

// requireOnlyLine waits for c to end with a non-zero status and exactly
// one line on its stderr: want.
func requireOnlyLine(t testing.TB, c *client, want string) {
	t.Helper()
	err, stderr := c.WaitExit(t, waitLong)
	requireNonZeroExit(t, err)
	if got := strings.TrimRight(stderr, "\r\n"); got != want {
		t.Fatalf("stderr %q, want exactly %q", stderr, want)
	}
}

// requireLastLine waits for c to end with a non-zero status and want as
// the last line of its stderr, there once.
func requireLastLine(t testing.TB, c *client, want string) {
	t.Helper()
	err, stderr := c.WaitExit(t, waitLong)
	requireNonZeroExit(t, err)
	if lastLine(stderr) != want || strings.Count(stderr, want) != 1 {
		t.Fatalf("stderr %q, want %q once, as its last line", stderr, want)
	}
}

// TestClusterJoinThroughAnotherNode: a second human joins the owner's
// session on node A through node C. The owner on A is asked, with the
// joiner's own user, key and address; approved as driver, the joiner sees
// the app and its keys reach the session. A drain of C then ends the
// bridged terminal as C's own, and the session goes on at A.
func TestClusterJoinThroughAnotherNode(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startCluster(t, ns.ClientURL(), "a", "b", "c")
	a, c := nodes[0], nodes[2]

	owner := connect(t, a.ssh, clientOpts{user: "alice", w: 160, h: 40})
	owner.WaitFor(t, "alice's count: 0", waitLong)
	se := onlySession(t, a.testServer)
	waitDirectory(t, c, se.ID, anyEntry)

	bobKey := newKey(t)
	bob := connectCmd(t, c.ssh, clientOpts{user: "bob", key: bobKey}, "join "+se.ID)
	bobFP := gossh.FingerprintSHA256(bobKey.PublicKey())
	bobAddr := bob.conn.LocalAddr().String() // as C sees bob
	owner.WaitFor(t, func(s string) bool {
		return armedPrompt(joinPrompt)(s) && strings.Contains(s, "bob ("+bobFP+") from "+bobAddr)
	}, waitLong)
	testkit.Eventually(t, waitLong, func() bool { return strings.Contains(bob.Stderr(), "asking the session's owner") },
		"the joiner on C to be told it waits for the owner")
	owner.Type("r") // driver

	bob.WaitFor(t, "alice's count: 0", waitLong)
	bob.WaitFor(t, "driver", waitLong)
	testkit.Eventually(t, waitLong, func() bool { return hasAttached(se, "bob (driver)") }, "the joiner in presence at A")
	click(t, bob, owner, "alice's count: 1")
	bob.WaitFor(t, "alice's count: 1", waitLong)
	if n := c.Sessions().Count(); n != 0 {
		t.Fatalf("node C holds %d sessions, want 0 (the join is bridged)", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Errorf("drain of C: %v", err)
	}
	requireLastLine(t, bob, serverStoppingLine)
	testkit.Eventually(t, waitLong, func() bool { return !hasAttached(se, "bob (driver)") }, "the joiner to leave at A")
	if owner.Exited() {
		t.Fatal("the owner's terminal on A ended with the drain of C")
	}
	click(t, owner, owner, "alice's count: 2")
}

// TestClusterResumeThroughAnotherNode: the owner's dropped session on A
// is resumed through node B with `resume <id>`, window changes reach the
// home, and, dropped again, it is listed by the picker of a plain login
// on B, which resumes it there too; quitting there ends it with status 0.
func TestClusterResumeThroughAnotherNode(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startClusterWith(t, ns.ClientURL(), server.Options{SSH: server.SSHOptions{ResumeGrace: time.Minute}}, "a", "b", "c")
	a, b := nodes[0], nodes[1]

	key := newKey(t)
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: key})
	owner.WaitFor(t, "alice's count: 0", waitLong)
	se := onlySession(t, a.testServer)
	click(t, owner, owner, "alice's count: 1")
	drop(t, owner)
	waitDetached(t, se)

	r := connectCmd(t, b.ssh, clientOpts{user: "alice", key: key, w: 100, h: 30}, "resume "+se.ID)
	r.WaitFor(t, "alice's count: 1", waitLong)
	if strings.Contains(r.Stderr(), "asking") {
		t.Fatalf("the owner's resume through B asked: %q", r.Stderr())
	}
	testkit.Eventually(t, waitLong, func() bool { return terminals(se) == 1 }, "the resumed terminal at A")
	click(t, r, r, "alice's count: 2")

	// A window change through the bridge: the attach panel, drawn at A,
	// says the window is too narrow for it.
	r.Key(keyCtrlO)
	r.WaitFor(t, "Bearer token", waitLong)
	r.Resize(12, 24)
	r.WaitFor(t, func(s string) bool { return strings.Contains(strings.Join(strings.Fields(s), " "), "too narrow") }, waitLong)
	r.Resize(100, 30)
	r.WaitFor(t, "Bearer token", waitLong)
	r.Key(keyCtrlO)

	drop(t, r)
	waitDetached(t, se)
	waitDirectory(t, b, se.ID, func(e cluster.SessionEntry) bool { return e.Detached })

	p := connect(t, b.ssh, clientOpts{user: "alice", key: key})
	p.WaitFor(t, "detached sessions", waitLong)
	p.WaitFor(t, "session "+se.ID, waitLong)
	p.Key(keyEnter)
	p.WaitFor(t, "alice's count: 2", waitLong)
	testkit.Eventually(t, waitLong, func() bool { return terminals(se) == 1 }, "the picked terminal at A")
	if n := b.Sessions().Count(); n != 0 {
		t.Fatalf("node B holds %d sessions, want 0 (the resume is bridged)", n)
	}

	// The owner quits through the bridge: the session ends at A, and the
	// exit status 0 comes back through B.
	p.Key(keyCtrlC)
	if err, stderr := p.WaitExit(t, waitLong); err != nil {
		t.Fatalf("quit through B: exit %v, stderr %q", err, stderr)
	}
	testkit.Eventually(t, waitLong, func() bool { return a.Sessions().Count() == 0 }, "the session to end at A")
}

// TestClusterJoinCodeThroughAnotherNode: a session started headless on A
// is joined with its one-time code (typed loosely) through C, once; a
// wrong code through C gets the unknown-session line, as on A.
func TestClusterJoinCodeThroughAnotherNode(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startCluster(t, ns.ClientURL(), "a", "b", "c")
	a, c := nodes[0], nodes[2]

	se, end, err := a.StartHeadless(session.Owner{User: "robot"})
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	code, err := a.IssueJoinCode(se.ID)
	if err != nil {
		t.Fatal(err)
	}
	waitDirectory(t, c, se.ID, func(e cluster.SessionEntry) bool { return e.Headless })

	wrong := connectCmd(t, c.ssh, clientOpts{user: "carol"}, "join "+se.ID+" WRONGCODE2")
	requireOnlyLine(t, wrong, noSuchSessionLine)

	carol := connectCmd(t, c.ssh, clientOpts{user: "carol"}, "join "+se.ID+" "+strings.ToLower(code[:5])+"-"+code[5:])
	carol.WaitFor(t, "count: 0", waitLong)
	testkit.Eventually(t, waitLong, func() bool { return terminals(se) == 1 }, "the joiner's terminal at A")

	// The code works once (asked once the joiner, now its owner-driver,
	// left).
	carol.Close()
	testkit.Eventually(t, waitLong, func() bool { return terminals(se) == 0 }, "the joiner to leave at A")
	again := connectCmd(t, c.ssh, clientOpts{user: "carol"}, "join "+se.ID+" "+code)
	requireOnlyLine(t, again, noSuchSessionLine)
}

// TestClusterUnknownSessionThroughAnotherNode: an id no node holds gets
// exactly the unknown-session line through any node; with NATS down, a
// join of a session this node does not hold is refused in one clear line,
// at once.
func TestClusterUnknownSessionThroughAnotherNode(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startCluster(t, ns.ClientURL(), "a", "b")
	a, b := nodes[0], nodes[1]
	connect(t, a.ssh, clientOpts{user: "alice"}).WaitFor(t, "alice's count: 0", waitLong)
	se := onlySession(t, a.testServer)
	waitDirectory(t, b, se.ID, anyEntry)

	for _, cmd := range []string{"join AAAAAAAAAAAAAAAAAAAAAAAA", "resume AAAAAAAAAAAAAAAAAAAAAAAA", "join AAAAAAAAAAAAAAAAAAAAAAAA ABCDEFGHJK", "join no.such.id", "resume " + se.ID} {
		requireOnlyLine(t, connectCmd(t, b.ssh, clientOpts{user: "dave"}, cmd), noSuchSessionLine)
	}

	ns.Shutdown()
	ns.WaitForShutdown()
	testkit.Eventually(t, waitLong, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := b.ClusterSessions(ctx)
		return err != nil
	}, "node B to see NATS gone")
	start := time.Now()
	requireOnlyLine(t, connectCmd(t, b.ssh, clientOpts{user: "dave"}, "join "+se.ID), directoryUnavailableLine)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %s", d)
	}
}

// TestClusterCarriedIdentityNeedsThePeerKey: a client that is not a peer
// node sending the carried-identity variables, to the home or through
// another node, is treated as itself: the owner's key it names does not
// resume the owner's session, and its join request shows its own user,
// key and address.
func TestClusterCarriedIdentityNeedsThePeerKey(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startCluster(t, ns.ClientURL(), "a", "b")
	a, b := nodes[0], nodes[1]

	aliceKey := newKey(t)
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: aliceKey, w: 160, h: 40})
	owner.WaitFor(t, "alice's count: 0", waitLong)
	se := onlySession(t, a.testServer)
	waitDirectory(t, b, se.ID, anyEntry)

	forged := map[string]string{
		"RAXOL_BRIDGE_USER": "alice",
		"RAXOL_BRIDGE_KEY":  gossh.FingerprintSHA256(aliceKey.PublicKey()),
		"RAXOL_BRIDGE_ADDR": "10.9.8.7:4242",
		"RAXOL_BRIDGE_NODE": "b",
	}
	for name, addr := range map[string]string{"A, its home": a.ssh, "B": b.ssh} {
		c := connectCmd(t, addr, clientOpts{user: "mallory", env: forged}, "resume "+se.ID)
		err, stderr := c.WaitExit(t, waitLong)
		requireNonZeroExit(t, err)
		if got := strings.TrimRight(stderr, "\r\n"); got != noSuchSessionLine {
			t.Fatalf("resume with forged identity variables through %s: stderr %q, want exactly %q", name, stderr, noSuchSessionLine)
		}
	}
	if terminals(se) != 1 {
		t.Fatalf("%d terminals on the owner's session, want the owner's alone", terminals(se))
	}

	for _, addr := range []string{a.ssh, b.ssh} {
		malloryKey := newKey(t)
		m := connectCmd(t, addr, clientOpts{user: "mallory", key: malloryKey, env: forged}, "join "+se.ID)
		who := "mallory (" + gossh.FingerprintSHA256(malloryKey.PublicKey()) + ") from " + m.conn.LocalAddr().String()
		s := owner.WaitFor(t, func(s string) bool { return armedPrompt(joinPrompt)(s) && strings.Contains(s, who) }, waitLong)
		if strings.Contains(s, "10.9.8.7") {
			t.Fatalf("the join prompt shows the forged address:\n%s", s)
		}
		owner.Type("n")
		requireLastLine(t, m, noSuchSessionLine)
		owner.WaitFor(t, func(s string) bool { return !strings.Contains(s, joinPrompt) }, waitLong)
	}
}

// TestClusterKilledHomeEndsBridgedTerminal: node A dies without a word
// while a terminal is bridged to it from C; once A leaves the cluster,
// the bridged terminal is told in one line that the session's server went
// away and ends, in bounded time, and no goroutine is left behind. Not
// parallel: goleak looks at the whole process.
func TestClusterKilledHomeEndsBridgedTerminal(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startCluster(t, ns.ClientURL(), "a", "b", "c")
	a, c := nodes[0], nodes[2]
	key := newKey(t)
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: key})
	owner.WaitFor(t, "alice's count: 0", waitLong)
	se := onlySession(t, a.testServer)
	waitDirectory(t, c, se.ID, anyEntry)

	ignore := goleak.IgnoreCurrent()
	second := connectCmd(t, c.ssh, clientOpts{user: "alice", key: key}, "join "+se.ID)
	second.WaitFor(t, "alice's count: 0", waitLong)
	click(t, second, owner, "alice's count: 1")

	killed := time.Now()
	a.KillCluster()
	requireOnlyLine(t, second, serverWentAwayLine)
	took := time.Since(killed)
	t.Logf("the bridged terminal on C ended %s after A was killed (TTL 3 s)", took.Round(100*time.Millisecond))
	if took > 12*time.Second {
		t.Errorf("the bridged terminal ended %s after the kill; want within the TTL and a few seconds", took)
	}
	second.Close()
	testkit.Eventually(t, waitLong, func() bool { return terminals(se) == 1 }, "the bridged terminal to leave at A")
	// The owner's terminal on A made goroutines of its own meanwhile;
	// with it gone too, nothing made since the baseline may be left.
	owner.Close()
	testkit.Eventually(t, waitLong, func() bool { return a.Sessions().Count() == 0 }, "the owner's session to end at A")
	goleak.VerifyNone(t, ignore)
}

// TestClusterBridgedConnectionsCountTheClientAddress: at the home, a
// bridged connection counts against the per-address limit as its
// client's address, not the bridging node's: two terminals bridged from
// C (whose address already has the owner's connection to A) fit under a
// limit of 2, and a client over its own address's limit at the home is
// refused there as if it had come straight to it.
func TestClusterBridgedConnectionsCountTheClientAddress(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startClusterWith(t, ns.ClientURL(), server.Options{Limits: server.Limits{MaxPerIP: 2}}, "a", "b", "c")
	a, c := nodes[0], nodes[2]
	key := newKey(t)
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: key, local: "127.0.0.1"})
	owner.WaitFor(t, "alice's count: 0", waitLong)
	se := onlySession(t, a.testServer)
	waitDirectory(t, c, se.ID, anyEntry)

	// Both bridges reach A from 127.0.0.1, where the owner is connected.
	for _, local := range []string{"127.0.0.2", "127.0.0.3"} {
		connectCmd(t, c.ssh, clientOpts{user: "alice", key: key, local: local}, "join "+se.ID).WaitFor(t, "alice's count: 0", waitLong)
	}
	testkit.Eventually(t, waitLong, func() bool { return terminals(se) == 3 }, "three terminals at A")

	// 127.0.0.2 has one connection at A (bridged) and one more direct:
	// a third, bridged, is over its limit at A.
	connectCmd(t, a.ssh, clientOpts{user: "alice", key: key, local: "127.0.0.2"}, "join "+se.ID).WaitFor(t, "alice's count: 0", waitLong)
	over := connectCmd(t, c.ssh, clientOpts{user: "alice", key: key, local: "127.0.0.2"}, "join "+se.ID)
	requireOnlyLine(t, over, "raxol-ssh: too many connections from 127.0.0.2 (limit 2); close one and try again")
	if n := terminals(se); n != 4 {
		t.Fatalf("%d terminals at A, want 4", n)
	}
}

// TestClusterDroppedHomeConnectionEndsBridgedTerminal: when the bridge's
// connection to the home drops (the home's process died; the directory
// does not know yet), the bridged terminal is told at once, in one line.
func TestClusterDroppedHomeConnectionEndsBridgedTerminal(t *testing.T) {
	a, bridged := bridgedOwner(t)

	dropped := time.Now()
	a.CloseSSH()
	requireOnlyLine(t, bridged, serverWentAwayLine)
	if d := time.Since(dropped); d > 2*time.Second {
		t.Errorf("the bridged terminal was told %s after its connection dropped; want at once", d)
	}
}

// TestClusterDrainedHomeTellsBridgedTerminal: a home that drains ends a
// terminal bridged to it with its own reason, passed through the bridge,
// not with "went away" (it leaves the cluster as it drains).
func TestClusterDrainedHomeTellsBridgedTerminal(t *testing.T) {
	a, bridged := bridgedOwner(t)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Errorf("drain of A: %v", err)
	}
	requireOnlyLine(t, bridged, serverStoppingLine)
}

// bridgedOwner starts nodes a and b, logs alice in on a, and joins her
// session from b with her key: a's node and the bridged terminal.
func bridgedOwner(t *testing.T) (*clusterNode, *client) {
	t.Helper()
	ns := runNATS(t, t.TempDir(), -1)
	nodes := startCluster(t, ns.ClientURL(), "a", "b")
	a, b := nodes[0], nodes[1]
	key := newKey(t)
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: key})
	owner.WaitFor(t, "alice's count: 0", waitLong)
	se := onlySession(t, a.testServer)
	waitDirectory(t, b, se.ID, anyEntry)
	bridged := connectCmd(t, b.ssh, clientOpts{user: "alice", key: key}, "join "+se.ID)
	bridged.WaitFor(t, "alice's count: 0", waitLong)
	return a, bridged
}
