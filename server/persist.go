package server

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/store"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// storeTimeout bounds one store operation of the saver.
const storeTimeout = 5 * time.Second

// persister saves the sessions that can come back (SSH-owned ones with a
// key and a resume grace, and those raxol_start started) to the snapshot
// store: at most once per Every per session, at once when the server
// drains, and deletes them when they end. It is the one writer of the
// store. Its goroutine (run) is started by start and stopped by
// beginDrain or close.
type persister struct {
	s     *Server
	codec *SnapshotCodec
	store store.Store
	every time.Duration
	max   int

	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex // protects the following
	tracked  map[string]*tracked
	deletes  map[string]struct{} // ended sessions whose records go
	draining bool                // ended sessions keep their records
}

// tracked is one saved session and what was saved of it.
type tracked struct {
	se        *session.Session
	sshOwned  bool
	startedBy string
	stored    bool // a record of it is in the store
	version   uint64
	activity  uint64
	token     [32]byte
	failing   bool // its last save failed (logged once)
}

// openSnapshots opens the snapshot store for an app with a codec, or
// returns nil when sessions are not saved.
func (s *Server) openSnapshots() (*persister, error) {
	o := s.opts.Snapshots
	if s.app.Snapshots == nil || o.Disabled {
		if o.Store != nil {
			_ = o.Store.Close()
		}
		return nil, nil
	}
	st := o.Store
	if st == nil {
		var err error
		field := "Options.DataDir"
		if s.cluster != nil {
			field = "Options.Cluster.NATSURL"
			st, err = s.cluster.snapshotStore()
		} else {
			st, err = store.OpenBolt(filepath.Join(s.opts.DataDir, SnapshotFileName), store.BoltOptions{})
		}
		if err != nil {
			return nil, s.opts.optionError(field, fmt.Errorf("snapshot store: %w", err))
		}
	}
	return &persister{
		s: s, codec: s.app.Snapshots, store: st,
		every: o.Every, max: o.MaxBytes,
		tracked: map[string]*tracked{}, deletes: map[string]struct{}{},
	}, nil
}

// describe is the posture's word on saving.
func (p *persister) describe() string {
	if p == nil {
		return "off"
	}
	return fmt.Sprintf("%s (codec v%d, every %s, max %d bytes)", p.store.Describe(), p.codec.Version, p.every, p.max)
}

// start runs the saver.
func (p *persister) start() {
	if p == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go p.run(ctx)
}

func (p *persister) run(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.flush(ctx)
		}
	}
}

// stop ends the saver and waits for it.
func (p *persister) stop() {
	if p == nil || p.cancel == nil {
		return
	}
	p.cancel()
	<-p.done
}

// track starts saving se. sshOwned sessions come back detached, for their
// owner; startedBy ones as raxol_start's.
func (p *persister) track(se *session.Session, sshOwned bool, startedBy string) {
	if p == nil {
		return
	}
	if sshOwned && (se.Owner.KeyFingerprint == "" || p.s.opts.SSH.ResumeGrace <= 0) {
		return // could never be resumed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.tracked[se.ID]; ok && t.se == se {
		t.sshOwned = t.sshOwned || sshOwned
		if startedBy != "" {
			t.startedBy = startedBy
		}
		return
	}
	delete(p.deletes, se.ID)
	p.tracked[se.ID] = &tracked{se: se, sshOwned: sshOwned, startedBy: startedBy}
}

// restored tracks se, restored from a record that is in the store and up
// to date.
func (p *persister) restored(se *session.Session, r *savedSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tracked[se.ID] = &tracked{
		se: se, sshOwned: r.SSHOwned, startedBy: r.StartedBy, stored: true,
		version: se.Dispatcher.Snapshot().Version, activity: se.ActivitySeq(), token: se.TokenHash(),
	}
}

// ended forgets a session that ended: its record goes with the next
// flush, unless the server is draining (the session ends because the
// server stops, and comes back when it starts again).
func (p *persister) ended(se *session.Session) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tracked[se.ID]
	if !ok || t.se != se || p.draining {
		return
	}
	delete(p.tracked, se.ID)
	if t.stored {
		p.deletes[se.ID] = struct{}{}
	}
}

