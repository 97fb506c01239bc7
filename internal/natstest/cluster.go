package natstest

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// ClusterName is the NATS cluster name of RunCluster's servers.
const ClusterName = "natstest"

// account is the account the tests' clients use (no auth: the global one).
const account = "$G"

// Cluster is a JetStream cluster of embedded nats-servers on 127.0.0.1,
// started by RunCluster: each server has its own client and route ports
// and its own store directory, and routes to all the others. A server can
// be stopped and started again on the same ports and directory (Stop,
// Restart), as an operator restarts one. Its methods may be called from
// any goroutine.
//
// Stop is nats-server's Shutdown. To clients it looks like a kill -9
// (connections dropped, no lame-duck notice), but not to the other
// servers: it first steps down from the raft groups it leads (the
// JetStream meta group, streams), so they have a new leader at once,
// where a killed leader leaves its groups leaderless for JetStream's
// election timeout (4-9 s). Stop also closes its files cleanly.
//
// Kill is a kill -9 as the other servers see it too: every connection of
// the server (its clients', and its routes to and from each other
// server) is cut at once and no new one gets through, and only then is
// it shut down, so its step-downs reach nobody: the groups it led have
// no leader until JetStream's election timeout. To make that possible
// every server is reached through relays only: its clients through one
// on its client port (URL), and each other server through one of its
// own (route ports are not advertised, so no server learns another's
// real address).
type Cluster struct {
	t testing.TB

	mu      sync.Mutex
	servers []*server.Server // nil while stopped
	dirs    []string
	ports   []int // client ports (the relays')
	inner   []int // client ports (the servers')
	routes  []int // cluster (route) ports (the servers')

	killed       []int      // servers Kill cut off, until Restart
	clientRelays []*relay   // to server i's client port
	routeRelays  [][]*relay // [i][j]: server i's routes to server j
}

// RunCluster starts n (at least 1) nats-servers with JetStream forming one
// cluster named ClusterName, waits until every one is ready and the
// cluster has a JetStream meta leader that every server follows, and shuts
// them all down when t ends.
func RunCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("natstest: RunCluster(%d): at least one server", n)
	}
	testkit.EndToEnd(t)
	c := &Cluster{t: t, servers: make([]*server.Server, n), dirs: make([]string, n)}
	// t's temporary directories are removed by a cleanup registered by
	// its first TempDir; made here, before the servers' own cleanup, it
	// runs after it (cleanups run last first): a running server's files
	// are not removed under it ("directory not empty" failed a test when
	// a server wrote while they were removed).
	_ = t.TempDir()
	t.Cleanup(func() {
		for i := range n {
			c.Stop(i)
		}
		c.closeRelays()
	})
	// Ports are chosen before any server starts, as every server's
	// routes name every other one; so one may be taken before its server
	// binds it (by another test, or as the local port of a route another
	// server dials): then every server starts again on new ports.
	for attempt := 1; ; attempt++ {
		ports := freePorts(t, 3*n+n*(n-1))
		c.ports, c.inner, c.routes = ports[:n], ports[n:2*n], ports[2*n:3*n]
		for i := range n {
			c.dirs[i] = t.TempDir() // a try's servers leave nothing to the next's
		}
		err := c.makeRelays(ports[3*n:])
		for i := 0; err == nil && i < n; i++ {
			err = c.tryStart(i)
		}
		if err == nil {
			break
		}
		for i := range n {
			c.Stop(i)
		}
		c.closeRelays()
		if attempt == 3 {
			t.Fatalf("natstest: %v (3 tries, new ports each)", err)
		}
	}
	c.WaitMetaLeader()
	c.waitAllHeard()
	return c
}

// waitAllHeard waits (up to 20 s) until the meta leader has heard every
// server's statistics. JetStream places a stream's copy on a server that
// is down only if it has heard from it since its own start ("no suitable
// peers for placement, peer offline" otherwise, for as long as it stays
// down): a test that stops a server of a new cluster at once and then
// makes a three-copy bucket raced the first statsz (seen under a loaded
// -race run).
func (c *Cluster) waitAllHeard() {
	c.t.Helper()
	n := len(c.servers)
	c.wait(20*time.Second, "a meta leader that has heard from every server", func() bool {
		for _, s := range c.running() {
			if s.JetStreamIsLeader() {
				return len(s.JetStreamClusterPeers()) == n
			}
		}
		return false
	})
}

