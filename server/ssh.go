package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	bm "charm.land/wish/v2/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

func (s *Server) newSSHServer() (*ssh.Server, error) {
	l := s.opts.Limits
	opts := []ssh.Option{
		wish.WithHostKeyPEM(s.hostKey.PEM),
		func(srv *ssh.Server) error {
			srv.HandshakeTimeout = l.HandshakeTimeout
			// A hard backstop; sessions end themselves at the limit with
			// a message first.
			srv.MaxTimeout = l.MaxSessionDuration + time.Minute
			// A connection with no traffic at all (say, authenticated but
			// never asking for a session) is closed a little after the
			// idle timeout; sessions end themselves at it, with a message.
			srv.IdleTimeout = l.IdleTimeout + min(5*time.Second, l.IdleTimeout/4)
			srv.ConnCallback = s.connCallback
			srv.ConnectionFailedCallback = s.connectionFailed
			srv.ConnectionCloseCallback = func(c net.Conn) { s.traces.close(c.RemoteAddr()) }
			srv.ServerConfigCallback = func(ctx ssh.Context) *gossh.ServerConfig {
				return &gossh.ServerConfig{AuthLogCallback: traceOf(ctx).logAttempt}
			}
			// Only session channels: no port forwarding, no agent (its
			// request is refused in envLimited), no X11.
			srv.ChannelHandlers = map[string]ssh.ChannelHandler{
				"session": s.limitChannels(ssh.DefaultSessionHandler),
			}
			return nil
		},
		wish.WithMiddleware(func(next ssh.Handler) ssh.Handler { return s.handle(next, false) }),
	}
	if s.keys != nil {
		opts = append(opts, wish.WithPublicKeyAuth(func(ctx ssh.Context, key ssh.PublicKey) bool {
			traceOf(ctx).offer()
			return s.keys.allowed(key)
		}))
	} else {
		// Dev: any client, with or without a key. A proven key still
		// identifies the owner.
		opts = append(opts,
			wish.WithPublicKeyAuth(func(ctx ssh.Context, _ ssh.PublicKey) bool {
				traceOf(ctx).offer() // it must still prove the key
				return true
			}),
			wish.WithKeyboardInteractiveAuth(func(ssh.Context, gossh.KeyboardInteractiveChallenge) bool { return true }),
		)
	}
	srv, err := wish.NewServer(opts...)
	if err != nil {
		return nil, fmt.Errorf("server: ssh: %w", err)
	}
	return srv, nil
}

// channelCounts counts the session channels open on each SSH connection.
type channelCounts struct {
	mu sync.Mutex
	n  map[*gossh.ServerConn]int
}

// add changes conn's count by delta and returns the new count; a
// connection with none left is forgotten.
func (c *channelCounts) add(conn *gossh.ServerConn, delta int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[*gossh.ServerConn]int)
	}
	v := c.n[conn] + delta
	if v <= 0 {
		delete(c.n, conn)
	} else {
		c.n[conn] = v
	}
	return v
}

// limitChannels refuses a session channel beyond
// Limits.MaxChannelsPerConnection open at once on its connection: nothing
// else bounds how many one authenticated client opens, and each costs
// goroutines and buffers. next runs for the channel's whole life.
func (s *Server) limitChannels(next ssh.ChannelHandler) ssh.ChannelHandler {
	limit := s.opts.Limits.MaxChannelsPerConnection
	return func(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
		n := s.channels.add(conn, 1)
		defer s.channels.add(conn, -1)
		if n > limit {
			s.metrics.LimitRejected(metrics.LimitSessionsPerConn)
			_ = nc.Reject(gossh.ResourceShortage, fmt.Sprintf("too many sessions on one connection (at most %d)", limit))
			return
		}
		next(srv, conn, envLimited{nc}, ctx)
	}
}

// Limits on the "env" requests of one session channel. charm ssh keeps
// every one it gets before the shell starts: 2,000 of 64 KiB cost 200 MB.
const (
	maxEnvVars  = 64
	maxEnvBytes = 16 << 10
)

