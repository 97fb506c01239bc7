package server

import (
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/tui"
)

// Environments of [Options.Env].
const (
	EnvDev  = "dev"
	EnvProd = "prod"
)

// Defaults. Each is what a zero field of [Options] means, and what the
// raxol-ssh command's flags default to; none is defined anywhere else.
const (
	DefaultSSHAddr  = "127.0.0.1:2222"
	DefaultHTTPAddr = "127.0.0.1:8080"
	DefaultEnv      = EnvDev
	// DefaultDataDirName is the directory under the user's configuration
	// directory (os.UserConfigDir) that holds the host key by default.
	DefaultDataDirName  = "raxol-ssh"
	DefaultDrainTimeout = 10 * time.Second

	DefaultResumeGrace  = 5 * time.Minute
	DefaultJoinTimeout  = 60 * time.Second
	DefaultPromptArming = tui.DefaultPromptArming

	DefaultLensMode           = string(lens.ModeFocused)
	DefaultMaxTools           = lens.DefaultMaxTools
	DefaultToolCallsPerSecond = mcpbridge.DefaultToolCallsPerSecond
	DefaultToolCallBurst      = mcpbridge.DefaultToolCallBurst
	DefaultMCPMaxClients      = mcpbridge.DefaultMaxClients
	DefaultMCPBodyTimeout     = mcpbridge.DefaultBodyTimeout
	DefaultMCPMaxBatch        = mcpbridge.DefaultMaxBatch
	DefaultPresenceGrace      = mcpbridge.DefaultPresenceGrace
	DefaultClientIdleTimeout  = mcpbridge.DefaultClientIdleTimeout
	DefaultApprovalTimeout    = mcpbridge.DefaultApprovalTimeout

	DefaultHeadlessIdleTimeout = 30 * time.Minute
	DefaultHeadlessMaxClients  = 64

	DefaultMaxConnections           = 1000
	DefaultMaxPerIP                 = 20
	DefaultMaxSessionsPerUser       = 10
	DefaultMaxHTTPConnections       = 4096
	DefaultMaxHTTPPerIP             = 256
	DefaultMaxChannelsPerConnection = 10
	DefaultMaxBrowsersPerSession    = 16
	DefaultHandshakeTimeout         = 10 * time.Second
	DefaultIdleTimeout              = 30 * time.Minute
	DefaultMaxSessionDuration       = 12 * time.Hour
	DefaultMaxAuthFailures          = 10
	DefaultAuthFailureWindow        = 5 * time.Minute
)

// DefaultDataDir is where the host key lives when [Options.DataDir] is
// empty: DefaultDataDirName under the user's configuration directory.
func DefaultDataDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user configuration directory for the default data directory: %w", err)
	}
	return filepath.Join(dir, DefaultDataDirName), nil
}

// Options configures a [Server]. The zero value serves the demo's
// defaults: SSH on DefaultSSHAddr, HTTP on DefaultHTTPAddr, the host key
// under DefaultDataDir, a dev server on loopback. Every field documents
// what its zero value means.
type Options struct {
	// DataDir holds the host key; empty means DefaultDataDir(). The server
	// writes nothing anywhere else.
	DataDir string
	// Env is EnvDev (the zero value) or EnvProd. A production server needs
	// SSH.AuthorizedKeysFile, and an MCP seam nobody configured falls back
	// to refusing rather than allowing.
	Env string
	// SSH configures the SSH side: the listener, who may log in, and what
	// terminals do.
	SSH SSHOptions
	// MCP configures the agents' side: the HTTP listener of the session
	// endpoints, the tool and read policies, and per-agent limits.
	MCP MCPOptions
	// Headless configures the server-level endpoint /mcp, where agents
	// start sessions with no terminal.
	Headless HeadlessOptions
	// Limits bound what clients can take.
	Limits Limits
	// Cluster makes the server a node of a cluster on NATS; the zero
	// value is a single node.
	Cluster ClusterOptions
	// Snapshots configure saving sessions, for an app with a codec
	// (App.Snapshots).
	Snapshots SnapshotOptions
	// MetricsAddr, when set, is the listen address of /metrics, /healthz
	// and /readyz on their own; then the MCP listener answers 404 for them,
	// so that a port facing the internet exposes no metrics. Empty: they
	// are served on MCP.Addr. An embedder that mounts the handlers itself
	// uses Metrics.Handler, [Server.HealthHandler] and
	// [Server.ReadyHandler].
	MetricsAddr string
	// DrainTimeout bounds how long Shutdown waits for sessions to end
	// before closing them; zero means DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Logger receives the posture line, one line per finished connection
	// and every warning; nil means slog.Default().
	Logger *slog.Logger
	// Metrics receives the server's Prometheus collectors; nil means a
	// fresh metrics.New().
	Metrics *metrics.Metrics
	// Setting names a setting in errors and in the posture line, given
	// the Go path of its field ("Options.SSH.AuthorizedKeysFile"); nil
	// names it by that path. The raxol-ssh command names its flags.
	Setting func(field string) string
}

