package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Announce writes the directory entry of a session whose home is this node
// (e.Node is set to ID(); a zero e.Updated to now), for a new session or a
// change of state. The node remembers it, and writes it again after a
// reconnect, until Forget.
//
// While NATS cannot be reached the entry is remembered anyway and the
// error matches ErrUnavailable: it is written once NATS is back. If
// another node has claimed the session meanwhile, the error matches
// ErrClaimLost and the session is forgotten here.
func (n *Node) Announce(ctx context.Context, e SessionEntry) error {
	if err := checkID("session id", e.ID); err != nil {
		return fmt.Errorf("cluster: announce session: %w", err)
	}
	n.mu.Lock()
	if n.closed || n.draining {
		closed := n.closed
		n.mu.Unlock()
		if closed {
			return fmt.Errorf("cluster: announce session %s: %w", e.ID, ErrClosed)
		}
		return fmt.Errorf("cluster: announce session %s: %w (draining)", e.ID, ErrClosed)
	}
	if home, lost := n.lostClaims[e.ID]; lost {
		n.mu.Unlock()
		return fmt.Errorf("cluster: announce session %s: %w: its home is now node %s", e.ID, ErrClaimLost, home)
	}
	e.Node = n.opts.NodeID
	if e.Updated.IsZero() {
		e.Updated = time.Now()
	}
	if prev, ok := n.local[e.ID]; ok {
		e.Revision = prev.Revision
	} else {
		e.Revision = 0
	}
	n.local[e.ID] = e
	n.dirty[e.ID] = struct{}{}
	delete(n.forgets, e.ID)
	n.mu.Unlock()

	if !n.nc.IsConnected() {
		return fmt.Errorf("cluster: announce session %s: %w", e.ID, unavailable(errNotConnected))
	}
	if err := n.writeSession(ctx, e); err != nil {
		if errors.Is(err, ErrClaimLost) {
			return fmt.Errorf("cluster: announce session %s: %w", e.ID, err)
		}
		return fmt.Errorf("cluster: announce session %s: %w", e.ID, n.opErr(ctx, err))
	}
	return nil
}

// writeSession writes e (home: this node), always as a compare-and-set,
// so that a claim by another node is never overwritten: an update on the
// revision of this node's last write, or a create for a first write (or
// an entry NATS lost). On a conflict the entry is read: if its home is
// another node the result is ErrClaimLost and e is forgotten here for
// good (claimLost); if it is still this node's, it is updated on the
// revision read. On success the local copy gets the new revision and is
// no longer dirty; on a failure it stays dirty, retried with the next
// heartbeat.
func (n *Node) writeSession(ctx context.Context, e SessionEntry) error {
	kv := n.sessions()
	key := sessKey(e.ID)
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var rev uint64
	if e.Revision > 0 {
		rev, err = kv.Update(octx, key, data, e.Revision)
		if err != nil && !isRevisionMismatch(err) {
			return err
		}
	} else {
		rev, err = kv.Create(octx, key, data)
		if err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
	}
	if err != nil {
		// Changed since this node's last write (or there before its
		// first): whose is it now?
		cur, gerr := kv.Get(octx, key)
		switch {
		case isNotFound(gerr):
			// NATS lost it (or it was deleted): written again, unless
			// someone creates it first.
			if rev, err = kv.Create(octx, key, data); err != nil {
				return fmt.Errorf("create again: %w", err)
			}
		case gerr != nil:
			return gerr
		default:
			other, derr := decodeSession(cur)
			if derr != nil {
				return fmt.Errorf("entry is not JSON: %w", derr)
			}
			if other.Node != n.opts.NodeID {
				n.claimLost(e.ID, other.Node)
				return fmt.Errorf("%w: its home is now node %s", ErrClaimLost, other.Node)
			}
			if rev, err = kv.Update(octx, key, data, cur.Revision()); err != nil {
				return fmt.Errorf("update on the revision read: %w", err)
			}
		}
	}
	n.mu.Lock()
	if cur, ok := n.local[e.ID]; ok {
		cur.Revision = rev
		n.local[e.ID] = cur
		written := e
		written.Revision = rev
		if written == cur {
			delete(n.dirty, e.ID) // what was written is what is remembered
		}
	}
	n.mu.Unlock()
	return nil
}

// Forget deletes the directory entry of a session that ended on this node,
// and forgets it locally. An entry whose home is another node (it claimed
// the session) is left alone. If NATS cannot be reached the error matches
// ErrUnavailable and the delete is retried once NATS is back.
func (n *Node) Forget(ctx context.Context, id string) error {
	if err := checkID("session id", id); err != nil {
		return fmt.Errorf("cluster: forget session: %w", err)
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("cluster: forget session %s: %w", id, ErrClosed)
	}
	prev, known := n.local[id]
	delete(n.local, id)
	delete(n.dirty, id)
	delete(n.lostClaims, id)
	n.mu.Unlock()
	var rev uint64
	if known {
		rev = prev.Revision
	}
	err := errNotConnected
	if n.nc.IsConnected() {
		err = n.deleteSession(ctx, id, rev)
	}
	if err != nil {
		n.mu.Lock()
		n.forgets[id] = struct{}{}
		n.mu.Unlock()
		return fmt.Errorf("cluster: forget session %s: %w", id, n.opErr(ctx, err))
	}
	return nil
}

