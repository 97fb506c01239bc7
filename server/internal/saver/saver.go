package saver

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/store"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// StoreTimeout bounds one store operation of the saver.
const StoreTimeout = 5 * time.Second

// Saver saves the sessions that can come back (SSH-owned ones with a
// key and a resume grace, and those raxol_start started) to the snapshot
// store. What the record holds about who may act in a session is saved
// before it is acknowledged: a session is written before its token is
// first given out (the session's saver, called when its owner opens the
// attach panel; SaveStarted before raxol_start answers), again when its
// token is rotated or what agents may do changes (the saver, before the
// new token or the pause is shown), and its record is deleted when it
// ends (Ended, before the end is reported). Everything else (the model,
// the activity log) is saved at most once per Every per session, and at
// once when the server drains. It is the one writer of the store. Its
// goroutine (run) is started by Start and stopped by BeginDrain or Close.
// A nil *Saver saves nothing: every method does nothing on it.
type Saver struct {
	// cfg is what it was made with (Home never nil: Standalone on a
	// single node, the cluster node in a cluster).
	cfg Config

	store store.Store // cfg.Store, fenced in a cluster

	// fence is the store, when it is a cluster's KV bucket: it writes a
	// record only at the revision this node last saw, so a node whose
	// session another node adopted (while it was cut off, or a write was
	// in flight) cannot write over or delete the adopter's record; such a
	// write is refused with store.ErrConflict and the session is given up
	// (lost, giveUpLost). Nil on a single node.
	fence *store.Fenced

	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{} // run gives up the sessions in lost at once

	// writing is held around every write or delete of a record, from the
	// check that what is written is still current to the store's answer:
	// a record encoded before a rotation (or a session's end) can never
	// land after the rotation's own save (or the end's delete). Lock
	// order: writing, then mu.
	writing sync.Mutex

	mu       sync.Mutex // protects the following
	tracked  map[string]*saveState
	deletes  map[string]struct{} // ended sessions whose records go
	draining bool                // ended sessions keep their records
	lost     map[string]struct{} // sessions whose record another node wrote
}

// saveState is the saver's state of one session: what was saved of it.
type saveState struct {
	se        *session.Session
	sshOwned  bool
	startedBy string
	stored    bool // a record of it is in the store
	version   uint64
	activity  uint64
	access    access // what its record says about who may act, and how
	failing   bool   // its last save failed (logged once)
}

// access is what a record says about who may act in a session and how:
// the token's hash and what the human lets agents do. A record with an
// older one than the session's is never written over a newer one.
type access struct {
	token   [32]byte
	control session.Control
}

func accessOf(se *session.Session) access { return access{se.TokenHash(), se.Control()} }

// RestoreFunc hands a session brought back from its record to the one
// that owns sessions (the server's lifecycle): sshOwned ones come back
// detached, for their owner; startedBy ones as raxol_start's. It reports
// false when it cannot take the session (the server stops, or the id is
// taken): the saver then ends it.
type RestoreFunc func(se *session.Session, sshOwned bool, startedBy string) bool

// Config is what a Saver is made with.
type Config struct {
	App         string           // the app's name, in every record
	ResumeGrace time.Duration    // how long a detached session waits for its owner
	Registry    *session.Manager // where restored sessions go
	Restore     RestoreFunc      // who owns them then
	Panics      *guard.Reporter  // the codec is the app's code
	Log         *slog.Logger
	Metrics     *metrics.Metrics
	// Home is what the saver asks about a session's home; nil means
	// Standalone. In a cluster a store that is Conditional is written
	// fenced (store.Fenced), and an agent's change is answered once the
	// record holding it is written (the session's committer).
	Home     Home
	Codec    Codec
	Store    store.Store
	Every    time.Duration // how often at most a session's changes are saved
	MaxBytes int           // the largest record saved
}

