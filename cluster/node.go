package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	// opTimeout bounds one KV operation, so that a call made while NATS is
	// slow or gone fails fast instead of waiting for the caller's ctx.
	opTimeout = 2 * time.Second
	// scanTimeout bounds one read of a whole bucket.
	scanTimeout = 5 * time.Second
	// reconnectWait is the pause between two attempts to reach NATS.
	reconnectWait = time.Second
	// joinRetry is the pause between two attempts of Join's setup.
	joinRetry = 250 * time.Millisecond
	// drainWait bounds how long a stopped watcher is drained.
	drainWait = 2 * time.Second
	// limitMarkerTTL is how long the marker of an expired node entry
	// lives; without it, watchers never see an expiry.
	limitMarkerTTL = time.Second
)

// errNotConnected is the cause wrapped with ErrUnavailable when the
// connection to NATS is down (or not yet up).
var errNotConnected = errors.New("not connected to NATS")

// SessionEntry is one session in the cluster's directory: where it lives
// and what a peer needs to route to it. It is stored as JSON under
// sess.<ID>.
type SessionEntry struct {
	ID       string    `json:"id"`
	Node     string    `json:"node"`  // home node id (set by Announce and Claim)
	Owner    string    `json:"owner"` // owner key fingerprint
	Detached bool      `json:"detached"`
	Headless bool      `json:"headless"`
	Agents   int       `json:"agents"`
	Updated  time.Time `json:"updated"`
	// Revision is the entry's KV revision, set on reads (Lookup, Sessions,
	// OnNodeLost, Claim's result) for compare-and-set. It is not stored.
	Revision uint64 `json:"-"`

	// StartedBy is, for a session an API key started over /mcp
	// (raxol_start), that key's owner key (session.Owner.Key: an id
	// derived from a hash of the key, never the key itself); "" for every
	// other session. raxol_list and raxol_stop on other nodes match it.
	StartedBy string `json:"started_by,omitempty"`
	// Created is when the session started (zero if unknown).
	Created time.Time `json:"created,omitzero"`
}

// NodeInfo is one live node, as its heartbeat describes it. It is stored as
// JSON under node.<ID>.
type NodeInfo struct {
	ID       string `json:"id"`
	HTTPURL  string `json:"http_url"`
	SSHAddr  string `json:"ssh_addr"`
	Sessions int    `json:"sessions"`
	Agents   int    `json:"agents"`
	Draining bool   `json:"draining"`
	// Seen is when the node's last heartbeat was stored (the NATS server's
	// clock; this node's own clock for itself).
	Seen time.Time `json:"seen"`
}

