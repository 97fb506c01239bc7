package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/server/internal/clusternode"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// /mcp across a cluster
//
//   - raxol_start places the new session on the live node that is not
//     draining with the fewest sessions (cluster.Node.ByLoad: this node
//     too, unless it drains). On another node it is started by a
//     peer-signed POST <peer>/_raxol/peer/start, which that node serves
//     exactly as its own raxol_start (cap, startedBy, idle reaping, join
//     code) and answers once its directory entry is written. A peer that
//     cannot be reached, or answers anything but a start or a definite
//     refusal (the key's cap there), is passed over for the next node,
//     and at the end for this one, with a log line. With NATS unreachable
//     the session starts here (logged).
//   - The URLs raxol_start and raxol_list return name the node the
//     caller reached (its Options.MCP.PublicURL, else the host the
//     caller used): the caller can reach it, and it passes requests for a
//     session another node holds to that node. The join command is the
//     home node's, as its own raxol_start would give it.
//   - raxol_list adds to this node's sessions those the directory lists
//     as started by the caller's key on other nodes (StartedBy, never the
//     key itself). When the directory cannot be read it lists this node's
//     alone, with "partial": true and a note saying why.
//   - raxol_stop of a session this node does not hold looks it up, and
//     if the directory says the caller's key started it, asks its home
//     (POST <home>/_raxol/peer/stop), which checks ownership as a local
//     stop does. An unknown id and another key's get the same answer as
//     on a single node; with NATS unreachable the answer says so.
//
// Peer requests are the membership's (clusternode.Node.CallPeer, and
// its check of a request's MAC, body digest and origin before ServePeer,
// this file's servePeer, answers it). A signed request can be replayed
// for cluster.MaxPeerSkew: a replayed start starts another session for
// the same key, under its cap.

const (
	// placeTimeout bounds the tries of all peers for one raxol_start.
	placeTimeout = 15 * time.Second
	// listTimeout bounds raxol_list's read of the directory.
	listTimeout = 5 * time.Second
)

// errDirectoryUnavailable is what raxol_list and raxol_stop say when the
// directory cannot be read.
const errDirectoryUnavailable = "the cluster directory cannot be reached (NATS is unavailable)"

// peerReply is the answer to a peer request: 200 with Start or Stopped,
// or 200 with a definite refusal (Error, Message: the tool error to give
// the client). Any other status is a failure: try elsewhere.
type peerReply struct {
	Start   *startAnswer `json:"start,omitempty"`
	Stopped string       `json:"stopped,omitempty"`
	Error   string       `json:"error,omitempty"`
	Message string       `json:"message,omitempty"`
}

// clusterPeers are the control endpoint's others in a cluster: a new
// session starts on the least-loaded node, and the caller's sessions on
// other nodes are stopped and listed through them.
type clusterPeers struct {
	c *clusterNode
	h *controlEndpoint
}

var _ others = clusterPeers{}

func (p clusterPeers) announceNow(ctx context.Context) { p.c.announceNow(ctx) }
func (p clusterPeers) nodeID() string                  { return p.c.id() }

// ---- raxol_start ----

// place starts a session for owner on the least-loaded node that is not
// draining (this one when NATS cannot be reached).
func (p clusterPeers) place(ctx context.Context, owner session.Owner, remote string) (startAnswer, *toolFailure) {
	c, h := p.c, p.h
	if !c.node.Connected() {
		c.log.Warn("cluster: NATS cannot be reached; raxol_start places the new session on this node")
		return h.startLocal(ctx, owner, remote, "")
	}
	pctx, cancel := context.WithTimeout(ctx, placeTimeout)
	defer cancel()
	self := c.node.ID()
	for _, ni := range c.node.ByLoad() {
		if ni.ID == self {
			if h.host.isDraining() {
				continue
			}
			return h.startLocal(ctx, owner, remote, "")
		}
		reply, err := c.callPeer(pctx, ni, "start", clusternode.CallerFor(owner, remote))
		switch {
		case err == nil && reply.Start != nil:
			c.log.Info("headless session started on a peer", "session", reply.Start.ID, "node", ni.ID, "owner", owner.User, "remote", remote)
			a := *reply.Start
			a.Node = ni.ID
			return a, nil
		case err == nil && reply.Error != "":
			return startAnswer{}, &toolFailure{Kind: reply.Error, Message: reply.Message}
		case err == nil:
			err = fmt.Errorf("%w: node %s answered neither a session nor an error", clusternode.ErrPeerFailed, ni.ID)
		}
		c.log.Warn("cluster: raxol_start could not place the session on a peer; trying the next node", "peer", ni.ID, "err", err)
		if pctx.Err() != nil {
			break
		}
	}
	c.log.Warn("cluster: raxol_start places the new session on this node: no other node took it")
	return h.startLocal(ctx, owner, remote, "")
}

// ---- raxol_stop ----