// New makes a saver; Start runs it.
func New(c Config) *Saver {
	if c.Home == nil {
		c.Home = Standalone{}
	}
	p := &Saver{
		cfg: c, store: c.Store,
		tracked: map[string]*saveState{}, deletes: map[string]struct{}{}, lost: map[string]struct{}{},
		wake: make(chan struct{}, 1),
	}
	if cs, ok := c.Store.(store.Conditional); ok {
		if _, alone := c.Home.(Standalone); !alone {
			p.fence = store.NewFenced(cs)
			p.store = p.fence
		}
	}
	return p
}

// Store is the store the saver writes (fenced in a cluster).
func (p *Saver) Store() store.Store { return p.store }

// Describe is the posture's word on saving.
func (p *Saver) Describe() string {
	if p == nil {
		return "off"
	}
	return fmt.Sprintf("%s (codec v%d, every %s, max %d bytes)", p.store.Describe(), p.cfg.Codec.Version, p.cfg.Every, p.cfg.MaxBytes)
}

// Start runs the saver.
func (p *Saver) Start() {
	if p == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go p.run(ctx)
}

func (p *Saver) run(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.Flush(ctx)
			p.giveUpLost()
		case <-p.wake:
			p.giveUpLost()
		}
	}
}

// conflicted notes that the store refused a write or delete of session
// id with store.ErrConflict (another node wrote its record since: it
// adopted the session), for run to give it up; it reports whether err is
// that. Called with p.writing held, so the giving up waits for run.
func (p *Saver) conflicted(id string, err error) bool {
	if !errors.Is(err, store.ErrConflict) {
		return false
	}
	p.cfg.Log.Warn("session snapshot: another node wrote this session's record since this node last did; giving the session up",
		"session", id)
	p.mu.Lock()
	p.lost[id] = struct{}{}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return true
}

// giveUpLost ends this node's copy of every session another node wrote
// the record of (conflicted), without saving it: as when its directory
// entry shows another node claimed it.
func (p *Saver) giveUpLost() {
	p.mu.Lock()
	ids := make([]string, 0, len(p.lost))
	for id := range p.lost {
		ids = append(ids, id)
	}
	clear(p.lost)
	p.mu.Unlock()
	for _, id := range ids {
		p.cfg.Home.GiveUp(id)
	}
}

// forget drops what the fence remembers of session id: this node no
// longer writes its record.
func (p *Saver) forget(id string) {
	if p.fence != nil {
		p.fence.Forget(id)
	}
}

// Stop ends the saver and waits for it.
func (p *Saver) Stop() {
	if p == nil || p.cancel == nil {
		return
	}
	p.cancel()
	<-p.done
}