// SSHOptions configures the SSH listener and the terminals on it.
type SSHOptions struct {
	// Addr is the SSH listen address; empty means DefaultSSHAddr.
	Addr string
	// AuthorizedKeysFile lists the public keys allowed to log in, in
	// OpenSSH authorized_keys format. Required when Env is EnvProd; in dev,
	// when set, it is enforced too. Empty in dev: any client may log in,
	// which is refused on a non-loopback Addr unless AllowAnonymousPublic.
	AuthorizedKeysFile string
	// AllowAnonymousPublic lets a dev server without authorized keys
	// listen on a non-loopback address.
	AllowAnonymousPublic bool
	// ResumeGrace is how long a session lives on, detached, after its
	// owner's last terminal dropped (closed without ctrl+c), for the owner
	// to get it back with `resume <id>` or the picker at their next
	// login. Zero means DefaultResumeGrace; negative ends such a session
	// at once.
	ResumeGrace time.Duration
	// JoinTimeout is how long a join request waits for the owner's answer
	// before it is refused; zero means DefaultJoinTimeout.
	JoinTimeout time.Duration
	// PromptArming is how long an approval or join prompt ignores answer
	// keys after it comes on top, so that keys typed before the human saw
	// it do not answer it; zero means DefaultPromptArming, negative none.
	PromptArming time.Duration
	// ProxyProtocol is for an SSH listener behind a TCP load balancer or
	// proxy (HAProxy, nginx, a cloud load balancer) that sends a PROXY
	// protocol header, v1 or v2. A connection from TrustedProxies must
	// open with one, and its client is the header's source address: the
	// per-address connection cap, the failed-login budget, logs and
	// ui.Identity.RemoteAddr all see that address. A connection from a
	// trusted proxy without a valid header within
	// Limits.HandshakeTimeout is refused. A connection from any other
	// address is a direct client; one that sends a PROXY header anyway
	// is refused, since it claims an address nobody vouches for. It needs
	// TrustedProxies, and applies to the server's own SSH listeners
	// (Start, StartOn, Serve; pass them plain, not already wrapped in a
	// PROXY protocol listener), not to Middleware, whose listener is the
	// caller's. False: no header is read, and one sent fails the
	// handshake.
	ProxyProtocol bool
	// TrustedProxies are the addresses of the proxies whose PROXY headers
	// are believed; required when ProxyProtocol is set, ignored when not.
	// An address that is not in the list cannot claim another.
	TrustedProxies []netip.Prefix
}

