package server

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
)

// The lifecycle of a session with terminals
//
// A plain SSH login starts a session and attaches its first terminal, an
// owner terminal. More terminals attach with `join <id>` or `resume <id>`:
//
//   - Owner identity: a client is the session's owner when it proved the
//     public key that started it (session.Owner.Key), under any user name:
//     the name is the client's to choose, and every session of a key
//     counts against that key's cap, so every one is its to resume. A
//     client without a key is never the owner, not even of a session
//     started without a key: in dev anyone may log in under any name. Its
//     joins always ask the owner, and its sessions cannot be resumed.
//   - The owner's first live terminal is the primary one: agent keys,
//     approval prompts and join prompts go there, and its screen and focus
//     are what agents see. When it leaves, the next owner terminal (in
//     order of arrival) takes over.
//   - Quit or drop: a terminal whose human pressed ctrl+c quit; a terminal
//     that ended any other way (connection closed or dropped, input closed,
//     a limit) dropped.
//   - When the last owner terminal quits, the session ends for everyone
//     (other terminals are told "the owner ended the session").
//   - When the last owner terminal drops, the session is detached: with
//     Options.ResumeGrace > 0 and an owner with a key, it stays live (model,
//     agents, drivers and observers) until the owner comes back with
//     `resume <id>`, the picker at their next login, or `join <id>`, or the
//     grace period passes and it ends. Otherwise it ends at once.
//   - A session started otherwise (headless) follows its own lifecycle:
//     terminals come and go without ending it.

// lifecycle owns what happens to a session between its start and its
// end: its terminals and which is primary, detaching and the resume
// grace, the idle reaping of sessions started over /mcp, and its one-time
// join code. It is the only registry of sessions in this package
// (session.Manager holds the sessions themselves; lifecycle decides when
// they end). Lock order: lifecycle.mu, then a session's own locks; never
// the other way, and no terminal's program is sent to under mu.
type lifecycle struct {
	// What it uses of the server, fixed at creation.
	registry    *session.Manager // the sessions: one it owns is live there
	resumeGrace time.Duration    // Options.SSH.ResumeGrace
	idleTimeout time.Duration    // Options.Headless.IdleTimeout
	log         *slog.Logger
	metrics     *metrics.Metrics

	drained chan struct{} // closed by close: waiting joins give up
	joins   *rateWindow   // join and resume requests of non-owners

	timers sync.WaitGroup // running or pending grace and reap timers

	// observers are told what happens to sessions (observe): the saver
	// and the cluster node, registered once at start, before anything is
	// served; read without a lock from then on.
	observers []sessionObserver

	mu       sync.Mutex // protects the following and every liveSession's fields
	sessions map[string]*liveSession
	closed   bool
}

// sessionObserver is told by the lifecycle what happens to the sessions
// it owns. The saver (saving.go) and the cluster node (cluster.go) are
// the observers; the single-node path names neither. The first and last
// are called with the lifecycle's lock held and must not block.
type sessionObserver interface {
	// sessionOwned: se is the lifecycle's now: an SSH login's (sshOwned),
	// or started by raxol_start for the key startedBy.
	sessionOwned(se *session.Session, sshOwned bool, startedBy string)
	// sessionHandedOut: raxol_start is about to hand se's token out; it
	// returns once se is where a crash cannot lose it.
	sessionHandedOut(se *session.Session)
	// sessionsChanged: what the lifecycle shows of its sessions changed
	// (one started, ended, detached, was resumed, or its agents).
	sessionsChanged()
}

// observe registers o; called at start, before anything is served.
func (l *lifecycle) observe(o sessionObserver) { l.observers = append(l.observers, o) }

func (l *lifecycle) changed() {
	for _, o := range l.observers {
		o.sessionsChanged()
	}
}

// liveSession is one session's terminals. Its fields are protected by
// lifecycle.mu.
type liveSession struct {
	se *session.Session
	// sshOwned is set for sessions started by an SSH login: the lifecycle
	// rules above apply to them.
	sshOwned bool
	terms    []*terminal
	primary  *terminal // the owner terminal the sinks come from, or nil
	// detachedAt is when the last owner terminal dropped; zero while one
	// is attached.
	detachedAt time.Time
	timer      *time.Timer
	gen        int // bumped on every detach and reattach
	ended      bool
	// startedBy is, for a session raxol_start started, the owner key of
	// its API key (session.Owner.Key): raxol_list and raxol_stop see it,
	// and it is reaped when idle. "" for every other session.
	startedBy string
	reap      *reaper
	// code is the session's one-time join code, or nil.
	code *joinCode
}

