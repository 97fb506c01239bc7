package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"golang.org/x/net/netutil"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/hostkeys"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/server/internal/saver"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// App is what the server serves: every session gets a fresh model.
type App struct {
	// Name is the app's short name: lowercase letters, digits and '_', at
	// most 32. It is the namespace of the app's MCP tools.
	Name string
	// New returns a fresh model for a new session, given who and what the
	// session serves.
	New func(ui.Identity) ui.Model
	// Projections are the app's model projections, served to agents as
	// MCP resources <Name>://state/<key>. Optional.
	Projections map[string]func(ui.Model) any
	// ToolPolicy and ReadPolicy are the app's own authorization policies
	// (see package authz). Declared by the app they count as configured;
	// an operator's settings (Options.MCP) replace them. Serving MCP on a
	// network listener needs both, from here or from Options.MCP.
	ToolPolicy, ReadPolicy authz.Func
	// Snapshots, when set, is the codec the app's models are saved and
	// restored with: its sessions then survive a restart of the server
	// and, in a cluster, the loss of their node (see SnapshotOptions).
	// Nil: sessions end with the server.
	Snapshots *SnapshotCodec
}

var appName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

func checkApp(app App) error {
	if !appName.MatchString(app.Name) {
		return &OptionError{Field: "App.Name", Err: fmt.Errorf("%q must be a lowercase letter followed by up to 31 of [a-z0-9_]", app.Name)}
	}
	if app.New == nil {
		return &OptionError{Field: "App.New", Err: errors.New("nil: every session needs a model")}
	}
	if app.Snapshots != nil {
		if err := app.Snapshots.check(); err != nil {
			return &OptionError{Field: "App.Snapshots", Err: err}
		}
	}
	return nil
}

// checkAnonymous refuses anonymous clients on a non-loopback SSH address
// unless the options allow them.
func (s *Server) checkAnonymous(addr string) error {
	if s.keys != nil || s.opts.SSH.AllowAnonymousPublic || isLoopback(addr) {
		return nil
	}
	return s.opts.optionError("Options.SSH.AuthorizedKeysFile", fmt.Errorf("refusing to accept anonymous SSH clients on non-loopback address %s; set it, bind a loopback address, or set %s", addr, s.opts.setting("Options.SSH.AllowAnonymousPublic")))
}

// Server serves one app over SSH and HTTP. Create it with [New], then call
// [Server.Start] and [Server.Shutdown], or [Server.ListenAndServe].
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
	sshProxy    *sshProxyProtocol // nil without Options.SSH.ProxyProtocol
	httpProxies trustedProxies    // whose X-Forwarded-For is believed
	// cluster is the node's membership (Options.Cluster), nil for a
	// single node; set by StartOn before anything is served.
	cluster *clusterNode
	bridge  *mcpbridge.Bridge
	policy  authz.Policy
	control *controlEndpoint // the control endpoint: /mcp, its sessions and join codes
	views   *webViews        // the browser view of sessions: links, access, live channels
	// sshOthers answers an SSH connection's questions about other nodes:
	// sshAlone on a single node, sshPeers in a cluster (set at start).
	sshOthers sshElsewhere
	proxied   *proxiedRequests // the cap of requests through trusted proxies per client
	// httpOthers routes HTTP requests that may be another node's:
	// httpAlone on a single node, the cluster node in a cluster.
	httpOthers  httpElsewhere
	channels    channelCounts // session channels open per SSH connection
	traces      authTraces    // authentication of connections in their handshake
	ssh         *ssh.Server
	http        *http.Server
	mcpMux      *http.ServeMux // the MCP endpoints, as Handler
	metricsHTTP *http.Server   // nil without MetricsAddr

	life *lifecycle // sessions' terminals: join, resume, detach

	// persist saves sessions for an app with a codec (nil: not saved);
	// set by StartOn, read by the manager's OnEnd on any goroutine.
	persist atomic.Pointer[saver.Saver]

	wg sync.WaitGroup // Serve goroutines and session handlers

	// readiness is what /readyz answers (readyServing, readyStarting,
	// readyDraining). It changes with s.mu held and is read without it,
	// so that /readyz answers while StartOn, which holds s.mu, waits for
	// the SSH server.
	readiness atomic.Int32

	mu        sync.Mutex // protects the following
	sshLn     net.Listener
	httpLn    net.Listener
	metricsLn net.Listener // nil without MetricsAddr
	progs     map[*tea.Program]struct{}
	draining  bool
	started   bool
}

