package server_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
	sshagent "golang.org/x/crypto/ssh/agent"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// requireRefused waits for c's session to end with a non-zero status and a
// "raxol-ssh: " reason on stderr containing want.
func requireRefused(t testing.TB, c *client, want string) {
	t.Helper()
	err, stderr := c.WaitExit(t, waitLong)
	requireNonZeroExit(t, err)
	if !strings.Contains(stderr, "raxol-ssh: ") || !strings.Contains(stderr, want) {
		t.Fatalf("stderr %q, want a raxol-ssh: reason containing %q", stderr, want)
	}
}

// waitCount waits until the server has n live sessions.
func waitCount(t testing.TB, srv *testServer, n int) {
	t.Helper()
	testkit.Eventually(t, waitLong, func() bool { return srv.Sessions().Count() == n },
		"want %d live sessions, have %d", n, srv.Sessions().Count())
}

// waitConnections waits until n SSH connections hold admission slots:
// the slots of closed connections are released when the server sees them
// close, which can be a moment after their sessions ended.
func waitConnections(t testing.TB, srv *testServer, n int) {
	t.Helper()
	testkit.Eventually(t, waitLong, func() bool { return srv.SSHConnections() == n },
		"want %d SSH connections admitted, have %d", n, srv.SSHConnections())
}

// TestMaxConnections: over the server-wide cap a connection is told why
// and refused; a freed slot admits the next one.
func TestMaxConnections(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{Limits: server.Limits{MaxConnections: 2}})
	a := connect(t, srv.SSHAddr(), clientOpts{})
	b := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, a)
	waitDemo(t, b)

	c := connect(t, srv.SSHAddr(), clientOpts{})
	requireRefused(t, c, "server is full")
	c.Close()
	if n := srv.Sessions().Count(); n != 2 {
		t.Errorf("%d live sessions, want 2", n)
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_limit_rejections_total{limit="max_connections"}`); v < 1 {
		t.Errorf(`raxol_ssh_limit_rejections_total{limit="max_connections"} = %v, want >= 1`, v)
	}

	a.Close()
	waitCount(t, srv, 1)
	waitConnections(t, srv, 1)
	d := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, d)
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_connections_total{outcome="rejected"}`); v < 1 {
		t.Errorf(`raxol_ssh_connections_total{outcome="rejected"} = %v, want >= 1`, v)
	}
}

// TestMaxPerIP: over the per-address cap a connection is refused, while
// another address is still admitted.
func TestMaxPerIP(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{Limits: server.Limits{MaxPerIP: 2}})
	a := connect(t, srv.SSHAddr(), clientOpts{local: "127.0.0.1"})
	b := connect(t, srv.SSHAddr(), clientOpts{local: "127.0.0.1"})
	waitDemo(t, a)
	waitDemo(t, b)

	c := connect(t, srv.SSHAddr(), clientOpts{local: "127.0.0.1"})
	requireRefused(t, c, "too many connections from 127.0.0.1")
	c.Close()

	// The cap is per address: 127.0.0.2 is another client.
	other := connect(t, srv.SSHAddr(), clientOpts{local: "127.0.0.2"})
	waitDemo(t, other)
	other.Close()
	waitCount(t, srv, 2)

	a.Close()
	waitCount(t, srv, 1)
	waitConnections(t, srv, 1)
	d := connect(t, srv.SSHAddr(), clientOpts{local: "127.0.0.1"})
	waitDemo(t, d)
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_limit_rejections_total{limit="max_per_ip"}`); v < 1 {
		t.Errorf(`raxol_ssh_limit_rejections_total{limit="max_per_ip"} = %v, want >= 1`, v)
	}
}

// TestMaxSessionsPerUser: one key gets one session, under any user name;
// the slot is freed when the session ends, even if its connection stays
// open.
func TestMaxSessionsPerUser(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{Limits: server.Limits{MaxSessionsPerUser: 1}})
	key := newKey(t)
	a := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	waitDemo(t, a)

	b := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key})
	requireRefused(t, b, "too many sessions")
	b.Close()
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_limit_rejections_total{limit="max_sessions_per_user"}`); v < 1 {
		t.Errorf(`raxol_ssh_limit_rejections_total{limit="max_sessions_per_user"} = %v, want >= 1`, v)
	}

	// Another user name with the same key is the same owner; the same
	// user name with another key is someone else.
	bob := connect(t, srv.SSHAddr(), clientOpts{user: "bob", key: key})
	requireRefused(t, bob, "too many sessions for your key")
	bob.Close()
	alice2 := connect(t, srv.SSHAddr(), clientOpts{user: "alice"})
	waitDemo(t, alice2)

	// Closing the session but keeping the connection (as a multiplexing
	// client does) ends the session and frees the slot: a new session on
	// the same connection is admitted.
	if err := a.sess.Close(); err != nil {
		t.Fatalf("close session: %v", err)
	}
	waitCount(t, srv, 1)
	again := newSessionOn(t, a)
	waitDemo(t, again)
}