// reaper is the idle check of a session raxol_start started: it ends when
// nobody has been attached and nothing changed for the idle period.
type reaper struct {
	timer   *time.Timer
	active  time.Time // last time something was seen to happen
	version uint64    // the snapshot version seen then
	input   time.Time // the session's last input seen then
}

func newLifecycle(sessions *session.Manager, opts Options, m *metrics.Metrics) *lifecycle {
	return &lifecycle{
		registry: sessions, resumeGrace: opts.SSH.ResumeGrace, idleTimeout: opts.Headless.IdleTimeout,
		log: opts.Logger, metrics: m,
		drained:  make(chan struct{}),
		joins:    newRateWindow(joinRequestsPerWindow, joinWindow, joinLimiterMaxKeys),
		sessions: make(map[string]*liveSession),
	}
}

// add registers a session just started by an SSH login. It returns false
// when the session already ended or the server is shutting down.
func (l *lifecycle) add(se *session.Session) (*liveSession, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Checked under l.mu: a session ended before this is gone from the
	// manager; one ended after finds its entry (sessionEnded).
	if _, live := l.registry.Get(se.ID); !live || l.closed {
		return nil, false
	}
	ls := &liveSession{se: se, sshOwned: true}
	l.sessions[se.ID] = ls
	l.changed()
	for _, o := range l.observers {
		o.sessionOwned(se, true, "")
	}
	return ls, true
}

// restore registers a session the saver brought back from its snapshot
// (its saver.RestoreFunc): one an SSH login started (sshOwned) waits,
// detached, for its owner for the resume grace (counted from now: its
// owner needs the time to come back); one raxol_start started
// (startedBy) is reaped when idle. It returns false when the
// server is shutting down or the session ended.
func (l *lifecycle) restore(se *session.Session, sshOwned bool, startedBy string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, live := l.registry.Get(se.ID); !live || l.closed {
		return false
	}
	if _, ok := l.sessions[se.ID]; ok {
		return false
	}
	ls := &liveSession{se: se, sshOwned: sshOwned, startedBy: startedBy}
	l.sessions[se.ID] = ls
	if sshOwned {
		ls.detachedAt = time.Now()
		ls.gen++
		gen := ls.gen
		l.timers.Add(1)
		ls.timer = time.AfterFunc(l.resumeGrace, func() {
			defer l.timers.Done()
			l.expire(ls, gen)
		})
	}
	if startedBy != "" {
		ls.reap = &reaper{active: time.Now(), version: se.Dispatcher.Snapshot().Version, input: se.LastInput()}
		l.armReapLocked(ls)
	}
	l.changed()
	return true
}

// get returns the live session id, registering a session started
// otherwise (headless) on first use.
func (l *lifecycle) get(id string) (*liveSession, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls, ok := l.sessions[id]; ok {
		return ls, !ls.ended
	}
	se, ok := l.registry.Get(id)
	if !ok || l.closed {
		return nil, false
	}
	ls := &liveSession{se: se}
	l.sessions[id] = ls
	l.changed()
	return ls, true
}

// hasPrimary reports whether an owner terminal of ls takes join requests.
func (l *lifecycle) hasPrimary(ls *liveSession) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ls.primary != nil
}

// sessionShown is what the lifecycle shows of one session to those who
// tell others about it (the cluster's directory): whether it holds a
// record of it, whether an SSH login started it and its owner is away
// (detached: no owner terminal, waiting for the owner), or who started
// it with raxol_start.
type sessionShown struct {
	held      bool
	sshOwned  bool
	detached  bool
	startedBy string
}

