package cluster

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

func TestAfterNATSLosesItsDataTheNodesAnnounceEverythingAgain(t *testing.T) {
	t.Parallel()
	s := runNATS(t, t.TempDir(), server.RANDOM_PORT)
	port := natsPort(s)
	url, bucket := s.ClientURL(), uniqueBucket()
	a, b := join(t, url, bucket, "a"), join(t, url, bucket, "b")
	waitNodes(t, a, "a", "b")
	waitNodes(t, b, "a", "b")
	lostA, lostB := recordLost(a), recordLost(b)
	ctx := ctxT(t)
	if err := a.Announce(ctx, SessionEntry{ID: "s1", Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Announce(ctx, SessionEntry{ID: "s2", Owner: "o"}); err != nil {
		t.Fatal(err)
	}

	s.Shutdown()
	s.WaitForShutdown()
	down := time.Now()
	testkit.Eventually(t, 3*time.Second, func() bool { return !a.Connected() && !b.Connected() },
		"both nodes see NATS gone")
	start := time.Now()
	_, _, err := b.Lookup(ctx, "s1")
	if took := time.Since(start); !errors.Is(err, ErrUnavailable) || took > 100*time.Millisecond {
		t.Fatalf("b.Lookup while NATS is down = %v after %v, want ErrUnavailable at once", err, took)
	}
	t.Logf("Lookup while NATS is down: %v in %v", err, time.Since(start))
	if _, err := a.Sessions(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Sessions while NATS is down = %v, want ErrUnavailable", err)
	}
	// A session started during the outage is announced once NATS is back.
	if err := a.Announce(ctx, SessionEntry{ID: "s3", Owner: "o"}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Announce while NATS is down = %v, want ErrUnavailable", err)
	}
	// Longer than the TTL: being cut off is no reason to declare a peer dead.
	time.Sleep(testTTL + time.Second) // negative check over a real NATS outage: no event says "not declared"
	if !slices.Contains(nodeIDs(b), "a") || !slices.Contains(nodeIDs(a), "b") {
		t.Fatalf("during the outage a sees %v and b sees %v; want both", nodeIDs(a), nodeIDs(b))
	}

	s2 := runNATS(t, t.TempDir(), port) // same port, fresh store: the data is lost
	restarted := time.Now()
	t.Logf("NATS was down for %v", restarted.Sub(down).Round(time.Millisecond))
	raw := newRawStore(t, s2.ClientURL())
	testkit.Eventually(t, 5*time.Second, func() bool {
		for _, n := range []*Node{a, b} {
			if !n.Connected() {
				return false
			}
		}
		return raw.has(t, bucket+"_nodes", nodeKey("a")) && raw.has(t, bucket+"_nodes", nodeKey("b")) &&
			raw.has(t, bucket+"_sessions", sessKey("s1")) && raw.has(t, bucket+"_sessions", sessKey("s2")) &&
			raw.has(t, bucket+"_sessions", sessKey("s3"))
	}, "both node entries and sessions s1, s2, s3 stored again after the restart")
	t.Logf("entries re-announced %v after the restart", time.Since(restarted).Round(time.Millisecond))
	testkit.Eventually(t, 3*time.Second, func() bool {
		e, home, err := b.Lookup(ctx, "s1")
		return err == nil && e.Node == "a" && home.ID == "a"
	}, "b finds a's session s1 again")
	if e, _, err := a.Lookup(ctx, "s3"); err != nil || e.Node != "a" {
		t.Fatalf("a.Lookup(s3) = %+v, %v", e, err)
	}
	t.Logf("Lookup from b works %v after the restart", time.Since(restarted).Round(time.Millisecond))

	// Nobody was lost: a TTL later both still see each other, and no
	// callback fired.
	time.Sleep(testTTL) // negative check: a loss would be declared within a TTL
	waitNodes(t, a, "a", "b")
	waitNodes(t, b, "a", "b")
	if _, _, ok := lostA.get("b"); ok {
		t.Error("a declared b lost across the NATS restart")
	}
	if _, _, ok := lostB.get("a"); ok {
		t.Error("b declared a lost across the NATS restart")
	}
	// The watcher is live again: a new node is seen at once.
	join(t, s2.ClientURL(), bucket, "c")
	waitNodes(t, a, "a", "b", "c")
}

func TestJoinWhileNATSIsDown(t *testing.T) {
	testkit.EndToEnd(t) // here: its joins run on goroutines of their own before NATS starts
	t.Parallel()
	port := freePort(t)
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	bucket := uniqueBucket()

	// A short ctx: Join gives up with a clear error and leaves nothing behind.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	n, err := Join(ctx, testOptions(t, url, bucket, "a"))
	if n != nil || !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "node a") {
		t.Fatalf("Join with NATS down = %v, %v; want ErrUnavailable and the deadline, naming the node", n, err)
	}
	t.Logf("Join with NATS down gave up after %v: %v", time.Since(start).Round(time.Millisecond), err)

	// A longer ctx: Join waits for NATS to come up.
	type result struct {
		n   *Node
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		n, err := Join(ctx, testOptions(t, url, bucket, "b"))
		done <- result{n, err}
	}()
	time.Sleep(500 * time.Millisecond) // Join is retrying against no server; its attempts report no event
	s := runNATS(t, t.TempDir(), port)
	up := time.Now()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Join did not return after NATS came up")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.n.Close() })
	t.Logf("Join returned %v after NATS came up", time.Since(up).Round(time.Millisecond))
	if err := r.n.Announce(ctxT(t), SessionEntry{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	c := join(t, s.ClientURL(), bucket, "c")
	if e, _, err := c.Lookup(ctxT(t), "s1"); err != nil || e.Node != "b" {
		t.Fatalf("c.Lookup(s1) = %+v, %v", e, err)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestJoinAgainstNATSWithoutJetStreamSaysSo(t *testing.T) {
	t.Parallel()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats not ready")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = Join(ctx, testOptions(t, s.ClientURL(), uniqueBucket(), "a"))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "jetstream not enabled") {
		t.Fatalf("Join without JetStream = %v, want ErrUnavailable saying JetStream is not enabled", err)
	}
}

func TestAnOutageLongerThanTheTTLLosesNoNode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := runNATS(t, dir, server.RANDOM_PORT)
	port := natsPort(s)
	url, bucket := s.ClientURL(), uniqueBucket()
	a, b := join(t, url, bucket, "a"), join(t, url, bucket, "b")
	waitNodes(t, a, "a", "b")
	waitNodes(t, b, "a", "b")
	lostA, lostB := recordLost(a), recordLost(b)
	ctx := ctxT(t)
	for _, id := range []string{"s1", "ended"} {
		if err := a.Announce(ctx, SessionEntry{ID: id}); err != nil {
			t.Fatal(err)
		}
	}

	s.Shutdown()
	s.WaitForShutdown()
	testkit.Eventually(t, 3*time.Second, func() bool { return !a.Connected() }, "a sees NATS gone")
	// A session that ends during the outage is deleted once NATS is back.
	if err := a.Forget(ctx, "ended"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Forget while NATS is down = %v, want ErrUnavailable", err)
	}
	time.Sleep(testTTL + time.Second) // the outage outlasts the TTL: the scenario itself
	// Same store: the node entries are still there, older than the TTL,
	// and the restarted server expires them.
	s = runNATS(t, dir, port)
	restarted := time.Now()
	raw := newRawStore(t, s.ClientURL())
	testkit.Eventually(t, 5*time.Second, func() bool { return !raw.has(t, bucket+"_sessions", sessKey("ended")) },
		"the session forgotten during the outage is deleted")
	testkit.Eventually(t, 5*time.Second, func() bool {
		e, home, err := b.Lookup(ctx, "s1")
		return err == nil && e.Node == "a" && home.ID == "a"
	}, "b finds a's session s1 after the restart")
	t.Logf("Lookup from b works %v after the restart", time.Since(restarted).Round(time.Millisecond))
	time.Sleep(testTTL + time.Second) // negative check: a loss would be declared within a TTL
	if _, _, ok := lostA.get("b"); ok {
		t.Error("a declared b lost after an outage of NATS")
	}
	if _, _, ok := lostB.get("a"); ok {
		t.Error("b declared a lost after an outage of NATS")
	}
	if _, _, err := b.Lookup(ctx, "s1"); err != nil {
		t.Errorf("b.Lookup(s1) a TTL after the restart: %v", err)
	}
	waitNodes(t, a, "a", "b")
	waitNodes(t, b, "a", "b")
}

// Close closes the connection before it joins the goroutines: a request in
// flight when NATS died (a watcher's Stop deletes its consumer with one)
// then fails at once instead of waiting 5 s for its reply.
func TestCloseIsPromptRightAfterNATSDies(t *testing.T) {
	s, _, nodes := cluster(t, "a", "b")
	s.Shutdown()
	s.WaitForShutdown()
	for _, n := range nodes {
		start := time.Now()
		n.Close()
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s.Close took %v right after NATS died", n.ID(), took)
		}
	}
}
