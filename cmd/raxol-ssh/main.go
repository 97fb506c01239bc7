// Command raxol-ssh serves the built-in demo app over SSH: every login
// starts a live session that an AI agent can drive over MCP alongside the
// human, that other terminals can join, and that survives a dropped link
// for a grace period. `raxol-ssh mcp --stdio` serves one headless session
// over stdio instead.
//
// Every flag has an environment equivalent: --ssh-addr is RAXOL_SSH_ADDR,
// --idle-timeout is RAXOL_IDLE_TIMEOUT, and so on. A flag given on the
// command line wins over the environment.
//
// SIGINT or SIGTERM drains: every terminal is told the server is stopping,
// sessions end, and the process exits once they have or the drain timeout
// has passed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/gcpace"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr))
}

// run parses args and the environment, serves until ctx is done, and
// returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "mcp" {
		return runMCP(ctx, args[1:], getenv, stderr, nil)
	}
	opts, logCfg, err := parse(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "raxol-ssh:", err)
		return 2
	}
	memLimit, restoreLimit := applyMemoryLimit(getenv, cgroupMemoryLimit)
	defer restoreLimit()
	opts.Logger = slog.New(postureAttrs{Handler: newLogger(stderr, logCfg).Handler(), attrs: []slog.Attr{
		slog.String("memory_limit", memLimit), slog.String("gc_pacing", describePacing(logCfg.gcHeadroomMiB))}})
	srv, err := server.New(demoApp(), opts)
	if err != nil {
		fmt.Fprintln(stderr, "raxol-ssh:", err)
		return 1
	}
	if logCfg.pprof != "" {
		stopProfiler, err := serveProfiler(logCfg.pprof, opts.Logger)
		if err != nil {
			fmt.Fprintln(stderr, "raxol-ssh: --pprof-addr:", err)
			return 1
		}
		defer stopProfiler()
	}
	stopPacer := startGCPacer(ctx, logCfg.gcHeadroomMiB, opts.Logger)
	defer stopPacer()
	if err := srv.ListenAndServe(ctx); err != nil {
		fmt.Fprintln(stderr, "raxol-ssh:", err)
		return 1
	}
	return 0
}

// startGCPacer runs the GC pacer (internal/gcpace) with --gc-headroom-mib
// until the returned function is called.
func startGCPacer(ctx context.Context, headroomMiB int, log *slog.Logger) (stop func()) {
	if headroomMiB == 0 {
		log.Info("gc pacing off (--gc-headroom-mib 0): Go's own pacing")
		return func() {}
	}
	o := gcpace.Options{}
	if headroomMiB > 0 {
		o.Headroom = uint64(headroomMiB) << 20
	} // else the pacer's default, which follows what is live
	log.Info("gc pacing", "pacing", describePacing(headroomMiB))
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		gcpace.Run(ctx, o)
	}()
	return func() { cancel(); <-done }
}

type logConfig struct {
	format string
	level  slog.Level
	pprof  string // --pprof-addr
	// gcHeadroomMiB is --gc-headroom-mib: the most heap, in MiB, the GC
	// pacer may add (-1: gcpace.DefaultHeadroom, which follows the live heap; 0: no pacer).
	gcHeadroomMiB int
}