// stopElsewhere stops session id, which this node did not stop, on the
// node holding it, if the caller's key started it; nil when it did.
func (p clusterPeers) stop(ctx context.Context, id string, owner session.Owner, remote string) *toolFailure {
	unknown := &toolFailure{Kind: "unknown_session", Message: errUnknownSession.Error()}
	c, h := p.c, p.h
	if _, here := h.registry.Get(id); here {
		return unknown // this node holds it, and the caller's key did not start it
	}
	e, home, err := c.node.Lookup(ctx, id)
	switch {
	case errors.Is(err, cluster.ErrUnknownSession):
		return unknown
	case err != nil:
		c.log.Warn("cluster: raxol_stop cannot look the session up", "session", id, "err", err)
		return &toolFailure{Kind: "cluster_unavailable", Message: errDirectoryUnavailable + ": a session this node does not hold cannot be stopped now; try again later"}
	case home.ID == c.node.ID() || e.StartedBy != owner.Key():
		return unknown
	}
	reply, err := c.callPeer(ctx, home, "stop", clusternode.StopRequest{Caller: clusternode.CallerFor(owner, remote), ID: id})
	switch {
	case err != nil:
		c.log.Warn("cluster: raxol_stop could not reach the session's node", "session", id, "node", home.ID, "err", err)
		return &toolFailure{Kind: "stop_failed", Message: fmt.Sprintf("node %s, which holds the session, cannot be reached; try again", home.ID)}
	case reply.Error == "unknown_session":
		return unknown
	case reply.Error != "":
		return &toolFailure{Kind: reply.Error, Message: reply.Message}
	case reply.Stopped != id:
		c.log.Warn("cluster: raxol_stop got an answer that does not name the session", "session", id, "node", home.ID)
		return &toolFailure{Kind: "stop_failed", Message: fmt.Sprintf("node %s, which holds the session, gave no usable answer; try again", home.ID)}
	}
	c.log.Info("headless session stopped on a peer", "session", id, "node", home.ID, "owner", owner.User, "remote", remote)
	return nil
}

// ---- raxol_list ----

// list adds to local (this node's entries of raxol_list) the
// caller's sessions on other nodes, oldest first; note is non-empty when
// the directory could not be read (local alone is returned).
func (p clusterPeers) list(ctx context.Context, owner session.Owner, base string, local []listItem) (all []listItem, note string) {
	c := p.c
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	entries, err := c.node.Sessions(ctx)
	if err != nil {
		c.log.Warn("cluster: raxol_list lists this node's sessions alone: the directory cannot be read", "err", err)
		return local, errDirectoryUnavailable + ": only the sessions of node " + c.node.ID() + " are listed"
	}
	key, self := owner.Key(), c.node.ID()
	all = local
	for _, e := range entries {
		if e.StartedBy != key || e.Node == self {
			continue
		}
		en := listItem{ID: e.ID, Node: e.Node, MCPURL: base + "/sessions/" + e.ID + "/mcp", Agents: &e.Agents}
		if !e.Created.IsZero() {
			en.Created = e.Created.UTC().Format(time.RFC3339)
		}
		all = append(all, en)
	}
	slices.SortStableFunc(all, func(a, b listItem) int { return cmp.Compare(a.Created, b.Created) })
	return all, ""
}

// ---- peer requests ----

// callPeer asks the peer ni's /_raxol/peer/<op> with in (the
// membership's CallPeer: signed, the body's digest in the URI). The error
// wraps clusternode.ErrPeerFailed unless the peer gave a 200 answer of
// the protocol.
func (c *clusterNode) callPeer(ctx context.Context, ni cluster.NodeInfo, op string, in any) (peerReply, error) {
	var reply peerReply
	if err := c.CallPeer(ctx, ni, op, in, &reply); err != nil {
		return peerReply{}, err
	}
	return reply, nil
}

// servePeer answers /_raxol/peer/<op> for peer, the node whose MAC the
// membership verified, with body, the signed one
// (clusternode.Config.ServePeer).
func (c *clusterNode) servePeer(w http.ResponseWriter, r *http.Request, peer, op string, body []byte) {
	h := c.control
	if op != "start" && op != "stop" {
		http.Error(w, fmt.Sprintf("no peer endpoint %q", op), http.StatusNotFound)
		return
	}
	if h.handler == nil {
		http.Error(w, "/mcp is off on node "+c.node.ID()+" (no API keys)", http.StatusNotFound)
		return
	}
	if h.isClosed() {
		http.Error(w, "node "+c.node.ID()+" is stopping", http.StatusServiceUnavailable)
		return
	}
	var reply peerReply
	switch op {
	case "start":
		var in clusternode.Caller
		owner, err := decodePeer(body, &in, func() (session.Owner, error) { return in.Owner() })
		if err != nil {
			http.Error(w, "peer start: "+err.Error(), http.StatusBadRequest)
			return
		}
		a, fail := h.startLocal(r.Context(), owner, in.Remote, peer)
		if fail == nil && r.Context().Err() != nil {
			// The asking node gave up (and may start it elsewhere): nobody
			// would ever learn this session's token.
			c.life.stopStarted(a.ID, owner.Key())
			c.log.Warn("cluster: a peer gave up on the session it asked for; stopped it", "session", a.ID, "for_peer", peer)
			return
		}
		switch {
		case fail != nil && fail.elsewhere:
			http.Error(w, fail.Message, http.StatusServiceUnavailable)
			return
		case fail != nil:
			reply.Error, reply.Message = fail.Kind, fail.Message
		default:
			reply.Start = &a
		}
	case "stop":
		var in clusternode.StopRequest
		owner, err := decodePeer(body, &in, func() (session.Owner, error) {
			if in.ID == "" || len(in.ID) > 256 {
				return session.Owner{}, errors.New(`want {"id": "<session id>", ...}`)
			}
			return in.Owner()
		})
		if err != nil {
			http.Error(w, "peer stop: "+err.Error(), http.StatusBadRequest)
			return
		}
		if !c.life.stopStarted(in.ID, owner.Key()) {
			reply.Error, reply.Message = "unknown_session", errUnknownSession.Error()
			break
		}
		c.log.Info("headless session stopped", "session", in.ID, "owner", owner.User, "remote", in.Remote, "for_peer", peer)
		c.announceNow(r.Context())
		reply.Stopped = in.ID
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

// decodePeer decodes body into in, then checks it with check.
func decodePeer(body []byte, in any, check func() (session.Owner, error)) (session.Owner, error) {
	if err := json.Unmarshal(body, in); err != nil {
		return session.Owner{}, fmt.Errorf("body is not JSON: %w", err)
	}
	return check()
}
