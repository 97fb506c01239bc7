package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/server/internal/saver"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/store"
)

// DefaultClusterJoinTimeout bounds how long a clustered server's start
// waits for NATS before it fails.
const DefaultClusterJoinTimeout = 15 * time.Second

// ClusterOptions make the server one node of a cluster: its sessions are
// in a directory on NATS JetStream KV, and HTTP for a session another
// node holds is passed to that node. The zero value (no NATSURL) is a
// single node, which uses no NATS at all.
type ClusterOptions struct {
	// Options are the node's: NATS URL and credentials, node id, where
	// peers reach it, the cluster secret. Empty HTTPURL and SSHAddr are
	// taken from the server's own listeners when they listen on a
	// specific address (not 0.0.0.0 or ::).
	cluster.Options
	// SecretFile holds the cluster secret (cluster.ReadSecret), read when
	// Options.Secret is empty.
	SecretFile string
	// JoinTimeout bounds the wait for NATS at start; zero means
	// DefaultClusterJoinTimeout.
	JoinTimeout time.Duration
}

// enabled reports whether the options ask for a cluster.
func (o ClusterOptions) enabled() bool { return o.NATSURL != "" }

// clusterNode is the server's membership in a cluster: the one owner of
// what the directory says about this node's sessions.
type clusterNode struct {
	node *cluster.Node

	// What it uses of the server, given at join.
	log         *slog.Logger
	metrics     *metrics.Metrics
	sessions    *session.Manager
	life        *lifecycle
	agents      *mcpbridge.Bridge            // agents attached, for the directory
	persist     *atomic.Pointer[saver.Saver] // the saver, set after join (nil: none)
	admit       *admission                   // bridged connections' addresses
	httpProxies trustedProxies
	bodyTimeout time.Duration // of a peer's control request
	control     *controlEndpoint

	poke   chan struct{}      // a session changed: sync now
	flush  chan chan struct{} // syncNow: closed after the next sync
	cancel context.CancelFunc
	done   chan struct{}

	// transport carries the requests passed on to other nodes: one pool
	// of connections per peer, kept warm (the default keeps 2 idle).
	transport *http.Transport
	proxy     *httputil.ReverseProxy // newProxy
	// peer is the node's SSH key toward its peers (cluster_ssh.go).
	peer *peerSSH

	// announced is what the directory was last told, by session id;
	// owned by the sync goroutine.
	announced map[string]cluster.SessionEntry
	drainOnce sync.Once
}

