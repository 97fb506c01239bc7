package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	uv "github.com/charmbracelet/ultraviolet"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/internal/termin"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// sshElsewhere is what an SSH connection asks about other nodes: whether
// it is a peer node's bridged connection (acceptBridged: "" to go on, else
// why it is refused), and whether the session a join or resume names is
// held by another node, bridging the terminal there (bridgeAttach). A
// single node is sshAlone; a cluster node's peers are sshPeers
// (cluster_ssh.go).
type sshElsewhere interface {
	acceptBridged(c *conn) string
	bridgeAttach(c *conn, verb, id, code string) bool
	// detachedElsewhere lists the owner's detached sessions other nodes
	// hold, for the picker.
	detachedElsewhere(c *conn) []pickerItem
}

// sshAlone is a single node: no connection is a peer's, and every session
// is here or nowhere.
type sshAlone struct{}

var _ sshElsewhere = sshAlone{}

func (sshAlone) acceptBridged(*conn) string                      { return "" }
func (sshAlone) bridgeAttach(*conn, string, string, string) bool { return false }
func (sshAlone) detachedElsewhere(*conn) []pickerItem            { return nil }

// endReason is why a connection ends: the outcome its metric counts
// (metrics.Outcome*) and the line its client is told (none when empty).
// It is the cause the connection's context is cancelled with (conn.end),
// read back with context.Cause by the last words, the exit status and
// the log line; the first cause wins. A client that left first has
// cancelled the context without one: its end counts as ok and tells
// nothing, whatever the server would have said after. The reasons more
// than one place gives are sentinels in errors.go.
type endReason struct {
	outcome string
	reason  string
}

func (e endReason) Error() string {
	if e.reason == "" {
		return "connection ended: " + e.outcome
	}
	return "connection ended: " + e.outcome + ": " + e.reason
}

// endWith is an end with outcome and reason given there and then.
func endWith(outcome, reason string) endReason { return endReason{outcome: outcome, reason: reason} }

// handle is the SSH middleware: it admits the connection, runs what its
// command asks (a new session, the picker of detached sessions, join or
// resume; see lifecycle.go), and logs one line when it ends. On the
// server's own listener (passOn false) nothing comes after it and an
// unknown command is refused; mounted in another wish server (passOn), a
// session with a command that is not ours goes on to next.
func (s *Server) handle(next ssh.Handler, passOn bool) ssh.Handler {
	return func(sess ssh.Session) {
		if passOn && !ourCommand(sess.Command()) {
			next(sess)
			return
		}
		s.wg.Add(1)
		defer s.wg.Done()
		c := s.newConn(sess)
		defer c.logEnd()
		defer s.hangUpIfDraining(sess)
		defer c.exit()
		defer c.stopAll()

		if reason, ok := sess.Context().Value(rejectKey).(string); ok {
			c.end(endWith(metrics.OutcomeRejected, reason))
			return
		}
		if reason := s.sshOthers.acceptBridged(c); reason != "" {
			c.end(endWith(metrics.OutcomeRejected, reason))
			return
		}
		if !c.hasPty {
			c.end(errNoPTY)
			return
		}
		if why := tui.Undrivable(c.pty.Term); why != "" {
			c.end(endWith(metrics.OutcomeRejected, why))
			return
		}
		if s.isDraining() {
			c.end(errStopping)
			return
		}
		c.start(&s.wg, s.opts.Limits)

		cmd := sess.Command()
		switch {
		case len(cmd) == 0:
			s.login(c)
		case len(cmd) == 2 && cmd[0] == "resume":
			s.attachCmd(c, "resume", cmd[1], "")
		case (len(cmd) == 2 || len(cmd) == 3) && cmd[0] == "join":
			code := ""
			if len(cmd) == 3 {
				code = cmd[2]
			}
			s.attachCmd(c, "join", cmd[1], code)
		default:
			c.end(errUnknownCommand)
		}
		if s.isDraining() {
			c.end(errStopping)
		}
	}
}