// freePorts returns n distinct ports free on 127.0.0.1 now.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("natstest: pick a port: %v", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// makeRelays starts every relay, the route relays on ports.
func (c *Cluster) makeRelays(ports []int) error {
	n := len(c.ports)
	c.clientRelays = make([]*relay, n)
	c.routeRelays = make([][]*relay, n)
	for i := range n {
		r, err := newRelay(fmt.Sprintf("127.0.0.1:%d", c.ports[i]), fmt.Sprintf("127.0.0.1:%d", c.inner[i]))
		if err != nil {
			return err
		}
		c.clientRelays[i] = r
		c.routeRelays[i] = make([]*relay, n)
		for j := range n {
			if j == i {
				continue
			}
			p := ports[0]
			ports = ports[1:]
			r, err := newRelay(fmt.Sprintf("127.0.0.1:%d", p), fmt.Sprintf("127.0.0.1:%d", c.routes[j]))
			if err != nil {
				return err
			}
			c.routeRelays[i][j] = r
		}
	}
	return nil
}

// relaysOf are the relays that carry server i's connections.
func (c *Cluster) relaysOf(i int) []*relay {
	rs := []*relay{c.clientRelays[i]}
	for j := range c.Len() {
		if j != i {
			rs = append(rs, c.routeRelays[i][j], c.routeRelays[j][i])
		}
	}
	return rs
}

func (c *Cluster) closeRelays() {
	for i, r := range c.clientRelays {
		if r != nil {
			r.close()
		}
		for _, rr := range c.routeRelays[i] {
			if rr != nil {
				rr.close()
			}
		}
	}
}

// Kill cuts every connection of server i at once and keeps new ones out,
// then shuts it down (its step-downs reaching nobody), keeping its ports
// and store for Restart: a kill -9 as clients and the other servers see
// it. Killing a stopped server does nothing.
func (c *Cluster) Kill(i int) {
	if c.Server(i) == nil {
		return
	}
	for _, r := range c.relaysOf(i) {
		r.cut()
	}
	c.Stop(i)
	c.mu.Lock()
	c.killed = append(c.killed, i)
	c.mu.Unlock()
}

// start starts server i on its ports and directory, or fails the test.
func (c *Cluster) start(i int) {
	c.t.Helper()
	if err := c.tryStart(i); err != nil {
		c.t.Fatal(err)
	}
}

// tryStart starts server i on its ports and directory.
func (c *Cluster) tryStart(i int) error {
	var routes []string
	for j := range c.Len() {
		if j != i {
			routes = append(routes, "nats-route://"+c.routeRelays[i][j].addr)
		}
	}
	s, err := server.NewServer(&server.Options{
		ServerName: fmt.Sprintf("n%d", i),
		Host:       "127.0.0.1", Port: c.inner[i],
		JetStream: true, StoreDir: c.dirs[i], NoLog: true, NoSigs: true,
		// Neither clients nor servers learn a server's own addresses:
		// every connection goes through the relays.
		// A route to an unknown server learned from another (gossip) is
		// dialed at the advertised address: one nobody listens on.
		Cluster: server.ClusterOpts{Name: ClusterName, Host: "127.0.0.1", Port: c.routes[i], NoAdvertise: true,
			Advertise: "127.0.0.1:1"},
		Routes: server.RoutesFromStr(strings.Join(routes, ",")),
	})
	if err != nil {
		return fmt.Errorf("natstest: nats-server n%d: %w", i, err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return fmt.Errorf("natstest: nats-server n%d not ready (ports %d, %d)", i, c.ports[i], c.routes[i])
	}
	c.mu.Lock()
	c.servers[i] = s
	c.mu.Unlock()
	return nil
}

// Len is the number of servers, stopped ones included.
func (c *Cluster) Len() int { return len(c.ports) }

// Server returns server i, or nil while it is stopped.
func (c *Cluster) Server(i int) *server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.servers[i]
}

// URL is server i's client URL (the same across restarts).
func (c *Cluster) URL(i int) string { return fmt.Sprintf("nats://127.0.0.1:%d", c.ports[i]) }

// URLs is every server's client URL, comma-separated: what a raxol-ssh
// node is given as --cluster-nats.
func (c *Cluster) URLs() string {
	urls := make([]string, c.Len())
	for i := range urls {
		urls[i] = c.URL(i)
	}
	return strings.Join(urls, ",")
}

