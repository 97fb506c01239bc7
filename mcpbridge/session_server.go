package mcpbridge

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// sessionServer is one session's MCP server and the state it projects.
// In order:
//
//   - newSessionServer, on the session's first authenticated request
//     ([Bridge] keeps one per session): the SDK server with its
//     middlewares, its transports, and the watcher's first turn, a sync;
//   - the watcher re-projects the session on every change of its model
//     or terminal-side state (tools, lens, resource updates: watch.go),
//     in turns on a goroutine that runs only while changes come
//     (wake.go);
//   - each request passes the middlewares in the order newSessionServer
//     lists; a tools/call ends in callDerived or a session tool (calls.go,
//     session_tools.go);
//   - close, when the session ends or the Bridge closes: ends every
//     client and joins the watcher and the presence waiters.
type sessionServer struct {
	// Fixed at creation.
	b          *Bridge
	sess       *session.Session
	log        *slog.Logger
	server     *mcp.Server
	streamable *mcp.StreamableHTTPHandler
	sse        *mcp.SSEHandler
	ctx        context.Context
	cancel     context.CancelFunc
	gate       *Gate          // the authorization middleware
	slots      *slots         // the session's clients, held against MaxClients
	res        *resources     // the session's resources and their subscribers
	wg         sync.WaitGroup // the watcher's running turn and each client's goroutines

	// Safe for concurrent use on their own.
	scans    atomic.Pointer[scanned] // the latest snapshot's tree scanned (scannedAt)
	clients  sync.Map                // *mcp.ServerSession -> *client: attached clients
	requests sync.Map                // requestHeader tag -> the POST's context, while it is served
	attachMu sync.Mutex              // serializes attach
	waits    waitSlots               // raxol_wait_for and raxol_show calls waiting, per client (waitfor.go)
	view     viewCache               // the view raxol_show answers with, and its version (mcpapp.go)
	wakes    wakeups                 // what starts the watcher's turns (wake.go)

	// The watcher's own (sync only: newSessionServer, then the watcher;
	// watch.go).
	token   [sha256.Size]byte // hash of the token HTTP clients authenticated with
	derived derivation        // the tools of the last snapshot synced
	memo    lensMemo          // what the last lens selection was made from
	want    map[string]bool   // scratch: the widget tools to register

	mu         sync.Mutex // protects the following
	advertised []string   // lens-selected names, session tools included
	synced     uint64     // snapshot version the registered tools come from
	registered map[string]bool
	warned     map[string]bool
	// selected is the lens's last selection, in its order, and
	// selectedFocus the widget focused then: how tools/list orders and
	// marks the registered tools (order). The ranks are worked out when a
	// client lists, not at every focus move.
	selected      []lens.Tool
	selectedFocus string
}

func newSessionServer(b *Bridge, se *session.Session) *sessionServer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &sessionServer{
		b:          b,
		sess:       se,
		log:        b.log.With("session", se.ID),
		ctx:        ctx,
		cancel:     cancel,
		registered: map[string]bool{},
		warned:     map[string]bool{},
		token:      se.TokenHash(),
		slots:      newSlots(b.opts.MaxClients, b.probeIdle),
	}
	logger := quiet(c.log)
	c.server = mcp.NewServer(implementation(b.opts.Version), &mcp.ServerOptions{
		Instructions:              instructions,
		Logger:                    logger,
		Capabilities:              serverCapabilities(),
		InitializedHandler:        c.initialized,
		SubscribeHandler:          c.subscribe,
		UnsubscribeHandler:        c.unsubscribe,
		SupportedProtocolVersions: sessionProtocolVersions(),
	})
	// In order: count and rate-limit every call, authorize (and filter
	// tools/list per entry), hold tool answers to the read policy
	// (readpolicy.go), put tools/list in the lens's order with the
	// focused widget's tools marked, then serve derived tools.
	c.gate = &Gate{Policy: b.opts.Policy, Metrics: b.opts.Metrics, Context: c.clientContext, Call: c.authorizeCall, Listable: c.listable}
	c.server.AddReceivingMiddleware(c.meter, c.gate.Receiving, c.withhold, c.order, c.middleware)
	c.server.AddSendingMiddleware(c.gate.Sending, c.withholdUpdates)
	c.addSessionTools()
	c.res = newResources(c)
	c.res.register()
	c.addAppView()
	c.streamable = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return c.server }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      b.opts.ClientIdleTimeout,
		MaxRequestBodyBytes: b.opts.MaxBodyBytes,
		Logger:              logger,
		// The Bridge checks Host (HostAllowed, with the operator's
		// allowed hosts) before every request reaches this handler.
		DisableLocalhostProtection: true,
	})
	c.sse = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return c.server }, &mcp.SSEOptions{
		MaxRequestBodyBytes:        b.opts.MaxBodyBytes,
		DisableLocalhostProtection: true, // as above
	})
	// The watcher: a first sync now, then one on every change, by a
	// goroutine that runs only while changes come (wake.go).
	c.startWatching()
	return c
}

// instructions are a session server's instructions to agents.
const instructions = "This server drives a live terminal app that a human is using at the same time. " +
	"Tools are derived from the app's widgets (<app>.<widget>.<action>) and follow the human's focus; " +
	"discover_tools finds the others, which can be called too. Resources hold the app state; subscribe to receive JSON Patch updates."

// What every session's server is made with besides its handlers, the
// same for every session: built once per process and shared, read only.
// NewServer copies the options; the SDK clones the capabilities before it
// adds to them (Server.capabilities) and only reads the protocol versions
// and the implementation.
var (
	// serverCapabilities: tools and resources announced before any is
	// registered (the SDK would work them out at initialize from what
	// exists then), and MCP Apps (mcpapp.go).
	serverCapabilities = sync.OnceValue(func() *mcp.ServerCapabilities {
		return &mcp.ServerCapabilities{
			Tools:      &mcp.ToolCapabilities{ListChanged: true},
			Resources:  &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Extensions: appsExtension(),
		}
	})
	sessionProtocolVersions = sync.OnceValue(handshakeVersions)
	implementations         sync.Map // version -> *mcp.Implementation
)

// implementation is a session server's implementation, for the bridge's
// version.
func implementation(version string) *mcp.Implementation {
	if v, ok := implementations.Load(version); ok {
		return v.(*mcp.Implementation)
	}
	v, _ := implementations.LoadOrStore(version, &mcp.Implementation{Name: "raxol-ssh", Title: "raxol-ssh session", Version: version})
	return v.(*mcp.Implementation)
}

// statelessProtocol is the first protocol version without initialize
// (SEP-2575).
const statelessProtocol = "2026-07-28"

// handshakeVersions are the protocol versions a session's server speaks:
// those with initialize, up to 2025-11-25. Presence, subscriptions and
// approvals are built on an initialized, long-lived client session, and a
// client must get the same server whichever transport it uses. Narrowing the
// server (not only a transport) matters: the SDK's SSE handler can answer a
// client's server/discover before it has narrowed the versions to what SSE
// serves, and a client that got 2026-07-28 then never sends initialize.
func handshakeVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < statelessProtocol {
			out = append(out, v)
		}
	}
	return out
}

// close ends every client session and waits for the server's goroutines;
// the watcher takes no turn after it.
func (c *sessionServer) close() {
	c.stopWatching()
	c.cancel()
	for ss := range c.server.Sessions() {
		c.closeClient(ss)
	}
	c.wg.Wait()
}

// quiet passes on only warnings and errors: the SDK logs every connection
// at info level, which at scale is noise.
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{l.Handler(), slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(a), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }
