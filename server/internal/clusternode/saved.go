package clusternode

import (
	"context"
	"errors"
	"log/slog"

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
	n.node.OnNodeLost(func(node string, orphans []cluster.SessionEntry) error {
		ctx := context.Background() // every call below has its own timeout
		var again []error
		for _, e := range orphans {
			if err := adoptOrphan(ctx, n.log, p, n.node, node, e); err != nil {
				again = append(again, err)
			}
		}
		// What failed for a reason that may pass is tried again a
		// heartbeat later, with the entries read again (cluster.OnNodeLost).
		return errors.Join(again...)
	})
}

// adoptOrphan restores the lost node's session e from its snapshot and
// claims its entry, or drops the entry when nobody can bring the session
// back (no snapshot, or one that does not decode). An error says it could
// do neither for a reason that may pass (NATS or the store unavailable, a
// claim without an answer while a stream elects a leader): the entry is
// then left in place for the next try. Dropping it then deleted the
// directory's entry of a session whose snapshot was there, so no node
// adopted it (seen in a CI run: TestReplicasClusterSurvivesEachNATSServerLoss).
func adoptOrphan(ctx context.Context, log *slog.Logger, p restorer, home orphanHome, node string, e cluster.SessionEntry) error {
	gctx, cancel := context.WithTimeout(ctx, saver.StoreTimeout)
	_, err := p.Store().Get(gctx, e.ID)
	cancel()
	switch {
	case errors.Is(err, store.ErrNotFound):
		// No snapshot: nobody can bring it back.
	case err != nil:
		log.Warn("cluster: reading a lost node's saved session failed; trying again", "session", e.ID, "peer", node, "err", err)
		return err
	default:
		var claimErr error
		if p.RestoreOne(ctx, e.ID, "adopted", func(ctx context.Context, _ *saver.Record) bool {
			_, claimErr = home.Claim(ctx, e)
			return claimErr == nil
		}) {
			return nil
		}
		switch {
		case errors.Is(claimErr, cluster.ErrUnavailable):
			log.Warn("cluster: claiming a lost node's session failed; trying again", "session", e.ID, "peer", node, "err", claimErr)
			return claimErr
		case claimErr != nil && !errors.Is(claimErr, cluster.ErrClaimLost):
			log.Warn("cluster: claiming a lost node's session failed", "session", e.ID, "peer", node, "err", claimErr)
		}
		// Its snapshot does not decode, or a peer claimed it.
	}
	// A compare-and-set on the revision read: a peer's claim is left alone.
	if err := home.DropOrphan(ctx, e); err != nil {
		log.Warn("cluster: dropping a lost node's session failed; trying again", "session", e.ID, "peer", node, "err", err)
		return err
	}
	return nil
}

// restorer is what adoptOrphan uses of the saver.
type restorer interface {
	Store() store.Store
	RestoreOne(ctx context.Context, id, how string, claim func(context.Context, *saver.Record) bool) bool
}

// orphanHome is what adoptOrphan uses of the cluster's membership.
type orphanHome interface {
	Claim(ctx context.Context, e cluster.SessionEntry) (cluster.SessionEntry, error)
	DropOrphan(ctx context.Context, e cluster.SessionEntry) error
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
