package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
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

// lifecycle is the registry of sessions with (or waiting for) terminals.
type lifecycle struct {
	s *Server

	drained chan struct{} // closed by close: waiting joins give up
	joins   *rateWindow   // join and resume requests of non-owners

	timers sync.WaitGroup // running or pending grace timers

	mu       sync.Mutex // protects the following and every liveSession's fields
	sessions map[string]*liveSession
	closed   bool
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
}

func newLifecycle(s *Server) *lifecycle {
	return &lifecycle{
		s:        s,
		drained:  make(chan struct{}),
		joins:    newRateWindow(joinRequestsPerWindow, joinWindow, joinLimiterMaxKeys),
		sessions: make(map[string]*liveSession),
	}
}

func (l *lifecycle) resumeGrace() time.Duration { return l.s.opts.SSH.ResumeGrace }

// add registers a session just started by an SSH login. It returns false
// when the session already ended or the server is shutting down.
func (l *lifecycle) add(se *session.Session) (*liveSession, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Checked under l.mu: a session ended before this is gone from the
	// manager; one ended after finds its entry (sessionEnded).
	if _, live := l.s.sessions.Get(se.ID); !live || l.closed {
		return nil, false
	}
	ls := &liveSession{se: se, sshOwned: true}
	l.sessions[se.ID] = ls
	return ls, true
}

// get returns the live session id, registering a session started
// otherwise (headless) on first use.
func (l *lifecycle) get(id string) (*liveSession, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls, ok := l.sessions[id]; ok {
		return ls, !ls.ended
	}
	se, ok := l.s.sessions.Get(id)
	if !ok || l.closed {
		return nil, false
	}
	ls := &liveSession{se: se}
	l.sessions[id] = ls
	return ls, true
}

// hasPrimary reports whether an owner terminal of ls takes join requests.
func (l *lifecycle) hasPrimary(ls *liveSession) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ls.primary != nil
}

// detached describes a session waiting for its owner.
type detached struct {
	ID     string
	Since  time.Time
	Agents int
}

// detachedFor returns the detached sessions of the owner with key ownerKey,
// most recently detached first.
func (l *lifecycle) detachedFor(ownerKey string) []detached {
	l.mu.Lock()
	var out []detached
	var ses []*session.Session
	for _, ls := range l.sessions {
		if ls.sshOwned && !ls.ended && !ls.detachedAt.IsZero() && ls.se.Owner.Key() == ownerKey {
			out = append(out, detached{ID: ls.se.ID, Since: ls.detachedAt})
			ses = append(ses, ls.se)
		}
	}
	l.mu.Unlock()
	for i, se := range ses {
		out[i].Agents = len(se.Agents())
	}
	slices.SortFunc(out, func(a, b detached) int { return b.Since.Compare(a.Since) })
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
	l.mu.Lock()
	ls.terms = slices.DeleteFunc(ls.terms, func(o *terminal) bool { return o == t })
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
	grace := l.resumeGrace()
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
	l.s.log.Info("session detached", "session", ls.se.ID, "user", ls.se.Owner.User, "resume_grace", grace)
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
	l.s.log.Info("detached session expired", "session", ls.se.ID, "user", ls.se.Owner.User)
	l.finish(ls, others, "the session ended: its owner did not come back in time")
}

// endLocked marks ls ended and returns the terminals still attached.
func (l *lifecycle) endLocked(ls *liveSession) []*terminal {
	ls.ended = true
	delete(l.sessions, ls.se.ID)
	l.stopTimerLocked(ls)
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

// finish tells the remaining terminals why, then ends the session (its
// MCP clients are closed by the manager's OnEnd).
func (l *lifecycle) finish(ls *liveSession, others []*terminal, reason string) {
	for _, o := range others {
		o.c.stop(metrics.OutcomeOK, reason)
	}
	l.s.sessions.End(ls.se.ID)
}

// sessionEnded runs when any session ends (the manager's OnEnd): terminals
// still attached to it are told and leave.
func (l *lifecycle) sessionEnded(se *session.Session) {
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
		o.c.stop(metrics.OutcomeOK, reason)
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
		t.c.stop(metrics.OutcomeOK, reason)
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
		}
	}
	l.mu.Unlock()
	l.timers.Wait()
}

// terminal is one SSH terminal attached to a session.
type terminal struct {
	c    *conn
	id   string // its session.Attachment id, once attached
	role tui.Role
	// startPrimary is set by reserve when the terminal is primary from the
	// start (its model is made with Primary).
	startPrimary bool
	done         chan struct{} // closed when its program has ended

	mu     sync.Mutex // protects the following
	p      *tea.Program
	closed bool
	sends  sync.WaitGroup // messages on their way to the program
	// inFlight counts those messages (protected by mu).
	inFlight int
}