// shown is what the lifecycle shows of each of ses, read at one moment.
func (l *lifecycle) shown(ses []*session.Session) []sessionShown {
	out := make([]sessionShown, len(ses))
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, se := range ses {
		ls, ok := l.sessions[se.ID]
		if !ok {
			continue
		}
		out[i] = sessionShown{held: true, sshOwned: ls.sshOwned, startedBy: ls.startedBy,
			detached: ls.primary == nil && !ls.detachedAt.IsZero()}
	}
	return out
}

// pickerItem is a detached session waiting for its owner, one line of
// the picker.
type pickerItem struct {
	ID     string
	Since  time.Time
	Agents int
}

// detachedFor returns the detached sessions of the owner with key ownerKey,
// most recently detached first.
func (l *lifecycle) detachedFor(ownerKey string) []pickerItem {
	l.mu.Lock()
	var out []pickerItem
	var ses []*session.Session
	for _, ls := range l.sessions {
		if ls.sshOwned && !ls.ended && !ls.detachedAt.IsZero() && ls.se.Owner.Key() == ownerKey {
			out = append(out, pickerItem{ID: ls.se.ID, Since: ls.detachedAt})
			ses = append(ses, ls.se)
		}
	}
	l.mu.Unlock()
	for i, se := range ses {
		out[i].Agents = len(se.Agents())
	}
	slices.SortFunc(out, func(a, b pickerItem) int { return b.Since.Compare(a.Since) })
	return out
}

// reserve adds t to the session's terminals. An owner terminal becomes
// primary when there is none, and reattaches a detached session. It
// returns false when the session has ended.
func (l *lifecycle) reserve(ls *liveSession, t *terminal) bool {
	l.mu.Lock()
	if ls.ended || l.closed {
		l.mu.Unlock()
		return false
	}
	ls.terms = append(ls.terms, t)
	l.metrics.TerminalsAdd(1) // leave takes it off again
	var others []*terminal
	if t.owner() {
		if ls.primary == nil {
			ls.primary = t
			t.startPrimary = true
		}
		if !ls.detachedAt.IsZero() {
			ls.detachedAt = time.Time{}
			ls.gen++
			l.stopTimerLocked(ls)
			others = slices.DeleteFunc(slices.Clone(ls.terms), func(o *terminal) bool { return o == t })
		}
	}
	l.mu.Unlock()
	for _, o := range others {
		o.send(tui.NoticeMsg("")) // the owner is back
	}
	return true
}

// ready records t's program; the primary terminal's program gets the
// session's sinks.
func (l *lifecycle) ready(ls *liveSession, t *terminal, p *tea.Program) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t.setProgram(p)
	if ls.primary == t && !ls.ended {
		l.installLocked(ls, t)
	}
}

// installLocked makes t the terminal the session's sinks deliver to.
func (l *lifecycle) installLocked(ls *liveSession, t *terminal) {
	l.changed()
	ls.se.SetKeySink(t.keySink)
	ls.se.SetApprovalSink(t.approvalSink)
	ls.se.SetJoinSink(t.joinSink)
	if !t.startPrimary {
		// Its model was made as a secondary terminal: have it publish its
		// screen and focus from now on.
		t.send(promoteMsg{})
	}
}

// leave removes t, whose program has ended; quit reports whether its
// human quit (ctrl+c) rather than dropped. See the lifecycle rules above.
func (l *lifecycle) leave(ls *liveSession, t *terminal, quit bool) {
	defer l.changed()
	l.mu.Lock()
	if i := slices.Index(ls.terms, t); i >= 0 {
		ls.terms = slices.Delete(ls.terms, i, i+1)
		l.metrics.TerminalsAdd(-1)
	}
	if ls.ended {
		l.mu.Unlock()
		return
	}
	if ls.primary == t {
		ls.primary = nil
		for _, o := range ls.terms {
			if o.owner() {
				ls.primary = o
				break
			}
		}
		switch {
		case ls.primary == nil:
			ls.se.SetKeySink(nil)
			ls.se.SetApprovalSink(nil)
			ls.se.SetJoinSink(nil)
		case ls.primary.program() != nil:
			l.installLocked(ls, ls.primary)
		}
		// else: ready installs them once its program exists.
	}
	if !t.owner() || ls.primary != nil || !ls.sshOwned {
		l.mu.Unlock()
		return
	}
	// The last owner terminal left.
	grace := l.resumeGrace
	if quit || grace <= 0 || l.closed || ls.se.Owner.KeyFingerprint == "" {
		reason := "the owner ended the session"
		if !quit {
			reason = "the owner left; the session ended"
		}
		others := l.endLocked(ls)
		l.mu.Unlock()
		l.finish(ls, others, reason)
		return
	}
	ls.detachedAt = time.Now()
	ls.gen++
	gen := ls.gen
	l.timers.Add(1)
	ls.timer = time.AfterFunc(grace, func() {
		defer l.timers.Done()
		l.expire(ls, gen)
	})
	others := slices.Clone(ls.terms)
	l.mu.Unlock()
	l.log.Info("session detached", "session", ls.se.ID, "user", ls.se.Owner.User, "resume_grace", grace)
	for _, o := range others {
		o.send(tui.NoticeMsg(fmt.Sprintf("the owner is disconnected; the session waits %s for them", grace)))
	}
}

