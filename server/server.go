package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"golang.org/x/net/netutil"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/hostkeys"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// App is what the server serves: every session gets a fresh model.
type App struct {
	// Name is the app's short name: lowercase letters, digits and '_', at
	// most 32. It is the namespace of the app's MCP tools.
	Name string
	// New returns a fresh model for a new session.
	New func() ui.Model
	// Projections are the app's model projections, served to agents as
	// MCP resources <Name>://state/<key>. Optional.
	Projections map[string]func(ui.Model) any
	// ToolPolicy and ReadPolicy are the app's own authorization policies
	// (see package authz). Declared by the app they count as configured;
	// an operator's settings replace them.
	ToolPolicy, ReadPolicy authz.Func
}

// Environments.
const (
	EnvDev  = "dev"
	EnvProd = "prod"
)

// Limits bound what clients can take. Zero values take the defaults.
type Limits struct {
	// MaxConnections caps concurrent SSH connections; default 1000.
	MaxConnections int
	// MaxPerIP caps concurrent connections from one address; default 20.
	MaxPerIP int
	// MaxSessionsPerUser caps live sessions of one owner: one SSH key under
	// any user name (the user name only for a keyless dev login), or one
	// /mcp API key. Detached sessions count until they end. Default 10.
	MaxSessionsPerUser int
	// MaxHTTPConnections caps the HTTP connections served at once (MCP
	// clients, /metrics, /healthz) on each HTTP listener; more wait to be
	// accepted. Default 4096.
	MaxHTTPConnections int
	// MaxHTTPPerIP caps the HTTP connections open from one address; one
	// more is answered 429 and closed. Default 256.
	MaxHTTPPerIP int
	// MaxChannelsPerConnection caps the SSH session channels open at once
	// on one connection (each costs goroutines and buffers even before it
	// asks for a shell); default 10.
	MaxChannelsPerConnection int
	// HandshakeTimeout bounds the SSH handshake and authentication;
	// default 10s.
	HandshakeTimeout time.Duration
	// IdleTimeout ends a session with no input for this long (output does
	// not count); default 30m.
	IdleTimeout time.Duration
	// MaxSessionDuration ends any session after this long; default 12h.
	MaxSessionDuration time.Duration
	// MaxAuthFailures is how many failed SSH logins one address may make
	// in AuthFailureWindow before its SSH connections are refused until it
	// recovers; defaults 10 and 5m. A public key whose signature does not
	// verify is a failed login; a key query is not. Wrong /mcp API keys
	// spend a separate budget of the same size (over it a wrong key gets
	// 429; a right key always passes).
	MaxAuthFailures   int
	AuthFailureWindow time.Duration
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxConnections, 1000)
	def(&l.MaxPerIP, 20)
	def(&l.MaxSessionsPerUser, 10)
	def(&l.MaxChannelsPerConnection, 10)
	def(&l.MaxHTTPConnections, 4096)
	def(&l.MaxHTTPPerIP, 256)
	defD(&l.HandshakeTimeout, 10*time.Second)
	defD(&l.IdleTimeout, 30*time.Minute)
	defD(&l.MaxSessionDuration, 12*time.Hour)
	def(&l.MaxAuthFailures, 10)
	defD(&l.AuthFailureWindow, 5*time.Minute)
	return l
}