// flush saves every tracked session that changed since it was last
// saved, and deletes the records of ended ones.
func (p *persister) flush(ctx context.Context) {
	type job struct {
		t                 *tracked
		version, activity uint64
		token             [32]byte
	}
	p.mu.Lock()
	var jobs []job
	for _, t := range p.tracked {
		v, a, tok := t.se.Dispatcher.Snapshot().Version, t.se.ActivitySeq(), t.se.TokenHash()
		if !t.stored || v != t.version || a != t.activity || tok != t.token {
			jobs = append(jobs, job{t, v, a, tok})
		}
	}
	dels := make([]string, 0, len(p.deletes))
	for id := range p.deletes {
		dels = append(dels, id)
	}
	clear(p.deletes)
	p.mu.Unlock()

	recs := make([]store.Record, 0, len(jobs))
	encoded := jobs[:0]
	for _, j := range jobs {
		if ctx.Err() != nil {
			return
		}
		data, err := p.record(j.t)
		if err != nil {
			continue
		}
		recs = append(recs, store.Record{ID: j.t.se.ID, Data: data})
		encoded = append(encoded, j)
	}
	for i := 0; i < len(recs); i += saveBatch {
		end := min(i+saveBatch, len(recs))
		ok := p.write(ctx, recs[i:end])
		p.mu.Lock()
		for k, j := range encoded[i:end] {
			if !ok[k] {
				continue
			}
			j.t.stored, j.t.version, j.t.activity, j.t.token = true, j.version, j.activity, j.token
			if cur, live := p.tracked[j.t.se.ID]; !live || cur != j.t {
				// It ended while being saved.
				if !p.draining {
					p.deletes[j.t.se.ID] = struct{}{}
				}
			}
		}
		p.mu.Unlock()
	}
	for _, id := range dels {
		p.mu.Lock()
		_, back := p.tracked[id]
		p.mu.Unlock()
		if back {
			continue
		}
		octx, cancel := context.WithTimeout(ctx, storeTimeout)
		err := p.store.Delete(octx, id)
		cancel()
		if err != nil {
			p.s.log.Warn("deleting an ended session's snapshot failed; retrying", "session", id, "err", err)
			p.mu.Lock()
			p.deletes[id] = struct{}{}
			p.mu.Unlock()
		}
	}
}

// saveBatch bounds the records written in one store transaction.
const saveBatch = 256

// write saves recs, in one transaction when the store can (one fsync for
// a second's changes of many sessions), and reports which were saved.
func (p *persister) write(ctx context.Context, recs []store.Record) []bool {
	ok := make([]bool, len(recs))
	done := func(i int) {
		ok[i] = true
		p.s.metrics.SnapshotsSaved.Inc()
		p.s.metrics.SnapshotBytes.Add(float64(len(recs[i].Data)))
	}
	octx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if b, batches := p.store.(store.Batcher); batches && len(recs) > 1 {
		if err := b.PutMany(octx, recs); err != nil {
			p.s.metrics.SnapshotFailures.WithLabelValues("store").Add(float64(len(recs)))
			p.s.log.Warn("session snapshots: the store refused a batch", "sessions", len(recs), "err", err)
			return ok
		}
		for i := range recs {
			done(i)
		}
		return ok
	}
	for i, r := range recs {
		if err := p.store.Put(octx, r.ID, r.Data); err != nil {
			p.s.metrics.SnapshotFailures.WithLabelValues("store").Inc()
			p.s.log.Warn("session snapshot: the store refused it", "session", r.ID, "err", err)
			continue
		}
		done(i)
	}
	return ok
}

// record encodes one session's record, or says why not (logged and
// counted here). The version flush read before the encode is what it
// remembers: a change during the encode is saved next time.
func (p *persister) record(t *tracked) ([]byte, error) {
	se := t.se
	snap := se.Dispatcher.Snapshot()
	var model []byte
	var err error
	if perr := se.Guard().Do(metrics.HookOther, "", func() { model, err = p.codec.Encode(snap.Model) }); perr != nil {
		err = perr
	}
	if err != nil {
		p.s.metrics.SnapshotFailures.WithLabelValues("encode").Inc()
		if p.firstFailure(t) {
			p.s.log.Warn("session snapshot: encoding the model failed; the session runs on unsaved", "session", se.ID, "err", err)
		}
		return nil, err
	}
	sv := se.Save()
	p.mu.Lock()
	sshOwned, startedBy := t.sshOwned, t.startedBy
	p.mu.Unlock()
	rec := savedSession{
		Format: savedFormat, App: p.s.app.Name, Version: p.codec.Version,
		ID: sv.ID, TokenSHA256: hex.EncodeToString(sv.TokenHash[:]), Owner: sv.Owner, Created: sv.Created,
		Activity: sv.Activity, SSHOwned: sshOwned, StartedBy: startedBy,
		Node: p.s.nodeID(), SavedAt: time.Now(), Model: model,
	}
	data, err := json.Marshal(&rec)
	if err != nil {
		p.s.metrics.SnapshotFailures.WithLabelValues("encode").Inc()
		return nil, fmt.Errorf("session snapshot %s: %w", se.ID, err)
	}
	if len(data) > p.max {
		p.s.metrics.SnapshotFailures.WithLabelValues("too_large").Inc()
		if p.firstFailure(t) {
			p.s.log.Warn("session snapshot larger than the cap; the session runs on unsaved", "session", se.ID, "bytes", len(data), "max", p.max)
		}
		return nil, store.ErrTooLarge
	}
	p.mu.Lock()
	t.failing = false
	p.mu.Unlock()
	return data, nil
}

// firstFailure marks t as failing to save and reports whether it was not
// already: a session that cannot be saved is logged once, not every tick.
func (p *persister) firstFailure(t *tracked) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := !t.failing
	t.failing = true
	return first
}