// Track starts saving se. sshOwned sessions come back detached, for their
// owner; startedBy ones as raxol_start's.
func (p *Saver) Track(se *session.Session, sshOwned bool, startedBy string) {
	if p == nil {
		return
	}
	if sshOwned && (se.Owner.KeyFingerprint == "" || p.cfg.ResumeGrace <= 0) {
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
	p.tracked[se.ID] = &saveState{se: se, sshOwned: sshOwned, startedBy: startedBy}
	p.hook(se)
}

// hook makes p se's saver, and in a cluster its committer: an agent's
// change is answered once the record holds it (commit), as the node that
// adopts the session restores that record.
func (p *Saver) hook(se *session.Session) {
	se.SetSaver(func() error { return p.Save(se) })
	if _, alone := p.cfg.Home.(Standalone); !alone {
		se.SetCommitter(func(ctx context.Context, v uint64) error { return p.commit(ctx, se, v) })
	}
}

// SaveStarted saves a session raxol_start just started before its caller
// is given its token: a crash at any moment after cannot lose it. A
// session that cannot be saved runs on unsaved (logged by save).
func (p *Saver) SaveStarted(se *session.Session) {
	if p == nil {
		return
	}
	_ = p.Save(se)
}

// restored tracks se, restored from a record that is in the store and up
// to date.
func (p *Saver) restored(se *session.Session, r *Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tracked[se.ID] = &saveState{
		se: se, sshOwned: r.SSHOwned, startedBy: r.StartedBy, stored: true,
		version: se.Dispatcher.Snapshot().Version, activity: se.ActivitySeq(), access: accessOf(se),
	}
	p.hook(se)
}

// Ended forgets a session that ended and deletes its record before it
// returns (the manager's OnEnd runs before the end is reported): a crash
// cannot bring back a session its owner quit or raxol_stop stopped, nor
// its token. A delete the store refuses is retried by the next flush.
// While the server drains, ended sessions keep their records (they end
// because the server stops, and come back when it starts again).
func (p *Saver) Ended(se *session.Session) {
	if p == nil {
		return
	}
	p.mu.Lock()
	t, ok := p.tracked[se.ID]
	if !ok || t.se != se || p.draining {
		p.mu.Unlock()
		return
	}
	delete(p.tracked, se.ID)
	p.mu.Unlock()
	se.SetSaver(nil)
	se.SetCommitter(nil)

	p.writing.Lock()
	defer p.writing.Unlock()
	p.mu.Lock()
	stored := t.stored // a flush may have written it since
	p.mu.Unlock()
	if stored {
		p.deleteNow(context.Background(), se.ID)
	}
}

// deleteNow deletes the record of session id, unless it came back (a
// restore under the same id); one the store refuses is retried by the
// next flush. p.writing is held.
func (p *Saver) deleteNow(ctx context.Context, id string) {
	p.mu.Lock()
	_, back := p.tracked[id]
	p.mu.Unlock()
	if back {
		return
	}
	octx, cancel := context.WithTimeout(ctx, StoreTimeout)
	err := p.store.Delete(octx, id)
	cancel()
	if errors.Is(err, store.ErrConflict) {
		// Another node wrote it since: the record is that node's.
		p.cfg.Log.Warn("an ended session's snapshot was written by another node since; left to it", "session", id)
		p.forget(id)
		return
	}
	if err != nil {
		p.cfg.Log.Warn("deleting an ended session's snapshot failed; retrying", "session", id, "err", err)
		p.mu.Lock()
		p.deletes[id] = struct{}{}
		p.mu.Unlock()
	}
}

// Save writes se's record now, unless the store has it with the same
// token and control already, and returns once the store has it (a bbolt
// commit is fsynced; a JetStream KV put is acknowledged by the server):
// the session's saver, and the first save of a session. A session that is
// not tracked (it ended, or cannot come back) has nothing to save. When
// the record cannot be written the old one is deleted if it can be, so
// that it cannot bring back a token the human revoked; the session runs
// unsaved until a flush succeeds.
func (p *Saver) Save(se *session.Session) error {
	p.writing.Lock()
	defer p.writing.Unlock()
	p.mu.Lock()
	t, ok := p.tracked[se.ID]
	current := ok && t.se == se && t.stored && t.access == accessOf(se)
	p.mu.Unlock()
	if !ok || t.se != se || current {
		return nil // not saved at all; or saved so, and the model's changes are the tick's
	}
	err := p.put(context.Background(), t)
	if err != nil && !errors.Is(err, errFenced) && !errors.Is(err, store.ErrConflict) {
		octx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
		derr := p.store.Delete(octx, se.ID)
		cancel()
		p.mu.Lock()
		if derr == nil {
			t.stored = false
		}
		p.mu.Unlock()
	}
	return err
}

// commit returns once se's record holds its model as of dispatcher
// version v or later, writing it now unless it does already: the
// session's committer in a cluster, called before an agent's change is
// answered (session.Commit), so that the node that adopts the session
// has every change an agent was told succeeded. Concurrent commits of one
// session share a write: the first writes what is folded by then, and
// the others find their version in it. A session that is not saved (it
// could never come back) has nothing to commit.
func (p *Saver) commit(ctx context.Context, se *session.Session, v uint64) error {
	p.writing.Lock()
	defer p.writing.Unlock()
	p.mu.Lock()
	t, ok := p.tracked[se.ID]
	done := ok && t.se == se && t.stored && t.version >= v && t.access == accessOf(se)
	p.mu.Unlock()
	if !ok || t.se != se || done {
		return nil
	}
	return p.put(ctx, t)
}

// put writes t's record now and remembers what it holds; p.writing is
// held. It refuses a session that is not this node's to write (fencing).
func (p *Saver) put(ctx context.Context, t *saveState) error {
	se := t.se
	if err := p.cfg.Home.Fenced(se.ID); err != nil {
		// Not this node's to write now: the record may be another node's.
		return fmt.Errorf("session snapshot %s: %w: %w", se.ID, errFenced, err)
	}
	v, a := se.Dispatcher.Snapshot().Version, se.ActivitySeq()
	data, acc, err := p.record(t)
	if err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, StoreTimeout)
	err = p.store.Put(octx, se.ID, data)
	cancel()
	if err != nil {
		p.cfg.Metrics.SnapshotFailures.WithLabelValues("store").Inc()
		if !p.conflicted(se.ID, err) {
			p.cfg.Log.Warn("session snapshot: the store refused it", "session", se.ID, "err", err)
		}
		return fmt.Errorf("session snapshot %s: %w", se.ID, err)
	}
	p.cfg.Metrics.SnapshotsSaved.Inc()
	p.cfg.Metrics.SnapshotBytes.Add(float64(len(data)))
	p.mu.Lock()
	t.stored, t.version, t.activity, t.access = true, v, a, acc
	p.mu.Unlock()
	return nil
}