func newLogger(w io.Writer, c logConfig) *slog.Logger {
	ho := &slog.HandlerOptions{Level: c.level}
	if c.format == "json" {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// parse turns flags and RAXOL_* variables into server options. extra
// adds a subcommand's own flags.
func parse(args []string, getenv func(string) string, stderr io.Writer, extra ...func(*flag.FlagSet)) (server.Options, logConfig, error) {
	var o server.Options
	var lc logConfig
	var logLevel string
	fs := flag.NewFlagSet("raxol-ssh", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var allowedTools, allowedReads, trustedOrigins, allowedHosts listFlag
	// Each flag sets one option field; fields (the Go paths errors name)
	// maps them back, so that errors and the posture line name the flags.
	fields := map[string]string{}
	field := func(path, name string) string { fields[path] = "--" + name; return name }
	fs.StringVar(&o.SSH.Addr, field("Options.SSH.Addr", "ssh-addr"), server.DefaultSSHAddr, "SSH listen address")
	fs.StringVar(&o.MCP.Addr, field("Options.MCP.Addr", "http-addr"), server.DefaultHTTPAddr, "HTTP listen address (MCP, and /metrics, /healthz, /readyz unless --metrics-addr is set)")
	fs.StringVar(&o.MetricsAddr, field("Options.MetricsAddr", "metrics-addr"), "", "listen address of /metrics, /healthz and /readyz on their own (e.g. 127.0.0.1:9100); when set they answer 404 on --http-addr, so the MCP port exposes no metrics (default: served on --http-addr)")
	fs.StringVar(&o.DataDir, field("Options.DataDir", "data-dir"), "", "directory for the host key and the saved sessions, "+server.SnapshotFileName+" (default: the user config dir + /"+server.DefaultDataDirName+")")
	fs.BoolVar(&o.Snapshots.Disabled, field("Options.Snapshots.Disabled", "no-snapshots"), false, "save no session: sessions end with the server")
	fs.IntVar(&o.Snapshots.MaxBytes, field("Options.Snapshots.MaxBytes", "snapshot-max-bytes"), server.DefaultSnapshotMaxBytes, "largest saved session in bytes; a larger one runs on unsaved")
	fs.StringVar(&o.Env, field("Options.Env", "env"), server.DefaultEnv, "environment: dev or prod (prod requires --authorized-keys)")
	fs.StringVar(&o.SSH.AuthorizedKeysFile, field("Options.SSH.AuthorizedKeysFile", "authorized-keys"), "", "authorized_keys file of the keys allowed to log in")
	fs.BoolVar(&o.SSH.AllowAnonymousPublic, field("Options.SSH.AllowAnonymousPublic", "allow-anonymous-public"), false, "let a dev server without --authorized-keys listen on a non-loopback address")
	fs.BoolVar(&o.SSH.ProxyProtocol, field("Options.SSH.ProxyProtocol", "ssh-proxy-protocol"), false, "behind a TCP load balancer: SSH connections from --ssh-trusted-proxies must open with a PROXY protocol header (v1 or v2), whose source address is the client's for limits, logs and the session; a header from any other address is refused")
	fs.Var(&prefixFlag{&o.SSH.TrustedProxies}, field("Options.SSH.TrustedProxies", "ssh-trusted-proxies"), "comma-separated CIDR prefixes (or addresses) of the load balancers whose PROXY headers are believed; required with --ssh-proxy-protocol")
	fs.Var(&prefixFlag{&o.MCP.TrustedProxies}, field("Options.MCP.TrustedProxies", "http-trusted-proxies"), "comma-separated CIDR prefixes (or addresses) of the reverse proxies whose X-Forwarded-For is believed: a request's client is the right-most address in it that is not one of them (default: none; the header is ignored)")
	fs.StringVar(&o.Cluster.NATSURL, field("Options.Cluster.NATSURL", "cluster-nats"), "", "comma-separated NATS URLs (JetStream enabled): this server becomes a node of the cluster whose session directory is there (default: a single node; no NATS)")
	fs.StringVar(&o.Cluster.CredsFile, field("Options.Cluster.CredsFile", "cluster-nats-creds"), "", "NATS credentials file (user JWT and seed)")
	fs.StringVar(&o.Cluster.CAFile, field("Options.Cluster.CAFile", "cluster-nats-ca"), "", "CA file to verify the NATS servers' TLS certificates")
	fs.StringVar(&o.Cluster.CertFile, field("Options.Cluster.CertFile", "cluster-nats-cert"), "", "client certificate for NATS TLS (with --cluster-nats-key)")
	fs.StringVar(&o.Cluster.KeyFile, field("Options.Cluster.KeyFile", "cluster-nats-key"), "", "client key for NATS TLS")
	fs.StringVar(&o.Cluster.NodeID, field("Options.Cluster.NodeID", "node-id"), "", "this node's unique name in the cluster (letters, digits, - _ =)")
	fs.StringVar(&o.Cluster.HTTPURL, field("Options.Cluster.HTTPURL", "node-http-url"), "", "where the other nodes reach this node's HTTP, e.g. http://10.0.0.5:8080 (default: --http-addr when it names a host)")
	fs.StringVar(&o.Cluster.SSHAddr, field("Options.Cluster.SSHAddr", "node-ssh-addr"), "", "where the other nodes reach this node's SSH, host:port (default: --ssh-addr when it names a host)")
	fs.IntVar(&o.Cluster.Replicas, field("Options.Cluster.Replicas", "cluster-replicas"), 0, "how many NATS servers keep a copy of the cluster's buckets (nodes, session directory, saved sessions), 1 to 5: with 3, losing any one NATS server (or its disk) loses nothing and stops nothing; more than the NATS cluster's JetStream servers fails the start (default: 3 when the NATS cluster has three or more JetStream servers, else 1)")
	fs.StringVar(&o.Cluster.SecretFile, field("Options.Cluster.SecretFile", "cluster-secret"), "", "file of the secret every node of the cluster shares (at least 32 bytes, not readable by group or others): proof that a request comes from a peer")
	fs.StringVar(&o.MCP.PublicURL, field("Options.MCP.PublicURL", "public-url"), "", "base URL of the HTTP listener as clients reach it (default http://<http-addr>)")
	fs.IntVar(&o.Limits.MaxConnections, field("Options.Limits.MaxConnections", "max-connections"), server.DefaultMaxConnections, "maximum concurrent SSH connections")
	fs.IntVar(&o.Limits.MaxPerIP, field("Options.Limits.MaxPerIP", "max-per-ip"), server.DefaultMaxPerIP, "maximum concurrent SSH connections from one address")
	fs.IntVar(&o.Limits.MaxSessionsPerUser, field("Options.Limits.MaxSessionsPerUser", "max-sessions-per-user"), server.DefaultMaxSessionsPerUser, "maximum live sessions of one SSH key under any user name, detached ones included (of one user name for a keyless dev login); also per /mcp API key")
	fs.IntVar(&o.Limits.MaxHTTPConnections, field("Options.Limits.MaxHTTPConnections", "max-http-connections"), server.DefaultMaxHTTPConnections, "maximum HTTP connections served at once (agents, /metrics); more wait to be accepted")
	fs.IntVar(&o.Limits.MaxHTTPPerIP, field("Options.Limits.MaxHTTPPerIP", "max-http-per-ip"), server.DefaultMaxHTTPPerIP, "maximum HTTP connections open from one address; more are answered 429")
	fs.IntVar(&o.Limits.MaxBrowsersPerSession, field("Options.Limits.MaxBrowsersPerSession", "max-browsers-per-session"), server.DefaultMaxBrowsersPerSession, "maximum browsers on one session's web view at once")
	fs.IntVar(&o.Limits.MaxChannelsPerConnection, field("Options.Limits.MaxChannelsPerConnection", "max-channels-per-connection"), server.DefaultMaxChannelsPerConnection, "maximum SSH session channels open at once on one connection")
	fs.DurationVar(&o.Limits.HandshakeTimeout, field("Options.Limits.HandshakeTimeout", "handshake-timeout"), server.DefaultHandshakeTimeout, "time allowed for the SSH handshake and authentication")
	fs.DurationVar(&o.Limits.IdleTimeout, field("Options.Limits.IdleTimeout", "idle-timeout"), server.DefaultIdleTimeout, "end a session after this long without input")
	fs.DurationVar(&o.Limits.MaxSessionDuration, field("Options.Limits.MaxSessionDuration", "max-session-duration"), server.DefaultMaxSessionDuration, "end any session after this long")
	fs.IntVar(&o.Limits.MaxAuthFailures, field("Options.Limits.MaxAuthFailures", "max-auth-failures"), server.DefaultMaxAuthFailures, "failed SSH logins (a bad key signature included, a key query not) one address may make per --auth-failure-window before its SSH connections are refused; wrong /mcp API keys have a budget of their own of the same size, and a right key is never refused")
	fs.DurationVar(&o.Limits.AuthFailureWindow, field("Options.Limits.AuthFailureWindow", "auth-failure-window"), server.DefaultAuthFailureWindow, "window of --max-auth-failures")
	fs.DurationVar(&o.DrainTimeout, field("Options.DrainTimeout", "drain-timeout"), server.DefaultDrainTimeout, "how long a shutdown waits for sessions to end")
	fs.DurationVar(&o.SSH.ResumeGrace, field("Options.SSH.ResumeGrace", "resume-grace"), server.DefaultResumeGrace, "how long a session lives on after its owner's connection drops, for 'ssh -t resume <id>' (0 ends it at once)")
	fs.StringVar(&o.MCP.LensMode, field("Options.MCP.LensMode", "mcp-lens-mode"), server.DefaultLensMode, "focus lens mode for MCP tool lists: focused, hover or all")
	fs.IntVar(&o.MCP.MaxTools, field("Options.MCP.MaxTools", "mcp-max-tools"), server.DefaultMaxTools, "how many tools the focus lens advertises to agents")
	fs.Var(&allowedTools, field("Options.MCP.AllowedTools", "mcp-allowed-tools"), "comma-separated tool names and globs agents may call (e.g. 'demo.*.get_*,raxol_screenshot'); replaces the app's policy")
	fs.Var(&allowedReads, field("Options.MCP.AllowedReads", "mcp-allowed-read-methods"), "comma-separated MCP read methods agents may use (e.g. 'tools/list,resources/list,resources/read')")
	fs.StringVar(&o.MCP.PolicyFile, field("Options.MCP.PolicyFile", "mcp-policy"), "", "JSON policy file: ordered allow/ask/deny rules for tools, and read methods")
	fs.Var(&trustedOrigins, field("Options.MCP.TrustedOrigins", "mcp-trusted-origins"), "comma-separated origins (scheme://host[:port]) allowed to call the MCP endpoints besides the server's own")
	fs.Var(&allowedHosts, field("Options.MCP.AllowedHosts", "mcp-allowed-hosts"), "comma-separated Host values accepted on a loopback HTTP listener (behind a reverse proxy)")
	fs.Float64Var(&o.MCP.ToolCallsPerSecond, field("Options.MCP.ToolCallsPerSecond", "mcp-tool-calls-per-second"), server.DefaultToolCallsPerSecond, "tool calls one agent may make per second (a burst of twice that)")
	fs.IntVar(&o.MCP.MaxClients, field("Options.MCP.MaxClients", "mcp-max-clients"), server.DefaultMCPMaxClients, "agents that may attach to one session (at the cap, the least recently active one with no stream open and nothing in flight makes room)")
	fs.IntVar(&o.MCP.MaxBatch, field("Options.MCP.MaxBatch", "mcp-max-batch"), server.DefaultMCPMaxBatch, "messages one JSON-RPC batch may carry (a larger one gets 400)")
	fs.DurationVar(&o.MCP.ClientIdleTimeout, field("Options.MCP.ClientIdleTimeout", "mcp-client-idle-timeout"), server.DefaultClientIdleTimeout, "close an agent's MCP client session after this long without a request from it")
	fs.StringVar(&lc.format, "log-format", "text", "log format: text or json")
	fs.StringVar(&lc.pprof, "pprof-addr", "", "serve Go's profiler (/debug/pprof/) on this address, which must be loopback (e.g. 127.0.0.1:6060); off by default")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.IntVar(&lc.gcHeadroomMiB, "gc-headroom-mib", -1, "while requests allocate fast, let the heap grow up to this many MiB beyond Go's own goal so that garbage collections stay about 2s apart (a third of the CPU under busy agents otherwise); 0: Go's own pacing (GOGC) only; default: 8 times the live heap, at least 512 and at most an eighth of the memory available")
	fs.StringVar(&o.Headless.APIKeysFile, field("Options.Headless.APIKeysFile", "api-keys"), "", "file of operator-issued API keys (one a line, # comments) for the server-level MCP endpoint /mcp (raxol_start, raxol_stop, raxol_list); also RAXOL_API_KEYS_FILE; without it /mcp is not served")
	fs.DurationVar(&o.Headless.IdleTimeout, field("Options.Headless.IdleTimeout", "headless-idle-timeout"), server.DefaultHeadlessIdleTimeout, "end a session started by raxol_start after this long with nobody attached and no change")
	fs.IntVar(&o.Headless.MaxClients, field("Options.Headless.MaxClients", "headless-max-clients"), server.DefaultHeadlessMaxClients, "MCP clients attached to /mcp at once")
	o.Setting = func(path string) string {
		if f, ok := fields[path]; ok {
			return f
		}
		return path
	}
	for _, f := range extra {
		f(fs)
	}
	if err := fs.Parse(args); err != nil {
		return o, lc, err
	}
	if fs.NArg() > 0 {
		return o, lc, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		env := "RAXOL_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return o, lc, err
	}
	if o.Headless.APIKeysFile == "" {
		o.Headless.APIKeysFile = getenv("RAXOL_API_KEYS_FILE")
	}
	o.MCP.ToolCallBurst = int(2 * o.MCP.ToolCallsPerSecond)
	o.MCP.AllowedTools = allowedTools.list()
	o.MCP.AllowedReads = allowedReads.list()
	o.MCP.TrustedOrigins = trustedOrigins.list()
	o.MCP.AllowedHosts = allowedHosts.list()
	if err := lc.level.UnmarshalText([]byte(logLevel)); err != nil {
		return o, lc, fmt.Errorf("--log-level: %w", err)
	}
	if lc.gcHeadroomMiB < -1 {
		return o, lc, fmt.Errorf("--gc-headroom-mib %d: want 0 (off), a number of MiB, or leave it out", lc.gcHeadroomMiB)
	}
	if lc.format != "text" && lc.format != "json" {
		return o, lc, fmt.Errorf("--log-format %q: want text or json", lc.format)
	}
	if o.DataDir == "" {
		dir, err := server.DefaultDataDir()
		if err != nil {
			return o, lc, fmt.Errorf("--data-dir not given: %w", err)
		}
		o.DataDir = dir
	}
	if o.SSH.ResumeGrace == 0 {
		o.SSH.ResumeGrace = -1 // --resume-grace 0: a dropped owner's session ends at once
	}
	return o, lc, nil
}

// serveProfiler serves net/http/pprof on addr, a loopback address only:
// profiles show the process's memory and code paths to whoever can reach
// them. The returned function stops it.
func serveProfiler(addr string, log *slog.Logger) (stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return nil, fmt.Errorf("%q is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	log.Info("profiler serving", "addr", ln.Addr().String())
	return func() { _ = hs.Close(); <-done }, nil
}

// listFlag is a comma-separated list that remembers whether it was given:
// not given is nil, given empty is an empty list.
type listFlag struct {
	vals []string
	set  bool
}

func (l *listFlag) String() string { return strings.Join(l.vals, ",") }

func (l *listFlag) Set(s string) error {
	l.vals, l.set = authz.SplitList(s), true
	return nil
}

func (l *listFlag) list() []string {
	if !l.set {
		return nil
	}
	return l.vals
}

// prefixFlag is a comma-separated list of CIDR prefixes; an address alone
// is the prefix of that address only.
type prefixFlag struct{ p *[]netip.Prefix }

func (f *prefixFlag) String() string {
	if f.p == nil {
		return ""
	}
	s := make([]string, len(*f.p))
	for i, p := range *f.p {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func (f *prefixFlag) Set(s string) error {
	var ps []netip.Prefix
	for _, v := range authz.SplitList(s) {
		if v == "" {
			continue
		}
		if p, err := netip.ParsePrefix(v); err == nil {
			ps = append(ps, p)
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			return fmt.Errorf("%q is neither a CIDR prefix nor an IP address", v)
		}
		ps = append(ps, netip.PrefixFrom(a, a.BitLen()))
	}
	*f.p = ps
	return nil
}

// demoApp is the built-in demo, with its own policy.
func demoApp() server.App {
	return server.App{
		Name:        demo.Name,
		New:         func(ui.Identity) ui.Model { return demo.New() },
		Projections: demo.Projections(),
		ToolPolicy:  demo.ToolPolicy(),
		ReadPolicy:  demo.ReadPolicy(),
		Snapshots:   server.JSONCodec[demo.Model](demo.SnapshotVersion),
	}
}