// ourCommand reports whether an SSH command is one handle serves.
func ourCommand(cmd []string) bool {
	switch {
	case len(cmd) == 0:
		return true
	case len(cmd) == 2 && cmd[0] == "resume":
		return true
	case (len(cmd) == 2 || len(cmd) == 3) && cmd[0] == "join":
		return true
	}
	return false
}

// detachedEverywhere lists the owner's detached sessions, this node's
// and those other nodes hold, most recently detached first.
func (s *Server) detachedEverywhere(c *conn) []pickerItem {
	list := append(s.life.detachedFor(c.ownerKey()), s.sshOthers.detachedElsewhere(c)...)
	slices.SortStableFunc(list, func(a, b pickerItem) int { return b.Since.Compare(a.Since) })
	return list
}

// login starts a new session for a plain shell login, after offering the
// owner's detached sessions, if any.
func (s *Server) login(c *conn) {
	if c.fp != "" {
		if list := s.detachedEverywhere(c); len(list) > 0 {
			id, ok := s.pick(c, list)
			if !ok {
				return
			}
			if id != "" {
				s.attachCmd(c, "resume", id, "")
				return
			}
		}
	}
	owner := session.Owner{User: c.user, KeyFingerprint: c.fp, RemoteAddr: c.remote}
	w, h := c.size()
	se, err := s.startSession(owner, ui.Identity{Term: c.pty.Term, Width: w, Height: h})
	switch {
	case errors.Is(err, ErrShutdown):
		c.end(errStopping)
		return
	case errors.Is(err, ErrSessionLimit):
		c.end(endWith(metrics.OutcomeRejected, tooManySessions(owner, s.opts.Limits.MaxSessionsPerUser)))
		return
	case err != nil:
		c.end(errStartFailed)
		s.log.Error("session start failed", "err", err)
		return
	}
	ls, ok := s.life.add(se)
	if !ok {
		s.sessions.End(se.ID)
		c.end(errStopping)
		return
	}
	s.runTerminal(c, ls, tui.RoleOwner)
}

// tooManySessions is what a login over the per-owner cap is told. The
// cap counts the proven key, under every user name it logged in with.
func tooManySessions(owner session.Owner, limit int) string {
	if owner.KeyFingerprint != "" {
		return fmt.Sprintf("too many sessions for your key %s (limit %d, under any user name, detached ones included); close one and try again", owner.KeyFingerprint, limit)
	}
	return fmt.Sprintf("too many sessions for user %q (limit %d); close one and try again", owner.User, limit)
}

// conn is one SSH session (channel) with a terminal: the connection's
// input, window size, limits and ending.
type conn struct {
	log     *slog.Logger
	metrics *metrics.Metrics
	sess    ssh.Session
	pty     ssh.Pty
	winCh   <-chan ssh.Window
	hasPty  bool
	user    string
	fp      string // "" without a proven key
	remote  string
	begin   time.Time

	addr net.Addr // the client's address (remote's)
	// bridgedIn is set for a client a peer node bridged here: its user,
	// fp, remote and addr are the ones the peer carried (acceptBridged).
	bridgedIn bool

	// ctx ends with the connection, or when end is called; its cause is
	// the endReason, if any.
	ctx    context.Context
	cancel context.CancelCauseFunc

	lastInput atomic.Int64 // unix nanoseconds
	se        atomic.Pointer[session.Session]
	inputDone chan struct{} // closed when the client's input ended
	wg        sync.WaitGroup
	timers    []*time.Timer

	mu      sync.Mutex // protects the following
	win     ssh.Window
	prog    *tea.Program     // the program running now, or nil
	in      io.Writer        // where input goes now (a program's decoder, a line's pipe), or nil
	resize  func(ssh.Window) // where window changes go besides prog (a bridge), or nil
	command string
	sid     string
	role    string
}