// New checks the options, loads or creates the host key, and prepares the
// servers. It listens on nothing: serve with [Server.ListenAndServe],
// [Server.Serve] on listeners of your own, [Server.Start], or mount
// [Server.Middleware] and [Server.Handler] into servers you run. An
// invalid or missing option is an [*OptionError] naming its field.
func New(app App, opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkApp(app); err != nil {
		return nil, err
	}
	s := &Server{
		sshOthers:  sshAlone{},
		httpOthers: httpAlone{},
		app:        app,
		opts:       opts,
		log:        opts.Logger,
		metrics:    opts.Metrics,
		progs:      make(map[*tea.Program]struct{}),
	}

	switch opts.Env {
	case EnvDev, EnvProd:
	default:
		return nil, opts.optionError("Options.Env", fmt.Errorf("unknown environment %q (want %q or %q)", opts.Env, EnvDev, EnvProd))
	}
	if opts.Env == EnvProd && opts.SSH.AuthorizedKeysFile == "" {
		return nil, opts.optionError("Options.SSH.AuthorizedKeysFile", fmt.Errorf("required when %s is %q: a production server never accepts anonymous clients", opts.setting("Options.Env"), EnvProd))
	}
	if s.sshProxy, err = opts.sshProxyProtocol(); err != nil {
		return nil, err
	}
	if s.httpProxies, err = opts.newTrustedProxies("Options.MCP.TrustedProxies", opts.MCP.TrustedProxies); err != nil {
		return nil, err
	}
	if opts.SSH.AuthorizedKeysFile != "" {
		keys, err := loadAuthorizedKeys(opts.SSH.AuthorizedKeysFile)
		if err != nil {
			return nil, opts.optionError("Options.SSH.AuthorizedKeysFile", err)
		}
		s.keys = keys
	} else if err := s.checkAnonymous(opts.SSH.Addr); err != nil {
		return nil, err
	}
	key, err := hostkeys.LoadOrCreate(opts.DataDir)
	if err != nil {
		return nil, opts.optionError("Options.DataDir", err)
	}
	s.hostKey = key

	s.panics = guard.New(opts.Logger, s.metrics)
	s.sessions = session.NewManager(&session.Options{
		Panics: s.panics,
		// raxol_sessions_open moves where the registry adds and removes
		// a session: started, restored and adopted ones alike.
		Count: func(delta int) { s.metrics.SessionsOpen.Add(float64(delta)) },
		// A session's MCP clients are closed cleanly when it ends.
		OnEnd: func(se *session.Session) {
			s.bridge.SessionEnded(se.ID)
			s.life.sessionEnded(se)
			s.persist.Load().Ended(se)
		},
		OnCloseTerminal: func(se *session.Session, id, reason string) { s.life.closeTerminal(se, id, reason) },
		Dispatcher: &dispatcher.Options{
			Logger: opts.Logger,
			Hooks: dispatcher.Hooks{
				OnFold:         func(d time.Duration) { s.metrics.FoldDuration.Observe(d.Seconds()) },
				OnUpdateFailed: s.metrics.UpdateFailures.Inc,
				OnViewFailed:   s.metrics.ViewFailures.Inc,
			},
		},
	})
	s.life = newLifecycle(s.sessions, opts, s.metrics)
	mode, err := opts.lensMode()
	if err != nil {
		return nil, err
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
		MaxTools:           opts.MCP.MaxTools,
		Metrics:            s.metrics,
		Policy:             policy,
		TrustedOrigins:     opts.MCP.TrustedOrigins,
		AllowedHosts:       opts.MCP.AllowedHosts,
		ToolCallsPerSecond: opts.MCP.ToolCallsPerSecond,
		ToolCallBurst:      opts.MCP.ToolCallBurst,
		MaxClients:         opts.MCP.MaxClients,
		BodyTimeout:        opts.MCP.BodyTimeout,
		MaxBatch:           opts.MCP.MaxBatch,
		PresenceGrace:      opts.MCP.PresenceGrace,
		ApprovalTimeout:    opts.MCP.ApprovalTimeout,
		ClientIdleTimeout:  opts.MCP.ClientIdleTimeout,
		KeepAlive:          opts.MCP.keepAlive,
	}); err != nil {
		return nil, fmt.Errorf("server: MCP endpoints: %w", err)
	}
	s.policy = policy
	if s.control, err = s.newControlEndpoint(); err != nil {
		return nil, err
	}
	s.admit = newAdmission(opts.Limits.MaxConnections, opts.Limits.MaxPerIP, opts.Limits.MaxAuthFailures, opts.Limits.AuthFailureWindow, s.metrics)
	if s.ssh, err = s.newSSHServer(); err != nil {
		return nil, err
	}
	s.mcpMux = http.NewServeMux()
	s.views = newWebViews(s.log, s.metrics, s.sessions, opts)
	s.views.joins, s.views.clientIP = s.life.joins, s.httpProxies.clientIP
	local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /sessions/<id>/view…: the browser's; the rest: the agents'.
		if id, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/sessions/"), "/"); ok && isView(rest) {
			s.views.serve(w, r, id, rest)
			return
		}
		s.bridge.ServeHTTP(w, r)
	})
	s.mcpMux.Handle("/sessions/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.httpOthers.serveSession(w, r, local)
	}))
	s.mcpMux.Handle("/mcp", s.control)
	mux := http.NewServeMux()
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.httpOthers.servePeerChecked(w, r, s.mcpMux)
	}))
	ops := mux
	if opts.MetricsAddr != "" {
		ops = http.NewServeMux()
		s.metricsHTTP = s.newHTTPServer(ops)
	}
	ops.Handle("GET /metrics", s.metrics.Handler())
	ops.Handle("GET /healthz", s.HealthHandler())
	ops.Handle("GET /readyz", s.ReadyHandler())
	s.proxied = &proxiedRequests{trusted: s.httpProxies, max: opts.Limits.MaxHTTPPerIP, n: map[string]int{},
		refused: func() { s.metrics.MCPRejected("too_many_connections") }}
	s.http = s.newHTTPServer(s.proxied.limit(mux))
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