// Flush saves every tracked session that changed since it was last
// saved, and deletes the records of ended ones whose delete failed.
func (p *Saver) Flush(ctx context.Context) {
	type job struct {
		t                 *saveState
		version, activity uint64
		access            access // what its record holds
		data              []byte
	}
	p.mu.Lock()
	var jobs []job
	for _, t := range p.tracked {
		v, a := t.se.Dispatcher.Snapshot().Version, t.se.ActivitySeq()
		if !t.stored || v != t.version || a != t.activity || accessOf(t.se) != t.access {
			jobs = append(jobs, job{t: t, version: v, activity: a})
		}
	}
	dels := make([]string, 0, len(p.deletes))
	for id := range p.deletes {
		dels = append(dels, id)
	}
	clear(p.deletes)
	p.mu.Unlock()

	encoded := jobs[:0]
	for _, j := range jobs {
		if ctx.Err() != nil {
			return
		}
		data, acc, err := p.record(j.t)
		if err != nil {
			continue
		}
		j.data, j.access = data, acc
		encoded = append(encoded, j)
	}
	for i := 0; i < len(encoded); i += saveBatch {
		batch := encoded[i:min(i+saveBatch, len(encoded))]
		p.writing.Lock()
		// Written only if still current: a session that ended since has
		// had its record deleted, and one whose token was rotated or whose
		// agents were paused since has been saved so (both under
		// p.writing).
		p.mu.Lock()
		cur := batch[:0]
		for _, j := range batch {
			// Fencing: a session another node claimed, or any while this
			// node's lease lapsed, is not written (kept for a later flush).
			if live, ok := p.tracked[j.t.se.ID]; ok && live == j.t && accessOf(j.t.se) == j.access &&
				p.cfg.Home.Fenced(j.t.se.ID) == nil {
				cur = append(cur, j)
			}
		}
		p.mu.Unlock()
		recs := make([]store.Record, len(cur))
		for k, j := range cur {
			recs[k] = store.Record{ID: j.t.se.ID, Data: j.data}
		}
		ok := p.write(ctx, recs)
		p.mu.Lock()
		for k, j := range cur {
			if ok[k] {
				j.t.stored, j.t.version, j.t.activity, j.t.access = true, j.version, j.activity, j.access
			}
		}
		p.mu.Unlock()
		p.writing.Unlock()
	}
	for _, id := range dels {
		p.writing.Lock()
		p.deleteNow(ctx, id)
		p.writing.Unlock()
	}
}