// MCPOptions configures the session endpoints agents use
// (/sessions/<id>/mcp and /sessions/<id>/sse) and what agents may do.
type MCPOptions struct {
	// Addr is the HTTP listen address of the MCP endpoints (and of
	// /metrics, /healthz and /readyz unless Options.MetricsAddr is set);
	// empty means DefaultHTTPAddr.
	Addr string
	// PublicURL is the base URL of the HTTP listener as clients reach it,
	// shown in the attach panel. Empty: "http://" + the listen address
	// (the address the SSH client reached, for a listener on every
	// interface). Set it behind NAT or a proxy, and when the endpoints are
	// mounted on a mux of your own ([Server.Handler]).
	PublicURL string
	// LensMode is the focus lens mode: "focused", "hover" or "all"; empty
	// means DefaultLensMode.
	LensMode string
	// MaxTools is how many tools the lens advertises; zero means
	// DefaultMaxTools.
	MaxTools int
	// AllowedTools and AllowedReads are the operator's allowlists of tool
	// names and globs, and of read methods (see package authz). Nil means
	// not given; an empty non-nil list is an explicit empty allowlist.
	AllowedTools []string
	AllowedReads []string
	// PolicyFile is the path of a JSON policy file of ordered allow, ask
	// and deny rules (authz.LoadPolicyFile); empty means none.
	PolicyFile string
	// ToolAuthorizer and ReadAuthorizer are the embedding program's own
	// policies; they count as configured and take precedence over the
	// app's, but not over AllowedTools, AllowedReads or PolicyFile.
	ToolAuthorizer, ReadAuthorizer authz.Func
	// TrustedOrigins are extra origins (scheme://host[:port]) allowed to
	// call the MCP endpoints; AllowedHosts extra Host values accepted on a
	// loopback listener (behind a reverse proxy).
	TrustedOrigins []string
	AllowedHosts   []string
	// ToolCallsPerSecond and ToolCallBurst rate-limit each agent's tool
	// calls; zero means DefaultToolCallsPerSecond and DefaultToolCallBurst.
	ToolCallsPerSecond float64
	ToolCallBurst      int
	// MaxClients caps the agents attached to one session, counted from
	// the moment each starts to open; zero means DefaultMCPMaxClients. At
	// the cap the least recently active agent not at work makes room: one
	// with no stream open and nothing in flight, or one holding a stream
	// that has asked for nothing since its handshake for 2s (a transport
	// probe). Agents at work are never ended to make room.
	MaxClients int
	// BodyTimeout bounds how long a request body may take to arrive once
	// its headers have, on /sessions/… and /mcp (and a cluster's peer
	// endpoints); a slower one is answered 408. Zero means
	// DefaultMCPBodyTimeout.
	BodyTimeout time.Duration
	// MaxBatch caps the messages of one JSON-RPC batch on /sessions/…
	// and /mcp (a larger one gets 400); zero means DefaultMCPMaxBatch.
	MaxBatch int
	// PresenceGrace is how long an agent whose stream went away stays on
	// the human's status bar and in the context resource with no other
	// sign of life; zero means DefaultPresenceGrace.
	PresenceGrace time.Duration
	// ClientIdleTimeout closes an agent's MCP client session after this
	// long without a request from it; zero means DefaultClientIdleTimeout.
	// Nothing else ends a quiet agent's session.
	ClientIdleTimeout time.Duration
	// ApprovalTimeout is how long a call waits for the human's approval
	// before it is denied; zero means DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// TrustedProxies are the addresses of the reverse proxies in front of
	// the HTTP listener whose X-Forwarded-For is believed. For a request
	// whose TCP peer is in the list, the client is the right-most
	// X-Forwarded-For address that is not itself in the list (the one
	// the last trusted proxy saw; addresses further left are the
	// client's own claims); from any other peer X-Forwarded-For is
	// ignored. That client address is what the budget of wrong /mcp API
	// keys counts, what logs show, and what Limits.MaxHTTPPerIP counts
	// for proxied requests (see there). Empty: the TCP peer is the client.
	TrustedProxies []netip.Prefix

	// keepAlive is how often each agent is pinged
	// (mcpbridge.Options.KeepAlive); zero means the bridge's 20s. Only
	// tests shorten it (export_test.go).
	keepAlive time.Duration
}

// HeadlessOptions configures the server-level MCP endpoint /mcp, whose
// tools raxol_start, raxol_list and raxol_stop manage sessions with no
// terminal.
type HeadlessOptions struct {
	// APIKeysFile lists the operator-issued API keys of /mcp, one a line,
	// '#' comments allowed. Empty: /mcp is not served (404).
	APIKeysFile string
	// IdleTimeout ends a session started by raxol_start after this long
	// with nobody attached and no change; zero means
	// DefaultHeadlessIdleTimeout.
	IdleTimeout time.Duration
	// MaxClients caps the MCP clients attached to /mcp at once; zero means
	// DefaultHeadlessMaxClients.
	MaxClients int
}

