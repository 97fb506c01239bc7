package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// StdioSession describes the session [ServeStdio] serves.
type StdioSession struct {
	// ID is the session id.
	ID string
	// SSHAddr and HTTPAddr are the listeners' addresses, JoinCommand what
	// a human runs to join the session, and JoinCode the one-time code
	// that approves that join; all empty unless SSH is served too.
	SSHAddr, HTTPAddr     string
	JoinCommand, JoinCode string
}

// stdioOwner owns the stdio session: the local process. No SSH login is
// ever taken for it.
var stdioOwner = session.Owner{User: "stdio", KeyFingerprint: "local-process"}

// ServeStdio runs app headless in one session whose MCP server speaks
// over t (mcp.StdioTransport in a command) until the client disconnects
// (nil) or ctx is done, then ends the session. Policies see the client as
// transport "stdio", conn_id "default".
//
// Without withSSH nothing listens on the network, so the network boot gate
// (authz.Policy.CheckNetworkBoot) does not apply: a stdio client inherits
// the process boundary. Every other rule binds: the policy is resolved
// from the same options as [New] resolves it, and sensitive tools need a
// tool authorizer (CheckSensitiveBoot). With withSSH the server also
// serves SSH and HTTP exactly as [New] and [Server.Start] do (all their
// checks included), and a human joins the session with the join command,
// approved by the one-time join code. started, if not nil, is called once
// the session is served.
func ServeStdio(ctx context.Context, app App, opts Options, t mcp.Transport, withSSH bool, started func(StdioSession)) error {
	if started == nil {
		started = func(StdioSession) {}
	}
	if withSSH {
		return serveStdioWithSSH(ctx, app, opts, t, started)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	if err := checkApp(app); err != nil {
		return err
	}
	policy, err := resolvePolicy(app, opts)
	if err != nil {
		return err
	}
	mode, err := opts.lensMode()
	if err != nil {
		return err
	}
	var bridge *mcpbridge.Bridge
	panics := guard.New(opts.Logger, nil)
	mgr := session.NewManager(&session.Options{
		OnEnd:      func(se *session.Session) { bridge.SessionEnded(se.ID) },
		Dispatcher: &dispatcher.Options{Logger: opts.Logger},
		Panics:     panics,
	})
	bridge, err = mcpbridge.New(mgr, mcpbridge.Options{
		TransportOnly:      true, // no network: only the sensitive-tool gate applies
		Namespace:          app.Name,
		Projections:        app.Projections,
		Logger:             opts.Logger,
		LensMode:           mode,
		MaxTools:           opts.MCP.MaxTools,
		Metrics:            opts.Metrics,
		Policy:             policy,
		ToolCallsPerSecond: opts.MCP.ToolCallsPerSecond,
		ToolCallBurst:      opts.MCP.ToolCallBurst,
		ApprovalTimeout:    opts.MCP.ApprovalTimeout,
	})
	if err != nil {
		mgr.Close()
		return fmt.Errorf("server: %w", err)
	}
	defer func() {
		bridge.Close()
		mgr.Close()
	}()
	se, _, err := mgr.StartFunc(app.Name, stdioOwner, func(id string) (ui.Model, error) {
		return newModel(panics, app, ui.Identity{SessionID: id, User: stdioOwner.User, KeyFingerprint: stdioOwner.KeyFingerprint, Headless: true})
	}, 0)
	if err != nil {
		return fmt.Errorf("server: start session: %w", err)
	}
	opts.Logger.Info("raxol-ssh serving MCP over stdio",
		"app", app.Name, "env", opts.Env, "session", se.ID,
		"network", "none (stdio only; serve SSH too to let a human join)",
		"mcp_policy", policy.Describe)
	started(StdioSession{ID: se.ID})
	err = bridge.ServeTransport(ctx, se.ID, t, authz.TransportStdio)
	mgr.End(se.ID)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

func serveStdioWithSSH(ctx context.Context, app App, opts Options, t mcp.Transport, started func(StdioSession)) error {
	// The session belongs to the process that spawned this one and ends
	// with it: nothing is saved (nor is a running server's store, which
	// may share the data directory, opened).
	opts.Snapshots.Disabled = true
	srv, err := New(app, opts)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	se, end, err := srv.StartHeadless(stdioOwner)
	if err != nil {
		return errors.Join(err, srv.Shutdown(context.Background()))
	}
	code, err := srv.issueCode(se.ID)
	if err != nil {
		end()
		return errors.Join(err, srv.Shutdown(context.Background()))
	}
	srv.log.Info("raxol-ssh serving MCP over stdio", "session", se.ID, "join", srv.joinCommand(se.ID))
	started(StdioSession{ID: se.ID, SSHAddr: srv.SSHAddr(), HTTPAddr: srv.HTTPAddr(), JoinCommand: srv.joinCommand(se.ID), JoinCode: code})
	err = srv.bridge.ServeTransport(ctx, se.ID, t, authz.TransportStdio)
	end()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return errors.Join(err, srv.Shutdown(context.Background()))
}
