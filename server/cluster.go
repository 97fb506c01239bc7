package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/server/internal/clusternode"
	"github.com/raxol-ssh/raxol-ssh/server/internal/saver"
	"github.com/raxol-ssh/raxol-ssh/session"
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

// clusterNode is the server's side of being a node of a cluster: the
// membership itself (clusternode.Node, package server/internal/clusternode:
// the directory kept up to date, fencing, HTTP passed to a session's home,
// peers' requests verified, the adoption of saved sessions) and what the
// cluster's /mcp (cluster_mcp.go) and SSH bridges (cluster_ssh.go) use of
// the server, given at join. Its lower-case methods do nothing on a nil
// receiver: a single node.
type clusterNode struct {
	*clusternode.Node
	node *cluster.Node // the membership's, for peer requests and bridges

	// What the cluster's /mcp and SSH bridges use of the server.
	log     *slog.Logger
	metrics *metrics.Metrics
	life    *lifecycle
	admit   *admission // bridged connections' addresses
	control *controlEndpoint
	// peer is the node's SSH key toward its peers (cluster_ssh.go).
	peer *peerSSH
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
	c := &clusterNode{
		node:    node,
		peer:    peer,
		log:     s.log,
		metrics: s.metrics,
		life:    s.life,
		admit:   s.admit,
		control: s.control,
	}
	c.Node = clusternode.New(clusternode.Config{
		Cluster:     node,
		Log:         s.log,
		Metrics:     s.metrics,
		Sessions:    s.sessions,
		Entries:     directoryEntries(s.sessions, s.life, s.bridge),
		Saver:       &s.persist,
		ClientIP:    s.httpProxies.clientIP,
		ServePeer:   c.servePeer, // cluster_mcp.go
		BodyTimeout: s.opts.MCP.BodyTimeout,
	})
	s.cluster = c
	return nil
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

// The cluster node observes the lifecycle (sessionObserver): the
// directory follows what the lifecycle shows of its sessions.
func (c *clusterNode) sessionOwned(*session.Session, bool, string) {}
func (c *clusterNode) sessionHandedOut(*session.Session)           {}
func (c *clusterNode) sessionsChanged()                            { c.Changed() }

var (
	_ sessionObserver = (*clusterNode)(nil)
	_ httpElsewhere   = (*clusterNode)(nil)
)

// serveSession and servePeerChecked route HTTP (httpElsewhere) through
// the membership: a session another node holds is passed to it, a
// peer's signed request verified.
func (c *clusterNode) serveSession(w http.ResponseWriter, r *http.Request, local http.Handler) {
	c.ServeSession(w, r, local)
}
func (c *clusterNode) servePeerChecked(w http.ResponseWriter, r *http.Request, next http.Handler) {
	c.ServePeerChecked(w, r, next)
}

// directoryEntries is what the directory should say about this node's
// sessions now: what the lifecycle shows of each, and its agents.
func directoryEntries(sessions *session.Manager, life *lifecycle, agents *mcpbridge.Bridge) func() map[string]cluster.SessionEntry {
	return func() map[string]cluster.SessionEntry {
		list := sessions.List()
		shown := life.shown(list)
		out := make(map[string]cluster.SessionEntry, len(list))
		for i, se := range list {
			e := cluster.SessionEntry{ID: se.ID, Owner: se.Owner.KeyFingerprint, Headless: true, Created: se.Created}
			switch sh := shown[i]; {
			case sh.held && sh.sshOwned:
				e.Headless = false
				e.Detached = sh.detached
			case sh.held:
				e.StartedBy = sh.startedBy
			}
			out[se.ID] = e
		}
		for id, e := range out {
			e.Agents = agents.Clients(id)
			out[id] = e
		}
		return out
	}
}

// drain takes this node's sessions out of the directory and leaves the
// cluster: peers stop sending it requests at once.
func (c *clusterNode) drain(ctx context.Context) error {
	if c == nil {
		return nil
	}
	return c.Drain(ctx)
}

// close closes the connection to NATS (after drain, or without it: what a
// crash looks like to the peers).
func (c *clusterNode) close() {
	if c == nil {
		return
	}
	c.Close()
}

// describe is the posture line's cluster field.
func (c *clusterNode) describe() string {
	if c == nil {
		return "none (single node)"
	}
	return c.Describe()
}

// id is this node's id, "" without a cluster.
func (c *clusterNode) id() string {
	if c == nil {
		return ""
	}
	return c.ID()
}

// adoptSnapshots registers the handover of saved sessions with the
// cluster, when the node saves sessions.
func (c *clusterNode) adoptSnapshots(p *saver.Saver) {
	if c == nil {
		return
	}
	c.AdoptSnapshots(p)
}

// announceNow waits until the directory is up to date (AnnounceNow).
// Without a cluster it does nothing.
func (c *clusterNode) announceNow(ctx context.Context) {
	if c == nil {
		return
	}
	c.AnnounceNow(ctx)
}