// Options configures a [Server].
type Options struct {
	// SSHAddr is the SSH listen address; default "127.0.0.1:2222".
	SSHAddr string
	// HTTPAddr is the listen address of the MCP endpoints, and of /metrics
	// and /healthz unless MetricsAddr is set; default "127.0.0.1:8080".
	HTTPAddr string
	// MetricsAddr, when set, is the listen address of /metrics and /healthz
	// on their own; then the HTTP listener serves only the MCP endpoints
	// (404 for /metrics and /healthz), so that the MCP port, which may face
	// the internet, exposes no metrics. Empty: they share HTTPAddr. An
	// embedder mounting them itself can use Metrics.Handler and
	// [Server.HealthHandler].
	MetricsAddr string
	// DataDir holds the host key. Required: the server never writes into
	// the working directory unasked.
	DataDir string
	// Env is EnvDev (default) or EnvProd.
	Env string
	// AuthorizedKeysFile lists the public keys allowed to log in. Required
	// in production; in dev, when set, it is enforced too.
	AuthorizedKeysFile string
	// AllowAnonymousPublic lets a dev server without authorized keys listen
	// on a non-loopback address.
	AllowAnonymousPublic bool
	// Limits bound connections and sessions.
	Limits Limits
	// DrainTimeout bounds how long Shutdown waits for sessions to end
	// before closing them; default 10s.
	DrainTimeout time.Duration
	// PublicURL is the base URL of the HTTP listener as clients reach it,
	// shown in the attach panel; default "http://" + the listen address.
	PublicURL string
	// MCPLensMode is the focus lens mode: "focused" (default), "hover" or
	// "all".
	MCPLensMode string
	// MCPMaxTools is how many tools the lens advertises; default 15.
	MCPMaxTools int
	// MCPAllowedTools (--mcp-allowed-tools), MCPAllowedReads
	// (--mcp-allowed-read-methods) and MCPPolicyFile (--mcp-policy) are
	// the operator's authorization settings; nil lists mean not given, an
	// empty non-nil list is an explicit empty allowlist.
	MCPAllowedTools []string
	MCPAllowedReads []string
	MCPPolicyFile   string
	// ToolAuthorizer and ReadAuthorizer are an embedding program's own
	// policies; they count as configured and take precedence over the
	// app's, but not over the operator's settings.
	ToolAuthorizer, ReadAuthorizer authz.Func
	// MCPTrustedOrigins are extra origins allowed to call the MCP
	// endpoints; MCPAllowedHosts extra Host values accepted on a loopback
	// listener (behind a proxy).
	MCPTrustedOrigins []string
	MCPAllowedHosts   []string
	// MCPToolCallsPerSecond and MCPToolCallBurst rate-limit each agent's
	// tool calls (defaults 20 and 40); MCPMaxClients caps the agents
	// attached to one session (default 8).
	MCPToolCallsPerSecond float64
	MCPToolCallBurst      int
	MCPMaxClients         int
	// MCPClientIdleTimeout (--mcp-client-idle-timeout) closes an agent's
	// MCP client session after this long without a request from it;
	// default 30m. Nothing else ends a quiet agent's session.
	MCPClientIdleTimeout time.Duration
	// MCPApprovalTimeout is how long a call waits for the human's approval
	// before it is denied; default 45s.
	MCPApprovalTimeout time.Duration
	// APIKeysFile (--api-keys) lists the operator-issued API keys of the
	// server-level MCP endpoint /mcp (raxol_start, raxol_stop, raxol_list),
	// one a line, '#' comments allowed. Empty: /mcp is not served (404).
	APIKeysFile string
	// HeadlessIdleTimeout ends a session started by raxol_start after this
	// long with nobody attached and no change; default 30m.
	HeadlessIdleTimeout time.Duration
	// HeadlessMaxClients caps the MCP clients attached to /mcp at once
	// (each is a go-sdk session that lives until it closes or idles out);
	// default 64.
	HeadlessMaxClients int
	// ResumeGrace is how long a session lives on, detached, after its
	// owner's last terminal dropped (closed without ctrl+c), for the owner
	// to get it back with `resume <id>` or the picker at their next login.
	// Zero or negative: a dropped owner ends the session at once, as a
	// library client's Close cannot be told from a dropped link. The
	// raxol-ssh command defaults to DefaultResumeGrace (--resume-grace).
	ResumeGrace time.Duration
	// JoinTimeout is how long a join request waits for the owner's answer
	// before it is refused; default 60s.
	JoinTimeout time.Duration
	// PromptArming is how long an approval or join prompt ignores answer
	// keys after it comes on top, so that keys typed before the human saw
	// it do not answer it; 0 means tui.DefaultPromptArming (0.7s),
	// negative none.
	PromptArming time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics defaults to a fresh metrics.New().
	Metrics *metrics.Metrics
}