// envLimited refuses a channel's env requests that would take it beyond
// maxEnvVars or maxEnvBytes accepted in all, refuses agent and X11
// forwarding, and passes every other request on.
type envLimited struct{ gossh.NewChannel }

// refusedRequests are session requests the server never grants. charm
// ssh answers an agent forwarding request with yes (and would forward
// the agent to a handler that asked for it); the app has no use for the
// client's agent, and a forwarded agent is the client's keys within the
// server's reach. X11 is refused by charm ssh already; it is listed so
// that no library change grants it.
var refusedRequests = map[string]bool{
	"auth-agent-req@openssh.com": true,
	"auth-agent-req":             true,
	"x11-req":                    true,
}

func (c envLimited) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := c.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err
	}
	out := make(chan *gossh.Request)
	// Owned by the channel: it ends when x/crypto/ssh closes reqs, which
	// it does when the channel closes.
	go func() {
		defer close(out)
		n, size := 0, 0
		for req := range reqs {
			if refusedRequests[req.Type] {
				_ = req.Reply(false, nil)
				continue
			}
			if req.Type == "env" {
				if n+1 > maxEnvVars || size+len(req.Payload) > maxEnvBytes {
					_ = req.Reply(false, nil)
					continue
				}
				n, size = n+1, size+len(req.Payload)
			}
			out <- req
		}
	}()
	return ch, out, nil
}

// connCallback admits a connection (see admission.connCallback) and
// starts tracing its authentication.
func (s *Server) connCallback(ctx ssh.Context, c net.Conn) net.Conn {
	nc := s.admit.connCallback(ctx, c)
	if nc != nil {
		s.traces.open(ctx, c.RemoteAddr())
	}
	return nc
}

// connectionFailed records a connection that never finished its
// handshake. A failed login (see authTrace.failedLogin: a bad signature
// is one, a key query is not) spends its address's failed-login budget.
func (s *Server) connectionFailed(c net.Conn, err error) {
	outcome := metrics.OutcomeError
	msg := err.Error()
	if s.traces.get(c.RemoteAddr()).failedLogin(err) {
		outcome = metrics.OutcomeAuthFailed
		s.metrics.AuthFailures.Inc()
		s.admit.authFailed(hostOf(c.RemoteAddr()))
	}
	s.metrics.Connection(outcome)
	s.log.Info("ssh connection failed", "remote", c.RemoteAddr().String(), "outcome", outcome, "err", msg)
}

// ending records why a session is ending; the first reason wins.
type ending struct {
	mu      sync.Mutex
	outcome string
	reason  string
}

func (e *ending) set(outcome, reason string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.outcome != "" {
		return false
	}
	e.outcome, e.reason = outcome, reason
	return true
}