// Readiness, as /readyz reports it ([Server.readiness]).
const (
	// readyServing: serving, or not started (an embedder serving
	// Middleware and Handler on its own listeners is ready as soon as New
	// returns).
	readyServing int32 = iota
	// readyStarting: StartOn is bringing its listeners up; HTTP may answer
	// before SSH accepts.
	readyStarting
	// readyDraining: Shutdown has begun; new sessions are refused while
	// the live ones finish.
	readyDraining
)

// ReadyHandler serves /readyz, for a load balancer to decide where new
// sessions go: 200 "ready" while serving; 503 "starting" while
// [Server.StartOn] brings its listeners up; 503 "draining" from the
// moment [Server.Shutdown] begins, while live sessions finish.
func (s *Server) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		switch s.readiness.Load() {
		case readyStarting:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		case readyDraining:
			http.Error(w, "draining", http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte("ready\n"))
		}
	})
}

// httpElsewhere routes the HTTP requests that may be another node's: a
// session's endpoints (serveSession: here, or passed to the node holding
// it) and every request (servePeerChecked: a peer node's signed ones). A
// single node (httpAlone) serves everything itself; the cluster node
// (cluster.go) is the other.
type httpElsewhere interface {
	serveSession(w http.ResponseWriter, r *http.Request, local http.Handler)
	servePeerChecked(w http.ResponseWriter, r *http.Request, next http.Handler)
}

// httpAlone is a single node: every request is its own.
type httpAlone struct{}

