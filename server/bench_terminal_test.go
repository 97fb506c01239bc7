package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// BenchmarkWriteCallOnScreen is BenchmarkWriteCall with what the load
// tool's closed loop has and the in-process benchmark lacks: every session
// has its owner's terminal open (a real SSH client with an 80x24 PTY,
// reading everything the server draws), so each call's change is drawn
// and sent. The calls go round-robin over the terminals' agents, so that
// each terminal gets a call less often than once per frame interval and
// every call is drawn, as under the load tool (~10 calls/s per session).
//
//	go test ./server -run '^$' -bench WriteCallOnScreen -benchmem
func BenchmarkWriteCallOnScreen(b *testing.B) {
	const terminals = 24
	srv := startApp(b, demoApp(), server.Options{Logger: slog.New(slog.DiscardHandler),
		Limits: server.Limits{MaxSessionsPerUser: terminals, MaxPerIP: 2 * terminals},
		MCP:    server.MCPOptions{ToolCallsPerSecond: 1e9, ToolCallBurst: 1e9}})
	key := newKey(b)
	var agents []*mcp.ClientSession
	seen := map[string]bool{}
	for i := range terminals {
		conn, err := dialSSH(b, srv.SSHAddr(), clientOpts{user: "bench", key: key})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = conn.Close() })
		s, err := conn.NewSession()
		if err != nil {
			b.Fatal(err)
		}
		if err := s.RequestPty("xterm-256color", 24, 80, gossh.TerminalModes{}); err != nil {
			b.Fatal(err)
		}
		out, err := s.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		// Held open: a closed stdin is an EOF, which ends the session.
		in, err := s.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = in.Close() })
		if err := s.Shell(); err != nil {
			b.Fatal(err)
		}
		go func() { _, _ = io.Copy(io.Discard, out) }()
		var se *session.Session
		testkit.Eventually(b, waitShort, func() bool {
			list := srv.Sessions().List()
			if len(list) == i+1 {
				for _, x := range list {
					if !seen[x.ID] {
						se = x
					}
				}
			}
			return se != nil
		}, "session %d did not start", i)
		hc := &http.Client{Transport: testkit.Bearer(nil, se.Token())}
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: "http://" + srv.HTTPAddr() + "/sessions/" + se.ID + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		seen[se.ID] = true
		agents = append(agents, cs)
	}
	callLoop(b, "demo.search.type_into", agents...)
}