// Stop shuts server i down (see Cluster on how that differs from a kill)
// and waits until it is gone; its store directory is kept for Restart.
// Stopping a stopped server does nothing.
func (c *Cluster) Stop(i int) {
	c.mu.Lock()
	s := c.servers[i]
	c.servers[i] = nil
	c.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// Restart starts stopped server i again on the same ports and store
// directory, and waits until it follows the cluster's meta leader again
// (or leads). It does not wait for its streams to catch up: see
// WaitStreamCurrent.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.Server(i) != nil {
		c.t.Fatalf("natstest: Restart(%d): the server is running", i)
	}
	c.mu.Lock()
	killed := slices.Contains(c.killed, i)
	c.killed = slices.DeleteFunc(c.killed, func(k int) bool { return k == i })
	c.mu.Unlock()
	if killed {
		for _, r := range c.relaysOf(i) {
			if err := r.open(); err != nil {
				c.t.Fatal(err)
			}
		}
	}
	c.start(i)
	c.WaitMetaLeader()
}

// WaitMetaLeader waits (up to 20 s, else the test fails) until one running
// server leads the JetStream meta group and every running server is
// current with it: until then JetStream API requests go unanswered.
func (c *Cluster) WaitMetaLeader() {
	c.t.Helper()
	c.wait(20*time.Second, "a JetStream meta leader every running server follows", func() bool {
		leaders := 0
		for _, s := range c.running() {
			if !s.JetStreamIsCurrent() {
				return false
			}
			if s.JetStreamIsLeader() {
				leaders++
			}
		}
		return leaders == 1
	})
}

// StreamLeader returns the index of the running server that leads the
// stream (a KV bucket's stream is "KV_<bucket>") of the tests' account, or
// -1 if none does now.
func (c *Cluster) StreamLeader(stream string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.servers {
		if s != nil && s.JetStreamIsStreamLeader(account, stream) {
			return i
		}
	}
	return -1
}

// WaitStreamLeader waits (up to 20 s, else the test fails) until a running
// server leads the stream, and returns its index.
func (c *Cluster) WaitStreamLeader(stream string) int {
	c.t.Helper()
	leader := -1
	c.wait(20*time.Second, "a leader of stream "+stream, func() bool {
		leader = c.StreamLeader(stream)
		return leader >= 0
	})
	return leader
}

// WaitStreamCurrent waits (up to 30 s, else the test fails) until the
// stream has a leader and, as that leader reports it, as many replicas as
// its configuration asks, each on a running server, online and current
// with it. A server that was just restarted may not hold its replica yet
// (it is not "assigned" it): asking the running servers alone would call
// such a stream current while only one copy is.
func (c *Cluster) WaitStreamCurrent(stream string) {
	c.t.Helper()
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, why := c.streamCurrent(stream)
		if ok {
			return
		}
		last = why
		if time.Now().After(deadline) {
			c.t.Fatalf("natstest: stream %s not current after 30s: %s", stream, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// streamCurrent asks the stream's leader about its replicas.
func (c *Cluster) streamCurrent(stream string) (bool, string) {
	leader := c.StreamLeader(stream)
	if leader < 0 {
		return false, "no leader"
	}
	nc, err := nats.Connect(c.URL(leader), nats.Timeout(2*time.Second))
	if err != nil {
		return false, err.Error()
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return false, err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return false, err.Error()
	}
	info, err := st.Info(ctx)
	if err != nil {
		return false, err.Error()
	}
	if info.Cluster == nil {
		return false, "no cluster info"
	}
	if info.Cluster.Leader == "" {
		return false, "the leader's info names no leader"
	}
	running := map[string]bool{}
	for i := range c.Len() {
		if c.Server(i) != nil {
			running[fmt.Sprintf("n%d", i)] = true
		}
	}
	if !running[info.Cluster.Leader] {
		return false, "leader " + info.Cluster.Leader + " is not running"
	}
	if got, want := len(info.Cluster.Replicas)+1, info.Config.Replicas; got < want {
		return false, fmt.Sprintf("%d of %d copies", got, want)
	}
	for _, r := range info.Cluster.Replicas {
		if !running[r.Name] || r.Offline || !r.Current {
			return false, fmt.Sprintf("replica %s: running %v, offline %v, current %v", r.Name, running[r.Name], r.Offline, r.Current)
		}
	}
	return true, ""
}

func (c *Cluster) running() []*server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*server.Server
	for _, s := range c.servers {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (c *Cluster) wait(d time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("natstest: no %s after %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