var (
	_ httpElsewhere = httpAlone{}
	_ httpElsewhere = (*clusterNode)(nil)
)

func (httpAlone) serveSession(w http.ResponseWriter, r *http.Request, local http.Handler) {
	local.ServeHTTP(w, r)
}
func (httpAlone) servePeerChecked(w http.ResponseWriter, r *http.Request, next http.Handler) {
	next.ServeHTTP(w, r)
}

// Session returns the live session id, if this server holds it: what a
// test of an app reads or drives beside its terminal and agents.
func (s *Server) Session(id string) (*session.Session, bool) { return s.sessions.Get(id) }

// LiveSessions returns the sessions this server holds now.
func (s *Server) LiveSessions() []*session.Session { return s.sessions.List() }

// HostKeyFingerprint returns the SHA256 fingerprint of the host key.
func (s *Server) HostKeyFingerprint() string { return s.hostKey.Fingerprint() }

// Start listens on Options.SSH.Addr and Options.MCP.Addr (and
// Options.MetricsAddr, when set) and serves in the background until
// [Server.Shutdown].
func (s *Server) Start() error {
	sshLn, err := net.Listen("tcp", s.opts.SSH.Addr)
	if err != nil {
		return s.opts.optionError("Options.SSH.Addr", fmt.Errorf("listen: %w", err))
	}
	httpLn, err := net.Listen("tcp", s.opts.MCP.Addr)
	if err != nil {
		_ = sshLn.Close()
		return s.opts.optionError("Options.MCP.Addr", fmt.Errorf("listen: %w", err))
	}
	if err := s.StartOn(sshLn, httpLn); err != nil {
		_ = sshLn.Close()
		_ = httpLn.Close()
		return err
	}
	return nil
}

// StartOn serves SSH on sshLn and the HTTP endpoints (MCP, and /metrics,
// /healthz and /readyz unless Options.MetricsAddr is set) on httpLn,
// listeners the caller owns, in the background until [Server.Shutdown]
// closes them. Either may be nil to serve only the other; serving neither
// is an error. Options.MetricsAddr, when set, is listened on here. With
// Options.SSH.ProxyProtocol, connections on sshLn are read for PROXY
// headers as on the server's own listener: pass it unwrapped.
func (s *Server) StartOn(sshLn, httpLn net.Listener) error {
	if sshLn == nil && httpLn == nil {
		return errors.New("server: StartOn: no listener")
	}
	if sshLn != nil && s.keys == nil {
		if err := s.checkAnonymous(sshLn.Addr().String()); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return ErrShutdown
	}
	if s.started {
		return ErrStarted
	}
	if s.opts.Cluster.enabled() {
		if err := s.joinCluster(sshLn, httpLn); err != nil {
			return err
		}
		defer func() {
			if !s.started { // failed below: leave as if never joined
				s.cluster.close()
				s.cluster = nil
			}
		}()
	}
	p, err := s.openSnapshots()
	if err != nil {
		return err
	}
	defer func() {
		if !s.started && p != nil {
			_ = p.Close(context.Background(), false)
		}
	}()
	var metricsLn net.Listener
	if s.metricsHTTP != nil {
		var err error
		if metricsLn, err = net.Listen("tcp", s.opts.MetricsAddr); err != nil {
			return s.opts.optionError("Options.MetricsAddr", fmt.Errorf("listen: %w", err))
		}
		metricsLn = netutil.LimitListener(metricsLn, s.opts.Limits.MaxHTTPConnections)
	}
	if httpLn != nil {
		// Connections beyond the cap wait in the kernel's backlog until one
		// closes (ReadHeaderTimeout and IdleTimeout recycle idle ones).
		httpLn = netutil.LimitListener(httpLn, s.opts.Limits.MaxHTTPConnections)
		httpLn = newPerIPListener(httpLn, s.opts.Limits.MaxHTTPPerIP, s.httpProxies, func() { s.metrics.MCPRejected("too_many_connections") })
	}
	// Saved sessions come back before anyone can ask for them.
	s.persist.Store(p)
	if p != nil {
		s.life.observe(saverObserver{p})
	}
	if s.cluster != nil {
		s.life.observe(s.cluster)
		s.control.others = clusterPeers{c: s.cluster, h: s.control}
		s.sshOthers = sshPeers{s.cluster}
		s.httpOthers = s.cluster
	}
	s.cluster.adoptSnapshots(p)
	p.RestoreAll(context.Background())
	p.Start()
	s.sshLn, s.httpLn, s.metricsLn, s.started = sshLn, httpLn, metricsLn, true
	s.readiness.Store(readyStarting)
	if httpLn != nil {
		s.wg.Go(func() {
			if err := s.http.Serve(httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("http server stopped", "err", err)
			}
		})
	}
	if metricsLn != nil {
		s.wg.Go(func() {
			if err := s.metricsHTTP.Serve(metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("metrics server stopped", "err", err)
			}
		})
	}
	if sshLn != nil {
		s.wg.Go(func() {
			if err := s.ssh.Serve(sshLn); err != nil && !errors.Is(err, ssh.ErrServerClosed) {
				s.log.Error("ssh server stopped", "err", err)
			}
		})
		// ssh.Server.Shutdown only closes listeners Serve has registered;
		// wait until it has, or an early Shutdown would leave Serve
		// accepting. Serve registers the listener just before marking the
		// server started, which SetOption reports by refusing.
		for deadline := time.Now().Add(5 * time.Second); s.ssh.SetOption(func(*ssh.Server) error { return nil }) == nil; {
			if time.Now().After(deadline) {
				return errors.New("server: ssh server did not start")
			}
			time.Sleep(time.Millisecond)
		}
	}
	s.logPosture()
	s.readiness.Store(readyServing)
	return nil
}