// joinCluster joins the cluster of the options, with the listeners'
// addresses for the node's own where the options leave them empty, and
// starts keeping the directory up to date.
func (s *Server) joinCluster(sshLn, httpLn net.Listener) error {
	o := s.opts.Cluster
	co := o.Options
	if co.HTTPURL == "" && httpLn != nil {
		if a, ok := specificAddr(httpLn.Addr()); ok {
			co.HTTPURL = "http://" + a
		}
	}
	if co.SSHAddr == "" && sshLn != nil {
		if a, ok := specificAddr(sshLn.Addr()); ok {
			co.SSHAddr = a
		}
	}
	if len(co.Secret) == 0 && o.SecretFile != "" {
		secret, err := cluster.ReadSecret(o.SecretFile)
		if err != nil {
			return s.opts.optionError("Options.Cluster.SecretFile", err)
		}
		co.Secret = secret
	}
	if co.Logger == nil {
		co.Logger = s.log
	}
	timeout := o.JoinTimeout
	if timeout <= 0 {
		timeout = DefaultClusterJoinTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	node, err := cluster.Join(ctx, co)
	if err != nil {
		if errors.Is(err, cluster.ErrReplicas) {
			return s.opts.optionError("Options.Cluster.Replicas", err)
		}
		return fmt.Errorf("server: join the cluster at %s: %w", co.NATSURL, err)
	}
	peer, err := newPeerSSH(node)
	if err != nil {
		_ = node.Close()
		return fmt.Errorf("server: cluster node %s: %w", co.NodeID, err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	c := &clusterNode{
		peer:        peer,
		node:        node,
		log:         s.log,
		metrics:     s.metrics,
		sessions:    s.sessions,
		life:        s.life,
		agents:      s.bridge,
		persist:     &s.persist,
		admit:       s.admit,
		httpProxies: s.httpProxies,
		bodyTimeout: s.opts.MCP.BodyTimeout,
		control:     s.control,
		poke:        make(chan struct{}, 1),
		flush:       make(chan chan struct{}),
		cancel:      stop,
		done:        make(chan struct{}),
		announced:   make(map[string]cluster.SessionEntry),
		transport:   peerTransport(),
	}
	c.proxy = c.newProxy()
	// A session another node claimed is given up by the next sync; Fenced
	// refuses its requests meanwhile.
	node.OnClaimLost(func(string) { c.changed() })
	s.cluster = c
	go c.run(runCtx)
	return nil
}

// peerTransport is the HTTP transport to the other nodes.
func peerTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	t.IdleConnTimeout = time.Minute
	return t
}

// specificAddr returns a's host:port when its host is one peers can dial.
func specificAddr(a net.Addr) (string, bool) {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return "", false
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		return "", false
	}
	return a.String(), true
}

// clusterSyncEvery is how often the directory is brought up to date
// without a poke (agents counted, sessions ended elsewhere).
const clusterSyncEvery = time.Second

// changed asks the sync goroutine to bring the directory up to date now.
// The cluster node observes the lifecycle (sessionObserver): the
// directory follows what the lifecycle shows of its sessions.
func (c *clusterNode) sessionOwned(*session.Session, bool, string) {}
func (c *clusterNode) sessionHandedOut(*session.Session)           {}
func (c *clusterNode) sessionsChanged()                            { c.changed() }

var _ sessionObserver = (*clusterNode)(nil)

func (c *clusterNode) changed() {
	if c == nil {
		return
	}
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

func (c *clusterNode) run(ctx context.Context) {
	defer close(c.done)
	t := time.NewTicker(clusterSyncEvery)
	defer t.Stop()
	var flushed []chan struct{}
	for {
		c.sync(ctx)
		for _, f := range flushed {
			close(f)
		}
		flushed = flushed[:0]
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.poke:
		case f := <-c.flush:
			flushed = append(flushed, f)
		}
	}
}

// sync tells the directory what changed since the last sync: sessions
// started or changed are announced, ended ones forgotten. A failed write
// is tried again at the next sync (the entry is not marked as told).
func (c *clusterNode) sync(ctx context.Context) {
	now := c.directoryEntries()
	agents := 0
	for id, e := range now {
		agents += e.Agents
		if c.node.ClaimLost(id) {
			c.giveUp(id)
			continue
		}
		old, told := c.announced[id]
		if told && sameEntry(old, e) {
			continue
		}
		if err := c.node.Announce(ctx, e); err != nil {
			if errors.Is(err, cluster.ErrClaimLost) {
				c.giveUp(id)
			} else if ctx.Err() == nil {
				c.log.Debug("cluster: announce failed; retried", "session", id, "err", err)
			}
			continue
		}
		c.announced[id] = e
	}
	for id := range c.announced {
		if _, live := now[id]; live {
			continue
		}
		if err := c.node.Forget(ctx, id); err != nil && ctx.Err() == nil {
			c.log.Debug("cluster: forget failed; retried", "session", id, "err", err)
			continue
		}
		delete(c.announced, id)
	}
	c.node.SetLoad(len(now), agents)
}

// movedReason is what the terminals of a session are told when another
// node claimed it.
const movedReason = "this session moved to another node of the cluster; reconnect to resume it there"

// giveUp ends this node's copy of session id, which another node claimed
// (its directory entry names that node now): its record is left alone
// (the winner's snapshot is not saved over, nor deleted), its terminals
// are told it moved, its agents lose their connections, and the
// directory entry, the winner's, is not touched (Forget leaves an entry
// naming another node).
func (c *clusterNode) giveUp(id string) {
	se, ok := c.sessions.Get(id)
	if !ok {
		return
	}
	c.log.Warn("cluster: another node claimed a session this node held; ending this node's copy without saving it",
		"session", id)
	c.persist.Load().Abandon(se)
	c.sessions.EndCause(id, session.Ended(movedReason))
}

// fenced returns nil while this node may acknowledge writes to session id
// (always on a single node); else why not (cluster.Node.Fenced): another
// node claimed it, or this node's lease on its sessions lapsed.
func (c *clusterNode) fenced(id string) error {
	if c == nil {
		return nil
	}
	return c.node.Fenced(id)
}

func sameEntry(a, b cluster.SessionEntry) bool {
	return a.Owner == b.Owner && a.Detached == b.Detached && a.Headless == b.Headless && a.Agents == b.Agents &&
		a.StartedBy == b.StartedBy
}

// directoryEntries is what the directory should say about this node's
// sessions now.
func (c *clusterNode) directoryEntries() map[string]cluster.SessionEntry {
	list := c.sessions.List()
	out := make(map[string]cluster.SessionEntry, len(list))
	c.life.mu.Lock()
	for _, se := range list {
		e := cluster.SessionEntry{ID: se.ID, Owner: se.Owner.KeyFingerprint, Headless: true, Created: se.Created}
		if ls, ok := c.life.sessions[se.ID]; ok && ls.sshOwned {
			e.Headless = false
			e.Detached = ls.primary == nil && !ls.detachedAt.IsZero()
		} else if ok {
			e.StartedBy = ls.startedBy
		}
		out[se.ID] = e
	}
	c.life.mu.Unlock()
	for id, e := range out {
		e.Agents = c.agents.Clients(id)
		out[id] = e
	}
	return out
}

// drain takes this node's sessions out of the directory and leaves the
// cluster: peers stop sending it requests at once.
func (c *clusterNode) drain(ctx context.Context) error {
	if c == nil {
		return nil
	}
	var err error
	c.drainOnce.Do(func() {
		c.cancel()
		<-c.done
		if derr := c.node.Drain(ctx); derr != nil {
			err = fmt.Errorf("cluster drain: %w", derr)
		}
	})
	return err
}

// close closes the connection to NATS (after drain, or without it: what a
// crash looks like to the peers).
func (c *clusterNode) close() {
	if c == nil {
		return
	}
	c.cancel()
	<-c.done
	_ = c.node.Close()
	c.transport.CloseIdleConnections()
}

// describe is the posture line's cluster field.
func (c *clusterNode) describe() string {
	if c == nil {
		return "none (single node)"
	}
	return c.node.Describe()
}

// peerKey marks a request's context as a verified peer's.
type peerKey struct{}

// fromPeer reports whether r came from a node of the cluster (its proof
// of the secret verified).
func fromPeer(r *http.Request) bool {
	_, ok := r.Context().Value(peerKey{}).(string)
	return ok
}

// servePeerChecked refuses a request that claims to come from a peer
// without proof of the cluster secret, and marks one with proof, so that
// its X-Forwarded-For is believed and it is never passed on again; then
// next serves it.
func (c *clusterNode) servePeerChecked(w http.ResponseWriter, r *http.Request, next http.Handler) {
	peer, err := c.node.VerifyRequest(r)
	switch {
	case err != nil:
		c.refuseForged(w, r, err)
		return
	case peer != "":
		r = r.WithContext(context.WithValue(r.Context(), peerKey{}, peer))
	}
	if strings.HasPrefix(r.URL.Path, peerPathPrefix) {
		c.servePeer(w, r, peer) // cluster_mcp.go
		return
	}
	next.ServeHTTP(w, r)
}

// serveSession serves /sessions/<id>/...: with local when this node holds
// the session, else passed to its home node. A session the directory
// does not know gets local's answer for an unknown session, so an
// unknown session and a wrong token look alike from any node.
func (c *clusterNode) serveSession(w http.ResponseWriter, r *http.Request, local http.Handler) {
	id := sessionIDOf(r.URL.Path)
	if id == "" {
		local.ServeHTTP(w, r)
		return
	}
	if _, ok := c.sessions.Get(id); ok {
		if c.node.ClaimLost(id) {
			// Another node claimed it: nothing is served here any more.
			c.refuseMoved(w)
			return
		}
		// A node whose lease lapsed (degraded: it cannot reach NATS)
		// keeps serving: reads are answered, and a change is applied but
		// answered not_saved, since the record cannot hold it (and may
		// be adopted elsewhere meanwhile): nothing is acknowledged.
		local.ServeHTTP(w, r)
		return
	}
	if fromPeer(r) {
		local.ServeHTTP(w, r)
		return
	}
	_, home, err := c.node.Lookup(r.Context(), id)
	switch {
	case err == nil && home.ID != c.node.ID():
		c.forward(w, r, home)
	case errors.Is(err, cluster.ErrUnavailable):
		w.Header().Set("Retry-After", "5")
		http.Error(w, "the cluster directory is unavailable; try again", http.StatusServiceUnavailable)
	default:
		local.ServeHTTP(w, r)
	}
}

// refuseMoved answers a request for a session another node claimed with
// 503 and a line the agent can act on (a degraded node, whose lease only
// lapsed, still serves its sessions).
func (c *clusterNode) refuseMoved(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "this session moved to another node of the cluster; retry to reach it there", http.StatusServiceUnavailable)
}