func (e *ending) get() (outcome, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.outcome, e.reason
}

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
			c.end.set(metrics.OutcomeRejected, reason)
			return
		}
		if !c.hasPty {
			c.end.set(metrics.OutcomeNoPTY, "this server runs an interactive app and needs a terminal; connect with `ssh -t`")
			return
		}
		if why := tui.Undrivable(c.pty.Term); why != "" {
			c.end.set(metrics.OutcomeRejected, why)
			return
		}
		if s.isDraining() {
			c.end.set(metrics.OutcomeShutdown, "the server is stopping")
			return
		}
		c.start()

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
			c.end.set(metrics.OutcomeRejected, "unknown command; connect without one for a new session, or with `join <session-id> [code]` or `resume <session-id>`")
		}
		if s.isDraining() {
			c.end.set(metrics.OutcomeShutdown, "the server is stopping")
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

// login starts a new session for a plain shell login, after offering the
// owner's detached sessions, if any.
func (s *Server) login(c *conn) {
	if c.fp != "" {
		if list := s.life.detachedFor(c.ownerKey()); len(list) > 0 {
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
		c.end.set(metrics.OutcomeShutdown, "the server is stopping")
		return
	case errors.Is(err, ErrSessionLimit):
		c.end.set(metrics.OutcomeRejected, tooManySessions(owner, s.opts.Limits.MaxSessionsPerUser))
		return
	case err != nil:
		c.end.set(metrics.OutcomeError, "could not start a session")
		s.log.Error("session start failed", "err", err)
		return
	}
	ls, ok := s.life.add(se)
	if !ok {
		s.sessions.End(se.ID)
		c.end.set(metrics.OutcomeShutdown, "the server is stopping")
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

// runTerminal attaches the connection to ls as a terminal with role and
// runs it until it ends.
func (s *Server) runTerminal(c *conn, ls *liveSession, role tui.Role) {
	t := newTerminal(c, role)
	if !s.life.reserve(ls, t) {
		if s.isDraining() {
			c.end.set(metrics.OutcomeShutdown, "the server is stopping")
		}
		c.end.set(metrics.OutcomeRejected, noSuchSession) // it ended meanwhile
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
		Terminal:     c.user,
		TerminalID:   attID,
		BaseURL:      s.publicURL(c.sess.LocalAddr()),
		Output:       s.metrics.CountingWriter(c.sess),
		Environ:      environ,
		ColorProfile: tui.Profile(environ),
		Width:        w,
		Height:       h,
		Primary:      t.startPrimary,
		Role:         role,
		PromptArming: s.opts.SSH.PromptArming,
	})
	defer model.Close() // restore the terminal before any last words
	tm := &termModel{inner: model, se: se}
	in := c.newInput()
	popts := append(bm.MakeOptions(c.sess),
		tea.WithInput(in),
		tea.WithWindowSize(w, h),
		// The tui draws its own frames on demand (zero work while
		// idle); Bubble Tea's renderer would redraw from a 60 Hz ticker
		// in every session. Its ticker still runs without a renderer,
		// only to flush its own output, so it runs at 1 Hz into a
		// discarded writer: with no renderer it writes nothing we need.
		tea.WithoutRenderer(),
		tea.WithFPS(1),
		tea.WithOutput(io.Discard),
		tea.WithoutSignalHandler(),
	)
	p := tea.NewProgram(tm, popts...)
	untrack, ok := s.track(p)
	if !ok {
		c.closeInput(in)
		t.end()
		s.life.leave(ls, t, false)
		c.end.set(metrics.OutcomeShutdown, "the server is stopping")
		return
	}
	s.life.ready(ls, t, p)
	runErr := c.run(p, in)
	untrack()
	t.end()
	quit := tm.quit.Load()
	if runErr != nil && !quit && !c.gone() {
		c.end.set(metrics.OutcomeError, "the terminal program failed")
		s.log.Warn("terminal program failed", "err", runErr)
	}
	s.life.leave(ls, t, quit)
}

// conn is one SSH session (channel) with a terminal: the connection's
// input, window size, limits and ending.
type conn struct {
	s      *Server
	sess   ssh.Session
	pty    ssh.Pty
	winCh  <-chan ssh.Window
	hasPty bool
	user   string
	fp     string // "" without a proven key
	remote string
	begin  time.Time
	end    ending

	// ctx ends with the connection, or when stop is called.
	ctx    context.Context
	cancel context.CancelFunc

	lastInput atomic.Int64 // unix nanoseconds
	se        atomic.Pointer[session.Session]
	inputDone chan struct{} // closed when the client's input ended
	wg        sync.WaitGroup
	timers    []*time.Timer

	mu      sync.Mutex // protects the following
	win     ssh.Window
	prog    *tea.Program   // the program running now, or nil
	in      *io.PipeWriter // where input goes now, or nil
	command string
	sid     string
	role    string
}

func (s *Server) newConn(sess ssh.Session) *conn {
	pty, winCh, hasPty := sess.Pty()
	c := &conn{
		s:         s,
		sess:      sess,
		pty:       pty,
		winCh:     winCh,
		hasPty:    hasPty,
		user:      sess.User(),
		remote:    sess.RemoteAddr().String(),
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
	c.ctx, c.cancel = context.WithCancel(sess.Context())
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
	return "addr\x00" + hostOf(c.sess.RemoteAddr())
}

func (c *conn) attached(se *session.Session, role tui.Role) {
	c.se.Store(se)
	se.Touch()
	c.mu.Lock()
	c.sid, c.role = se.ID, role.String()
	c.mu.Unlock()
}

// start runs the connection's input pump and window watcher, and its
// idle and maximum duration limits.
func (c *conn) start() {
	s := c.s
	// The pump reads the client's input for as long as the channel is
	// open, past the end of the handler; the server's WaitGroup joins it.
	s.wg.Go(c.pump)
	c.wg.Go(c.watchWindow)

	idle := s.opts.Limits.IdleTimeout
	var idleTimer *time.Timer
	idleTimer = time.AfterFunc(idle, func() {
		if since := time.Since(time.Unix(0, c.lastInput.Load())); since < idle {
			idleTimer.Reset(idle - since)
			return
		}
		c.stop(metrics.OutcomeIdleTimeout, fmt.Sprintf("no input for %s; disconnected", idle))
	})
	maxTimer := time.AfterFunc(s.opts.Limits.MaxSessionDuration, func() {
		c.stop(metrics.OutcomeMaxDuration, fmt.Sprintf("the session reached its maximum duration of %s", s.opts.Limits.MaxSessionDuration))
	})
	c.timers = []*time.Timer{idleTimer, maxTimer}
}

// stopAll stops the limits and the window watcher.
func (c *conn) stopAll() {
	for _, t := range c.timers {
		t.Stop()
	}
	c.cancel()
	c.wg.Wait()
}

// stop ends the connection's program with outcome and reason, unless it is
// already ending for another reason.
func (c *conn) stop(outcome, reason string) {
	if c.end.set(outcome, reason) {
		c.cancel()
	}
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

// pump copies the client's input to the running program.
func (c *conn) pump() {
	defer close(c.inputDone)
	buf := make([]byte, 4<<10)
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
				// Fails once that program's input is closed: what it did
				// not read is dropped with it.
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

// watchWindow forwards window size changes to the running program.
func (c *conn) watchWindow() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case w, ok := <-c.winCh:
			if !ok {
				return
			}
			c.mu.Lock()
			c.win = w
			p := c.prog
			c.mu.Unlock()
			if p != nil {
				p.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
			}
		}
	}
}

func (c *conn) size() (w, h int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.win.Width, c.win.Height
}

// newInput returns the input of the next program: what the client types
// from now on.
func (c *conn) newInput() *io.PipeReader {
	r, w := io.Pipe()
	c.mu.Lock()
	c.in = w
	c.mu.Unlock()
	return r
}

// closeInput ends a program's input; the pump drops what it was writing.
func (c *conn) closeInput(r *io.PipeReader) {
	c.mu.Lock()
	c.in = nil
	c.mu.Unlock()
	_ = r.Close()
}

// run runs p, which reads in, until it quits, the client goes away or
// stop is called.
func (c *conn) run(p *tea.Program, in *io.PipeReader) error {
	c.mu.Lock()
	c.prog = p
	c.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-c.ctx.Done():
			p.Quit()
		case <-c.inputDone:
			p.Quit()
		case <-done:
		}
	})
	_, err := p.Run()
	p.Kill()
	close(done)
	wg.Wait()
	c.mu.Lock()
	c.prog = nil
	c.mu.Unlock()
	c.closeInput(in)
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
	outcome, reason := c.end.get()
	if reason != "" {
		fmt.Fprintln(c.sess.Stderr(), "raxol-ssh: "+reason)
	}
	code := 0
	if outcome != "" && outcome != metrics.OutcomeOK {
		code = 1
	}
	_ = c.sess.Exit(code)
}

func (c *conn) logEnd() {
	outcome, reason := c.end.get()
	if outcome == "" {
		outcome = metrics.OutcomeOK
	}
	c.s.metrics.Connection(outcome)
	c.mu.Lock()
	command, sid, role := c.command, c.sid, c.role
	c.mu.Unlock()
	c.s.log.Info("ssh session ended",
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
		"reason", reason,
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