// expire ends a session still detached when its grace period passed.
func (l *lifecycle) expire(ls *liveSession, gen int) {
	l.mu.Lock()
	if ls.ended || ls.gen != gen || ls.detachedAt.IsZero() {
		l.mu.Unlock()
		return
	}
	ls.timer = nil // this timer fired: endLocked must not stop it
	others := l.endLocked(ls)
	l.mu.Unlock()
	l.log.Info("detached session expired", "session", ls.se.ID, "user", ls.se.Owner.User)
	l.finish(ls, others, "the session ended: its owner did not come back in time")
}

// endLocked marks ls ended and returns the terminals still attached.
func (l *lifecycle) endLocked(ls *liveSession) []*terminal {
	ls.ended = true
	delete(l.sessions, ls.se.ID)
	l.stopTimerLocked(ls)
	l.stopReapLocked(ls)
	ls.code = nil
	return slices.Clone(ls.terms)
}

func (l *lifecycle) stopTimerLocked(ls *liveSession) {
	if ls.timer != nil {
		if ls.timer.Stop() {
			l.timers.Done() // it will never run
		}
		ls.timer = nil
	}
}

func (l *lifecycle) stopReapLocked(ls *liveSession) {
	if ls.reap != nil && ls.reap.timer != nil {
		if ls.reap.timer.Stop() {
			l.timers.Done()
		}
		ls.reap.timer = nil
	}
}

// ---- sessions raxol_start started ----

// addStarted registers a session raxol_start started for the API key
// whose owner key is by, reaped after Options.Headless.IdleTimeout idle.
// It returns false when the server is shutting down or the session ended.
func (l *lifecycle) addStarted(se *session.Session, by string) bool {
	now := time.Now()
	l.mu.Lock()
	if _, live := l.registry.Get(se.ID); !live || l.closed {
		l.mu.Unlock()
		return false
	}
	ls, ok := l.sessions[se.ID]
	if !ok {
		ls = &liveSession{se: se}
		l.sessions[se.ID] = ls
	}
	ls.startedBy = by
	ls.reap = &reaper{active: now, version: se.Dispatcher.Snapshot().Version, input: se.LastInput()}
	l.armReapLocked(ls)
	for _, o := range l.observers {
		o.sessionOwned(se, false, by)
	}
	l.mu.Unlock()
	// Saved before raxol_start answers with its token.
	for _, o := range l.observers {
		o.sessionHandedOut(se)
	}
	return true
}

func (l *lifecycle) reapEvery() time.Duration {
	return min(max(l.idleTimeout/4, 10*time.Millisecond), time.Minute)
}

func (l *lifecycle) armReapLocked(ls *liveSession) {
	l.timers.Add(1)
	ls.reap.timer = time.AfterFunc(l.reapEvery(), func() {
		defer l.timers.Done()
		l.reapCheck(ls)
	})
}

