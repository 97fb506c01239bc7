package server

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"charm.land/ssh"
	"charm.land/wish/v2"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/metrics"
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
			// Global requests: a peer node's proof request (cluster_ssh.go);
			// any other is refused.
			srv.RequestHandlers = map[string]ssh.RequestHandler{peerProofRequest: s.answerPeerProof}
			return nil
		},
		wish.WithMiddleware(func(next ssh.Handler) ssh.Handler { return s.handle(next, false) }),
	}
	if s.keys != nil {
		opts = append(opts, wish.WithPublicKeyAuth(func(ctx ssh.Context, key ssh.PublicKey) bool {
			traceOf(ctx).offer()
			// A peer node bridging a client (cluster_ssh.go) need not be listed.
			return s.keys.allowed(key) || s.cluster.isPeerKey(key)
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

// channelCounts counts the session channels open on each SSH connection,
// the one count of Limits.MaxChannelsPerConnection. The zero value is
// ready.
type channelCounts struct {
	mu sync.Mutex
	n  map[*gossh.ServerConn]int
}

// take counts one more channel on conn unless it has limit open already
// (checked and counted under one lock: channels opened at once are
// counted one by one), and returns the func that gives it back, once
// however often it is called; a connection with none left is forgotten.
func (c *channelCounts) take(conn *gossh.ServerConn, limit int) (release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[*gossh.ServerConn]int)
	}
	if c.n[conn] >= limit {
		return func() {}, false
	}
	c.n[conn]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.n[conn]--; c.n[conn] <= 0 {
				delete(c.n, conn)
			}
		})
	}, true
}

// open is the number of channels counted on conn now.
func (c *channelCounts) open(conn *gossh.ServerConn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[conn]
}

// limitChannels refuses a session channel beyond
// Limits.MaxChannelsPerConnection open at once on its connection: nothing
// else bounds how many one authenticated client opens, and each costs
// goroutines and buffers. next runs for the channel's whole life; the
// channel's place is given back when it returns, or panics.
func (s *Server) limitChannels(next ssh.ChannelHandler) ssh.ChannelHandler {
	limit := s.opts.Limits.MaxChannelsPerConnection
	return func(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
		release, ok := s.channels.take(conn, limit)
		if !ok {
			s.metrics.LimitRejected(metrics.LimitSessionsPerConn)
			_ = nc.Reject(gossh.ResourceShortage, fmt.Sprintf("too many sessions on one connection (at most %d)", limit))
			return
		}
		defer release()
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

// connCallback reads a trusted proxy's PROXY header (see
// sshProxyProtocol.accept), admits the connection (see
// admission.connCallback) and starts tracing its authentication. From
// here on the connection's RemoteAddr is the client's: admission, the
// failed-login budget, the traces (keyed by it: a proxied client's
// ip:port is as unique as a direct one's), logs and the session's
// identity all read it there.
func (s *Server) connCallback(ctx ssh.Context, c net.Conn) net.Conn {
	pc, err := s.sshProxy.accept(c)
	switch {
	case errors.Is(err, errSilentProxyConn):
		s.metrics.Connection(metrics.OutcomeError)
		s.log.Debug("ssh connection failed", "peer", c.RemoteAddr().String(), "err", err)
		return nil
	case err != nil:
		s.metrics.Connection(metrics.OutcomeRejected)
		s.log.Warn("ssh connection refused", "peer", c.RemoteAddr().String(), "err", err)
		return nil
	}
	nc := s.admit.connCallback(ctx, pc)
	if nc != nil {
		// charm ssh closes the connection it was given, not ours, if this
		// callback panics: give the slot back here then.
		defer func() {
			if r := recover(); r != nil {
				_ = nc.Close()
				panic(r)
			}
		}()
		s.traces.open(ctx, nc.RemoteAddr())
	}
	return nc
}

// connectionFailed records a connection that never finished its
// handshake. A failed login (see authTrace.failedLogin: a bad signature
// is one, a key query is not) spends its address's failed-login budget.
func (s *Server) connectionFailed(c net.Conn, err error) {
	outcome := metrics.OutcomeError
	msg := err.Error()
	if isUntrustedProxyHeader(err) {
		// Not a failed login: likely a proxy missing from
		// Options.SSH.TrustedProxies, or a client claiming an address.
		s.metrics.Connection(metrics.OutcomeRejected)
		s.log.Warn("ssh connection refused: a PROXY protocol header from an address not in "+s.opts.setting("Options.SSH.TrustedProxies"), "remote", c.RemoteAddr().String())
		return
	}
	if s.traces.get(c.RemoteAddr()).failedLogin(err) {
		outcome = metrics.OutcomeAuthFailed
		s.metrics.AuthFailures.Inc()
		s.admit.authFailed(hostOf(c.RemoteAddr()))
	}
	s.metrics.Connection(outcome)
	s.log.Info("ssh connection failed", "remote", c.RemoteAddr().String(), "outcome", outcome, "err", msg)
}