// ListenAndServe serves on the addresses of the options ([Server.Start])
// until ctx is done, then drains ([Server.Shutdown]) within
// Options.DrainTimeout. It returns the error of the start or of the drain.
func (s *Server) ListenAndServe(ctx context.Context) error {
	if err := s.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	return s.Shutdown(context.Background())
}

// Serve is [Server.ListenAndServe] on listeners the caller owns (see
// [Server.StartOn]; either may be nil).
func (s *Server) Serve(ctx context.Context, sshLn, httpLn net.Listener) error {
	if err := s.StartOn(sshLn, httpLn); err != nil {
		return err
	}
	<-ctx.Done()
	return s.Shutdown(context.Background())
}

// ListenAndServe serves app with opts until ctx is done, then drains: the
// whole server in one call. See [New] and [Server.ListenAndServe].
func ListenAndServe(ctx context.Context, app App, opts Options) error {
	s, err := New(app, opts)
	if err != nil {
		return err
	}
	return s.ListenAndServe(ctx)
}

// Middleware returns the server's SSH side as a wish middleware, for a
// wish server of your own: each SSH session that reaches it with a PTY
// and no command (or `join <id> [code]`, `resume <id>`) gets the app,
// exactly as on the server's own listener. Sessions with another command
// go on to the next handler. Your server authenticates: the owner is the
// session's user and, if it proved one, its public key; this server's
// authorized keys, connection caps and handshake limits apply only on its
// own listener. Call [Server.Shutdown] to drain the sessions it serves.
func (s *Server) Middleware() wish.Middleware {
	return func(next ssh.Handler) ssh.Handler { return s.handle(next, true) }
}

// Handler returns the MCP endpoints (/sessions/<id>/mcp, /sessions/<id>/sse
// and, with Options.Headless.APIKeysFile, /mcp) as one http.Handler to
// mount on a mux of your own, with the same Host, Origin, bearer and
// policy checks as on the server's own listener. Mount it at the root
// path, or strip your prefix first. Set Options.MCP.PublicURL to the URL
// clients reach it at: attach panels and raxol_start show it. /metrics,
// /healthz and /readyz are not in it (Options.Metrics.Handler,
// [Server.HealthHandler], [Server.ReadyHandler]).
func (s *Server) Handler() http.Handler { return s.mcpMux }

