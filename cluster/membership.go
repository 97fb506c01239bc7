package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Nodes returns the live nodes, sorted by id, this node included (until
// Close). Peers come from an in-memory view fed by a watcher on the nodes
// bucket; this node's own entry shows its current load and draining mark.
// After Drain or Close the view is the last one the node had.
func (n *Node) Nodes() []NodeInfo {
	n.mu.Lock()
	out := slices.Collect(maps.Values(n.live))
	if !n.closed {
		out = append(out, n.selfLocked())
	}
	n.mu.Unlock()
	slices.SortFunc(out, func(a, b NodeInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// LeastLoaded returns the live node that is not draining with the fewest
// sessions (ties: fewest agents, then the smallest id), or the zero
// NodeInfo when every live node is draining. It is the first of ByLoad.
func (n *Node) LeastLoaded() NodeInfo {
	if all := n.ByLoad(); len(all) > 0 {
		return all[0]
	}
	return NodeInfo{}
}

// ByLoad returns the live nodes that are not draining, this node included
// (until Drain or Close), least loaded first: fewest sessions, then
// fewest agents, then the smallest id. A peer's load is the one of its
// last heartbeat. An empty slice when every live node is draining.
func (n *Node) ByLoad() []NodeInfo {
	out := slices.DeleteFunc(n.Nodes(), func(ni NodeInfo) bool { return ni.Draining })
	slices.SortFunc(out, func(a, b NodeInfo) int {
		return cmp.Or(cmp.Compare(a.Sessions, b.Sessions), cmp.Compare(a.Agents, b.Agents), strings.Compare(a.ID, b.ID))
	})
	return out
}

// SetLoad records this node's load; peers see it with the next heartbeat.
func (n *Node) SetLoad(sessions, agents int) {
	n.mu.Lock()
	n.load.sessions, n.load.agents = sessions, agents
	n.mu.Unlock()
}

// OnNodeLost registers f, called when a peer's node entry expires or is
// deleted, with the session entries whose home was that node (with their
// revisions, ready for Claim). Every surviving node calls its callbacks.
// While no callback is registered, the node deletes those entries itself
// (compare-and-set on their revision, so a race with another node is
// harmless).
//
// f returns an error when it could not finish for a reason that may pass
// (NATS unavailable, a claim without an answer while a stream elects a
// leader): the node then calls its callbacks again a heartbeat later, with
// the lost node's entries read again (those claimed since are no longer
// its), until they return nil, the lost node is back or this node closes.
// An entry f could not adopt because of such an error must be left in
// place, not dropped: the next call gets it again.
//
// f runs on the node's reaper goroutine, one call at a time; it may call
// Lookup, Sessions, Claim and Announce, but not Close or Drain.
func (n *Node) OnNodeLost(f func(node string, orphans []SessionEntry) error) {
	if f == nil {
		panic("cluster: OnNodeLost(nil)")
	}
	n.mu.Lock()
	n.callbacks = append(n.callbacks, f)
	n.mu.Unlock()
}

// selfLocked is this node's entry as it is now. Call with n.mu held.
func (n *Node) selfLocked() NodeInfo {
	return NodeInfo{
		ID:       n.opts.NodeID,
		HTTPURL:  n.opts.HTTPURL,
		SSHAddr:  n.opts.SSHAddr,
		Sessions: n.load.sessions,
		Agents:   n.load.agents,
		Draining: n.draining,
		Seen:     n.lastBeat,
	}
}

// liveNode returns the live node id: this node unless closed, or a peer
// from the view.
func (n *Node) liveNode(id string) (NodeInfo, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if id == n.opts.NodeID {
		return n.selfLocked(), !n.closed
	}
	ni, ok := n.live[id]
	return ni, ok
}

// setup makes the node's state in NATS what it should be: both buckets
// exist, this node's entry is written, (after a reconnect) every local
// session is re-announced and failed forgets retried, and a fresh nodes
// watcher has loaded the view. join says it runs from Join: then entries
// a previous run of this node left behind are deleted instead.
func (n *Node) setup(ctx context.Context, join bool) error {
	if !n.nc.IsConnected() {
		return errNotConnected
	}
	if err := n.ensureBuckets(ctx); err != nil {
		return err
	}
	if join {
		n.warnIfLive(ctx)
		if err := n.deleteLeftovers(ctx); err != nil {
			return err
		}
	}
	if err := n.beat(ctx); err != nil {
		return fmt.Errorf("write node entry: %w", err)
	}
	// Before the re-announce: a claim made after it is seen.
	if err := n.watchSessions(); err != nil {
		return err
	}
	if !join {
		if err := n.reannounce(ctx); err != nil {
			return err
		}
		n.retryForgets(ctx)
	}
	n.mu.Lock()
	n.mustVerify = false // every local session was written, or found claimed
	n.mu.Unlock()
	if n.watcher != nil {
		stopWatcher(n.watcher)
		n.watcher = nil
	}
	w, err := n.watchNodes(ctx)
	if err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	n.watcher = w
	return nil
}

// ensureBuckets creates or opens both buckets (again: NATS may have lost
// them) and keeps their handles.
func (n *Node) ensureBuckets(ctx context.Context) error {
	cfgs := []jetstream.KeyValueConfig{{
		Bucket:         n.opts.Bucket + "_nodes",
		Description:    "raxol-ssh cluster: live nodes (node.<id>), expiring after the node TTL",
		History:        1,
		TTL:            n.opts.TTL,
		LimitMarkerTTL: limitMarkerTTL,
		Storage:        jetstream.FileStorage,
	}, {
		Bucket:      n.opts.Bucket + "_sessions",
		Description: "raxol-ssh cluster: session directory (sess.<id>)",
		History:     1,
		Storage:     jetstream.FileStorage,
	}}
	var kvs [2]jetstream.KeyValue
	for i, cfg := range cfgs {
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		kv, err := n.createBucket(octx, cfg) // with the replicas (replicas.go)
		cancel()
		if err != nil {
			return fmt.Errorf("create or open bucket %s: %w", cfg.Bucket, err)
		}
		kvs[i] = kv
	}
	n.mu.Lock()
	n.nodesKV, n.sessKV = kvs[0], kvs[1]
	n.mu.Unlock()
	return nil
}

// beat writes this node's entry.
func (n *Node) beat(ctx context.Context) error {
	n.mu.Lock()
	self := n.selfLocked()
	n.mu.Unlock()
	self.Seen = time.Now()
	data, err := json.Marshal(self)
	if err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if _, err := n.nodes().Put(octx, nodeKey(self.ID), data); err != nil {
		n.mu.Lock()
		n.writable = false
		n.mu.Unlock()
		return err
	}
	now := time.Now()
	n.mu.Lock()
	if !n.lastBeat.IsZero() && self.Seen.Sub(n.lastBeat) >= n.leaseTerm() {
		// The lease lapsed before this heartbeat: peers may have claimed
		// sessions meanwhile. It holds again after a resync (setup).
		n.mustVerify = true
	}
	n.lastBeat = self.Seen
	if !n.writable {
		n.writable, n.writableSince = true, now
	}
	n.mu.Unlock()
	return nil
}

// warnIfLive logs a warning when this node's id already has a live entry:
// a restart within the TTL, or (a misconfiguration) another process using
// the same id, whose sessions this one is about to delete.
func (n *Node) warnIfLive(ctx context.Context) {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	e, err := n.nodes().Get(octx, nodeKey(n.ID()))
	if err != nil {
		return
	}
	var ni NodeInfo
	_ = json.Unmarshal(e.Value(), &ni)
	n.log.Warn("cluster: this node id already has a live entry: a restart within the TTL, or another node with the same id (ids must be unique)",
		"last_heartbeat", e.Created(), "http", ni.HTTPURL, "ssh", ni.SSHAddr)
}

// deleteLeftovers deletes the session entries whose home is this node
// from before Join: a previous run that crashed and restarted within the
// TTL (so no peer saw it lost) left them, and this run does not have those
// sessions.
func (n *Node) deleteLeftovers(ctx context.Context) error {
	all, err := n.scanSessions(ctx)
	if err != nil {
		return fmt.Errorf("list sessions: %w", err)
	}
	deleted := 0
	for _, e := range all {
		if e.Node != n.ID() {
			continue
		}
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		err := n.sessions().Delete(octx, sessKey(e.ID), jetstream.LastRevision(e.Revision))
		cancel()
		if err != nil && !isRevisionMismatch(err) {
			return fmt.Errorf("delete leftover session %s: %w", e.ID, err)
		}
		deleted++
	}
	if deleted > 0 {
		n.log.Info("cluster: deleted session entries left by a previous run of this node", "count", deleted)
	}
	return nil
}

// reannounce writes every local session again (after a reconnect NATS may
// have lost them, or a peer may have deleted them believing this node
// dead). A session that a peer claimed in the meantime is forgotten here
// and given up (claimLost).
func (n *Node) reannounce(ctx context.Context) error {
	n.mu.Lock()
	local := slices.Collect(maps.Values(n.local))
	n.mu.Unlock()
	for _, e := range local {
		if err := n.writeSession(ctx, e); err != nil {
			if errors.Is(err, ErrClaimLost) {
				continue // claimLost told the callbacks
			}
			return fmt.Errorf("re-announce session %s: %w", e.ID, err)
		}
	}
	if len(local) > 0 {
		n.log.Info("cluster: re-announced sessions", "count", len(local))
	}
	return nil
}

// retryForgets deletes the entries whose Forget failed earlier.
func (n *Node) retryForgets(ctx context.Context) {
	n.mu.Lock()
	ids := slices.Collect(maps.Keys(n.forgets))
	n.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	for _, id := range ids {
		if err := n.deleteSession(ctx, id, 0); err != nil {
			n.log.Debug("cluster: retrying a forget failed", "session", id, "err", err)
			continue
		}
		n.mu.Lock()
		delete(n.forgets, id)
		n.mu.Unlock()
	}
}

// watchNodes starts a watcher on the nodes bucket and applies its initial
// snapshot to the view. Nodes in the view but absent from the snapshot
// (NATS lost its data, or they expired while this node could not see it)
// become suspects: lost only if they stay silent (sweepSuspects).
func (n *Node) watchNodes(ctx context.Context) (jetstream.KeyWatcher, error) {
	// The watcher lives as long as the node: its ctx is n.ctx, not ctx.
	w, err := n.nodes().WatchAll(n.ctx)
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(scanTimeout)
	defer timer.Stop()
	seen := map[string]bool{}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("watcher closed during its initial snapshot")
			}
			if e == nil {
				n.reconcile(seen)
				return w, nil
			}
			n.apply(e, seen)
		case <-timer.C:
			stopWatcher(w)
			return nil, errors.New("initial snapshot not read in time")
		case <-ctx.Done():
			stopWatcher(w)
			return nil, ctx.Err()
		}
	}
}

// apply updates the view with one entry of the nodes bucket. seen, if not
// nil, collects the ids of an initial snapshot.
//
// A put is a peer's heartbeat. A delete is a peer leaving (Drain deletes
// its entry): it is gone at once. An expiry is no proof of death: the
// stream may have been unavailable (a NATS server restarted, its streams
// with it), so that nobody could write and every entry aged past the TTL.
// The peer becomes a suspect, declared lost by sweepSuspects only after a
// TTL of silence while this node's own heartbeats are stored.
func (n *Node) apply(e jetstream.KeyValueEntry, seen map[string]bool) {
	id, ok := strings.CutPrefix(e.Key(), "node.")
	if !ok {
		return
	}
	if seen != nil {
		seen[id] = true
	}
	self := id == n.opts.NodeID
	switch e.Operation() {
	case jetstream.KeyValuePut:
		if self {
			return
		}
		var ni NodeInfo
		if err := json.Unmarshal(e.Value(), &ni); err != nil {
			n.log.Warn("cluster: ignoring a node entry that is not JSON", "key", e.Key(), "err", err)
			return
		}
		ni.ID = id
		ni.Seen = e.Created()
		n.mu.Lock()
		_, known := n.live[id]
		n.live[id] = ni
		n.heard[id] = time.Now()
		delete(n.suspect, id)
		delete(n.gone, id)
		n.mu.Unlock()
		if !known {
			n.log.Info("cluster: node joined", "peer", id, "http", ni.HTTPURL, "ssh", ni.SSHAddr)
		}
	case jetstream.KeyValueDelete, jetstream.KeyValuePurge:
		expired := e.Operation() == jetstream.KeyValuePurge
		if self {
			n.mu.Lock()
			draining := n.draining
			n.mu.Unlock()
			if !draining {
				how := "deleted"
				if expired {
					how = "expired"
				}
				n.log.Warn("cluster: this node's own entry vanished; rewriting it and re-announcing", "how", how)
				n.needResync = true
			}
			return
		}
		n.mu.Lock()
		_, known := n.live[id]
		if expired {
			_, already := n.suspect[id]
			if known {
				n.suspect[id] = struct{}{}
			}
			n.mu.Unlock()
			if known && !already {
				n.log.Info("cluster: a peer's entry expired; it is lost unless it writes again within a TTL of NATS being writable", "peer", id)
			}
			return
		}
		delete(n.live, id)
		delete(n.heard, id)
		delete(n.suspect, id)
		n.gone[id] = struct{}{}
		n.mu.Unlock()
		if known {
			n.log.Info("cluster: node left", "peer", id, "how", "deleted")
			n.queueLost(id)
		}
	}
}

// reconcile makes suspects of the peers in the view that a fresh snapshot
// did not show (NATS may have lost its data).
func (n *Node) reconcile(seen map[string]bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var missing []string
	for id := range n.live {
		if !seen[id] {
			n.suspect[id] = struct{}{}
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		n.log.Info("cluster: peers missing from NATS after a resync; each is lost unless it writes again within a TTL",
			"peers", missing)
	}
}

// sweepSuspects declares lost the suspects that have been silent for a
// TTL, by this node's clock, since both their last heartbeat seen and the
// moment this node's own heartbeats began to be stored again: evidence
// that survives an outage of the stream (while nobody can write, nobody
// is silent). Each is read once more before: an entry in the bucket is a
// heartbeat the watcher has not delivered yet. Called after a heartbeat
// was stored, never while NATS cannot be written.
func (n *Node) sweepSuspects(ctx context.Context) {
	now := time.Now()
	var due []string
	n.mu.Lock()
	if !n.writable {
		n.mu.Unlock()
		return
	}
	silentFor := func(id string) time.Duration {
		since := n.heard[id]
		if n.writableSince.After(since) {
			since = n.writableSince
		}
		return now.Sub(since)
	}
	for id := range n.suspect {
		if silentFor(id) >= n.opts.TTL {
			due = append(due, id)
		}
	}
	// A peer whose expiry the watcher never showed (its marker lost to
	// a stream changing leader, or the watcher being made again) is a
	// suspect all the same once no heartbeat of it was seen for a TTL
	// and a heartbeat more by this node's clock.
	for id := range n.live {
		if _, ok := n.suspect[id]; !ok && silentFor(id) >= n.opts.TTL+n.opts.Heartbeat {
			n.suspect[id] = struct{}{}
			due = append(due, id)
		}
	}
	n.mu.Unlock()
	for _, id := range due {
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		live, err := n.peerEntryLive(octx, id)
		cancel()
		switch {
		case err != nil:
			n.log.Debug("cluster: reading a suspect peer's entry failed; not declared lost", "peer", id, "err", err)
			continue
		case live:
			// Alive: a heartbeat the watcher has not shown yet.
			octx, cancel := context.WithTimeout(ctx, opTimeout)
			e, err := n.nodes().Get(octx, nodeKey(id))
			cancel()
			if err == nil {
				n.apply(e, nil)
			}
			continue
		}
		n.mu.Lock()
		_, stillSuspect := n.suspect[id]
		_, known := n.live[id]
		if stillSuspect {
			delete(n.suspect, id)
			delete(n.live, id)
			delete(n.heard, id)
			n.gone[id] = struct{}{}
		}
		n.mu.Unlock()
		if stillSuspect {
			// known or not: one not in the view is the home of a saved
			// session this node found (suspectHome).
			n.log.Warn("cluster: node lost", "peer", id, "how", "expired", "in_view", known, "silent_for_at_least", n.opts.TTL)
			n.queueLost(id)
		}
	}
}

// peerEntryLive reports whether node id's entry in the nodes bucket is a
// live heartbeat, as the stream's leader has it: asked through the
// JetStream API, not with a direct get, which any replica answers (one
// just restarted and not caught up too, which would show a live peer's
// entry missing).
func (n *Node) peerEntryLive(ctx context.Context, id string) (bool, error) {
	stream := "KV_" + n.opts.Bucket + "_nodes"
	req, _ := json.Marshal(map[string]string{"last_by_subj": "$KV." + n.opts.Bucket + "_nodes." + nodeKey(id)})
	msg, err := n.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return false, fmt.Errorf("read node %s's entry from the leader: %w", id, err)
	}
	var resp struct {
		Message *struct {
			Hdrs []byte `json:"hdrs"`
		} `json:"message"`
		Error *struct {
			Code    int    `json:"code"`
			ErrCode int    `json:"err_code"`
			Desc    string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return false, fmt.Errorf("read node %s's entry from the leader: %w", id, err)
	}
	switch {
	case resp.Error != nil && resp.Error.Code == 404:
		return false, nil // no message: never written, or expired and its marker gone
	case resp.Error != nil:
		return false, fmt.Errorf("read node %s's entry from the leader: %s (%d)", id, resp.Error.Desc, resp.Error.ErrCode)
	case resp.Message == nil:
		return false, fmt.Errorf("read node %s's entry from the leader: no message in the answer", id)
	}
	// A delete, a purge or an expiry leaves a marker: a message with
	// KV-Operation (or Nats-Marker-Reason) in its headers.
	h := string(resp.Message.Hdrs)
	return !strings.Contains(h, "KV-Operation") && !strings.Contains(h, "Nats-Marker-Reason"), nil
}

func (n *Node) queueLost(id string) {
	n.mu.Lock()
	n.lost = append(n.lost, id)
	n.mu.Unlock()
	select {
	case n.reapCh <- struct{}{}:
	default:
	}
}

// run owns the heartbeat and the nodes watcher. It resyncs after a
// (re)connect and when a heartbeat failed, and ends with n.ctx.
func (n *Node) run() {
	defer n.wg.Done()
	defer func() {
		if n.watcher != nil {
			stopWatcher(n.watcher)
			n.watcher = nil
		}
		if n.sessWatcher != nil {
			stopWatcher(n.sessWatcher)
			n.sessWatcher = nil
		}
	}()
	t := time.NewTicker(n.opts.Heartbeat)
	defer t.Stop()
	for {
		var updates, sessUpdates <-chan jetstream.KeyValueEntry
		if n.watcher != nil {
			updates = n.watcher.Updates()
		}
		if n.sessWatcher != nil {
			sessUpdates = n.sessWatcher.Updates()
		}
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
			n.tick()
		case <-n.resyncCh:
			n.needResync = true
			n.tick()
		case e, ok := <-updates:
			if !ok {
				// The subscription ended under us; a resync makes a new one.
				n.watcher = nil
				n.needResync = true
				continue
			}
			if e != nil {
				n.apply(e, nil)
			}
		case e, ok := <-sessUpdates:
			if !ok {
				n.sessWatcher = nil
				n.needResync = true
				continue
			}
			if e != nil {
				n.applySession(e)
			}
		}
	}
}

// tick is one heartbeat: a resync if one is due, else a write of the node
// entry; then the pending peers' deadlines. Nothing happens while
// disconnected: no write can succeed, and no peer is declared lost because
// this node cannot see it.
func (n *Node) tick() {
	if !n.nc.IsConnected() {
		return
	}
	if n.needResync {
		start := time.Now()
		if err := n.setup(n.ctx, false); err != nil {
			if n.ctx.Err() == nil {
				n.log.Warn("cluster: resync failed; retrying with the next heartbeat", "err", err)
			}
			return
		}
		n.needResync = false
		n.log.Info("cluster: resynced with NATS", "took", time.Since(start).Round(time.Millisecond))
		return
	}
	if err := n.beat(n.ctx); err != nil {
		if n.ctx.Err() == nil {
			n.log.Warn("cluster: heartbeat failed; resyncing with the next one", "err", err)
			n.needResync = true
		}
		return
	}
	n.mu.Lock()
	verify := n.mustVerify
	n.mu.Unlock()
	if verify {
		// The lease lapsed: a resync now, to find the sessions claimed
		// meanwhile before any is served again.
		n.needResync = true
		n.tick()
		return
	}
	n.sweepSuspects(n.ctx)
	n.retryDirty(n.ctx)
	n.retryForgets(n.ctx)
}

// retryDirty writes again the local sessions whose last write failed.
func (n *Node) retryDirty(ctx context.Context) {
	n.mu.Lock()
	var todo []SessionEntry
	for id := range n.dirty {
		if e, ok := n.local[id]; ok {
			todo = append(todo, e)
		} else {
			delete(n.dirty, id)
		}
	}
	n.mu.Unlock()
	for _, e := range todo {
		if err := n.writeSession(ctx, e); err != nil {
			if errors.Is(err, ErrClaimLost) {
				continue // claimLost told the callbacks
			}
			n.log.Debug("cluster: retrying an announce failed", "session", e.ID, "err", err)
		}
	}
}

// reap owns the handling of lost nodes: their orphans go to the OnNodeLost
// callbacks, or are deleted. It ends with n.ctx.
func (n *Node) reap() {
	defer n.wg.Done()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-n.reapCh:
		}
		for {
			n.mu.Lock()
			if len(n.lost) == 0 {
				n.mu.Unlock()
				break
			}
			id := n.lost[0]
			n.lost = n.lost[1:]
			n.mu.Unlock()
			if err := n.reapNode(id); err != nil {
				if n.ctx.Err() != nil {
					return
				}
				n.log.Warn("cluster: handling a lost node's sessions failed; retrying", "peer", id, "err", err)
				select {
				case <-n.ctx.Done():
					return
				case <-time.After(n.opts.Heartbeat):
				}
				n.queueLost(id)
				break
			}
		}
	}
}