// sessionIDOf is the <id> of /sessions/<id>/..., or "".
func sessionIDOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/sessions/")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// homeKey carries, in a request's context, the URL of the node the proxy
// passes it to.
type homeKey struct{}

// newProxy is the one reverse proxy of the node: it passes a request to
// the URL under homeKey and streams the answer back, Streamable HTTP
// responses, its GET stream and legacy SSE alike (flushed as they come).
// The Host header is kept, so home checks it as if the client had come
// to it; the request carries this node's proof of the secret and the
// client's address alone in X-Forwarded-For (home believes a verified
// peer, and the client was already found here).
func (c *clusterNode) newProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(pr.In.Context().Value(homeKey{}).(*url.URL))
			pr.Out.Host = pr.In.Host
			for name := range pr.Out.Header {
				if cluster.IsPeerHeader(name) {
					pr.Out.Header.Del(name)
				}
			}
			pr.Out.Header["X-Forwarded-For"] = []string{c.httpProxies.clientIP(pr.In)}
			c.node.SignRequest(pr.Out)
		},
		Transport:     c.transport,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(c.log.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				c.log.Warn("cluster: the session's server did not answer", "url", r.URL.Host, "err", err)
			}
			http.Error(w, "the session's server cannot be reached", http.StatusBadGateway)
		},
	}
}

// forward passes r to home through the node's proxy.
func (c *clusterNode) forward(w http.ResponseWriter, r *http.Request, home cluster.NodeInfo) {
	target, err := url.Parse(home.HTTPURL)
	if err != nil || target.Host == "" {
		c.log.Warn("cluster: a peer's HTTP URL is not usable", "node", home.ID, "url", home.HTTPURL)
		http.Error(w, "the session's server cannot be reached", http.StatusBadGateway)
		return
	}
	c.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), homeKey{}, target)))
}

// snapshotStore is the cluster's store of session snapshots: a JetStream
// KV bucket beside the directory's, so that any node can adopt a lost
// node's sessions; it has as many replicas as the directory's buckets.
func (c *clusterNode) snapshotStore() (store.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), saver.StoreTimeout)
	defer cancel()
	return store.OpenKV(ctx, c.node.Conn(), c.node.Bucket()+"_snapshots", store.KVOptions{Replicas: c.node.Replicas()})
}
