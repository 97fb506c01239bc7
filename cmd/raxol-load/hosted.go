package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/internal/gcpace"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/teaapp"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// `raxol-load hosted` serves teaFloorModel, an ordinary Bubble Tea
// program, with raxol-ssh through teaapp.New; `raxol-load floor --model
// tea` serves the same model with bare wish. The load measures both in
// one run: what hosting an existing program costs.
//
//	go run ./cmd/raxol-load hosted --ssh 127.0.0.1:2600 --http 127.0.0.1:8600 &
//	go run ./cmd/raxol-load --ssh 127.0.0.1:2600 --metrics http://127.0.0.1:8600/metrics \
//		--tool floor.search.type_into --read-tool floor.search.get_value --sessions 300 --agents 30
func serveHosted(args []string) error {
	fs := flag.NewFlagSet("hosted", flag.ContinueOnError)
	sshAddr := fs.String("ssh", "127.0.0.1:2600", "SSH listen address")
	httpAddr := fs.String("http", "127.0.0.1:8600", "HTTP listen address (sessions' MCP, /metrics)")
	dataDir := fs.String("data-dir", "", "data directory (host key); default: a temporary one")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	headroom := fs.Int("gc-headroom-mib", -1, "the GC pacer, as raxol-ssh's --gc-headroom-mib: -1 its default (as the command runs), 0 off (Go's own pacing, what a program's own main gets), or MiB")
	pprofAddr := fs.String("pprof-addr", "", "serve Go's profiler (/debug/pprof/) on this loopback address, as raxol-ssh --pprof-addr does, for the load's --pprof")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	dir := *dataDir
	if dir == "" {
		d, err := os.MkdirTemp("", "raxol-hosted-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if *pprofAddr != "" {
		stop, err := serveProfile(*pprofAddr)
		if err != nil {
			return fmt.Errorf("--pprof-addr: %w", err)
		}
		defer stop()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The process is paced as the raxol-ssh command paces its own
	// (internal/gcpace: collections spaced out under load, a quiet server
	// collected and its memory given back), so that the figures compare
	// with raxol-ssh's own apps'; --gc-headroom-mib 0 measures Go's own
	// pacing instead.
	if *headroom != 0 {
		o := gcpace.Options{}
		if *headroom > 0 {
			o.Headroom = uint64(*headroom) << 20
		}
		pctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			gcpace.Run(pctx, o)
		}()
		defer func() { cancel(); <-done }()
	}
	const many = 30000
	opts := server.Options{
		SSH:     server.SSHOptions{Addr: *sshAddr},
		MCP:     server.MCPOptions{Addr: *httpAddr, ToolCallsPerSecond: 100000, ToolCallBurst: 100000},
		DataDir: dir,
		Limits: server.Limits{MaxConnections: many, MaxPerIP: many, MaxSessionsPerUser: many,
			MaxHTTPConnections: many, MaxHTTPPerIP: 3000},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	app := teaapp.New("floor", func(id ui.Identity) tea.Model { return newTeaFloorModel(id.User) })
	fmt.Fprintf(os.Stderr, "hosted floor serving: ssh %s, http %s, gc pacer headroom %d MiB (-1 the default, 0 off)\n", *sshAddr, *httpAddr, *headroom)
	err := server.ListenAndServe(ctx, app, opts)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// serveProfile serves net/http/pprof on addr (loopback only) until the
// returned function stops it.
func serveProfile(addr string) (stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%q is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	return func() { _ = hs.Close(); <-done }, nil
}

// teaFloorModel is floorModel with a bubbles text input above the list,
// for the agents' typed tools: the program a Bubble Tea author writes,
// unchanged whichever server runs it.
type teaFloorModel struct {
	floor  floorModel
	search textinput.Model
}

func newTeaFloorModel(user string) teaFloorModel {
	ti := textinput.New()
	ti.Prompt = "search: "
	ti.SetWidth(30)
	return teaFloorModel{floor: floorModel{user: user}, search: ti}
}

func (m teaFloorModel) Init() tea.Cmd { return nil }

func (m teaFloorModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	f, cmd := m.floor.Update(msg)
	m.floor = f.(floorModel)
	var icmd tea.Cmd
	m.search, icmd = m.search.Update(msg)
	return m, tea.Batch(cmd, icmd)
}

func (m teaFloorModel) View() tea.View {
	var b strings.Builder
	b.WriteString(m.search.View() + "\n")
	b.WriteString(m.floor.View().Content)
	return tea.NewView(b.String())
}