// reapNode hands the lost node's orphans to the callbacks, or deletes them.
func (n *Node) reapNode(id string) error {
	if _, live := n.liveNode(id); live {
		return nil // back already
	}
	if !n.nc.IsConnected() {
		return errNotConnected
	}
	if !n.HoldsLease() {
		// Degraded: this node cannot write NATS now, so it adopts nothing.
		return ErrLeaseLapsed
	}
	all, err := n.scanSessions(n.ctx)
	if err != nil {
		return fmt.Errorf("list sessions: %w", err)
	}
	var orphans []SessionEntry
	for _, e := range all {
		if e.Node == id {
			orphans = append(orphans, e)
		}
	}
	n.mu.Lock()
	cbs := slices.Clone(n.callbacks)
	n.mu.Unlock()
	if len(cbs) > 0 {
		var errs []error
		for _, f := range cbs {
			errs = append(errs, f(id, slices.Clone(orphans)))
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("adopting its sessions: %w", err)
		}
		return nil
	}
	deleted := 0
	for _, e := range orphans {
		octx, cancel := context.WithTimeout(n.ctx, opTimeout)
		err := n.sessions().Delete(octx, sessKey(e.ID), jetstream.LastRevision(e.Revision))
		cancel()
		switch {
		case err == nil:
			deleted++
		case isRevisionMismatch(err):
			// Another node deleted or claimed it first.
		default:
			return fmt.Errorf("delete orphan %s: %w", e.ID, err)
		}
	}
	if len(orphans) > 0 {
		n.log.Info("cluster: deleted a lost node's session entries", "peer", id, "orphans", len(orphans), "deleted", deleted)
	}
	return nil
}