// saveBatch bounds the records written in one store transaction.
const saveBatch = 256

// write saves recs, in one transaction when the store can (one fsync for
// a second's changes of many sessions), and reports which were saved.
func (p *Saver) write(ctx context.Context, recs []store.Record) []bool {
	ok := make([]bool, len(recs))
	if len(recs) == 0 {
		return ok
	}
	done := func(i int) {
		ok[i] = true
		p.cfg.Metrics.SnapshotsSaved.Inc()
		p.cfg.Metrics.SnapshotBytes.Add(float64(len(recs[i].Data)))
	}
	octx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	if b, batches := p.store.(store.Batcher); batches && len(recs) > 1 {
		if err := b.PutMany(octx, recs); err != nil {
			p.cfg.Metrics.SnapshotFailures.WithLabelValues("store").Add(float64(len(recs)))
			p.cfg.Log.Warn("session snapshots: the store refused a batch", "sessions", len(recs), "err", err)
			return ok
		}
		for i := range recs {
			done(i)
		}
		return ok
	}
	for i, r := range recs {
		if err := p.store.Put(octx, r.ID, r.Data); err != nil {
			p.cfg.Metrics.SnapshotFailures.WithLabelValues("store").Inc()
			if !p.conflicted(r.ID, err) {
				p.cfg.Log.Warn("session snapshot: the store refused it", "session", r.ID, "err", err)
			}
			continue
		}
		done(i)
	}
	return ok
}

// record encodes one session's record and returns it with what it holds
// about who may act in the session, or says why not (logged and counted
// here). The version flush read before the encode is what it remembers: a
// change during the encode is saved next time.
func (p *Saver) record(t *saveState) ([]byte, access, error) {
	se := t.se
	snap := se.Dispatcher.Snapshot()
	var model []byte
	var err error
	if perr := se.Guard().Do(metrics.HookOther, "", func() { model, err = p.cfg.Codec.Encode(snap.Model) }); perr != nil {
		err = perr
	}
	if err != nil {
		p.cfg.Metrics.SnapshotFailures.WithLabelValues("encode").Inc()
		if p.firstFailure(t) {
			p.cfg.Log.Warn("session snapshot: encoding the model failed; the session runs on unsaved", "session", se.ID, "err", err)
		}
		return nil, access{}, err
	}
	sv := se.Save()
	p.mu.Lock()
	sshOwned, startedBy := t.sshOwned, t.startedBy
	p.mu.Unlock()
	rec := Record{
		Format: recordFormat, App: p.cfg.App, Version: p.cfg.Codec.Version,
		ID: sv.ID, TokenSHA256: hex.EncodeToString(sv.TokenHash[:]), Owner: sv.Owner, Created: sv.Created,
		Activity: sv.Activity, Control: sv.Control, SSHOwned: sshOwned, StartedBy: startedBy,
		Node: p.cfg.Home.ID(), SavedAt: time.Now(), Model: model,
	}
	data, err := json.Marshal(&rec)
	if err != nil {
		p.cfg.Metrics.SnapshotFailures.WithLabelValues("encode").Inc()
		return nil, access{}, fmt.Errorf("session snapshot %s: %w", se.ID, err)
	}
	if len(data) > p.cfg.MaxBytes {
		p.cfg.Metrics.SnapshotFailures.WithLabelValues("too_large").Inc()
		if p.firstFailure(t) {
			p.cfg.Log.Warn("session snapshot larger than the cap; the session runs on unsaved", "session", se.ID, "bytes", len(data), "max", p.cfg.MaxBytes)
		}
		return nil, access{}, store.ErrTooLarge
	}
	p.mu.Lock()
	t.failing = false
	p.mu.Unlock()
	return data, access{sv.TokenHash, sv.Control}, nil
}