// Limits bound what clients can take. Each zero field means its Default
// constant.
type Limits struct {
	// MaxConnections caps concurrent SSH connections.
	MaxConnections int
	// MaxPerIP caps concurrent SSH connections from one address.
	MaxPerIP int
	// MaxSessionsPerUser caps live sessions of one owner: one SSH key under
	// any user name (the user name only for a keyless dev login), or one
	// /mcp API key. Detached sessions count until they end.
	MaxSessionsPerUser int
	// MaxHTTPConnections caps the HTTP connections served at once (MCP
	// clients, /metrics, /healthz) on each HTTP listener the server owns;
	// more wait to be accepted.
	MaxHTTPConnections int
	// MaxHTTPPerIP caps the HTTP connections open from one address on a
	// listener the server owns; one more is answered 429 and closed.
	// Connections from MCP.TrustedProxies are not counted (each carries
	// the requests of many clients, and which ones is only known from
	// each request's X-Forwarded-For); instead the requests in flight
	// through them are capped at MaxHTTPPerIP per client address, one
	// more answered 429. Idle connections a proxy keeps open count for
	// no client: MaxHTTPConnections bounds them.
	MaxHTTPPerIP int
	// MaxChannelsPerConnection caps the SSH session channels open at once
	// on one connection (each costs goroutines and buffers even before it
	// asks for a shell).
	MaxChannelsPerConnection int
	// MaxBrowsersPerSession caps the browsers on one session's view at
	// once (their live channels, counted before the owner is asked); one
	// more is answered 429.
	MaxBrowsersPerSession int
	// HandshakeTimeout bounds the SSH handshake and authentication.
	HandshakeTimeout time.Duration
	// IdleTimeout ends a session with no input for this long (output does
	// not count).
	IdleTimeout time.Duration
	// MaxSessionDuration ends any session after this long.
	MaxSessionDuration time.Duration
	// MaxAuthFailures is how many failed SSH logins one address may make
	// in AuthFailureWindow before its SSH connections are refused until it
	// recovers. A public key whose signature does not verify is a failed
	// login; a key query is not. Wrong /mcp API keys spend a separate
	// budget of the same size (over it a wrong key gets 429; a right key
	// always passes).
	MaxAuthFailures   int
	AuthFailureWindow time.Duration
}