func (s *Server) newConn(sess ssh.Session) *conn {
	pty, winCh, hasPty := sess.Pty()
	c := &conn{
		log:       s.log,
		metrics:   s.metrics,
		sess:      sess,
		pty:       pty,
		winCh:     winCh,
		hasPty:    hasPty,
		user:      sess.User(),
		remote:    sess.RemoteAddr().String(),
		addr:      sess.RemoteAddr(),
		begin:     time.Now(),
		win:       pty.Window,
		inputDone: make(chan struct{}),
		command:   "login",
	}
	if k := sess.PublicKey(); k != nil {
		c.fp = gossh.FingerprintSHA256(k)
	}
	if cmd := sess.Command(); len(cmd) > 0 {
		c.command = cmd[0]
	}
	c.ctx, c.cancel = context.WithCancelCause(sess.Context())
	c.lastInput.Store(c.begin.UnixNano())
	return c
}

// ownerKey is the connecting client's identity as a session owner
// (session.Owner.Key): its proven key, whatever user name it gave.
func (c *conn) ownerKey() string {
	return session.Owner{User: c.user, KeyFingerprint: c.fp}.Key()
}

// isOwnerOf reports whether the client is se's owner: it proved the key
// that started se. The user name does not matter: the client chooses it
// freely, and a key's sessions all count against that key's cap, so all
// of them are its to resume. A client without a key never is an owner.
func (c *conn) isOwnerOf(se *session.Session) bool {
	return c.fp != "" && se.Owner.KeyFingerprint != "" && se.Owner.Key() == c.ownerKey()
}

// limitKey identifies the client for the join rate limit: its key, or
// its address without one (never the user name, which it varies freely).
func (c *conn) limitKey() string {
	if c.fp != "" {
		return "key\x00" + c.fp
	}
	return "addr\x00" + hostOf(c.addr)
}

func (c *conn) attached(se *session.Session, role tui.Role) {
	c.se.Store(se)
	se.Touch()
	c.mu.Lock()
	c.sid, c.role = se.ID, role.String()
	c.mu.Unlock()
}

// start runs the connection's input pump (on the server's WaitGroup wg)
// and window watcher, and its idle and maximum duration limits.
func (c *conn) start(wg *sync.WaitGroup, limits Limits) {
	// The pump reads the client's input for as long as the channel is
	// open, past the end of the handler; the server's WaitGroup joins it.
	wg.Go(c.pump)
	c.wg.Go(c.watchWindow)

	idle := limits.IdleTimeout
	var idleTimer *time.Timer
	idleTimer = time.AfterFunc(idle, func() {
		if since := time.Since(time.Unix(0, c.lastInput.Load())); since < idle {
			idleTimer.Reset(idle - since)
			return
		}
		c.end(endWith(metrics.OutcomeIdleTimeout, fmt.Sprintf("no input for %s; disconnected", idle)))
	})
	maxTimer := time.AfterFunc(limits.MaxSessionDuration, func() {
		c.end(endWith(metrics.OutcomeMaxDuration, fmt.Sprintf("the session reached its maximum duration of %s", limits.MaxSessionDuration)))
	})
	c.timers = []*time.Timer{idleTimer, maxTimer}
}

// stopAll stops the limits and the window watcher.
func (c *conn) stopAll() {
	for _, t := range c.timers {
		t.Stop()
	}
	c.cancel(nil) // no reason given: the cause stays the first one, if any
	c.wg.Wait()
}

// end ends the connection (its context, and with it the running program)
// with why, unless it is ending already; it reports whether why is the
// cause, the first one given.
func (c *conn) end(why endReason) bool {
	c.cancel(why)
	return context.Cause(c.ctx) == error(why)
}

// ended is why the connection ends: the cause its context was cancelled
// with, or the zero endReason while it runs or when the client left
// first.
func (c *conn) ended() endReason {
	var why endReason
	errors.As(context.Cause(c.ctx), &why)
	return why
}

// gone reports whether the client went away: the connection or its input
// ended.
func (c *conn) gone() bool {
	select {
	case <-c.inputDone:
		return true
	default:
		return c.sess.Context().Err() != nil
	}
}