// firstFailure marks t as failing to save and reports whether it was not
// already: a session that cannot be saved is logged once, not every tick.
func (p *Saver) firstFailure(t *saveState) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := !t.failing
	t.failing = true
	return first
}

// BeginDrain stops the saver, keeps the records of sessions that end from
// now on (they come back at the next start), and saves every change now.
func (p *Saver) BeginDrain(ctx context.Context) {
	if p == nil {
		return
	}
	p.Stop()
	p.mu.Lock()
	p.draining = true
	p.mu.Unlock()
	p.Flush(ctx)
}

// Close saves what changed during the drain, when final, and closes the
// store.
func (p *Saver) Close(ctx context.Context, final bool) error {
	if p == nil {
		return nil
	}
	p.Stop()
	if final {
		p.Flush(ctx)
	}
	if err := p.store.Close(); err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	return nil
}

// RestoreAll brings back the saved sessions of this app at start: each
// comes back detached, waiting for its owner for the resume grace (or, if
// raxol_start started it, reaped when idle). A record that cannot be read
// or decoded is skipped, logged once and counted; one older than the
// resume grace (it could no longer be resumed) is deleted.
func (p *Saver) RestoreAll(ctx context.Context) {
	if p == nil {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	ids, err := p.store.List(lctx)
	cancel()
	if err != nil {
		p.cfg.Log.Warn("listing saved sessions failed; none restored", "store", p.store.Describe(), "err", err)
		return
	}
	restored := 0
	for _, id := range ids {
		if p.RestoreOne(ctx, id, "restart", p.cfg.Home.ClaimSaved) {
			restored++
		}
	}
	if len(ids) > 0 {
		p.cfg.Log.Info("saved sessions restored", "restored", restored, "saved", len(ids))
	}
}

// RestoreOne restores session id from the store; how is the metric's
// reason ("restart", "adopted"). claim, when not nil, is asked once the
// record and its model are read whether this node takes the session (in
// a cluster: a compare-and-set in the directory, won by one node).
func (p *Saver) RestoreOne(ctx context.Context, id, how string, claim func(context.Context, *Record) bool) (ok bool) {
	defer func() {
		if !ok && !p.IsTracked(id) {
			p.forget(id) // not this node's to write
		}
	}()
	gctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	data, err := p.store.Get(gctx, id)
	cancel()
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			p.cfg.Log.Warn("reading a saved session failed", "session", id, "err", err)
		}
		return false
	}
	refuse := func(reason string, err error) bool {
		p.cfg.Metrics.SnapshotFailures.WithLabelValues(reason).Inc()
		p.cfg.Log.Warn("saved session not restored", "session", id, "reason", reason, "err", err)
		return false
	}
	r, sv, model, reason, err := p.decodeRecord(id, data)
	if errors.Is(err, errExpired) {
		p.cfg.Metrics.SnapshotFailures.WithLabelValues("expired").Inc()
		p.cfg.Log.Info("saved session older than the resume grace; deleted", "session", id, "saved_at", r.SavedAt)
		dctx, cancel := context.WithTimeout(ctx, StoreTimeout)
		_ = p.store.Delete(dctx, id)
		cancel()
		return false
	}
	if errors.Is(err, errHeldByPeer) {
		return false
	}
	if err != nil {
		return refuse(reason, err)
	}
	if claim != nil && !claim(ctx, r) {
		return false
	}
	if p.fence != nil {
		// Write the record back at the revision read: from now on the
		// old home's writes (one in flight when it was cut off) are
		// refused. One that landed since the read is read again.
		fresh, err := p.fenceRecord(ctx, id, data)
		if err != nil {
			p.cfg.Home.Unclaim(ctx, id)
			p.cfg.Log.Warn("saved session not restored: its record could not be made this node's", "session", id, "err", err)
			return false
		}
		if !bytes.Equal(fresh, data) {
			if r, sv, model, reason, err = p.decodeRecord(id, fresh); err != nil {
				p.cfg.Home.Unclaim(ctx, id)
				return refuse(reason, err)
			}
		}
	}
	se, err := p.cfg.Registry.Restore(p.cfg.App, sv, model, ui.Restored{At: r.SavedAt})
	if err != nil {
		p.cfg.Home.Unclaim(ctx, id)
		if errors.Is(err, session.ErrExists) {
			return false
		}
		return refuse("decode", err)
	}
	if !p.cfg.Restore(se, r.SSHOwned, r.StartedBy) {
		p.cfg.Registry.EndCause(se.ID, session.Ended("the server is stopping"))
		p.cfg.Home.Unclaim(ctx, id)
		return false
	}
	p.restored(se, r)
	p.cfg.Metrics.SessionsRestored.WithLabelValues(how).Inc()
	p.cfg.Log.Info("session restored", "session", id, "how", how, "user", r.Owner.User, "key", r.Owner.KeyFingerprint, "saved_at", r.SavedAt)
	return true
}