// Node is this process's membership in the cluster: its heartbeat, its
// view of the live nodes and its announced sessions.
//
// Goroutines: run (heartbeat, nodes watcher, resync after a reconnect) and
// reap (orphans of lost nodes, OnNodeLost callbacks), both started by Join
// and both ended and joined by Close or Drain. The NATS client's own
// goroutines end with the connection, which Close closes.
type Node struct {
	// Fixed at creation.
	opts     Options
	log      *slog.Logger
	nc       *nats.Conn
	js       jetstream.JetStream
	macKey   []byte
	sshSeed  []byte
	ctx      context.Context // the goroutines' life; cancelled by stop
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
	resyncCh chan struct{} // cap 1: a reconnect happened (for run)
	connCh   chan struct{} // cap 1: the first connect happened (for Join)
	reapCh   chan struct{} // cap 1: lost nodes are queued

	// Owned by the run goroutine (by Join before it starts).
	watcher jetstream.KeyWatcher
	// sessWatcher sees every change of the directory from its start: a
	// local session's entry written by another node is a claim lost.
	sessWatcher jetstream.KeyWatcher
	needResync  bool

	mu sync.Mutex // protects the following
	// nodesKV and sessKV are the buckets' handles, replaced by a resync.
	nodesKV, sessKV jetstream.KeyValue
	load            struct{ sessions, agents int }
	// lastBeat is when the last heartbeat that NATS stored was begun (this
	// node's clock): the lease of this node's sessions runs from it
	// (fencing.go).
	lastBeat time.Time
	// writable says the last heartbeat was stored; writableSince is when
	// the heartbeats began to be stored again after they were not (or
	// after Join). A peer is declared lost only on a TTL of silence
	// counted from both its last heartbeat seen and writableSince.
	writable      bool
	writableSince time.Time
	// mustVerify says the lease lapsed before the last stored heartbeat:
	// it holds again only once a resync re-announced every local session
	// (finding those claimed meanwhile).
	mustVerify bool
	draining   bool
	closed     bool
	// local holds the sessions this node announced (or claimed), with
	// the revision of their last write: re-announced after a reconnect.
	local map[string]SessionEntry
	// dirty holds local sessions whose last write failed; retried.
	dirty map[string]struct{}
	// forgets holds ids whose Forget could not reach NATS; retried.
	forgets map[string]struct{}
	// live holds the other live nodes, fed by the nodes watcher.
	live map[string]NodeInfo
	// heard is when each peer's heartbeat was last seen (this node's
	// clock): a put from the watcher, or its entry read by a sweep.
	heard map[string]time.Time
	// suspect holds the peers whose entry went (it expired, or a fresh
	// watcher's snapshot lacked it): each is read again, and declared
	// lost, only once it has been silent for a TTL while this node's own
	// heartbeats are stored (sweepSuspects).
	suspect map[string]struct{}
	// lostClaims holds the local sessions another node claimed, with that
	// node: never announced again from here, and refused by Fenced
	// (fencing.go).
	lostClaims  map[string]string
	onClaimLost []func(id string)
	// gone holds the peers this node saw leave or declared lost (until
	// they write again): their sessions may be claimed at once.
	gone      map[string]struct{}
	lost      []string // lost nodes waiting for the reaper
	callbacks []func(node string, orphans []SessionEntry) error
	// keepOnDrain reports the entries Drain leaves (KeepOnDrain).
	keepOnDrain func(id string) bool
	// replicas is the buckets' replica count (0 until decided, see
	// createBucket) and replicasWhy what decided it.
	replicas    int
	replicasWhy string
}

// Join validates o, connects to NATS, creates or opens the two buckets,
// writes this node's entry and reads the live nodes, then starts the
// heartbeat. It returns when the node entry is written and the node view
// is loaded, or when ctx ends.
//
// NATS may be down when Join is called: the connection keeps trying, and
// Join retries until ctx ends. If ctx ends first, Join closes everything it
// opened and returns an error matching both ErrUnavailable and ctx's
// error. So the ctx chooses how long a booting server waits for NATS.
func Join(ctx context.Context, o Options) (*Node, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	n := &Node{
		opts:       o,
		log:        o.Logger.With("node", o.NodeID),
		resyncCh:   make(chan struct{}, 1),
		connCh:     make(chan struct{}, 1),
		reapCh:     make(chan struct{}, 1),
		local:      map[string]SessionEntry{},
		dirty:      map[string]struct{}{},
		forgets:    map[string]struct{}{},
		live:       map[string]NodeInfo{},
		heard:      map[string]time.Time{},
		suspect:    map[string]struct{}{},
		lostClaims: map[string]string{},
		gone:       map[string]struct{}{},
	}
	if n.macKey, err = deriveKey(o.Secret, infoMAC); err != nil {
		return nil, fmt.Errorf("cluster: derive peer MAC key: %w", err)
	}
	if n.sshSeed, err = deriveKey(o.Secret, infoSSH); err != nil {
		return nil, fmt.Errorf("cluster: derive peer SSH key: %w", err)
	}
	if o.Replicas > 0 {
		n.setReplicas(o.Replicas, "configured")
	}
	copts := []nats.Option{
		nats.Name("raxol-" + o.NodeID),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(reconnectWait),
		nats.RetryOnFailedConnect(true),
		// No reconnect buffer: an operation during an outage fails at
		// once (and is not replayed later behind our back).
		nats.ReconnectBufSize(-1),
		nats.ConnectHandler(n.onConnect),
		nats.ReconnectHandler(n.onReconnect),
		nats.DisconnectErrHandler(n.onDisconnect),
		nats.ErrorHandler(n.onAsyncError),
	}
	if o.CredsFile != "" {
		copts = append(copts, nats.UserCredentials(o.CredsFile))
	}
	if o.CAFile != "" {
		copts = append(copts, nats.RootCAs(o.CAFile))
	}
	if o.CertFile != "" {
		copts = append(copts, nats.ClientCert(o.CertFile, o.KeyFile))
	}
	// n.ctx exists before the connection, whose handlers read it.
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.nc, err = nats.Connect(o.NATSURL, copts...)
	if err != nil {
		n.cancel()
		return nil, fmt.Errorf("cluster: connect to NATS %s: %w", redactURLs(o.NATSURL), err)
	}
	n.js, err = jetstream.New(n.nc)
	if err != nil {
		n.cancel()
		n.nc.Close()
		return nil, fmt.Errorf("cluster: JetStream on %s: %w", redactURLs(o.NATSURL), err)
	}
	retry := time.NewTimer(joinRetry)
	defer retry.Stop()
	// telling is the most telling failure seen: a server without
	// JetStream says so once, and an attempt cut by the deadline after it
	// says only that the deadline passed.
	var telling error
	for attempt := 1; ; attempt++ {
		err := n.setup(ctx, true)
		if err == nil {
			break
		}
		if telling == nil || !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			telling = err
		}
		if errors.Is(err, ErrReplicas) {
			// A configuration error: no retry will succeed.
			n.cancel()
			n.nc.Close()
			return nil, fmt.Errorf("cluster: join as node %s via %s: %w", o.NodeID, redactURLs(o.NATSURL), err)
		}
		if attempt == 1 && errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
			n.log.Warn("cluster: the NATS server answers without JetStream (run it with -js); retrying", "err", err)
		}
		n.log.Debug("cluster: join attempt failed", "attempt", attempt, "err", err)
		retry.Reset(joinRetry)
		select {
		case <-ctx.Done():
			// setup failed, so no nodes watcher is left; a sessions
			// watcher may be, and then the connection.
			if n.sessWatcher != nil {
				stopWatcher(n.sessWatcher)
				n.sessWatcher = nil
			}
			n.cancel()
			n.nc.Close()
			return nil, fmt.Errorf("cluster: join as node %s via %s: %w (%w); last telling attempt: %w",
				o.NodeID, redactURLs(o.NATSURL), ErrUnavailable, ctx.Err(), telling)
		case <-n.connCh:
		case <-retry.C:
		}
	}
	n.wg.Add(2)
	go n.run()  // owner: n; ended by stop
	go n.reap() // owner: n; ended by stop
	n.log.Info("cluster: joined", "describe", n.Describe(), "peers", len(n.live))
	return n, nil
}