// scanSessions reads every session entry in the bucket (live home or not).
func (n *Node) scanSessions(ctx context.Context) ([]SessionEntry, error) {
	sctx, cancel := context.WithTimeout(ctx, scanTimeout)
	defer cancel()
	w, err := n.sessions().WatchAll(sctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer stopWatcher(w)
	out := []SessionEntry{}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				if err := sctx.Err(); err != nil {
					return nil, err
				}
				return nil, errors.New("watcher closed before the end of its snapshot")
			}
			if e == nil {
				return out, nil
			}
			if e.Operation() != jetstream.KeyValuePut {
				continue
			}
			se, err := decodeSession(e)
			if err != nil {
				n.log.Warn("cluster: ignoring a session entry that is not JSON", "key", e.Key(), "err", err)
				continue
			}
			out = append(out, se)
		case <-sctx.Done():
			return nil, sctx.Err()
		}
	}
}

// decodeSession decodes a sess.<id> entry; the id comes from the key.
func decodeSession(e jetstream.KeyValueEntry) (SessionEntry, error) {
	var se SessionEntry
	if err := json.Unmarshal(e.Value(), &se); err != nil {
		return se, err
	}
	se.ID = strings.TrimPrefix(e.Key(), "sess.")
	se.Revision = e.Revision()
	return se, nil
}

// stopWatcher stops w and drains it until its channel closes: the NATS
// delivery goroutine blocks on a full channel, and would never end.
func stopWatcher(w jetstream.KeyWatcher) {
	_ = w.Stop()
	t := time.NewTimer(drainWait)
	defer t.Stop()
	for {
		select {
		case _, ok := <-w.Updates():
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}