var appName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// Server serves one app over SSH and HTTP. Create it with [New], then call
// [Server.Start] and [Server.Shutdown], or [Server.Run].
type Server struct {
	// Fixed at creation.
	app         App
	opts        Options
	log         *slog.Logger
	metrics     *metrics.Metrics
	panics      *guard.Reporter // contained panics of the app's code
	hostKey     *hostkeys.Key
	keys        *authorizedKeys // nil: any client
	sessions    *session.Manager
	admit       *admission
	bridge      *mcpbridge.Bridge
	policy      authz.Policy
	headless    *headless     // /mcp, headless sessions and join codes
	channels    channelCounts // session channels open per SSH connection
	traces      authTraces    // authentication of connections in their handshake
	ssh         *ssh.Server
	http        *http.Server
	metricsHTTP *http.Server // nil without MetricsAddr

	life *lifecycle // sessions' terminals: join, resume, detach

	wg sync.WaitGroup // Serve goroutines and session handlers

	mu        sync.Mutex // protects the following
	sshLn     net.Listener
	httpLn    net.Listener
	metricsLn net.Listener // nil without MetricsAddr
	progs     map[*tea.Program]struct{}
	draining  bool
	started   bool
}

// New checks the options, loads or creates the host key, and prepares the
// servers. It listens on nothing until Start.
func New(app App, opts Options) (*Server, error) {
	if !appName.MatchString(app.Name) {
		return nil, fmt.Errorf("server: app name %q must be a lowercase letter followed by up to 31 of [a-z0-9_]", app.Name)
	}
	if app.New == nil {
		return nil, errors.New("server: App.New is nil")
	}
	if opts.SSHAddr == "" {
		opts.SSHAddr = "127.0.0.1:2222"
	}
	if opts.HTTPAddr == "" {
		opts.HTTPAddr = "127.0.0.1:8080"
	}
	if opts.Env == "" {
		opts.Env = EnvDev
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 10 * time.Second
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New()
	}
	s := &Server{
		app:     app,
		opts:    opts,
		log:     opts.Logger,
		metrics: opts.Metrics,
		progs:   make(map[*tea.Program]struct{}),
	}
	s.life = newLifecycle(s)

	switch opts.Env {
	case EnvDev, EnvProd:
	default:
		return nil, fmt.Errorf("server: unknown environment %q (want %q or %q)", opts.Env, EnvDev, EnvProd)
	}
	if opts.Env == EnvProd && opts.AuthorizedKeysFile == "" {
		return nil, errors.New("server: --env prod requires --authorized-keys FILE: a production server never accepts anonymous clients")
	}
	if opts.AuthorizedKeysFile != "" {
		keys, err := loadAuthorizedKeys(opts.AuthorizedKeysFile)
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		s.keys = keys
	} else if !opts.AllowAnonymousPublic && !isLoopback(opts.SSHAddr) {
		return nil, fmt.Errorf("server: refusing to accept anonymous SSH clients on non-loopback address %s; pass --authorized-keys FILE, bind 127.0.0.1, or pass --allow-anonymous-public", opts.SSHAddr)
	}
	if opts.DataDir == "" {
		return nil, errors.New("server: DataDir is required (the host key lives there)")
	}
	key, err := hostkeys.LoadOrCreate(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.hostKey = key

	s.panics = guard.New(opts.Logger, s.metrics)
	s.sessions = session.NewManager(&session.Options{
		Panics: s.panics,
		// A session's MCP clients are closed cleanly when it ends.
		OnEnd: func(se *session.Session) {
			s.metrics.SessionsOpen.Dec()
			s.bridge.SessionEnded(se.ID)
			s.life.sessionEnded(se)
		},
		Dispatcher: &dispatcher.Options{
			Logger: opts.Logger,
			Hooks: dispatcher.Hooks{
				OnFold:         func(d time.Duration) { s.metrics.FoldDuration.Observe(d.Seconds()) },
				OnUpdateFailed: s.metrics.UpdateFailures.Inc,
				OnViewFailed:   s.metrics.ViewFailures.Inc,
			},
		},
	})
	mode, err := lens.ParseMode(opts.MCPLensMode)
	if err != nil {
		return nil, fmt.Errorf("server: --mcp-lens-mode: %w", err)
	}
	if opts.MCPMaxTools < 0 {
		return nil, fmt.Errorf("server: --mcp-max-tools %d: must be positive", opts.MCPMaxTools)
	}
	policy, err := resolvePolicy(app, opts)
	if err != nil {
		return nil, err
	}
	// The MCP endpoints are served on the network: the bridge refuses to
	// start without a tool policy and a read policy someone chose, and
	// without a tool authorizer for the sensitive tools.
	if s.bridge, err = mcpbridge.New(s.sessions, mcpbridge.Options{
		Namespace:          app.Name,
		Projections:        app.Projections,
		Logger:             opts.Logger,
		LensMode:           mode,
		MaxTools:           opts.MCPMaxTools,
		Metrics:            s.metrics,
		Policy:             policy,
		TrustedOrigins:     opts.MCPTrustedOrigins,
		AllowedHosts:       opts.MCPAllowedHosts,
		ToolCallsPerSecond: opts.MCPToolCallsPerSecond,
		ToolCallBurst:      opts.MCPToolCallBurst,
		MaxClients:         opts.MCPMaxClients,
		ApprovalTimeout:    opts.MCPApprovalTimeout,
		ClientIdleTimeout:  opts.MCPClientIdleTimeout,
	}); err != nil {
		return nil, fmt.Errorf("server: MCP endpoints on %s: %w", opts.HTTPAddr, err)
	}
	s.policy = policy
	if s.headless, err = s.newHeadless(); err != nil {
		return nil, err
	}
	s.admit = newAdmission(opts.Limits.MaxConnections, opts.Limits.MaxPerIP, opts.Limits.MaxAuthFailures, opts.Limits.AuthFailureWindow, s.metrics)
	if s.ssh, err = s.newSSHServer(); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/sessions/", s.bridge)
	mux.Handle("/mcp", s.headless)
	ops := mux
	if opts.MetricsAddr != "" {
		ops = http.NewServeMux()
		s.metricsHTTP = s.newHTTPServer(ops)
	}
	ops.Handle("GET /metrics", s.metrics.Handler())
	ops.Handle("GET /healthz", s.HealthHandler())
	s.http = s.newHTTPServer(mux)
	return s, nil
}

func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// HealthHandler serves /healthz: 200 "ok", or 503 "draining" once
// Shutdown has begun.
func (s *Server) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if s.isDraining() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
}