func newTerminal(c *conn, role tui.Role) *terminal {
	return &terminal{c: c, role: role, done: make(chan struct{})}
}

func (t *terminal) owner() bool { return t.role == tui.RoleOwner }

func (t *terminal) setProgram(p *tea.Program) {
	t.mu.Lock()
	t.p = p
	t.mu.Unlock()
}

func (t *terminal) program() *tea.Program {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.p
}

// send delivers msg to the terminal's program without blocking the
// caller; after (when not nil) is waited for first. It returns a channel
// closed once the program took the message (or ended), or nil when the
// terminal has no program any more.
func (t *terminal) send(msg tea.Msg) <-chan struct{} { return t.sendAfter(nil, msg) }

func (t *terminal) sendAfter(after <-chan struct{}, msg tea.Msg) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.p == nil || t.inFlight >= maxInFlightSends {
		// A program that is not taking messages (stuck writing to a
		// client that stopped reading) gets no more goroutines queued on
		// it: to its senders it is a terminal that cannot receive.
		return nil
	}
	p := t.p
	sent := make(chan struct{})
	t.inFlight++
	t.sends.Go(func() {
		defer close(sent)
		defer func() {
			t.mu.Lock()
			t.inFlight--
			t.mu.Unlock()
		}()
		if after != nil {
			<-after
		}
		p.Send(msg) // returns at once when the program has ended
	})
	return sent
}

// maxInFlightSends bounds the messages waiting for one terminal's program.
const maxInFlightSends = 32

// end closes done and waits for messages on their way; call it after the
// program has ended (its Send is then a no-op).
func (t *terminal) end() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	close(t.done)
	t.mu.Unlock()
	t.sends.Wait()
}

// keySink delivers an agent's keys into this terminal.
func (t *terminal) keySink(agent string, keys []string) error {
	res := make(chan error, 1)
	if t.send(tui.AgentKeysMsg{Agent: agent, Keys: keys, Result: res}) == nil {
		return session.ErrNoTerminal
	}
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case err := <-res:
		return err
	case <-t.done:
		return session.ErrNoTerminal
	case <-timer.C:
		return errors.New("the terminal did not take the keys within 5s")
	}
}

// approvalSink asks this terminal's human about an agent's call.
func (t *terminal) approvalSink(ctx context.Context, req session.ApprovalRequest) (session.Approval, error) {
	reply := make(chan session.Approval, 1)
	sent := t.send(tui.ApprovalMsg{Req: req, Reply: reply})
	if sent == nil {
		return session.Refused, session.ErrNoTerminal
	}
	select {
	case a := <-reply:
		return a, nil
	case <-ctx.Done():
		t.sendAfter(sent, tui.WithdrawApprovalMsg{ID: req.ID})
		return session.Refused, ctx.Err()
	case <-t.done:
		return session.Refused, session.ErrNoTerminal
	}
}

// joinSink asks this terminal's human whether someone may join.
func (t *terminal) joinSink(ctx context.Context, req session.JoinRequest) (session.JoinAnswer, error) {
	reply := make(chan session.JoinAnswer, 1)
	sent := t.send(tui.JoinMsg{Req: req, Reply: reply})
	if sent == nil {
		return session.JoinRefused, session.ErrNoTerminal
	}
	select {
	case a := <-reply:
		return a, nil
	case <-ctx.Done():
		// The requester gave up (left, or the timeout): withdraw the
		// prompt, after it was shown.
		t.sendAfter(sent, tui.WithdrawApprovalMsg{ID: req.ID})
		return session.JoinRefused, ctx.Err()
	case <-t.done:
		return session.JoinRefused, session.ErrNoTerminal
	}
}

// promoteMsg makes a secondary owner terminal the primary one.
type promoteMsg struct{}

// termModel wraps a terminal's tui model to note whether the human quit
// (ctrl+c) and to make it primary when promoted.
type termModel struct {
	inner *tui.Model
	se    *session.Session
	quit  atomic.Bool
}

func (m *termModel) Init() tea.Cmd { return m.inner.Init() }

func (m *termModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			m.quit.Store(true) // every role leaves on ctrl+c
		}
	case promoteMsg:
		_, cmd := m.inner.Update(tui.SetPrimaryMsg(true))
		return m, cmd
	}
	_, cmd := m.inner.Update(msg)
	return m, cmd
}

func (m *termModel) View() tea.View { return m.inner.View() }
