package metrics

import (
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Outcomes of an ended SSH connection, the values of the "outcome" label of
// raxol_ssh_connections_total.
const (
	OutcomeOK          = "ok"           // session ran and ended normally
	OutcomeError       = "error"        // session ended with an error
	OutcomeNoPTY       = "no_pty"       // client asked for no terminal
	OutcomeAuthFailed  = "auth_failed"  // handshake failed authentication
	OutcomeRejected    = "rejected"     // refused by a connection limit
	OutcomeIdleTimeout = "idle_timeout" // closed after the idle timeout
	OutcomeMaxDuration = "max_duration" // closed at the maximum session time
	OutcomeShutdown    = "shutdown"     // closed by server shutdown
	OutcomeOther       = "other"        // anything not listed above
)

// Limits that can reject a connection, the values of the "limit" label of
// raxol_ssh_limit_rejections_total.
const (
	LimitMaxConnections     = "max_connections"         // server-wide connection cap
	LimitMaxPerIP           = "max_per_ip"              // connections from one address
	LimitMaxSessionsPerUser = "max_sessions_per_user"   // sessions of one user
	LimitAuthFailures       = "auth_failures"           // too many failed logins from one address
	LimitSessionsPerConn    = "sessions_per_connection" // session channels open on one connection
	LimitOther              = "other"                   // anything not listed above
)

var (
	outcomes = []string{
		OutcomeOK, OutcomeError, OutcomeNoPTY, OutcomeAuthFailed, OutcomeRejected,
		OutcomeIdleTimeout, OutcomeMaxDuration, OutcomeShutdown, OutcomeOther,
	}
	limits = []string{LimitMaxConnections, LimitMaxPerIP, LimitMaxSessionsPerUser, LimitAuthFailures, LimitSessionsPerConn, LimitOther}
)

// Outcomes returns every value of the "outcome" label, in a new slice.
func Outcomes() []string { return slices.Clone(outcomes) }

// Limits returns every value of the "limit" label, in a new slice.
func Limits() []string { return slices.Clone(limits) }

// foldBuckets are the classic histogram buckets of
// raxol_dispatcher_fold_duration_seconds, 1µs to 1s in 1-2.5-5 steps.
// Native-histogram buckets are kept alongside them.
var foldBuckets = []float64{
	1e-6, 2.5e-6, 5e-6,
	1e-5, 2.5e-5, 5e-5,
	1e-4, 2.5e-4, 5e-4,
	1e-3, 2.5e-3, 5e-3,
	1e-2, 2.5e-2, 5e-2,
	0.1, 0.25, 0.5, 1,
}

// Metrics is the set of metrics of one process, registered in its own
// Registry. Create it with [New]. All fields are fixed at creation and safe
// for concurrent use. Through a nil *Metrics only the methods may be used.
type Metrics struct {
	// Registry holds every metric below plus the Go and process collectors.
	Registry *prometheus.Registry

	// SessionsOpen is raxol_sessions_open: live sessions, started,
	// restored at start or adopted from another node alike. The server
	// moves it only where its session registry adds and removes one
	// (session.Options.Count), so it equals the sessions listed.
	SessionsOpen prometheus.Gauge
	// TerminalsOpen is raxol_terminals_open: SSH terminals attached to
	// this node's sessions (a terminal bridged from another node counts
	// on the session's home only). The server moves it only where a
	// session's terminals are added and removed (its lifecycle).
	TerminalsOpen prometheus.Gauge
	// Connections is raxol_ssh_connections_total{outcome}: ended SSH
	// connections by outcome. Use [Metrics.Connection] to keep the label
	// within [Outcomes].
	Connections *prometheus.CounterVec
	// AuthFailures is raxol_ssh_auth_failures_total: failed authentications.
	AuthFailures prometheus.Counter
	// LimitRejections is raxol_ssh_limit_rejections_total{limit}: connections
	// refused by a limit. Use [Metrics.LimitRejected] to keep the label
	// within [Limits].
	LimitRejections *prometheus.CounterVec
	// FoldDuration is raxol_dispatcher_fold_duration_seconds: time the
	// dispatcher spends folding one input into the model. Classic buckets
	// run from 1µs to 1s in 1-2.5-5 steps; native-histogram buckets (factor
	// 1.1, at most 100, reset at most hourly) travel in the protobuf format.
	FoldDuration prometheus.Histogram
	// UpdateFailures is raxol_dispatcher_update_failures_total: model Update
	// calls that failed (returned an error or panicked).
	UpdateFailures prometheus.Counter
	// ViewFailures is raxol_dispatcher_view_failures_total: model View calls
	// that failed.
	ViewFailures prometheus.Counter
	// FramesWritten is raxol_terminal_frames_total: writes of rendered output
	// to terminals.
	FramesWritten prometheus.Counter
	// BytesWritten is raxol_terminal_bytes_written_total: bytes of rendered
	// output written to terminals.
	BytesWritten prometheus.Counter
	// MCPToolCalls is raxol_mcp_tool_calls_total{outcome}: MCP tools/call
	// requests by outcome, one of [ToolOutcomes].
	MCPToolCalls *prometheus.CounterVec
	// MCPToolCallDuration is raxol_mcp_tool_call_duration_seconds: time to
	// answer one tools/call, fold included.
	MCPToolCallDuration prometheus.Histogram
	// MCPClients is raxol_mcp_clients: connected MCP client sessions,
	// counted on the node whose bridge serves them (the session's home;
	// a node passing a request on to the home does not count it), up
	// when one is attached and down when its stream ends.
	MCPClients prometheus.Gauge
	// MCPRejections is raxol_mcp_rejections_total{reason}: MCP requests
	// refused before reaching a session, by reason ([MCPRejectReasons]).
	MCPRejections *prometheus.CounterVec
	// AuthzDecisions is raxol_authz_decisions_total{seam,decision}:
	// authorization decisions, seam "tool", "read" or "method" (a method
	// no seam classifies, always refused), decision "allow", "ask",
	// "deny", "approved", "refused", "withdrawn" (the request went away
	// before the human answered), "timeout" or "error".
	AuthzDecisions *prometheus.CounterVec
	// AppPanics is raxol_app_panics_total{hook}: panics of app code (a
	// widget's Tools, CallTool, State, HandleEvent, Render, Children or
	// WidgetID, the model's Init, Update or View, a command, a projection,
	// the app factory) that were contained, by hook ([AppHooks]).
	AppPanics *prometheus.CounterVec
	// SnapshotsSaved is raxol_snapshots_saved_total: session snapshots
	// written to the store.
	SnapshotsSaved prometheus.Counter
	// SnapshotBytes is raxol_snapshot_bytes_total: bytes of the snapshots
	// written (what saving costs the store).
	SnapshotBytes prometheus.Counter
	// SnapshotFailures is raxol_snapshot_failures_total{reason}: snapshots
	// not saved or not restored, by reason ([SnapshotFailureReasons]).
	SnapshotFailures *prometheus.CounterVec
	// SessionsRestored is raxol_sessions_restored_total{reason}: sessions
	// brought back from snapshots, reason "restart" (this node's own, at
	// start) or "adopted" (a lost node's, in a cluster).
	SessionsRestored *prometheus.CounterVec
}

var snapshotFailureReasons = []string{"too_large", "encode", "store", "decode", "expired"}

// SnapshotFailureReasons returns the reason label values of SnapshotFailures.
func SnapshotFailureReasons() []string { return slices.Clone(snapshotFailureReasons) }

// Hooks of app code, the values of the "hook" label of
// raxol_app_panics_total.
const (
	HookTools       = "tools"
	HookCallTool    = "call_tool"
	HookState       = "state"
	HookHandleEvent = "handle_event"
	HookRender      = "render"
	HookChildren    = "children"
	HookWidgetID    = "widget_id"
	HookInit        = "init"
	HookUpdate      = "update"
	HookView        = "view"
	HookCmd         = "cmd"
	HookProjection  = "projection"
	HookFactory     = "factory"
	HookOther       = "other" // Shown, Focusable, MCPExcluded, a resolver, anything not listed
)

var appHooks = []string{
	HookTools, HookCallTool, HookState, HookHandleEvent, HookRender, HookChildren, HookWidgetID,
	HookInit, HookUpdate, HookView, HookCmd, HookProjection, HookFactory, HookOther,
}

// AppHooks returns every value of the "hook" label, in a new slice.
func AppHooks() []string { return slices.Clone(appHooks) }

var mcpRejectReasons = []string{"unauthorized", "origin", "host", "body_too_large", "body_timeout", "batch_too_large", "too_many_clients", "rate_limited", "too_many_connections", "forged_peer", OutcomeOther}

// MCPRejectReasons returns the reason label values of MCPRejections.
func MCPRejectReasons() []string { return slices.Clone(mcpRejectReasons) }

var (
	authzSeams     = []string{"tool", "read", "method"}
	authzDecisions = []string{"allow", "ask", "deny", "approved", "refused", "withdrawn", "timeout", "error"}
)

// Outcomes of MCP tool calls: "ok", or the error kind of the result.
var toolOutcomes = []string{
	"ok", "unknown_tool", "widget_gone", "invalid_arguments", "tool_error",
	"update_failed", "timeout", "session_ended", "no_terminal", "denied",
	"authorization_required", "rate_limited", "paused", "not_focused", "shadowed", "provider_failed", "internal", OutcomeOther,
}

// ToolOutcomes returns the outcome label values of MCPToolCalls.
func ToolOutcomes() []string { return slices.Clone(toolOutcomes) }

// New returns a Metrics with a fresh Registry holding all of its metrics,
// with every labelled series initialized to zero, and the Go runtime and
// process collectors. Each call is independent of the others.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		SessionsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "raxol", Name: "sessions_open",
			Help: "Live sessions.",
		}),
		TerminalsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "raxol", Name: "terminals_open",
			Help: "SSH terminals attached to this node's sessions.",
		}),
		Connections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "ssh", Name: "connections_total",
			Help: "Ended SSH connections by outcome.",
		}, []string{"outcome"}),
		AuthFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "ssh", Name: "auth_failures_total",
			Help: "Failed SSH authentications.",
		}),
		LimitRejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "ssh", Name: "limit_rejections_total",
			Help: "SSH connections or sessions refused by a limit, by limit.",
		}, []string{"limit"}),
		FoldDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "raxol", Subsystem: "dispatcher", Name: "fold_duration_seconds",
			Help:                            "Time to fold one input into a session's model.",
			Buckets:                         foldBuckets,
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  100,
			NativeHistogramMinResetDuration: time.Hour,
		}),
		UpdateFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "dispatcher", Name: "update_failures_total",
			Help: "Model Update calls that failed.",
		}),
		ViewFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "dispatcher", Name: "view_failures_total",
			Help: "Model View calls that failed.",
		}),
		FramesWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "terminal", Name: "frames_total",
			Help: "Writes of rendered output to terminals.",
		}),
		BytesWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "terminal", Name: "bytes_written_total",
			Help: "Bytes of rendered output written to terminals.",
		}),
		MCPToolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "mcp", Name: "tool_calls_total",
			Help: "MCP tools/call requests by outcome.",
		}, []string{"outcome"}),
		MCPToolCallDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "raxol", Subsystem: "mcp", Name: "tool_call_duration_seconds",
			Help:                            "Time to answer one MCP tools/call, fold included.",
			Buckets:                         foldBuckets,
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  100,
			NativeHistogramMinResetDuration: time.Hour,
		}),
		MCPClients: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "raxol", Subsystem: "mcp", Name: "clients",
			Help: "Connected MCP client sessions.",
		}),
		MCPRejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "mcp", Name: "rejections_total",
			Help: "MCP requests refused before reaching a session, by reason.",
		}, []string{"reason"}),
		AuthzDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "authz", Name: "decisions_total",
			Help: "Authorization decisions by seam and decision.",
		}, []string{"seam", "decision"}),
		AppPanics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "raxol", Subsystem: "app", Name: "panics_total",
			Help: "Panics of app code that were contained, by hook.",
		}, []string{"hook"}),
		SnapshotsSaved: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "raxol", Name: "snapshots_saved_total",
			Help: "Session snapshots written to the store.",
		}),
		SnapshotBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "raxol", Name: "snapshot_bytes_total",
			Help: "Bytes of session snapshots written to the store.",
		}),
		SnapshotFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "raxol", Name: "snapshot_failures_total",
			Help: "Session snapshots not saved or not restored, by reason.",
		}, []string{"reason"}),
		SessionsRestored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "raxol", Name: "sessions_restored_total",
			Help: "Sessions brought back from snapshots: at start (restart) or from a lost node (adopted).",
		}, []string{"reason"}),
	}
	for _, r := range snapshotFailureReasons {
		m.SnapshotFailures.WithLabelValues(r)
	}
	m.SessionsRestored.WithLabelValues("restart")
	m.SessionsRestored.WithLabelValues("adopted")
	for _, h := range appHooks {
		m.AppPanics.WithLabelValues(h)
	}
	for _, r := range mcpRejectReasons {
		m.MCPRejections.WithLabelValues(r)
	}
	for _, seam := range authzSeams {
		for _, d := range authzDecisions {
			m.AuthzDecisions.WithLabelValues(seam, d)
		}
	}
	for _, o := range toolOutcomes {
		m.MCPToolCalls.WithLabelValues(o)
	}
	for _, o := range outcomes {
		m.Connections.WithLabelValues(o)
	}
	for _, l := range limits {
		m.LimitRejections.WithLabelValues(l)
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.SessionsOpen, m.TerminalsOpen, m.Connections, m.AuthFailures, m.LimitRejections,
		m.FoldDuration, m.UpdateFailures, m.ViewFailures,
		m.FramesWritten, m.BytesWritten,
		m.MCPToolCalls, m.MCPToolCallDuration, m.MCPClients,
		m.MCPRejections, m.AuthzDecisions, m.AppPanics,
		m.SnapshotsSaved, m.SnapshotBytes, m.SnapshotFailures, m.SessionsRestored,
	)
	return m
}