// pumpBuffer is the size of a connection's input buffer.
const pumpBuffer = 1 << 10

// pump copies the client's input to the running program.
func (c *conn) pump() {
	defer close(c.inputDone)
	// Held for the connection's life: keys come a few bytes at a time, and
	// a paste larger than this is read in several pieces, which the input
	// decoder joins (an SSH packet splits a paste anywhere already).
	buf := make([]byte, pumpBuffer)
	for {
		n, err := c.sess.Read(buf)
		if n > 0 {
			c.lastInput.Store(time.Now().UnixNano())
			if se := c.se.Load(); se != nil {
				se.Touch()
			}
			c.mu.Lock()
			w := c.in
			c.mu.Unlock()
			if w != nil {
				// Fails, or does nothing, once that reader is closed:
				// what it did not read is dropped with it.
				_, _ = w.Write(buf[:n])
			}
		}
		if err != nil {
			// The client closed the session (or its input) but may keep
			// the connection, e.g. an OpenSSH ControlMaster: nothing can
			// reach the program any more (run quits it).
			return
		}
	}
}

// watchWindow forwards window size changes to the running program, and
// quits the program when the connection ends or the client's input does
// (run quits one that starts after that). One goroutine per connection
// does both: every goroutine a session holds is one more stack for each
// garbage collection to scan.
func (c *conn) watchWindow() {
	inputDone, winCh := c.inputDone, c.winCh
	for {
		select {
		case <-c.ctx.Done():
			c.quitProgram()
			return
		case <-inputDone:
			inputDone = nil // closed: seen once
			c.quitProgram()
		case w, ok := <-winCh:
			if !ok {
				winCh = nil // no more changes; the endings still matter
				continue
			}
			c.mu.Lock()
			c.win = w
			p, resize := c.prog, c.resize
			c.mu.Unlock()
			if p != nil {
				p.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
			}
			if resize != nil {
				resize(w)
			}
		}
	}
}

// quitProgram asks the running program, if any, to quit.
func (c *conn) quitProgram() {
	c.mu.Lock()
	p := c.prog
	c.mu.Unlock()
	if p != nil {
		p.Quit()
	}
}

func (c *conn) size() (w, h int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.win.Width, c.win.Height
}

// newInput returns the input of the next line read (readLine): what the
// client types from now on, as bytes.
func (c *conn) newInput() *io.PipeReader {
	r, w := io.Pipe()
	c.mu.Lock()
	c.in = w
	c.mu.Unlock()
	return r
}

// closeInput ends a line's input; the pump drops what it was writing.
func (c *conn) closeInput(r *io.PipeReader) {
	c.mu.Lock()
	c.in = nil
	c.mu.Unlock()
	_ = r.Close()
}

// inputTo sends what the client types from now on to p, decoded into
// key, mouse and paste events, and returns what stops it. p runs
// without an input of its own (tea.WithInput(nil)): Bubble Tea's reader
// would build a key table of ~150 KiB for every program (see
// internal/termin). Events wait for p's event loop, as bytes waited in
// a pipe for its reader, so none is lost before p runs.
func (c *conn) inputTo(p *tea.Program) (stop func()) {
	dec := termin.New(func(ev uv.Event) { p.Send(ev) })
	w := decoderWriter{dec}
	c.mu.Lock()
	c.in = w
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.in == w {
			c.in = nil
		}
		c.mu.Unlock()
		dec.Close()
	}
}

// decoderWriter is a termin.Decoder as the pump's io.Writer.
type decoderWriter struct{ d *termin.Decoder }

func (w decoderWriter) Write(p []byte) (int, error) {
	w.d.Write(p)
	return len(p), nil
}

