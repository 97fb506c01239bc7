package clusternode

import (
	"context"
	"errors"

	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/server/internal/saver"
	"github.com/raxol-ssh/raxol-ssh/store"
)

// Saved sessions in a cluster
//
// The snapshots are in the cluster's KV, so any node can bring back any
// session, and the directory decides which one does, by compare-and-set:
//   - A node that dies: its entries stay in the directory until its node
//     entry expires; then every peer's OnNodeLost gets them, and of those
//     that Claim an entry (on its revision) exactly one wins and restores
//     the session from its snapshot. Entries without a snapshot are
//     dropped.
//   - A node that drains saves every session first and leaves their
//     entries behind (KeepOnDrain): its peers adopt them the same way.
//   - A node that starts restores the saved sessions nobody holds: those
//     it held itself (it restarted) and those of nodes that are gone and
//     left no entry, claimed with a create (ClaimAbsent), won by one node.

// AdoptSnapshots registers the handover of saved sessions with the
// cluster; called by the server's start when it saves sessions.
func (n *Node) AdoptSnapshots(p *saver.Saver) {
	if p == nil {
		return
	}
	n.node.KeepOnDrain(p.IsStored)
	n.node.OnNodeLost(func(node string, orphans []cluster.SessionEntry) {
		ctx := context.Background() // every call below has its own timeout
		for _, e := range orphans {
			gctx, cancel := context.WithTimeout(ctx, saver.StoreTimeout)
			_, err := p.Store().Get(gctx, e.ID)
			cancel()
			switch {
			case errors.Is(err, store.ErrNotFound):
				if err := n.node.DropOrphan(ctx, e); err != nil {
					n.log.Warn("cluster: dropping a lost node's session failed", "session", e.ID, "peer", node, "err", err)
				}
				continue
			case err != nil:
				n.log.Warn("cluster: reading a lost node's saved session failed; not adopted", "session", e.ID, "peer", node, "err", err)
				continue
			}
			entry := e
			adopted := p.RestoreOne(ctx, e.ID, "adopted", func(ctx context.Context, _ *saver.Record) bool {
				_, err := n.node.Claim(ctx, entry)
				if err != nil && !errors.Is(err, cluster.ErrClaimLost) {
					n.log.Warn("cluster: claiming a lost node's session failed", "session", entry.ID, "err", err)
				}
				return err == nil
			})
			if !adopted {
				// Nobody can bring it back (its snapshot expired or does
				// not decode), or a peer did: a compare-and-set on the
				// revision read, so a peer's claim is left alone.
				_ = n.node.DropOrphan(ctx, e)
			}
		}
	})
}

// MayClaim reports whether this node may take the session r saved: not
// when its home is a live peer (it holds it).
func (n *Node) MayClaim(r *saver.Record) bool {
	if r.Node == "" || r.Node == n.node.ID() {
		return true
	}
	for _, ni := range n.node.Nodes() {
		if ni.ID == r.Node && ni.ID != n.node.ID() {
			return false
		}
	}
	return true
}

// ClaimSaved is RestoreAll's claim in a cluster: a create of the
// session's entry, won by one node.
func (n *Node) ClaimSaved(ctx context.Context, r *saver.Record) bool {
	_, err := n.node.ClaimAbsent(ctx, cluster.SessionEntry{ID: r.ID, Owner: r.Owner.KeyFingerprint, Detached: r.SSHOwned, Headless: !r.SSHOwned})
	if err != nil && !errors.Is(err, cluster.ErrClaimLost) {
		n.log.Warn("cluster: claiming a saved session failed", "session", r.ID, "err", err)
	}
	return err == nil
}

// Unclaim gives back a claimed session that could not be restored.
func (n *Node) Unclaim(ctx context.Context, id string) {
	_ = n.node.Forget(ctx, id)
}

var _ saver.Home = (*Node)(nil)