func (l Limits) withDefaults() Limits {
	def(&l.MaxConnections, DefaultMaxConnections)
	def(&l.MaxPerIP, DefaultMaxPerIP)
	def(&l.MaxSessionsPerUser, DefaultMaxSessionsPerUser)
	def(&l.MaxChannelsPerConnection, DefaultMaxChannelsPerConnection)
	def(&l.MaxBrowsersPerSession, DefaultMaxBrowsersPerSession)
	def(&l.MaxHTTPConnections, DefaultMaxHTTPConnections)
	def(&l.MaxHTTPPerIP, DefaultMaxHTTPPerIP)
	def(&l.HandshakeTimeout, DefaultHandshakeTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	def(&l.MaxSessionDuration, DefaultMaxSessionDuration)
	def(&l.MaxAuthFailures, DefaultMaxAuthFailures)
	def(&l.AuthFailureWindow, DefaultAuthFailureWindow)
	return l
}

// def sets *v to d when *v is zero or negative.
func def[T int | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// withDefaults fills every zero field with its default. Negative
// durations that mean "none" (ResumeGrace, PromptArming) stay.
func (o Options) withDefaults() (Options, error) {
	if o.SSH.Addr == "" {
		o.SSH.Addr = DefaultSSHAddr
	}
	if o.MCP.Addr == "" {
		o.MCP.Addr = DefaultHTTPAddr
	}
	if o.Env == "" {
		o.Env = DefaultEnv
	}
	if o.DataDir == "" {
		dir, err := DefaultDataDir()
		if err != nil {
			return o, &OptionError{Field: "Options.DataDir", Err: err}
		}
		o.DataDir = dir
	}
	def(&o.DrainTimeout, DefaultDrainTimeout)
	if o.SSH.ResumeGrace == 0 {
		o.SSH.ResumeGrace = DefaultResumeGrace
	}
	def(&o.SSH.JoinTimeout, DefaultJoinTimeout)
	if o.MCP.LensMode == "" {
		o.MCP.LensMode = DefaultLensMode
	}
	def(&o.MCP.ToolCallsPerSecond, DefaultToolCallsPerSecond)
	def(&o.MCP.ToolCallBurst, DefaultToolCallBurst)
	def(&o.MCP.MaxClients, DefaultMCPMaxClients)
	def(&o.MCP.BodyTimeout, DefaultMCPBodyTimeout)
	def(&o.MCP.MaxBatch, DefaultMCPMaxBatch)
	def(&o.MCP.PresenceGrace, DefaultPresenceGrace)
	def(&o.MCP.ClientIdleTimeout, DefaultClientIdleTimeout)
	def(&o.MCP.ApprovalTimeout, DefaultApprovalTimeout)
	def(&o.Snapshots.MaxBytes, DefaultSnapshotMaxBytes)
	def(&o.Snapshots.Every, DefaultSnapshotEvery)
	def(&o.Headless.IdleTimeout, DefaultHeadlessIdleTimeout)
	def(&o.Headless.MaxClients, DefaultHeadlessMaxClients)
	if r := o.Cluster.Replicas; r < 0 || r > cluster.MaxReplicas {
		return o, o.optionError("Options.Cluster.Replicas", fmt.Errorf("%d replicas: between 1 and %d (JetStream's most), or 0 for the default (%d when the NATS cluster has %d or more JetStream servers, else 1)",
			r, cluster.MaxReplicas, cluster.DefaultReplicas, cluster.DefaultReplicas))
	}
	o.Limits = o.Limits.withDefaults()
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = metrics.New()
	}
	if o.Setting == nil {
		o.Setting = func(field string) string { return field }
	}
	return o, nil
}

// lensMode is MCP.LensMode parsed, after MaxTools is checked.
func (o Options) lensMode() (lens.Mode, error) {
	if o.MCP.MaxTools < 0 {
		return "", o.optionError("Options.MCP.MaxTools", fmt.Errorf("%d: must be positive", o.MCP.MaxTools))
	}
	mode, err := lens.ParseMode(o.MCP.LensMode)
	if err != nil {
		return "", o.optionError("Options.MCP.LensMode", err)
	}
	return mode, nil
}

// OptionError is an invalid or missing option. Field is the Go path of
// the field to set ("Options.SSH.AuthorizedKeysFile"); its message names
// the field through Options.Setting, so the raxol-ssh command's errors
// name its flags.
type OptionError struct {
	Field string
	Err   error
	name  string // Field as Options.Setting names it
}

func (e *OptionError) Error() string {
	name := e.name
	if name == "" {
		name = e.Field
	}
	return "server: " + name + ": " + e.Err.Error()
}

func (e *OptionError) Unwrap() error { return e.Err }

// optionError is an OptionError for field, named by o.Setting.
func (o Options) optionError(field string, err error) error {
	return &OptionError{Field: field, Err: err, name: o.setting(field)}
}

func (o Options) setting(field string) string {
	if o.Setting == nil {
		return field
	}
	return o.Setting(field)
}

// resolvePolicy resolves the authorization policy from the app and the
// options, with the same precedence as [New].
func resolvePolicy(app App, opts Options) (authz.Policy, error) {
	tool, read := app.ToolPolicy, app.ReadPolicy
	if opts.MCP.ToolAuthorizer != nil {
		tool = opts.MCP.ToolAuthorizer
	}
	if opts.MCP.ReadAuthorizer != nil {
		read = opts.MCP.ReadAuthorizer
	}
	policy, err := authz.Resolve(authz.Config{
		Env:          opts.Env,
		AllowedTools: opts.MCP.AllowedTools,
		AllowedReads: opts.MCP.AllowedReads,
		PolicyFile:   opts.MCP.PolicyFile,
		Tool:         tool,
		Read:         read,
		Names: authz.Settings{
			AllowedTools: opts.setting("Options.MCP.AllowedTools"),
			AllowedReads: opts.setting("Options.MCP.AllowedReads"),
			PolicyFile:   opts.setting("Options.MCP.PolicyFile"),
			Env:          opts.setting("Options.Env"),
			Tool:         opts.setting("App.ToolPolicy") + ", " + opts.setting("Options.MCP.ToolAuthorizer"),
			Read:         opts.setting("App.ReadPolicy") + ", " + opts.setting("Options.MCP.ReadAuthorizer"),
		},
	})
	if err != nil {
		return authz.Policy{}, fmt.Errorf("server: %w", err)
	}
	return policy, nil
}
