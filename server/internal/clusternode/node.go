package clusternode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"time"

	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/server/internal/saver"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/store"
)

// Config is what a Node is made with: the cluster membership it keeps
// and what it asks of the server.
type Config struct {
	Cluster  *cluster.Node
	Log      *slog.Logger
	Metrics  *metrics.Metrics
	Sessions *session.Manager // the sessions this node holds
	// Entries is what the directory should say about this node's
	// sessions now, by id (the server's lifecycle and its agents).
	Entries func() map[string]cluster.SessionEntry
	// Saver is the server's saver, set after the node starts (nil: none).
	Saver *atomic.Pointer[saver.Saver]
	// ClientIP is the address a request came from, as the server's
	// trusted proxies tell it: what a passed-on request carries.
	ClientIP func(*http.Request) string
	// ServePeer answers a peer's request to /_raxol/peer/<op>, its proof
	// and its body checked (peer is the node that signed it).
	ServePeer func(w http.ResponseWriter, r *http.Request, peer, op string, body []byte)
	// BodyTimeout bounds the reading of a peer request's body.
	BodyTimeout time.Duration
}

// Node is the server's membership in a cluster: the one owner of what the
// directory says about this node's sessions.
type Node struct {
	node *cluster.Node

	// What it uses of the server, given at New.
	log         *slog.Logger
	metrics     *metrics.Metrics
	sessions    *session.Manager
	entries     func() map[string]cluster.SessionEntry
	saver       *atomic.Pointer[saver.Saver]
	clientIP    func(*http.Request) string
	servePeer   func(w http.ResponseWriter, r *http.Request, peer, op string, body []byte)
	bodyTimeout time.Duration

	poke   chan struct{}      // a session changed: sync now
	flush  chan chan struct{} // AnnounceNow: closed after the next sync
	cancel context.CancelFunc
	done   chan struct{}

	// transport carries the requests passed on to other nodes: one pool
	// of connections per peer, kept warm (the default keeps 2 idle).
	transport *http.Transport
	proxy     *httputil.ReverseProxy // newProxy

	// announced is what the directory was last told, by session id;
	// owned by the sync goroutine.
	announced map[string]cluster.SessionEntry
	drainOnce sync.Once
}

// New starts keeping the directory up to date for the node c.Cluster;
// Drain or Close stop it.
func New(c Config) *Node {
	runCtx, stop := context.WithCancel(context.Background())
	n := &Node{
		node:        c.Cluster,
		log:         c.Log,
		metrics:     c.Metrics,
		sessions:    c.Sessions,
		entries:     c.Entries,
		saver:       c.Saver,
		clientIP:    c.ClientIP,
		servePeer:   c.ServePeer,
		bodyTimeout: c.BodyTimeout,
		poke:        make(chan struct{}, 1),
		flush:       make(chan chan struct{}),
		cancel:      stop,
		done:        make(chan struct{}),
		announced:   make(map[string]cluster.SessionEntry),
		transport:   peerTransport(),
	}
	n.proxy = n.newProxy()
	// A session another node claimed is given up by the next sync; Fenced
	// refuses its requests meanwhile.
	n.node.OnClaimLost(func(string) { n.Changed() })
	go n.run(runCtx)
	return n
}

// Cluster is the node's membership, for the server's peer requests and
// bridges.
func (n *Node) Cluster() *cluster.Node { return n.node }

// Transport is the HTTP transport to the other nodes.
func (n *Node) Transport() *http.Transport { return n.transport }

// ID is this node's id.
func (n *Node) ID() string { return n.node.ID() }

// peerTransport is the HTTP transport to the other nodes.
func peerTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	t.IdleConnTimeout = time.Minute
	return t
}

// syncEvery is how often the directory is brought up to date without a
// poke (agents counted, sessions ended elsewhere).
const syncEvery = time.Second

// Changed asks the sync goroutine to bring the directory up to date now.
func (n *Node) Changed() {
	select {
	case n.poke <- struct{}{}:
	default:
	}
}

func (n *Node) run(ctx context.Context) {
	defer close(n.done)
	t := time.NewTicker(syncEvery)
	defer t.Stop()
	var flushed []chan struct{}
	for {
		n.sync(ctx)
		for _, f := range flushed {
			close(f)
		}
		flushed = flushed[:0]
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-n.poke:
		case f := <-n.flush:
			flushed = append(flushed, f)
		}
	}
}