// TestSessionCapCountsTheKeyNotTheUserName: one key logging in under many
// user names holds no more sessions than the cap, and the refusal says
// the cap is the key's.
func TestSessionCapCountsTheKeyNotTheUserName(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{Limits: server.Limits{MaxSessionsPerUser: 2}})
	key := newKey(t)
	for i := range 2 {
		waitDemo(t, connect(t, srv.SSHAddr(), clientOpts{user: fmt.Sprintf("name%d", i), key: key}))
	}
	for i := 2; i < 12; i++ {
		c := connect(t, srv.SSHAddr(), clientOpts{user: fmt.Sprintf("name%d", i), key: key})
		requireRefused(t, c, "too many sessions for your key")
		c.Close()
	}
	if n := srv.Sessions().Count(); n != 2 {
		t.Fatalf("one key under 12 user names holds %d sessions, cap 2", n)
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_limit_rejections_total{limit="max_sessions_per_user"}`); v != 10 {
		t.Errorf(`raxol_ssh_limit_rejections_total{limit="max_sessions_per_user"} = %v, want 10`, v)
	}
	// Another key is not held back by this one's sessions.
	waitDemo(t, connect(t, srv.SSHAddr(), clientOpts{user: "name0"}))
}

// newSessionOn opens another session with a PTY on c's connection.
func newSessionOn(t testing.TB, c *client) *client {
	t.Helper()
	return connectOn(t, c.conn, clientOpts{})
}

// TestIdleTimeout: input keeps a session alive; output alone does not.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{Limits: server.Limits{IdleTimeout: time.Second}})
	connected := time.Now() // the quiet client's input (terminal replies) comes later
	quiet := connect(t, srv.SSHAddr(), clientOpts{})
	busy := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, quiet)
	waitDemo(t, busy)
	start := time.Now()

	busy.Key(keyTab) // to the search input
	done := make(chan struct{})
	var typed []byte // owned by the goroutine until done
	go func() {
		defer close(done)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for i := 0; time.Since(start) < 2500*time.Millisecond; i++ {
			<-tick.C
			k := "abcdefghij"[i%10]
			if _, err := busy.stdin.Write([]byte{k}); err != nil {
				t.Errorf("busy client: write: %v", err)
				return
			}
			typed = append(typed, k)
		}
	}()

	err, stderr := quiet.WaitExit(t, 5*time.Second)
	requireNonZeroExit(t, err)
	if !strings.Contains(stderr, "no input") {
		t.Errorf("quiet client's stderr %q, want it to mention no input", stderr)
	}
	if d := time.Since(connected); d < time.Second {
		t.Errorf("quiet client disconnected %v after connecting, idle timeout 1s", d)
	}

	<-done
	if busy.Exited() {
		_, stderr := busy.WaitExit(t, waitShort)
		t.Fatalf("typing client was disconnected after %v: %q", time.Since(start), stderr)
	}
	if len(typed) < 7 {
		t.Fatalf("typed only %q in 2.5s", typed)
	}
	// Its screen still follows its typing.
	busy.WaitFor(t, "Search: "+string(typed), waitShort)
	busy.Type("Z")
	busy.WaitFor(t, "Search: "+string(typed)+"Z", waitShort)
	if busy.Exited() || srv.Sessions().Count() != 1 {
		t.Fatalf("typing client's session ended")
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_connections_total{outcome="idle_timeout"}`); v != 1 {
		t.Errorf(`raxol_ssh_connections_total{outcome="idle_timeout"} = %v, want 1`, v)
	}
}

