package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	bm "charm.land/wish/v2/bubbletea"
	"github.com/charmbracelet/colorprofile"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
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
			srv.ConnCallback = s.admit.connCallback
			srv.ConnectionFailedCallback = s.connectionFailed
			return nil
		},
		wish.WithMiddleware(s.handle),
	}
	if s.keys != nil {
		opts = append(opts, wish.WithPublicKeyAuth(func(_ ssh.Context, key ssh.PublicKey) bool {
			return s.keys.allowed(key)
		}))
	} else {
		// Dev: any client, with or without a key. A proven key still
		// identifies the owner.
		opts = append(opts,
			wish.WithPublicKeyAuth(func(ssh.Context, ssh.PublicKey) bool { return true }),
			wish.WithKeyboardInteractiveAuth(func(ssh.Context, gossh.KeyboardInteractiveChallenge) bool { return true }),
		)
	}
	srv, err := wish.NewServer(opts...)
	if err != nil {
		return nil, fmt.Errorf("server: ssh: %w", err)
	}
	return srv, nil
}

// connectionFailed records a connection that never finished its handshake.
func (s *Server) connectionFailed(c net.Conn, err error) {
	outcome := metrics.OutcomeError
	msg := err.Error()
	if strings.Contains(msg, "no auth passed yet") || strings.Contains(msg, "permission denied") ||
		strings.Contains(msg, "unable to authenticate") {
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

// handle is the only SSH middleware: it admits the session, runs one
// program for it, and logs one line when it ends. It never calls next:
// there is nothing after it.
func (s *Server) handle(ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		s.wg.Add(1)
		defer s.wg.Done()
		start := time.Now()
		var end ending
		pty, winCh, hasPty := sess.Pty()
		fp := ""
		if k := sess.PublicKey(); k != nil {
			fp = gossh.FingerprintSHA256(k)
		}
		defer func() {
			outcome, reason := end.get()
			if outcome == "" {
				outcome = metrics.OutcomeOK
			}
			s.metrics.Connection(outcome)
			s.log.Info("ssh session ended",
				"remote", sess.RemoteAddr().String(),
				"user", sess.User(),
				"key", fp,
				"term", pty.Term,
				"size", fmt.Sprintf("%dx%d", pty.Window.Width, pty.Window.Height),
				"duration", time.Since(start).Round(time.Millisecond),
				"outcome", outcome,
				"reason", reason,
			)
		}()
		defer s.hangUpIfDraining(sess)
		refuse := func(outcome, reason string) {
			end.set(outcome, reason)
			wish.Fatalln(sess, "raxol-ssh: "+reason)
		}

		if reason, ok := sess.Context().Value(rejectKey).(string); ok {
			refuse(metrics.OutcomeRejected, reason)
			return
		}
		if !hasPty {
			refuse(metrics.OutcomeNoPTY, "this server runs an interactive app and needs a terminal; connect with `ssh -t`")
			return
		}
		if s.isDraining() {
			refuse(metrics.OutcomeShutdown, "the server is stopping")
			return
		}
		owner := session.Owner{User: sess.User(), KeyFingerprint: fp, RemoteAddr: sess.RemoteAddr().String()}
		se, ok, err := s.sessions.Start(s.app.Name, owner, s.app.New(), s.opts.Limits.MaxSessionsPerUser)
		if err != nil {
			refuse(metrics.OutcomeError, "could not start a session")
			s.log.Error("session start failed", "err", err)
			return
		}
		if !ok {
			s.metrics.LimitRejected(metrics.LimitMaxSessionsPerUser)
			refuse(metrics.OutcomeRejected, fmt.Sprintf("too many sessions for user %q (limit %d); close one and try again", owner.User, s.opts.Limits.MaxSessionsPerUser))
			return
		}
		s.metrics.SessionsOpen.Inc() // the manager's OnEnd decrements it
		defer s.sessions.End(se.ID)
		_, detach := se.Attach(session.KindTerminal, owner.User)
		defer detach()

		environ := append(sess.Environ(), "TERM="+pty.Term)
		model := tui.New(se, tui.Options{
			Terminal:     owner.User,
			BaseURL:      s.publicURL(),
			Output:       s.metrics.CountingWriter(sess),
			Environ:      environ,
			ColorProfile: colorprofile.Env(environ),
			Width:        pty.Window.Width,
			Height:       pty.Window.Height,
			Primary:      true,
		})
		defer model.Close()
		in := &touchReader{r: sess, touch: se.Touch, done: make(chan struct{})}
		popts := append(bm.MakeOptions(sess),
			tea.WithInput(in),
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
		p := tea.NewProgram(model, popts...)
		untrack, ok := s.track(p)
		if !ok {
			refuse(metrics.OutcomeShutdown, "the server is stopping")
			return
		}
		defer untrack()

		stop := func(outcome, reason string) {
			if end.set(outcome, reason) {
				go p.Quit()
			}
		}
		idle := s.opts.Limits.IdleTimeout
		var idleTimer *time.Timer
		idleTimer = time.AfterFunc(idle, func() {
			if since := time.Since(se.LastInput()); since < idle {
				idleTimer.Reset(idle - since)
				return
			}
			stop(metrics.OutcomeIdleTimeout, fmt.Sprintf("no input for %s; disconnected", idle))
		})
		defer idleTimer.Stop()
		maxTimer := time.AfterFunc(s.opts.Limits.MaxSessionDuration, func() {
			stop(metrics.OutcomeMaxDuration, fmt.Sprintf("the session reached its maximum duration of %s", s.opts.Limits.MaxSessionDuration))
		})
		defer maxTimer.Stop()

		ctx, cancel := context.WithCancel(sess.Context())
		se.SetKeySink(func(agent string, keys []string) error {
			res := make(chan error, 1)
			go p.Send(tui.AgentKeysMsg{Agent: agent, Keys: keys, Result: res}) // a no-op once the program ended
			select {
			case err := <-res:
				return err
			case <-ctx.Done():
				return session.ErrNoTerminal
			case <-time.After(5 * time.Second):
				return errors.New("the terminal did not take the keys within 5s")
			}
		})
		defer se.SetKeySink(nil)
		se.SetApprovalSink(func(actx context.Context, req session.ApprovalRequest) (session.Approval, error) {
			reply := make(chan session.Approval, 1)
			go p.Send(tui.ApprovalMsg{Req: req, Reply: reply}) // a no-op once the program ended
			select {
			case a := <-reply:
				return a, nil
			case <-actx.Done():
				go p.Send(tui.WithdrawApprovalMsg{ID: req.ID})
				return session.Refused, actx.Err()
			case <-ctx.Done():
				return session.Refused, session.ErrNoTerminal
			}
		})
		defer se.SetApprovalSink(nil)
		forwarded := make(chan struct{})
		go func() {
			defer close(forwarded)
			for {
				select {
				case <-ctx.Done():
					p.Quit()
					return
				case <-in.done:
					// The client closed the session (or its input) but may
					// keep the connection, e.g. an OpenSSH ControlMaster:
					// nothing can reach the program any more.
					p.Quit()
					return
				case w := <-winCh:
					p.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
				}
			}
		}()
		_, runErr := p.Run()
		p.Kill()
		cancel()
		<-forwarded
		model.Close() // restore the terminal before any last words

		if s.isDraining() {
			end.set(metrics.OutcomeShutdown, "the server is stopping")
		}
		outcome, reason := end.get()
		switch {
		case outcome != "":
			fmt.Fprintln(sess.Stderr(), "raxol-ssh: "+reason)
			_ = sess.Exit(1)
		case runErr != nil && sess.Context().Err() == nil:
			end.set(metrics.OutcomeError, "the terminal program failed")
			s.log.Warn("terminal program failed", "err", runErr)
			_ = sess.Exit(1)
		default:
			_ = sess.Exit(0)
		}
	}
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

// touchReader records input time on every read from the client, and
// closes done when the client's input ends.
type touchReader struct {
	r     io.Reader
	touch func()
	done  chan struct{}
	once  sync.Once
}

func (t *touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.touch()
	}
	if err != nil {
		t.once.Do(func() { close(t.done) })
	}
	return n, err
}
