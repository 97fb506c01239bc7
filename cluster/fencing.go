package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Fencing: one home per session, always.
//
// A node holds its sessions on a lease that runs from the start of its
// last heartbeat NATS stored, for the TTL less a margin (LeaseMargin). A
// peer declares it lost only after a TTL of silence counted from a
// heartbeat it saw (so from after that heartbeat began) and from the
// moment its own heartbeats are stored again (sweepSuspects): by then the
// lease has lapsed by the old home's own clock, and the old home has
// stopped acknowledging writes (Fenced). A node that finds another node
// claimed a session it holds (ErrClaimLost from a write of its entry)
// never writes that entry again, and tells its OnClaimLost callbacks, so
// that the server ends its copy without saving over the winner's.

// ErrLeaseLapsed is wrapped by the error of Fenced, Claim, ClaimAbsent
// and DropOrphan while this node has not stored a heartbeat for longer
// than its lease (NATS cannot be written): its peers may be about to
// adopt its sessions, so it acknowledges no write for them, and it claims
// nothing. It matches ErrUnavailable too.
var ErrLeaseLapsed = errors.New("this node's lease on its sessions lapsed (NATS could not be written)")

// LeaseMargin is how much earlier than the TTL a node's lease on its
// sessions lapses: its heartbeat interval, at most a third of the TTL.
func (n *Node) LeaseMargin() time.Duration {
	return min(n.opts.Heartbeat, n.opts.TTL/3)
}

// leaseLocked reports whether this node's lease holds at now. Call with
// n.mu held.
func (n *Node) leaseLocked(now time.Time) bool {
	return !n.closed && !n.mustVerify && !n.lastBeat.IsZero() && now.Sub(n.lastBeat) < n.leaseTerm()
}

// leaseTerm is how long the lease lasts from the start of a heartbeat.
func (n *Node) leaseTerm() time.Duration { return n.opts.TTL - n.LeaseMargin() }

// HoldsLease reports whether this node's lease on its sessions holds now:
// it stored a heartbeat less than TTL-LeaseMargin ago.
func (n *Node) HoldsLease() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.leaseLocked(time.Now())
}

// Fenced returns nil while this node may acknowledge writes to session
// id; else an error matching ErrClaimLost (another node claimed it: it
// moved) or ErrLeaseLapsed and ErrUnavailable (this node could not renew
// its lease: the session may be moving). A session this node has not
// announced yet is not fenced by a claim.
func (n *Node) Fenced(id string) error {
	n.mu.Lock()
	home, lost := n.lostClaims[id]
	lease := n.leaseLocked(time.Now())
	n.mu.Unlock()
	switch {
	case lost:
		return fmt.Errorf("cluster: session %s: %w: its home is now node %s", id, ErrClaimLost, home)
	case !lease:
		return fmt.Errorf("cluster: session %s: %w", id, unavailable(ErrLeaseLapsed))
	}
	return nil
}

// ClaimLost reports whether another node claimed session id from this
// node (until this node forgets it, or claims it back).
func (n *Node) ClaimLost(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.lostClaims[id]
	return ok
}

// OnClaimLost registers f, called with the id of a session this node
// held once it finds another node has claimed it. f runs on the goroutine
// that found it (a heartbeat, or an Announce) and must not block.
func (n *Node) OnClaimLost(f func(id string)) {
	if f == nil {
		panic("cluster: OnClaimLost(nil)")
	}
	n.mu.Lock()
	n.onClaimLost = append(n.onClaimLost, f)
	n.mu.Unlock()
}

// claimLost records that session id's entry names another node now: the
// session is forgotten here, never written again, and the callbacks are
// told.
func (n *Node) claimLost(id, other string) {
	n.mu.Lock()
	delete(n.local, id)
	delete(n.dirty, id)
	_, already := n.lostClaims[id]
	n.lostClaims[id] = other
	cbs := n.onClaimLost
	n.mu.Unlock()
	if already {
		return
	}
	n.log.Warn("cluster: another node claimed a session this node held; it stops serving it here", "session", id, "home", other)
	for _, f := range cbs {
		f(id)
	}
}

// suspectHome makes a suspect of node id, the home of a saved session
// this node found while it has not yet watched NATS for a TTL: unless it
// writes again, sweepSuspects declares it lost and the OnNodeLost
// callbacks get its sessions.
func (n *Node) suspectHome(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, live := n.live[id]; live || id == n.opts.NodeID {
		return
	}
	n.suspect[id] = struct{}{}
}

// applySession handles one change of the directory seen by the sessions
// watcher: an entry of a session this node holds, written by another
// node after this node's last write of it, is a claim lost.
func (n *Node) applySession(e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		return
	}
	id, ok := strings.CutPrefix(e.Key(), "sess.")
	if !ok {
		return
	}
	var se SessionEntry
	if err := json.Unmarshal(e.Value(), &se); err != nil || se.Node == n.opts.NodeID {
		return
	}
	n.mu.Lock()
	mine, held := n.local[id]
	n.mu.Unlock()
	if held && e.Revision() > mine.Revision {
		n.claimLost(id, se.Node)
	}
}

// watchSessions starts the sessions watcher (changes from now on).
func (n *Node) watchSessions() error {
	if n.sessWatcher != nil {
		stopWatcher(n.sessWatcher)
		n.sessWatcher = nil
	}
	// The watcher lives as long as the node: its ctx is n.ctx.
	w, err := n.sessions().WatchAll(n.ctx, jetstream.UpdatesOnly())
	if err != nil {
		return fmt.Errorf("watch sessions: %w", err)
	}
	n.sessWatcher = w
	return nil
}