// Handler returns the /metrics handler for m's Registry, serving the
// Prometheus text format and, when asked, OpenMetrics. On a nil *Metrics it
// returns a handler that answers 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{
		Registry:          m.Registry,
		EnableOpenMetrics: true,
	})
}

// Connection counts one ended SSH connection under outcome, one of
// [Outcomes]; any other value is counted as [OutcomeOther].
func (m *Metrics) Connection(outcome string) {
	if m == nil {
		return
	}
	if !slices.Contains(outcomes, outcome) {
		outcome = OutcomeOther
	}
	m.Connections.WithLabelValues(outcome).Inc()
}

// LimitRejected counts one connection or session refused by limit, one of
// [Limits]; any other value is counted as [LimitOther].
func (m *Metrics) LimitRejected(limit string) {
	if m == nil {
		return
	}
	if !slices.Contains(limits, limit) {
		limit = LimitOther
	}
	m.LimitRejections.WithLabelValues(limit).Inc()
}

// SessionOpened increments SessionsOpen. Pair it with [Metrics.SessionClosed].
func (m *Metrics) SessionOpened() {
	if m != nil {
		m.SessionsOpen.Inc()
	}
}

// SessionClosed decrements SessionsOpen.
func (m *Metrics) SessionClosed() {
	if m != nil {
		m.SessionsOpen.Dec()
	}
}