// Sessions returns the registry of live sessions.
func (s *Server) Sessions() *session.Manager { return s.sessions }

// HostKeyFingerprint returns the SHA256 fingerprint of the host key.
func (s *Server) HostKeyFingerprint() string { return s.hostKey.Fingerprint() }

// Start listens on the SSH and HTTP addresses (and MetricsAddr, when set)
// and serves in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("server: already started")
	}
	sshLn, err := net.Listen("tcp", s.opts.SSHAddr)
	if err != nil {
		return fmt.Errorf("server: ssh listen: %w", err)
	}
	httpLn, err := net.Listen("tcp", s.opts.HTTPAddr)
	if err != nil {
		_ = sshLn.Close()
		return fmt.Errorf("server: http listen: %w", err)
	}
	var metricsLn net.Listener
	if s.metricsHTTP != nil {
		if metricsLn, err = net.Listen("tcp", s.opts.MetricsAddr); err != nil {
			_ = sshLn.Close()
			_ = httpLn.Close()
			return fmt.Errorf("server: metrics listen (--metrics-addr): %w", err)
		}
		metricsLn = netutil.LimitListener(metricsLn, s.opts.Limits.MaxHTTPConnections)
	}
	// Connections beyond the cap wait in the kernel's backlog until one
	// closes (ReadHeaderTimeout and IdleTimeout recycle idle ones).
	httpLn = netutil.LimitListener(httpLn, s.opts.Limits.MaxHTTPConnections)
	httpLn = newPerIPListener(httpLn, s.opts.Limits.MaxHTTPPerIP, func() { s.metrics.MCPRejected("too_many_connections") })
	s.sshLn, s.httpLn, s.metricsLn, s.started = sshLn, httpLn, metricsLn, true
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if err := s.ssh.Serve(sshLn); err != nil && !errors.Is(err, ssh.ErrServerClosed) {
			s.log.Error("ssh server stopped", "err", err)
		}
	}()
	go func() {
		defer s.wg.Done()
		if err := s.http.Serve(httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("http server stopped", "err", err)
		}
	}()
	if metricsLn != nil {
		s.wg.Go(func() {
			if err := s.metricsHTTP.Serve(metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("metrics server stopped", "err", err)
			}
		})
	}
	// ssh.Server.Shutdown only closes listeners Serve has registered; wait
	// until it has, or an early Shutdown would leave Serve accepting. Serve
	// registers the listener just before marking the server started, which
	// SetOption reports by refusing.
	for deadline := time.Now().Add(5 * time.Second); s.ssh.SetOption(func(*ssh.Server) error { return nil }) == nil; {
		if time.Now().After(deadline) {
			return errors.New("server: ssh server did not start")
		}
		time.Sleep(time.Millisecond)
	}
	s.logPosture()
	return nil
}

