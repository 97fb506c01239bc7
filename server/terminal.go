package server

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	bm "charm.land/wish/v2/bubbletea"

	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
)

// runTerminal attaches the connection to ls as a terminal with role and
// runs it until it ends.
func (s *Server) runTerminal(c *conn, ls *liveSession, role tui.Role) {
	t := newTerminal(c, role)
	if !s.life.reserve(ls, t) {
		if s.isDraining() {
			c.end(errStopping)
		}
		c.end(errNoSuchSession) // it ended meanwhile
		return
	}
	se := ls.se
	c.attached(se, role)
	name := c.user
	if role != tui.RoleOwner {
		name += " (" + role.String() + ")"
	}
	attID, detach := se.Attach(session.KindTerminal, name)
	defer detach()
	s.life.mu.Lock()
	t.id = attID // closeTerminal reads it under the lock
	s.life.mu.Unlock()

	environ := append(c.sess.Environ(), "TERM="+c.pty.Term)
	w, h := c.size()
	model := tui.New(se, tui.Options{
		Terminal:       c.user,
		TerminalID:     attID,
		BaseURL:        s.publicURL(c.sess.LocalAddr()),
		ViewLink:       s.viewLinkFor(se.ID, role, s.publicURL(c.sess.LocalAddr())),
		Browsers:       s.browsersFor(se.ID, role),
		RemoveBrowsers: s.removeBrowsersFor(se.ID, role),
		Output:         s.metrics.CountingWriter(c.sess),
		Environ:        environ,
		ColorProfile:   tui.Profile(environ),
		Width:          w,
		Height:         h,
		Primary:        t.startPrimary,
		Role:           role,
		PromptArming:   s.opts.SSH.PromptArming,
	})
	defer model.Close() // restore the terminal before any last words
	tm := &termModel{inner: model, se: se}
	popts := append(bm.MakeOptions(c.sess),
		tea.WithInput(nil), // input comes decoded from the pump: inputTo
		tea.WithWindowSize(w, h),
		// The tui draws its own frames on demand (zero work while
		// idle); Bubble Tea's renderer would redraw from a 60 Hz ticker
		// in every session. Its ticker still runs without a renderer,
		// only to flush its own output into a discarded writer, so it
		// runs at 1 Hz, and the model stops it once the program runs
		// (termModel.stopTicker).
		tea.WithoutRenderer(),
		tea.WithFPS(1),
		tea.WithOutput(io.Discard),
		tea.WithoutSignalHandler(),
	)
	p := tea.NewProgram(tm, popts...)
	tm.release = p.ReleaseTerminal
	model.SetSend(p.Send) // no goroutine waits for snapshots: they wake the program
	stopInput := c.inputTo(p)
	untrack, ok := s.track(p)
	if !ok {
		p.Kill() // never run: ends a Send the input may be waiting in
		stopInput()
		t.end()
		s.life.leave(ls, t, false)
		c.end(errStopping)
		return
	}
	s.life.ready(ls, t, p)
	runErr := c.run(p, stopInput)
	untrack()
	t.end()
	quit := tm.quit.Load()
	if runErr != nil && !quit && !c.gone() {
		c.end(errProgramFailed)
		s.log.Warn("terminal program failed", "err", runErr)
	}
	s.life.leave(ls, t, quit)
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
	return ask(t, ctx, tui.ApprovalMsg{Req: req, Reply: reply}, req.ID, reply, session.Refused)
}

// joinSink asks this terminal's human whether someone may join.
func (t *terminal) joinSink(ctx context.Context, req session.JoinRequest) (session.JoinAnswer, error) {
	reply := make(chan session.JoinAnswer, 1)
	return ask(t, ctx, tui.JoinMsg{Req: req, Reply: reply}, req.ID, reply, session.JoinRefused)
}

// ask shows prompt (whose id is id) on t and waits for the human's answer
// on reply. When the asker gives up (ctx: it left, or timed out) the
// prompt is withdrawn, after it was shown; a terminal that is gone answers
// refused with session.ErrNoTerminal.
func ask[A any](t *terminal, ctx context.Context, prompt tea.Msg, id string, reply <-chan A, refused A) (A, error) {
	sent := t.send(prompt)
	if sent == nil {
		return refused, session.ErrNoTerminal
	}
	select {
	case a := <-reply:
		return a, nil
	case <-ctx.Done():
		t.sendAfter(sent, tui.WithdrawApprovalMsg{ID: id})
		return refused, ctx.Err()
	case <-t.done:
		return refused, session.ErrNoTerminal
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
	// release is the program's ReleaseTerminal (see stopTicker); nil in
	// a test that runs the model without a program.
	release func() error
}

func (m *termModel) Init() tea.Cmd { return tea.Batch(m.inner.Init(), m.stopTicker()) }

// stopTicker stops Bubble Tea's render ticker, a goroutine that wakes
// every session once a second to flush output this program does not
// have (no renderer; output discarded): for 10,000 idle sessions, 10,000
// wakeups a second and as many goroutines. ReleaseTerminal is the one
// way to stop it: it also stops reading input (there is none: input
// comes from the pump) and restores a terminal state the program never
// set (no tty). A command runs once the ticker is started (Init comes
// after it), on a goroutine of its own: ReleaseTerminal waits half a
// second for an input loop the program does not have, and that wait
// belongs to no one's event loop. If the program ends meanwhile its
// shutdown and this stop the ticker once between them.
func (m *termModel) stopTicker() tea.Cmd {
	if m.release == nil {
		return nil
	}
	return func() tea.Msg {
		_ = m.release()
		return nil
	}
}

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