// ID returns this node's id (Options.NodeID).
func (n *Node) ID() string { return n.opts.NodeID }

// Connected reports whether the connection to NATS is up now.
func (n *Node) Connected() bool { return n.nc.IsConnected() }

// Describe returns one line for the server's posture log: the node id, the
// NATS server reached (or "connecting"), the bucket prefix and the timings.
func (n *Node) Describe() string {
	server := "connecting"
	if n.nc.IsConnected() {
		server = n.nc.ConnectedUrlRedacted()
	} else if n.nc.IsClosed() {
		server = "closed"
	}
	return fmt.Sprintf("cluster node %s: NATS %s, buckets %s_nodes and %s_sessions, %s, heartbeat %v, node ttl %v",
		n.opts.NodeID, server, n.opts.Bucket, n.opts.Bucket, n.describeReplicas(), n.opts.Heartbeat, n.opts.TTL)
}

// Close stops the heartbeat and closes the NATS connection without removing
// anything: to its peers, the node looks crashed, and its entry and its
// sessions expire after Options.TTL. It waits for the node's goroutines to
// end. It is idempotent and always returns nil. Close must not be called
// from an OnNodeLost callback (it waits for the goroutine running it).
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	n.cancel()
	// Closing the connection before joining the goroutines fails a request
	// still waiting for its reply at once: a watcher's Stop deletes its
	// consumer with a request of its own, which otherwise waits 5 s when
	// NATS has just gone.
	n.nc.Close()
	n.stop()
	n.log.Info("cluster: node closed")
	return nil
}

