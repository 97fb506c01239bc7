package natstest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
type Cluster struct {
	t testing.TB

	mu      sync.Mutex
	servers []*server.Server // nil while stopped
	dirs    []string
	ports   []int // client ports
	routes  []int // cluster (route) ports
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
	})
	// Ports are chosen before any server starts, as every server's
	// routes name every other one; so one may be taken before its server
	// binds it (by another test, or as the local port of a route another
	// server dials): then every server starts again on new ports.
	for attempt := 1; ; attempt++ {
		c.ports, c.routes = freePorts(t, n), freePorts(t, n)
		for i := range n {
			c.dirs[i] = t.TempDir() // a try's servers leave nothing to the next's
		}
		var err error
		for i := range n {
			if err = c.tryStart(i); err != nil {
				break
			}
		}
		if err == nil {
			break
		}
		for i := range n {
			c.Stop(i)
		}
		if attempt == 3 {
			t.Fatalf("natstest: %v (3 tries, new ports each)", err)
		}
	}
	c.WaitMetaLeader()
	return c
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
	for j, p := range c.routes {
		if j != i {
			routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
		}
	}
	s, err := server.NewServer(&server.Options{
		ServerName: fmt.Sprintf("n%d", i),
		Host:       "127.0.0.1", Port: c.ports[i],
		JetStream: true, StoreDir: c.dirs[i], NoLog: true, NoSigs: true,
		Cluster: server.ClusterOpts{Name: ClusterName, Host: "127.0.0.1", Port: c.routes[i]},
		Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
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
