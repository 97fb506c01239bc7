// Package testserve serves an app for end-to-end tests: a real
// server.Server on loopback listeners of its own, shut down when the test
// ends. In: the app and its options (the zero Options serve it as the
// tests of hosted programs and examples do: quick prompt arming, a high
// tool-call rate, data in a temporary directory, logs to the test). Out:
// the started server, whose SSHAddr and HTTPAddr the test dials.
//
// server's own tests keep their harness (package server cannot import
// this one from its internal tests).
package testserve

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// Defaults are the options Start serves with where o leaves them zero.
func Defaults(t testing.TB, o server.Options) server.Options {
	if o.SSH.Addr == "" {
		o.SSH.Addr = "127.0.0.1:0"
	}
	if o.MCP.Addr == "" {
		o.MCP.Addr = "127.0.0.1:0"
	}
	if o.SSH.PromptArming == 0 {
		o.SSH.PromptArming = 50 * time.Millisecond
	}
	if o.MCP.ToolCallsPerSecond == 0 {
		o.MCP.ToolCallsPerSecond, o.MCP.ToolCallBurst = 1000, 1000
	}
	if o.DataDir == "" {
		o.DataDir = t.TempDir()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(testkit.NewLogWriter(t), &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = 5 * time.Second
	}
	return o
}

// Start serves app with o (completed by Defaults) on two loopback
// listeners, and shuts it down when t ends. It is an end-to-end test:
// skipped under -short (testkit.EndToEnd).
func Start(t testing.TB, app server.App, o server.Options) *server.Server {
	t.Helper()
	testkit.EndToEnd(t)
	srv, err := server.New(app, Defaults(t, o))
	if err != nil {
		t.Fatal(err)
	}
	sshLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sshLn.Close()
		t.Fatal(err)
	}
	if err := srv.StartOn(sshLn, httpLn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv
}

// OnlySession waits (up to 15 s) until srv holds exactly one live session
// and returns it.
func OnlySession(t testing.TB, srv *server.Server) *session.Session {
	t.Helper()
	var se *session.Session
	testkit.Eventually(t, waitLong, func() bool {
		l := srv.LiveSessions()
		if len(l) == 1 {
			se = l[0]
		}
		return se != nil
	}, "the session to start")
	return se
}

// Agent connects a go-sdk client named "claude" to se's MCP endpoint on
// srv over Streamable HTTP with the session's token; closed when t ends.
func Agent(t testing.TB, srv *server.Server, se *session.Session) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: testkit.Bearer(http.DefaultTransport, se.Token())}
	tr := &mcp.StreamableClientTransport{Endpoint: "http://" + srv.HTTPAddr() + "/sessions/" + se.ID + "/mcp", HTTPClient: hc}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// waitLong bounds the waits of the helpers above.
const waitLong = 15 * time.Second
