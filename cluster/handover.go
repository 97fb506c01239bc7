package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Handing sessions over: a node whose sessions are saved elsewhere (the
// server's snapshots) leaves their entries behind when it drains, so that
// the OnNodeLost callbacks of its peers receive them and one peer claims
// each; a node that finds a saved session nobody holds claims it with
// ClaimAbsent; an orphan nobody can bring back is dropped with DropOrphan.

// KeepOnDrain registers f, which reports the sessions whose entries Drain
// leaves in the directory for a peer to adopt (the node's OnNodeLost
// peers get them as orphans once its node entry is gone). Without it,
// Drain deletes every entry of the node.
func (n *Node) KeepOnDrain(f func(id string) bool) {
	n.mu.Lock()
	n.keepOnDrain = f
	n.mu.Unlock()
}

// kept reports whether Drain leaves id's entry.
func (n *Node) kept(id string) bool {
	n.mu.Lock()
	f := n.keepOnDrain
	n.mu.Unlock()
	return f != nil && f(id)
}

// ClaimAbsent makes this node the home of session e.ID, a saved session
// nobody holds: one with no entry in the directory (a create) or whose
// entry names a node that is not live (left behind when every node
// stopped; a compare-and-set on its revision). Of several nodes claiming
// it exactly one wins; the others, and a claim of a session a live node
// holds, get an error matching ErrClaimLost. The result is the stored
// entry, remembered as if announced.
func (n *Node) ClaimAbsent(ctx context.Context, e SessionEntry) (SessionEntry, error) {
	if err := checkID("session id", e.ID); err != nil {
		return SessionEntry{}, fmt.Errorf("cluster: claim session: %w", err)
	}
	if err := n.ready(true); err != nil {
		return SessionEntry{}, fmt.Errorf("cluster: claim session %s: %w", e.ID, err)
	}
	e.Node = n.opts.NodeID
	e.Updated = time.Now()
	data, err := json.Marshal(e)
	if err != nil {
		return SessionEntry{}, fmt.Errorf("cluster: claim session %s: %w", e.ID, err)
	}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rev, err := n.sessions().Create(octx, sessKey(e.ID), data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		rev, err = n.claimStale(octx, e.ID, data)
	}
	if errors.Is(err, ErrClaimLost) {
		return SessionEntry{}, fmt.Errorf("cluster: claim session %s: %w", e.ID, err)
	}
	if err != nil {
		return SessionEntry{}, fmt.Errorf("cluster: claim session %s: %w", e.ID, n.opErr(ctx, err))
	}
	e.Revision = rev
	n.mu.Lock()
	n.local[e.ID] = e
	delete(n.forgets, e.ID)
	delete(n.lostClaims, e.ID)
	n.mu.Unlock()
	n.log.Info("cluster: claimed a saved session nobody held", "session", e.ID)
	return e, nil
}

// DropOrphan deletes entry e of a lost node (read with its Revision), as
// a compare-and-set: an entry changed or claimed since is left alone.
func (n *Node) DropOrphan(ctx context.Context, e SessionEntry) error {
	if e.Revision == 0 {
		return fmt.Errorf("cluster: drop orphan %s: no Revision", e.ID)
	}
	if err := n.ready(true); err != nil {
		return fmt.Errorf("cluster: drop orphan %s: %w", e.ID, err)
	}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	err := n.sessions().Delete(octx, sessKey(e.ID), jetstream.LastRevision(e.Revision))
	if err != nil && !isRevisionMismatch(err) {
		return fmt.Errorf("cluster: drop orphan %s: %w", e.ID, n.opErr(ctx, err))
	}
	return nil
}

// claimStale takes over session id's entry when its home is not live.
func (n *Node) claimStale(ctx context.Context, id string, data []byte) (uint64, error) {
	kve, err := n.sessions().Get(ctx, sessKey(id))
	if err != nil {
		if isNotFound(err) { // deleted since: the next claim creates it
			return 0, ErrClaimLost
		}
		return 0, err
	}
	old, err := decodeSession(kve)
	if err != nil {
		return 0, fmt.Errorf("entry is not JSON: %w", err)
	}
	if _, live := n.liveNode(old.Node); live || old.Node == n.opts.NodeID {
		return 0, fmt.Errorf("%w: node %s holds it", ErrClaimLost, old.Node)
	}
	n.mu.Lock()
	_, gone := n.gone[old.Node]
	watched := n.writable && time.Since(n.writableSince) >= n.opts.TTL
	n.mu.Unlock()
	if !gone && !watched {
		// Its home is not in the view, but this node neither saw it go
		// nor has watched NATS for a TTL yet: the home may be alive with
		// its heartbeats held up by an outage. It is a suspect now; if
		// it stays silent its sessions come to the OnNodeLost callbacks.
		n.suspectHome(old.Node)
		return 0, fmt.Errorf("%w: its home %s may be alive (not silent for a TTL yet)", ErrClaimLost, old.Node)
	}
	rev, err := n.sessions().Update(ctx, sessKey(id), data, kve.Revision())
	if isRevisionMismatch(err) {
		return 0, ErrClaimLost
	}
	return rev, err
}