// TerminalsAdd adds delta (+1 as a terminal is attached, -1 as it
// leaves) to TerminalsOpen.
func (m *Metrics) TerminalsAdd(delta int) {
	if m != nil {
		m.TerminalsOpen.Add(float64(delta))
	}
}

// AuthFailed counts one failed SSH authentication.
func (m *Metrics) AuthFailed() {
	if m != nil {
		m.AuthFailures.Inc()
	}
}

// ObserveFold records how long one dispatcher fold took.
func (m *Metrics) ObserveFold(d time.Duration) {
	if m != nil {
		m.FoldDuration.Observe(d.Seconds())
	}
}

// UpdateFailed counts one failed model Update.
func (m *Metrics) UpdateFailed() {
	if m != nil {
		m.UpdateFailures.Inc()
	}
}

// ViewFailed counts one failed model View.
func (m *Metrics) ViewFailed() {
	if m != nil {
		m.ViewFailures.Inc()
	}
}

// CountingWriter wraps w so that each Write that writes at least one byte
// counts as one frame in FramesWritten and adds the bytes written to
// BytesWritten. Data, byte counts and errors pass through unchanged. The
// counting is safe for concurrent use; concurrent Writes are otherwise only
// as safe as w. On a nil *Metrics it returns w itself.
func (m *Metrics) CountingWriter(w io.Writer) io.Writer {
	if m == nil {
		return w
	}
	return &countingWriter{w: w, frames: m.FramesWritten, bytes: m.BytesWritten}
}