// deleteSession deletes sess.<id> if its home is this node: with rev, as a
// compare-and-set; on a conflict (or without rev) after reading it.
func (n *Node) deleteSession(ctx context.Context, id string, rev uint64) error {
	kv := n.sessions()
	key := sessKey(id)
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if rev > 0 {
		err := kv.Delete(octx, key, jetstream.LastRevision(rev))
		if err == nil || !isRevisionMismatch(err) {
			return err
		}
	}
	cur, err := kv.Get(octx, key)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if e, err := decodeSession(cur); err == nil && e.Node != n.opts.NodeID {
		return nil // claimed by another node: not ours to delete
	}
	err = kv.Delete(octx, key, jetstream.LastRevision(cur.Revision()))
	if isRevisionMismatch(err) {
		return nil // changed again meanwhile: someone else's now
	}
	return err
}

// Lookup returns the directory entry of session id and its home node. The
// error matches ErrUnknownSession when there is no entry, or its home node
// is not live (it expired, with its sessions); ErrUnavailable when NATS
// cannot be reached (at once while disconnected).
func (n *Node) Lookup(ctx context.Context, id string) (SessionEntry, NodeInfo, error) {
	if err := checkID("session id", id); err != nil {
		return SessionEntry{}, NodeInfo{}, fmt.Errorf("cluster: lookup session: %w: %v", ErrUnknownSession, err)
	}
	if err := n.ready(false); err != nil {
		return SessionEntry{}, NodeInfo{}, fmt.Errorf("cluster: lookup session %s: %w", id, err)
	}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	kve, err := n.sessions().Get(octx, sessKey(id))
	if isNotFound(err) {
		return SessionEntry{}, NodeInfo{}, fmt.Errorf("cluster: lookup session %s: %w", id, ErrUnknownSession)
	}
	if err != nil {
		return SessionEntry{}, NodeInfo{}, fmt.Errorf("cluster: lookup session %s: %w", id, n.opErr(ctx, err))
	}
	e, err := decodeSession(kve)
	if err != nil {
		return SessionEntry{}, NodeInfo{}, fmt.Errorf("cluster: lookup session %s: entry is not JSON: %w", id, err)
	}
	ni, live := n.liveNode(e.Node)
	if !live {
		return SessionEntry{}, NodeInfo{}, fmt.Errorf("cluster: lookup session %s: %w (its home node %s is not live)", id, ErrUnknownSession, e.Node)
	}
	return e, ni, nil
}

// Sessions returns every session whose home node is live, cluster-wide,
// sorted by id (an empty slice, not an error, when there are none). The
// error matches ErrUnavailable when NATS cannot be reached.
func (n *Node) Sessions(ctx context.Context) ([]SessionEntry, error) {
	if err := n.ready(false); err != nil {
		return nil, fmt.Errorf("cluster: list sessions: %w", err)
	}
	all, err := n.scanSessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: list sessions: %w", n.opErr(ctx, err))
	}
	out := all[:0]
	for _, e := range all {
		if _, live := n.liveNode(e.Node); live {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b SessionEntry) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Claim makes this node the home of session e, read earlier (from Lookup,
// Sessions or an OnNodeLost callback) with its Revision: a compare-and-set
// on that revision, so of several nodes claiming one entry exactly one
// wins; the others get an error matching ErrClaimLost (as they do when the
// entry changed or was deleted since it was read). The result is the
// stored entry (Node = ID(), Updated = now, the new Revision); this node
// then remembers it as if announced.
func (n *Node) Claim(ctx context.Context, e SessionEntry) (SessionEntry, error) {
	if err := checkID("session id", e.ID); err != nil {
		return SessionEntry{}, fmt.Errorf("cluster: claim session: %w", err)
	}
	if e.Revision == 0 {
		return SessionEntry{}, fmt.Errorf("cluster: claim session %s: no Revision (claim an entry read with Lookup, Sessions or OnNodeLost)", e.ID)
	}
	if err := n.ready(true); err != nil {
		return SessionEntry{}, fmt.Errorf("cluster: claim session %s: %w", e.ID, err)
	}
	ne := e
	ne.Node = n.opts.NodeID
	ne.Updated = time.Now()
	data, err := json.Marshal(ne)
	if err != nil {
		return SessionEntry{}, fmt.Errorf("cluster: claim session %s: %w", e.ID, err)
	}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rev, err := n.sessions().Update(octx, sessKey(e.ID), data, e.Revision)
	if isRevisionMismatch(err) {
		return SessionEntry{}, fmt.Errorf("cluster: claim session %s: %w", e.ID, ErrClaimLost)
	}
	if err != nil {
		return SessionEntry{}, fmt.Errorf("cluster: claim session %s: %w", e.ID, n.opErr(ctx, err))
	}
	ne.Revision = rev
	n.mu.Lock()
	n.local[ne.ID] = ne
	delete(n.forgets, ne.ID)
	delete(n.lostClaims, ne.ID)
	n.mu.Unlock()
	n.log.Info("cluster: claimed session", "session", e.ID, "from", e.Node)
	return ne, nil
}
