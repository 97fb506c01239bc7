package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	bm "charm.land/wish/v2/bubbletea"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	gossh "golang.org/x/crypto/ssh"
)

// The floor is what a library user would write without raxol-ssh: a bare
// wish v2 server running a small Bubble Tea v2 program per session, and a
// go-sdk MCP server with one echo tool over Streamable HTTP, with the
// process's Prometheus metrics at /metrics and Go's profiler at
// /debug/pprof/ (heap, goroutine, allocs). Measured with the same load in
// the same run, it is what raxol-ssh's costs are compared with.
//
//	go run ./cmd/raxol-load floor --ssh 127.0.0.1:2500 --http 127.0.0.1:8500 &
//	go run ./cmd/raxol-load --ssh 127.0.0.1:2500 --metrics http://127.0.0.1:8500/metrics \
//		--mcp-url http://127.0.0.1:8500/mcp --tool echo --sessions 1000 --agents 100 --closed-loop 20s
func serveFloor(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	sshAddr := fs.String("ssh", "127.0.0.1:2500", "SSH listen address")
	httpAddr := fs.String("http", "127.0.0.1:8500", "HTTP listen address (/mcp, /metrics)")
	model := fs.String("model", "list", "the program each session runs: list (floorModel) or tea (teaFloorModel, as `raxol-load hosted` serves it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		return err
	}
	srv, err := wish.NewServer(
		wish.WithAddress(*sshAddr),
		wish.WithHostKeyPEM(pem.EncodeToMemory(block)),
		wish.WithPublicKeyAuth(func(ssh.Context, ssh.PublicKey) bool { return true }),
		wish.WithMiddleware(bm.Middleware(func(s ssh.Session) (tea.Model, []tea.ProgramOption) {
			if *model == "tea" {
				return newTeaFloorModel(s.User()), nil
			}
			return floorModel{user: s.User()}, nil
		})),
	)
	if err != nil {
		return err
	}
	ms := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(ms, &mcp.Tool{Name: "echo", Description: "Echo the text."}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, nil))
	mux.Handle("GET /metrics", promhttp.Handler())
	// Go's profiler, as raxol-ssh's --pprof-addr serves it: raxol-load's
	// --pprof reads both servers' memory the same way.
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Addr: *httpAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 2)
	go func() { errc <- srv.ListenAndServe() }()
	go func() { errc <- hs.ListenAndServe() }()
	fmt.Fprintf(os.Stderr, "floor serving: ssh %s, http %s\n", *sshAddr, *httpAddr)
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, ssh.ErrServerClosed) && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(srv.Shutdown(sctx), hs.Shutdown(sctx))
}

// floorModel is a small screen a key changes: a list whose highlighted
// row Tab and Shift+Tab move, as the demo's focus does.
type floorModel struct {
	user  string
	focus int
}

var floorItems = []string{"Search", "Services", "Restart", "Notes", "Settings", "Help"}

func (m floorModel) Init() tea.Cmd { return nil }

func (m floorModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "tab":
			m.focus = (m.focus + 1) % len(floorItems)
		case "shift+tab":
			m.focus = (m.focus + len(floorItems) - 1) % len(floorItems)
		case "ctrl+c":
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m floorModel) View() tea.View {
	var b strings.Builder
	fmt.Fprintf(&b, "floor for %s\n\n", m.user)
	for i, it := range floorItems {
		mark := "  "
		if i == m.focus {
			mark = "> "
		}
		b.WriteString(mark + it + "\n")
	}
	return tea.NewView(b.String())
}