// countingWriter is the writer returned by [Metrics.CountingWriter].
type countingWriter struct {
	w      io.Writer
	frames prometheus.Counter
	bytes  prometheus.Counter
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if n > 0 {
		c.frames.Inc()
		c.bytes.Add(float64(n))
	}
	return n, err
}

// ToolCall counts one MCP tool call under outcome, one of [ToolOutcomes]
// (any other value counts as "other"), and observes its duration.
func (m *Metrics) ToolCall(outcome string, d time.Duration) {
	if m == nil {
		return
	}
	if !slices.Contains(toolOutcomes, outcome) {
		outcome = OutcomeOther
	}
	m.MCPToolCalls.WithLabelValues(outcome).Inc()
	m.MCPToolCallDuration.Observe(d.Seconds())
}

// MCPClient adds delta (+1 or -1) to the connected MCP clients.
func (m *Metrics) MCPClient(delta int) {
	if m == nil {
		return
	}
	m.MCPClients.Add(float64(delta))
}

// MCPRejected counts one refused MCP request; an unknown reason counts as
// "other".
func (m *Metrics) MCPRejected(reason string) {
	if m == nil {
		return
	}
	if !slices.Contains(mcpRejectReasons, reason) {
		reason = OutcomeOther
	}
	m.MCPRejections.WithLabelValues(reason).Inc()
}

// Authz counts one authorization decision; unknown values count as
// "other" decisions of the "tool" seam.
func (m *Metrics) Authz(seam, decision string) {
	if m == nil {
		return
	}
	if !slices.Contains(authzSeams, seam) {
		seam = "tool"
	}
	if !slices.Contains(authzDecisions, decision) {
		decision = "error"
	}
	m.AuthzDecisions.WithLabelValues(seam, decision).Inc()
}

// AppPanic counts one contained panic of app code in hook, one of
// [AppHooks] (any other value counts as "other").
func (m *Metrics) AppPanic(hook string) {
	if m == nil {
		return
	}
	if !slices.Contains(appHooks, hook) {
		hook = HookOther
	}
	m.AppPanics.WithLabelValues(hook).Inc()
}