// beginDrain stops the saver, keeps the records of sessions that end from
// now on (they come back at the next start), and saves every change now.
func (p *persister) beginDrain(ctx context.Context) {
	if p == nil {
		return
	}
	p.stop()
	p.mu.Lock()
	p.draining = true
	p.mu.Unlock()
	p.flush(ctx)
}

// close saves what changed during the drain, when final, and closes the
// store.
func (p *persister) close(ctx context.Context, final bool) error {
	if p == nil {
		return nil
	}
	p.stop()
	if final {
		p.flush(ctx)
	}
	if err := p.store.Close(); err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	return nil
}

// restoreAll brings back the saved sessions of this app at start: each
// comes back detached, waiting for its owner for the resume grace (or, if
// raxol_start started it, reaped when idle). A record that cannot be read
// or decoded is skipped, logged once and counted; one older than the
// resume grace (it could no longer be resumed) is deleted.
func (p *persister) restoreAll(ctx context.Context) {
	if p == nil {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, storeTimeout)
	ids, err := p.store.List(lctx)
	cancel()
	if err != nil {
		p.s.log.Warn("listing saved sessions failed; none restored", "store", p.store.Describe(), "err", err)
		return
	}
	restored := 0
	for _, id := range ids {
		if p.restoreOne(ctx, id, "restart", p.s.cluster.claimSaved) {
			restored++
		}
	}
	if len(ids) > 0 {
		p.s.log.Info("saved sessions restored", "restored", restored, "saved", len(ids))
	}
}

// restoreOne restores session id from the store; how is the metric's
// reason ("restart", "adopted"). claim, when not nil, is asked once the
// record and its model are read whether this node takes the session (in
// a cluster: a compare-and-set in the directory, won by one node).
func (p *persister) restoreOne(ctx context.Context, id, how string, claim func(context.Context, *savedSession) bool) bool {
	gctx, cancel := context.WithTimeout(ctx, storeTimeout)
	data, err := p.store.Get(gctx, id)
	cancel()
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			p.s.log.Warn("reading a saved session failed", "session", id, "err", err)
		}
		return false
	}
	refuse := func(reason string, err error) bool {
		p.s.metrics.SnapshotFailures.WithLabelValues(reason).Inc()
		p.s.log.Warn("saved session not restored", "session", id, "reason", reason, "err", err)
		return false
	}
	r, err := decodeSaved(data)
	if err != nil {
		return refuse("decode", err)
	}
	if r.ID != id || r.App != p.s.app.Name {
		return refuse("decode", fmt.Errorf("record of session %q of app %q", r.ID, r.App))
	}
	if r.SSHOwned && time.Since(r.SavedAt) > p.s.opts.SSH.ResumeGrace {
		p.s.metrics.SnapshotFailures.WithLabelValues("expired").Inc()
		p.s.log.Info("saved session older than the resume grace; deleted", "session", id, "saved_at", r.SavedAt)
		dctx, cancel := context.WithTimeout(ctx, storeTimeout)
		_ = p.store.Delete(dctx, id)
		cancel()
		return false
	}
	sv, err := r.saved()
	if err != nil {
		return refuse("decode", err)
	}
	if claim != nil && !p.s.cluster.mayClaim(r) {
		return false // a live peer holds it
	}
	var model ui.Model
	if perr := p.s.panics.Session(id).Do(metrics.HookFactory, "", func() { model, err = p.codec.Decode(r.Version, r.Model) }); perr != nil {
		err = perr
	}
	if err != nil {
		return refuse("decode", err)
	}
	if model == nil {
		return refuse("decode", errors.New("the codec decoded a nil model"))
	}
	if claim != nil && !claim(ctx, r) {
		return false
	}
	se, err := p.s.sessions.Restore(p.s.app.Name, sv, model, ui.Restored{At: r.SavedAt})
	if err != nil {
		p.s.cluster.unclaim(ctx, id)
		if errors.Is(err, session.ErrExists) {
			return false
		}
		return refuse("decode", err)
	}
	if !p.s.life.restore(se, r) {
		p.s.sessions.EndCause(se.ID, session.Ended("the server is stopping"))
		p.s.cluster.unclaim(ctx, id)
		return false
	}
	p.restored(se, r)
	p.s.metrics.SessionsRestored.WithLabelValues(how).Inc()
	p.s.log.Info("session restored", "session", id, "how", how, "user", r.Owner.User, "key", r.Owner.KeyFingerprint, "saved_at", r.SavedAt)
	return true
}

// describeSnapshots is the posture's word on saving sessions.
func (s *Server) describeSnapshots() string {
	if s.app.Snapshots == nil {
		return "off (the app has no snapshot codec: sessions end with the server)"
	}
	if p := s.persist.Load(); p != nil {
		return p.describe()
	}
	return "off (" + s.opts.setting("Options.Snapshots.Disabled") + ")"
}

// nodeID is this node's id in a cluster, "" for a single node.
func (s *Server) nodeID() string {
	if s.cluster == nil {
		return ""
	}
	return s.cluster.node.ID()
}