// SSHAddr returns the SSH listener's address (after Start).
func (s *Server) SSHAddr() string { return s.addr(func() net.Listener { return s.sshLn }) }

// HTTPAddr returns the HTTP listener's address (after Start).
func (s *Server) HTTPAddr() string { return s.addr(func() net.Listener { return s.httpLn }) }

// MetricsAddr returns the address of the listener of /metrics and /healthz
// (after Start): the HTTP listener's unless Options.MetricsAddr is set.
func (s *Server) MetricsAddr() string {
	return s.addr(func() net.Listener {
		if s.metricsLn != nil {
			return s.metricsLn
		}
		return s.httpLn
	})
}

func (s *Server) addr(ln func() net.Listener) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := ln(); l != nil {
		return l.Addr().String()
	}
	return ""
}

// publicURL is the base URL shown to humans and agents for the MCP
// endpoints; via is the local address of the connection they reached the
// server on (nil when unknown).
func (s *Server) publicURL(via net.Addr) string {
	return baseURL(s.opts.PublicURL, s.HTTPAddr(), via)
}

// baseURL is public when set. Otherwise it is the HTTP listener's address,
// except that a listener on every interface (0.0.0.0, [::]) is no address
// to connect to: then the host is the one the client reached this server
// on (via: on a host without NAT the same interface serves HTTP), else
// localhost. Behind NAT or a proxy only public is right.
func baseURL(public, httpAddr string, via net.Addr) string {
	if public != "" {
		return public
	}
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return "http://" + httpAddr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
		if tcp, ok := via.(*net.TCPAddr); ok && tcp.IP != nil && !tcp.IP.IsUnspecified() {
			host = tcp.IP.String()
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// describePublicURL says, for the posture line, which base URL humans and
// agents are shown. Called with s.mu held.
func (s *Server) describePublicURL() string {
	if s.opts.PublicURL != "" {
		return s.opts.PublicURL
	}
	httpAddr := s.httpLn.Addr().String()
	host, port, err := net.SplitHostPort(httpAddr)
	if ip := net.ParseIP(host); err == nil && (host == "" || (ip != nil && ip.IsUnspecified())) {
		return "http://<the address each SSH client reached>:" + port + " (HTTP on every interface; set --public-url behind NAT, a proxy or a container's port mapping)"
	}
	return baseURL("", httpAddr, nil)
}

// describeMetrics says, for the posture line, where /metrics and /healthz
// are served. Called with s.mu held.
func (s *Server) describeMetrics() string {
	if s.metricsLn == nil {
		return "on the http listener"
	}
	return s.metricsLn.Addr().String() + " (not on the http listener)"
}

func (s *Server) logPosture() {
	auth := "anonymous (any client; loopback only)"
	if s.keys != nil {
		auth = fmt.Sprintf("public key (%s, %d keys)", s.opts.AuthorizedKeysFile, s.keys.count())
	} else if !isLoopback(s.opts.SSHAddr) {
		auth = "anonymous (any client; PUBLIC, --allow-anonymous-public)"
	}
	l := s.opts.Limits
	s.log.Info("raxol-ssh serving",
		"app", s.app.Name,
		"env", s.opts.Env,
		"ssh", s.sshLn.Addr().String(),
		"http", s.httpLn.Addr().String(),
		"metrics", s.describeMetrics(),
		"auth", auth,
		"max_connections", l.MaxConnections,
		"max_per_ip", l.MaxPerIP,
		"max_sessions_per_user", l.MaxSessionsPerUser,
		"max_auth_failures", fmt.Sprintf("%d per %s", l.MaxAuthFailures, l.AuthFailureWindow),
		"handshake_timeout", l.HandshakeTimeout,
		"idle_timeout", l.IdleTimeout,
		"max_session_duration", l.MaxSessionDuration,
		"mcp_policy", s.policy.Describe,
		"headless_mcp", s.headless.posture(),
		"public_url", s.describePublicURL(),
		"host_key", s.hostKey.Path,
		"host_key_fingerprint", s.hostKey.Fingerprint(),
	)
}

func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// Shutdown drains: it stops accepting connections, tells every terminal
// the server is stopping, lets programs quit, waits until ctx is done (or
// the drain timeout, whichever is first) and then closes what is left.
// Every goroutine the server started has returned when it returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		return errors.New("server: already shut down")
	}
	s.draining = true
	progs := make([]*tea.Program, 0, len(s.progs))
	for p := range s.progs {
		progs = append(progs, p)
	}
	started := s.started
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, s.opts.DrainTimeout)
	defer cancel()
	s.log.Info("raxol-ssh draining", "sessions", s.sessions.Count(), "timeout", s.opts.DrainTimeout)

	var tell sync.WaitGroup
	for _, p := range progs {
		tell.Go(func() {
			p.Send(tui.NoticeMsg("the server is stopping"))
			p.Quit()
		})
	}
	var errs []error
	// Detached sessions end with the rest; waiting joins give up.
	s.life.close()
	// MCP clients first: a hanging SSE stream would hold the HTTP drain.
	s.bridge.Close()
	s.headless.close()
	if started {
		if err := s.ssh.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("ssh drain: %w", err))
			_ = s.ssh.Close()
		}
		if err := s.http.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("http drain: %w", err))
			_ = s.http.Close()
		}
		// Last: /healthz answers "draining" for as long as the drain lasts.
		if s.metricsHTTP != nil {
			if err := s.metricsHTTP.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("metrics drain: %w", err))
				_ = s.metricsHTTP.Close()
			}
		}
	}
	tell.Wait()
	s.wg.Wait()
	s.sessions.Close()
	s.log.Info("raxol-ssh stopped")
	return errors.Join(errs...)
}