// reapCheck ends a session raxol_start started that has been idle for the
// idle period: nobody attached (no MCP client, no terminal) and no change
// to its model or input.
func (l *lifecycle) reapCheck(ls *liveSession) {
	idle := l.idleTimeout
	l.mu.Lock()
	if ls.ended || l.closed || ls.reap == nil {
		l.mu.Unlock()
		return
	}
	ls.reap.timer = nil // this one fired
	se, r, now := ls.se, ls.reap, time.Now()
	v, in := se.Dispatcher.Snapshot().Version, se.LastInput()
	if len(se.Attached()) > 0 || v != r.version || !in.Equal(r.input) {
		r.active, r.version, r.input = now, v, in
	}
	if now.Sub(r.active) < idle {
		l.armReapLocked(ls)
		l.mu.Unlock()
		return
	}
	others := l.endLocked(ls)
	l.mu.Unlock()
	l.log.Info("headless session idle; ending it", "session", se.ID, "idle", idle)
	l.finish(ls, others, "the session ended: idle for "+humanDuration(idle))
}

// startedFor returns the live sessions raxol_start started for owner key
// by, oldest first.
func (l *lifecycle) startedFor(by string) []*session.Session {
	l.mu.Lock()
	var out []*session.Session
	for _, ls := range l.sessions {
		if ls.startedBy == by && !ls.ended {
			out = append(out, ls.se)
		}
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b *session.Session) int { return a.Created.Compare(b.Created) })
	return out
}

// stopStarted ends session id if raxol_start started it for owner key by;
// it reports whether it did.
func (l *lifecycle) stopStarted(id, by string) bool {
	l.mu.Lock()
	ls, ok := l.sessions[id]
	if !ok || ls.ended || ls.startedBy != by {
		l.mu.Unlock()
		return false
	}
	others := l.endLocked(ls)
	l.mu.Unlock()
	l.finish(ls, others, "the session was stopped (raxol_stop)")
	return true
}

// ---- join codes (see joincode.go) ----

// setCode gives live session id the join code jc, replacing any.
func (l *lifecycle) setCode(id string, jc *joinCode) bool {
	ls, ok := l.get(id)
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls.ended {
		return false
	}
	ls.code = jc
	return true
}

// withCode runs f with session id's join code (nil when it has none or
// is not live) under the lock; f returns whether to keep the code.
func (l *lifecycle) withCode(id string, f func(jc *joinCode) (keep bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var jc *joinCode
	ls, ok := l.sessions[id]
	if ok && !ls.ended {
		jc = ls.code
	}
	if _, live := l.registry.Get(id); !live {
		jc = nil
	}
	if !f(jc) && ok {
		ls.code = nil
	}
}

// finish tells the remaining terminals why, then ends the session (its
// MCP clients are closed by the manager's OnEnd).
func (l *lifecycle) finish(ls *liveSession, others []*terminal, reason string) {
	for _, o := range others {
		o.c.end(endWith(metrics.OutcomeOK, reason))
	}
	l.registry.EndCause(ls.se.ID, session.Ended(reason))
}

// sessionEnded runs when any session ends (the manager's OnEnd): terminals
// still attached to it are told and leave.
func (l *lifecycle) sessionEnded(se *session.Session) {
	defer l.changed()
	l.mu.Lock()
	ls, ok := l.sessions[se.ID]
	if !ok || ls.ended || ls.se != se {
		l.mu.Unlock()
		return
	}
	others := l.endLocked(ls)
	l.mu.Unlock()
	reason := session.EndReason(se)
	for _, o := range others {
		o.c.end(endWith(metrics.OutcomeOK, reason))
	}
}

// closeTerminal closes the terminal of se whose attachment id is id, at
// the app's request (ui.CloseTerminal): as if its link dropped, so the
// session goes on, detached when it was its owner's last terminal.
func (l *lifecycle) closeTerminal(se *session.Session, id, reason string) {
	if reason == "" {
		reason = "the app closed this terminal"
	}
	l.mu.Lock()
	var t *terminal
	if ls, ok := l.sessions[se.ID]; ok && ls.se == se {
		for _, x := range ls.terms {
			if x.id == id {
				t = x
			}
		}
	}
	l.mu.Unlock()
	if t != nil {
		t.c.end(endWith(metrics.OutcomeOK, reason))
	}
}

// close stops every grace timer (the server is draining: detached sessions
// end with the rest), makes waiting joins give up, and waits for running
// timers.
func (l *lifecycle) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.drained)
		for _, ls := range l.sessions {
			l.stopTimerLocked(ls)
			l.stopReapLocked(ls)
		}
	}
	l.mu.Unlock()
	l.timers.Wait()
}