// Drain leaves the cluster cleanly: it marks this node draining (peers'
// Nodes shows it, LeastLoaded skips it), stops the heartbeat, deletes the
// session entries whose home is this node and then the node entry, so
// peers see it gone at once. Lookup and Sessions still work afterwards;
// Announce and Claim fail with ErrClosed. Call Close after Drain to close
// the connection. If NATS cannot be reached, Drain returns an error
// matching ErrUnavailable (the entries then expire after Options.TTL) and
// may be called again. Like Close, Drain must not be called from an
// OnNodeLost callback.
func (n *Node) Drain(ctx context.Context) error {
	start := time.Now()
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("cluster: drain node %s: %w", n.ID(), ErrClosed)
	}
	n.draining = true
	n.mu.Unlock()
	n.stop()

	if !n.nc.IsConnected() {
		return fmt.Errorf("cluster: drain node %s: %w", n.ID(), unavailable(errNotConnected))
	}
	var errs []error
	if err := n.beat(ctx); err != nil {
		errs = append(errs, fmt.Errorf("mark draining: %w", err))
	}
	own := map[string]uint64{}
	n.mu.Lock()
	for id, e := range n.local {
		own[id] = e.Revision
	}
	n.mu.Unlock()
	if all, err := n.scanSessions(ctx); err != nil {
		errs = append(errs, fmt.Errorf("list sessions: %w", err))
	} else {
		for _, e := range all {
			if e.Node == n.ID() {
				own[e.ID] = e.Revision
			}
		}
	}
	deleted, kept := 0, 0
	for id, rev := range own {
		if n.kept(id) {
			kept++ // a peer adopts it
			continue
		}
		if err := n.deleteSession(ctx, id, rev); err != nil {
			errs = append(errs, fmt.Errorf("delete session %s: %w", id, err))
			continue
		}
		deleted++
		n.mu.Lock()
		delete(n.local, id)
		n.mu.Unlock()
	}
	if len(errs) == 0 {
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		err := n.nodes().Delete(octx, nodeKey(n.ID()))
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("delete node entry: %w", err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cluster: drain node %s: %w", n.ID(), n.opErr(ctx, errors.Join(errs...)))
	}
	n.log.Info("cluster: drained", "sessions_deleted", deleted, "sessions_left_for_adoption", kept, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// stop ends the node's goroutines and waits for them (once).
func (n *Node) stop() {
	n.stopOnce.Do(func() {
		n.cancel()
		n.wg.Wait()
	})
}

func (n *Node) nodes() jetstream.KeyValue {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nodesKV
}

func (n *Node) sessions() jetstream.KeyValue {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sessKV
}

// ready returns an error unless the node is open and connected. write
// says whether the caller writes (refused while draining too, and while
// this node's lease has lapsed).
func (n *Node) ready(write bool) error {
	n.mu.Lock()
	closed, draining := n.closed, n.draining
	lease := n.leaseLocked(time.Now())
	n.mu.Unlock()
	switch {
	case closed:
		return ErrClosed
	case write && draining:
		return fmt.Errorf("%w (draining)", ErrClosed)
	case !n.nc.IsConnected():
		return unavailable(errNotConnected)
	case write && !lease:
		// Degraded: a node that cannot renew its own lease claims nothing.
		return unavailable(ErrLeaseLapsed)
	}
	return nil
}

// opErr classifies err from a NATS operation: the caller's own ctx ending
// is returned as is; anything else is the directory being unavailable.
func (n *Node) opErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return unavailable(err)
}

func (n *Node) onConnect(nc *nats.Conn) {
	n.log.Info("cluster: connected to NATS", "server", nc.ConnectedUrlRedacted())
	select {
	case n.connCh <- struct{}{}:
	default:
	}
}

func (n *Node) onReconnect(nc *nats.Conn) {
	n.log.Info("cluster: reconnected to NATS; re-announcing", "server", nc.ConnectedUrlRedacted())
	n.signalResync()
}

func (n *Node) onDisconnect(_ *nats.Conn, err error) {
	if n.ctx != nil && n.ctx.Err() != nil {
		return // closing
	}
	n.mu.Lock()
	n.writable = false
	n.mu.Unlock()
	n.log.Warn("cluster: disconnected from NATS", "err", err)
}

func (n *Node) onAsyncError(_ *nats.Conn, sub *nats.Subscription, err error) {
	subj := ""
	if sub != nil {
		subj = sub.Subject
	}
	n.log.Warn("cluster: NATS error", "subject", subj, "err", err)
}

func (n *Node) signalResync() {
	select {
	case n.resyncCh <- struct{}{}:
	default:
	}
}

// redactURLs drops the user information from each comma-separated URL.
func redactURLs(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if u, err := url.Parse(p); err == nil && u.User != nil {
			u.User = nil
			p = u.String()
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}

func nodeKey(id string) string { return "node." + id }
func sessKey(id string) string { return "sess." + id }