// SSHAddr returns the SSH listener's address (after Start).
func (s *Server) SSHAddr() string { return s.addr(func() net.Listener { return s.sshLn }) }

// HTTPAddr returns the HTTP listener's address (after Start).
func (s *Server) HTTPAddr() string { return s.addr(func() net.Listener { return s.httpLn }) }

// MetricsAddr returns the address of the listener of /metrics, /healthz
// and /readyz (after Start): the HTTP listener's unless
// Options.MetricsAddr is set.
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
	httpAddr := s.HTTPAddr()
	if httpAddr == "" && s.opts.MCP.PublicURL == "" {
		// Mounted on a mux of the embedder's without Options.MCP.PublicURL:
		// the best guess is this host.
		return "http://localhost"
	}
	return baseURL(s.opts.MCP.PublicURL, httpAddr, via)
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
	if s.opts.MCP.PublicURL != "" {
		return s.opts.MCP.PublicURL
	}
	if s.httpLn == nil {
		return "http://localhost (the MCP endpoints are mounted elsewhere; set " + s.opts.setting("Options.MCP.PublicURL") + ")"
	}
	httpAddr := s.httpLn.Addr().String()
	host, port, err := net.SplitHostPort(httpAddr)
	if ip := net.ParseIP(host); err == nil && (host == "" || (ip != nil && ip.IsUnspecified())) {
		return "http://<the address each SSH client reached>:" + port + " (HTTP on every interface; set " + s.opts.setting("Options.MCP.PublicURL") + " behind NAT, a proxy or a container's port mapping)"
	}
	return baseURL("", httpAddr, nil)
}

// listening is ln's address for the posture line.
func listening(ln net.Listener) string {
	if ln == nil {
		return "none (not given one)"
	}
	return ln.Addr().String()
}

// describeMetrics says, for the posture line, where /metrics and /healthz
// are served. Called with s.mu held.
func (s *Server) describeMetrics() string {
	if s.metricsLn == nil {
		return "on the http listener"
	}
	return s.metricsLn.Addr().String() + " (not on the http listener)"
}

// describeHTTPProxies says, for the posture line, whose X-Forwarded-For
// is believed.
func (s *Server) describeHTTPProxies() string {
	if len(s.httpProxies) == 0 {
		return "none (X-Forwarded-For is ignored)"
	}
	return s.httpProxies.String() + " (X-Forwarded-For believed from them)"
}