// TestMaxChannelsPerConnection: one connection cannot open session
// channels without bound; the ones over the cap are refused with a reason,
// the session already running is unharmed, and closing channels frees
// their places.
func TestMaxChannelsPerConnection(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{Limits: server.Limits{MaxChannelsPerConnection: 3}})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, c)
	var open []gossh.Channel
	for range 2 {
		ch, reqs, err := c.conn.OpenChannel("session", nil)
		if err != nil {
			t.Fatalf("channel within the cap refused: %v", err)
		}
		go gossh.DiscardRequests(reqs)
		open = append(open, ch)
	}
	for range 20 {
		_, _, err := c.conn.OpenChannel("session", nil)
		var oce *gossh.OpenChannelError
		if !errors.As(err, &oce) || oce.Reason != gossh.ResourceShortage || !strings.Contains(oce.Message, "too many sessions on one connection (at most 3)") {
			t.Fatalf("channel over the cap: %v, want a resource-shortage refusal naming the cap", err)
		}
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_limit_rejections_total{limit="sessions_per_connection"}`); v != 20 {
		t.Errorf(`raxol_ssh_limit_rejections_total{limit="sessions_per_connection"} = %v, want 20`, v)
	}
	// Other channel types are refused as before.
	if _, _, err := c.conn.OpenChannel("direct-tcpip", nil); err == nil {
		t.Error("a direct-tcpip channel was accepted")
	}
	// The running session still answers.
	c.Key(keyCtrlO)
	c.WaitFor(t, "Attach an agent", waitShort)
	// A closed channel frees its place.
	for _, ch := range open {
		_ = ch.Close()
	}
	testkit.Eventually(t, waitLong, func() bool {
		ch, reqs, err := c.conn.OpenChannel("session", nil)
		if err != nil {
			return false
		}
		go gossh.DiscardRequests(reqs)
		_ = ch.Close()
		return true
	}, "no channel admitted after the others closed")
}

// TestConnectionWithoutSessionsIsClosedWhenIdle: an authenticated
// connection that never opens a session does not hold its slot for ever.
func TestConnectionWithoutSessionsIsClosedWhenIdle(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{Limits: server.Limits{IdleTimeout: time.Second}})
	conn, err := dialSSH(t, srv.SSHAddr(), clientOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- conn.Wait() }()
	select {
	case <-done:
		if d := time.Since(start); d < time.Second {
			t.Fatalf("closed after %v, before the idle timeout", d)
		}
	case <-time.After(waitLong):
		t.Fatal("an idle connection without sessions stayed open")
	}
}

// TestMaxHTTPConnections: connections beyond the cap are not served until
// one closes, so a flood of idle connections cannot grow the server.
func TestMaxHTTPConnections(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{Limits: server.Limits{MaxHTTPConnections: 2}})
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", srv.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	hc := &http.Client{Timeout: 500 * time.Millisecond}
	if resp, err := hc.Get("http://" + srv.HTTPAddr() + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("a third connection was served while two were open")
	}
	_ = idle[0].Close()
	testkit.Eventually(t, waitLong, func() bool {
		resp, err := hc.Get("http://" + srv.HTTPAddr() + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, "no request served after a connection closed")
}

// TestEnvRequestsAreBounded: a client cannot grow the server by sending
// environment variables without end before its shell; the session works.
func TestEnvRequestsAreBounded(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	conn, err := dialSSH(t, srv.SSHAddr(), clientOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sess, err := conn.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Setenv("BIG", strings.Repeat("v", 32<<10)); err == nil {
		t.Error("a 32 KiB variable was accepted")
	}
	accepted := 0
	for i := range 100 {
		if sess.Setenv(fmt.Sprintf("K%d", i), "v") == nil {
			accepted++
		}
	}
	if accepted != 64 {
		t.Errorf("%d of 100 small variables accepted, want 64", accepted)
	}
	_ = sess.Close()
	// The same connection still gets a working session.
	c := connectOn(t, conn, clientOpts{})
	waitDemo(t, c)
}

// TestMaxHTTPPerIP: one address cannot take every HTTP slot; over its cap
// it is told why, and other addresses are served.
func TestMaxHTTPPerIP(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{Limits: server.Limits{MaxHTTPPerIP: 2}})
	dialFrom := func(local string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", srv.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	get := func(local string) (int, string) {
		tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}).DialContext}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: waitShort}).Get("http://" + srv.HTTPAddr() + "/healthz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	idle := []net.Conn{dialFrom("127.0.0.1"), dialFrom("127.0.0.1")}
	testkit.Eventually(t, waitLong, func() bool {
		code, body := get("127.0.0.1")
		return code == http.StatusTooManyRequests && strings.Contains(body, "too many connections from your address")
	}, "a third connection from one address was not refused with a reason")
	if code, body := get("127.0.0.2"); code != http.StatusOK {
		t.Fatalf("another address: %d %q", code, body)
	}
	// (Scraped from the other address: this one is at its cap.)
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + srv.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if v, _ := metricValue(string(mb), `raxol_mcp_rejections_total{reason="too_many_connections"}`); v < 1 {
		t.Errorf(`raxol_mcp_rejections_total{reason="too_many_connections"} = %v, want >= 1`, v)
	}
	_ = idle[0].Close()
	testkit.Eventually(t, waitLong, func() bool { code, _ := get("127.0.0.1"); return code == http.StatusOK },
		"no connection from the address served after one of its others closed")
}

// TestForwardingIsRefused: agent forwarding is refused like port
// forwarding (the request, and an agent channel opened by the client),
// X11 forwarding too, and the session goes on.
func TestForwardingIsRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	conn, err := dialSSH(t, srv.SSHAddr(), clientOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sess, err := conn.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sshagent.RequestAgentForwarding(sess); err == nil {
		t.Error("agent forwarding was granted")
	}
	if ok, err := sess.SendRequest("auth-agent-req@openssh.com", true, nil); ok || err != nil {
		t.Errorf("auth-agent-req@openssh.com = %v, %v; want refused", ok, err)
	}
	x11 := gossh.Marshal(struct {
		Single bool
		Proto  string
		Cookie string
		Screen uint32
	}{false, "MIT-MAGIC-COOKIE-1", "0123456789abcdef0123456789abcdef", 0})
	if ok, err := sess.SendRequest("x11-req", true, x11); ok || err != nil {
		t.Errorf("x11-req = %v, %v; want refused", ok, err)
	}
	for _, typ := range []string{"auth-agent@openssh.com", "x11", "direct-streamlocal@openssh.com"} {
		if ch, _, err := conn.OpenChannel(typ, nil); err == nil {
			_ = ch.Close()
			t.Errorf("a %s channel was accepted", typ)
		}
	}
	for _, req := range []string{"tcpip-forward", "streamlocal-forward@openssh.com"} {
		if ok, _, err := conn.SendRequest(req, true, gossh.Marshal(struct {
			Addr string
			Port uint32
		}{"127.0.0.1", 0})); ok || err != nil {
			t.Errorf("global %s = %v, %v; want refused", req, ok, err)
		}
	}
	_ = sess.Close()
	// The connection still gets a working session.
	c := connectOn(t, conn, clientOpts{})
	waitDemo(t, c)
}