// Run starts the server, serves until ctx is done, then drains within the
// drain timeout.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	return s.Shutdown(context.Background())
}

func (s *Server) track(p *tea.Program) (untrack func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return nil, false
	}
	s.progs[p] = struct{}{}
	return func() {
		s.mu.Lock()
		delete(s.progs, p)
		s.mu.Unlock()
	}, true
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrTooManySessions is returned by [Server.StartHeadless] when the owner
// already has Limits.MaxSessionsPerUser live sessions.
var ErrTooManySessions = errors.New("too many sessions")

// StartHeadless starts a session of the app with no terminal attached, for
// agents and tests. It ends when end is called or the server shuts down.
// Over the owner's cap the error wraps [ErrTooManySessions].
func (s *Server) StartHeadless(owner session.Owner) (se *session.Session, end func(), err error) {
	if s.isDraining() {
		return nil, nil, errors.New("server: shutting down")
	}
	model, err := newModel(s.panics, s.app)
	if err != nil {
		return nil, nil, fmt.Errorf("server: start headless session: %w", err)
	}
	se, ok, err := s.sessions.Start(s.app.Name, owner, model, s.opts.Limits.MaxSessionsPerUser)
	if err != nil {
		return nil, nil, fmt.Errorf("server: start headless session: %w", err)
	}
	if !ok {
		s.metrics.LimitRejected(metrics.LimitMaxSessionsPerUser)
		return nil, nil, fmt.Errorf("server: start headless session for %q (limit %d): %w", owner.User, s.opts.Limits.MaxSessionsPerUser, ErrTooManySessions)
	}
	s.metrics.SessionsOpen.Inc() // the manager's OnEnd decrements it
	return se, func() { s.sessions.End(se.ID) }, nil
}

// newModel runs the app's factory, containing a panic (counted and logged
// with its stack): no session starts, and the server keeps serving.
func newModel(panics *guard.Reporter, app App) (ui.Model, error) {
	m, err := guard.Call(panics.Session(""), metrics.HookFactory, "", app.New)
	if err != nil {
		return nil, fmt.Errorf("the app's factory: %w", err)
	}
	if m == nil {
		return nil, errors.New("the app's factory returned a nil model")
	}
	return m, nil
}