func (s *Server) logPosture() {
	auth := "anonymous (any client; loopback only)"
	switch {
	case s.sshLn == nil:
		auth = "none (no SSH listener of its own)"
	case s.keys != nil:
		auth = fmt.Sprintf("public key (%s, %d keys)", s.opts.SSH.AuthorizedKeysFile, s.keys.count())
	case !isLoopback(s.sshLn.Addr().String()):
		auth = "anonymous (any client; PUBLIC, " + s.opts.setting("Options.SSH.AllowAnonymousPublic") + ")"
	}
	l := s.opts.Limits
	s.log.Info("raxol-ssh serving",
		"app", s.app.Name,
		"env", s.opts.Env,
		"ssh", listening(s.sshLn),
		"http", listening(s.httpLn),
		"metrics", s.describeMetrics(),
		"auth", auth,
		"max_connections", l.MaxConnections,
		"max_per_ip", l.MaxPerIP,
		"ssh_proxy_protocol", s.sshProxy.describe(),
		"http_trusted_proxies", s.describeHTTPProxies(),
		"max_sessions_per_user", l.MaxSessionsPerUser,
		"max_auth_failures", fmt.Sprintf("%d per %s", l.MaxAuthFailures, l.AuthFailureWindow),
		"handshake_timeout", l.HandshakeTimeout,
		"idle_timeout", l.IdleTimeout,
		"max_session_duration", l.MaxSessionDuration,
		"mcp_policy", s.policy.Describe,
		"headless_mcp", s.control.posture(),
		"public_url", s.describePublicURL(),
		"cluster", s.cluster.describe(),
		"snapshots", s.describeSnapshots(),
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
	s.readiness.Store(readyDraining)
	progs := make([]*tea.Program, 0, len(s.progs))
	for p := range s.progs {
		progs = append(progs, p)
	}
	started := s.started
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, s.opts.DrainTimeout)
	defer cancel()
	s.log.Info("raxol-ssh draining", "sessions", s.sessions.Count(), "timeout", s.opts.DrainTimeout)

	// Save every session first: those that end from here on keep their
	// snapshots and come back at the next start.
	s.persist.Load().BeginDrain(ctx)
	var tell sync.WaitGroup
	for _, p := range progs {
		tell.Go(func() {
			p.Send(tui.NoticeMsg("the server is stopping"))
			p.Quit()
		})
	}
	var errs []error
	// Out of the directory first: peers stop passing requests here.
	if err := s.cluster.drain(ctx); err != nil {
		errs = append(errs, err)
	}
	// Detached sessions end with the rest; waiting joins give up.
	s.life.close()
	// MCP clients first: a hanging SSE stream would hold the HTTP drain.
	s.bridge.Close()
	s.control.close()
	if started {
		if err := s.ssh.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("ssh drain: %w", err))
			_ = s.ssh.Close()
		}
		if err := s.http.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("http drain: %w", err))
			_ = s.http.Close()
		}
		// Last: /healthz and /readyz answer "draining" for as long as the drain lasts.
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
	// On a single node, what changed during the drain is saved too; in a
	// cluster the node has left the directory, and peers may already be
	// adopting its sessions.
	if err := s.persist.Load().Close(ctx, s.cluster == nil); err != nil {
		errs = append(errs, err)
	}
	s.cluster.close()
	s.log.Info("raxol-ssh stopped")
	return errors.Join(errs...)
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

// StartHeadless starts a session of the app with no terminal attached, for
// agents and tests. It ends when end is called or the server shuts down.
// Over the owner's cap the error wraps [ErrSessionLimit]; once the server
// drains, [ErrShutdown].
func (s *Server) StartHeadless(owner session.Owner) (se *session.Session, end func(), err error) {
	se, err = s.startSession(owner, ui.Identity{Headless: true})
	if err != nil {
		return nil, nil, fmt.Errorf("server: start headless session: %w", err)
	}
	return se, func() { s.sessions.End(se.ID) }, nil
}

// startSession starts a session of the app for owner: its model is made
// by the app's constructor with ident, completed with the session id and
// the owner. Errors wrap ErrShutdown or ErrSessionLimit when they are
// those.
func (s *Server) startSession(owner session.Owner, ident ui.Identity) (*session.Session, error) {
	if s.isDraining() {
		return nil, ErrShutdown
	}
	ident.User, ident.KeyFingerprint, ident.RemoteAddr = owner.User, owner.KeyFingerprint, owner.RemoteAddr
	limit := s.opts.Limits.MaxSessionsPerUser
	se, ok, err := s.sessions.StartFunc(s.app.Name, owner, func(id string) (ui.Model, error) {
		ident.SessionID = id
		return newModel(s.panics, s.app, ident)
	}, limit)
	switch {
	case errors.Is(err, session.ErrClosed):
		return nil, ErrShutdown
	case err != nil:
		return nil, err
	case !ok:
		s.metrics.LimitRejected(metrics.LimitMaxSessionsPerUser)
		return nil, fmt.Errorf("%q has %d live sessions already: %w", owner.User, limit, ErrSessionLimit)
	}
	return se, nil
}

// newModel runs the app's factory, containing a panic (counted and logged
// with its stack): no session starts, and the server keeps serving.
func newModel(panics *guard.Reporter, app App, ident ui.Identity) (ui.Model, error) {
	m, err := guard.Call(panics.Session(""), metrics.HookFactory, "", func() ui.Model { return app.New(ident) })
	if err != nil {
		return nil, fmt.Errorf("the app's factory: %w", err)
	}
	if m == nil {
		return nil, errors.New("the app's factory returned a nil model")
	}
	return m, nil
}