// decodeRecord decodes session id's record and its model, or says why it
// is not restored: errExpired, errHeldByPeer, or a failure counted under
// reason.
func (p *Saver) decodeRecord(id string, data []byte) (r *Record, sv session.Saved, model ui.Model, reason string, err error) {
	r, err = DecodeRecord(data)
	if err != nil {
		return nil, sv, nil, "decode", err
	}
	if r.ID != id || r.App != p.cfg.App {
		return nil, sv, nil, "decode", fmt.Errorf("record of session %q of app %q", r.ID, r.App)
	}
	if r.SSHOwned && time.Since(r.SavedAt) > p.cfg.ResumeGrace {
		return r, sv, nil, "expired", errExpired
	}
	if sv, err = r.saved(); err != nil {
		return nil, sv, nil, "decode", err
	}
	if !p.cfg.Home.MayClaim(r) {
		return nil, sv, nil, "", errHeldByPeer
	}
	if perr := p.cfg.Panics.Session(id).Do(metrics.HookFactory, "", func() { model, err = p.cfg.Codec.Decode(r.Version, r.Model) }); perr != nil {
		err = perr
	}
	if err != nil {
		return nil, sv, nil, "decode", err
	}
	if model == nil {
		return nil, sv, nil, "decode", errors.New("the codec decoded a nil model")
	}
	return r, sv, model, "", nil
}

// fenceRecord writes session id's record, data as read, back to the fenced
// store at the revision read, so that no write of another node made
// before can land after; when one landed since the read, it reads the
// record again and writes that back (a few times at most). While the
// bucket cannot be written (its stream electing a leader after a NATS
// server died) it tries again for up to fenceWait. It returns the record
// written.
func (p *Saver) fenceRecord(ctx context.Context, id string, data []byte) ([]byte, error) {
	deadline := time.Now().Add(fenceWait)
	wait := 100 * time.Millisecond
	for conflicts := 0; ; {
		octx, cancel := context.WithTimeout(ctx, StoreTimeout)
		err := p.store.Put(octx, id, data)
		cancel()
		switch {
		case err == nil:
			return data, nil
		case errors.Is(err, store.ErrConflict):
			if conflicts++; conflicts == 3 {
				return nil, fmt.Errorf("session %s: its record kept changing: %w", id, err)
			}
			octx, cancel := context.WithTimeout(ctx, StoreTimeout)
			data, err = p.store.Get(octx, id)
			cancel()
			if err != nil {
				return nil, err
			}
		case errors.Is(err, store.ErrUnavailable) && time.Now().Before(deadline):
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
			wait = min(2*wait, 2*time.Second)
		default:
			return nil, err
		}
	}
}

// fenceWait is how long fenceRecord keeps trying while the store is
// unavailable: longer than a JetStream stream's leader election.
const fenceWait = 30 * time.Second

// IsTracked reports whether p saves session id.
func (p *Saver) IsTracked(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.tracked[id]
	return ok
}