// run runs p, whose input stopInput ends (from inputTo), until it quits,
// the client goes away or stop is called.
func (c *conn) run(p *tea.Program, stopInput func()) error {
	c.mu.Lock()
	c.prog = p
	c.mu.Unlock()
	// watchWindow quits the program when the connection or the input
	// ends; if that happened before the program was set, it is quit here
	// (from a goroutine: Quit waits for the program's loop to start).
	select {
	case <-c.ctx.Done():
		c.wg.Go(p.Quit)
	case <-c.inputDone:
		c.wg.Go(p.Quit)
	default:
	}
	_, err := p.Run()
	p.Kill()
	c.mu.Lock()
	c.prog = nil
	c.mu.Unlock()
	stopInput()
	return err
}

// readLine reads a line the client types after prompt, echoing it, until
// enter. ok is false when ctx ends, the client leaves or presses ctrl+c.
func (c *conn) readLine(ctx context.Context, prompt string) (line string, ok bool) {
	out := c.sess.Stderr()
	fmt.Fprint(out, prompt)
	in := c.newInput()
	type result struct {
		line string
		ok   bool
	}
	res := make(chan result, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		var buf []byte
		b := make([]byte, 1)
		for {
			if _, err := in.Read(b); err != nil {
				res <- result{}
				return
			}
			switch ch := b[0]; {
			case ch == '\r' || ch == '\n':
				res <- result{string(buf), true}
				return
			case ch == 3 || ch == 4: // ctrl+c, ctrl+d
				res <- result{}
				return
			case ch == 0x7f || ch == '\b':
				if len(buf) > 0 {
					buf = buf[:len(buf)-1]
					_, _ = io.WriteString(out, "\b \b")
				}
			case ch >= 0x20 && len(buf) < 64:
				buf = append(buf, ch)
				_, _ = out.Write(b)
			}
		}
	})
	var r result
	select {
	case r = <-res:
	case <-ctx.Done():
	case <-c.inputDone:
	}
	c.closeInput(in)
	wg.Wait()
	fmt.Fprintln(out)
	return r.line, r.ok
}

// exit tells the client why the connection ends, if there is a reason,
// and sends the exit status: 0 for a normal end.
func (c *conn) exit() {
	why := c.ended()
	if why.reason != "" {
		fmt.Fprintln(c.sess.Stderr(), "raxol-ssh: "+why.reason)
	}
	code := 0
	if why.outcome != "" && why.outcome != metrics.OutcomeOK {
		code = 1
	}
	_ = c.sess.Exit(code)
}

func (c *conn) logEnd() {
	why := c.ended()
	outcome := why.outcome
	if outcome == "" {
		outcome = metrics.OutcomeOK
	}
	c.metrics.Connection(outcome)
	c.mu.Lock()
	command, sid, role := c.command, c.sid, c.role
	c.mu.Unlock()
	c.log.Info("ssh session ended",
		"remote", c.remote,
		"user", c.user,
		"key", c.fp,
		"term", c.pty.Term,
		"size", fmt.Sprintf("%dx%d", c.pty.Window.Width, c.pty.Window.Height),
		"command", command,
		"session", sid,
		"role", role,
		"duration", time.Since(c.begin).Round(time.Millisecond),
		"outcome", outcome,
		"reason", why.reason,
	)
}

// hangUpGrace is how long a client whose session ended during a drain
// may keep its connection open before the server closes it.
const hangUpGrace = time.Second

// hangUpIfDraining closes the connection of a session that ended while the
// server drains, unless the client hangs up within [hangUpGrace]. Clients
// normally hang up when their session ends, but one that keeps the
// connection open (an OpenSSH ControlMaster, a library client) would
// otherwise hold Shutdown, which waits for connections to close, until the
// drain timeout, and make it fail.
func (s *Server) hangUpIfDraining(sess ssh.Session) {
	if !s.isDraining() {
		return
	}
	t := time.NewTimer(hangUpGrace)
	defer t.Stop()
	select {
	case <-sess.Context().Done(): // the connection closed
	case <-t.C:
		if c, ok := sess.Context().Value(ssh.ContextKeyConn).(io.Closer); ok {
			_ = c.Close()
		}
	}
}