// sync tells the directory what changed since the last sync: sessions
// started or changed are announced, ended ones forgotten. A failed write
// is tried again at the next sync (the entry is not marked as told).
func (n *Node) sync(ctx context.Context) {
	now := n.entries()
	agents := 0
	for id, e := range now {
		agents += e.Agents
		if n.node.ClaimLost(id) {
			n.GiveUp(id)
			continue
		}
		old, told := n.announced[id]
		if told && sameEntry(old, e) {
			continue
		}
		if err := n.node.Announce(ctx, e); err != nil {
			if errors.Is(err, cluster.ErrClaimLost) {
				n.GiveUp(id)
			} else if ctx.Err() == nil {
				n.log.Debug("cluster: announce failed; retried", "session", id, "err", err)
			}
			continue
		}
		n.announced[id] = e
	}
	for id := range n.announced {
		if _, live := now[id]; live {
			continue
		}
		if err := n.node.Forget(ctx, id); err != nil && ctx.Err() == nil {
			n.log.Debug("cluster: forget failed; retried", "session", id, "err", err)
			continue
		}
		delete(n.announced, id)
	}
	n.node.SetLoad(len(now), agents)
}

func sameEntry(a, b cluster.SessionEntry) bool {
	return a.Owner == b.Owner && a.Detached == b.Detached && a.Headless == b.Headless && a.Agents == b.Agents &&
		a.StartedBy == b.StartedBy
}

// AnnounceWait bounds AnnounceNow's wait for the directory write of a
// session just started or stopped.
const AnnounceWait = 3 * time.Second

// AnnounceNow waits (at most AnnounceWait) until the sync goroutine has
// brought the directory up to date, so that a session just started or
// stopped is known to every node when the caller hears of it.
func (n *Node) AnnounceNow(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, AnnounceWait)
	defer cancel()
	done := make(chan struct{})
	select {
	case n.flush <- done:
		select {
		case <-done:
			return
		case <-n.done:
			return // drained or closed: the directory is no longer written
		case <-ctx.Done():
		}
	case <-n.done:
		return
	case <-ctx.Done():
	}
	n.log.Warn("cluster: the directory was not updated in time; other nodes learn of the change with the next sync", "waited", AnnounceWait)
}

// MovedReason is what the terminals of a session are told when another
// node claimed it.
const MovedReason = "this session moved to another node of the cluster; reconnect to resume it there"

// GiveUp ends this node's copy of session id, which another node claimed
// (its directory entry names that node now): its record is left alone
// (the winner's snapshot is not saved over, nor deleted), its terminals
// are told it moved, its agents lose their connections, and the
// directory entry, the winner's, is not touched (Forget leaves an entry
// naming another node).
func (n *Node) GiveUp(id string) {
	se, ok := n.sessions.Get(id)
	if !ok {
		return
	}
	n.log.Warn("cluster: another node claimed a session this node held; ending this node's copy without saving it",
		"session", id)
	n.saver.Load().Abandon(se)
	n.sessions.EndCause(id, session.Ended(MovedReason))
}

// Fenced returns nil while this node may acknowledge writes to session id;
// else why not (cluster.Node.Fenced): another node claimed it, or this
// node's lease on its sessions lapsed.
func (n *Node) Fenced(id string) error { return n.node.Fenced(id) }

// Drain takes this node's sessions out of the directory and leaves the
// cluster: peers stop sending it requests at once.
func (n *Node) Drain(ctx context.Context) error {
	var err error
	n.drainOnce.Do(func() {
		n.cancel()
		<-n.done
		if derr := n.node.Drain(ctx); derr != nil {
			err = fmt.Errorf("cluster drain: %w", derr)
		}
	})
	return err
}

// Close closes the connection to NATS (after Drain, or without it: what
// a crash looks like to the peers).
func (n *Node) Close() {
	n.cancel()
	<-n.done
	_ = n.node.Close()
	n.transport.CloseIdleConnections()
}

// Describe is the posture line's cluster field.
func (n *Node) Describe() string { return n.node.Describe() }

// SnapshotStore is the cluster's store of session snapshots: a JetStream
// KV bucket beside the directory's, so that any node can adopt a lost
// node's sessions; it has as many replicas as the directory's buckets.
func (n *Node) SnapshotStore() (store.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), saver.StoreTimeout)
	defer cancel()
	return store.OpenKV(ctx, n.node.Conn(), n.node.Bucket()+"_snapshots", store.KVOptions{Replicas: n.node.Replicas()})
}
