package teaapp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// benchProgram is a small program of the kind people bring: a text input
// above a list whose highlight Tab moves (cmd/raxol-load's teaFloorModel).
type benchProgram struct {
	search textinput.Model
	focus  int
}

var benchItems = []string{"Search", "Services", "Restart", "Notes", "Settings", "Help"}

func (m benchProgram) Init() tea.Cmd { return nil }
func (m benchProgram) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "tab" {
		m.focus = (m.focus + 1) % len(benchItems)
	}
	var cmd tea.Cmd
	m.search, cmd = m.search.Update(msg)
	return m, cmd
}
func (m benchProgram) View() tea.View {
	var b strings.Builder
	b.WriteString(m.search.View() + "\n\n")
	for i, it := range benchItems {
		mark := "  "
		if i == m.focus {
			mark = "> "
		}
		fmt.Fprintf(&b, "%s\x1b[1m%s\x1b[0m\n", mark, it)
	}
	return tea.NewView(b.String())
}

// BenchmarkHostedKey is one key a human presses in a hosted program: the
// fold, the program's Update and View, and the host's screen and
// components (what a keystroke costs the session beyond the program).
func BenchmarkHostedKey(b *testing.B) {
	ti := textinput.New()
	ti.Prompt = "search: "
	cfg := &config{host: defaultHostOptions()}
	d := dispatcher.New(newModel(ui.Identity{Headless: true}, benchProgram{search: ti}, cfg), nil)
	defer d.Close()
	o := dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "b"}
	tab := tea.KeyPressMsg{Code: tea.KeyTab}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Call(ctx, o, tab); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareKey is the same key folded into the program directly:
// what a tea.Program's own Update and View cost, the floor of the above.
func BenchmarkBareKey(b *testing.B) {
	ti := textinput.New()
	ti.Prompt = "search: "
	var m tea.Model = benchProgram{search: ti}
	tab := tea.KeyPressMsg{Code: tea.KeyTab}
	b.ReportAllocs()
	for b.Loop() {
		m, _ = m.Update(tab)
		_ = m.View()
	}
}

// BenchmarkHostedCall is an agent's typed call on a hosted program, in
// process over real HTTP: bench.search.type_into through the bridge (the
// session headless, as an agent-first session is), against a bare go-sdk
// server's echo tool called the same way (server's BenchmarkWriteCall's
// floor). cpu-ns/op is the process's CPU per call, client and server (the
// client's share is the same in both), the work after the answer (the
// watcher's derivation) included. BenchmarkHostedCallAlternated gives the
// ratio with the two alternated.
//
//	go test ./teaapp -run '^$' -bench HostedCall -benchmem -cpu 2 -count 5
func BenchmarkHostedCall(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchCallLoop(b, bareEcho(b), "echo") })
	b.Run("hosted", func(b *testing.B) { benchCallLoop(b, hostedBench(b), "bench.search.type_into") })
}

// BenchmarkHostedCallAlternated is BenchmarkHostedCall with the bare and
// the hosted call alternated in one loop, in blocks of ten calls each, so
// that both meet the same load of a shared machine: the process's CPU per
// call of each (a block's CPU read once what its calls set off has ended)
// and their ratio.
func BenchmarkHostedCallAlternated(b *testing.B) {
	bare, hosted := bareEcho(b), hostedBench(b)
	const block = 10
	ctx := context.Background()
	var cpu [2]time.Duration
	i := 0
	run := func(k int, cs *mcp.ClientSession, tool string) {
		t0 := benchCPU()
		for range block {
			i++
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": fmt.Sprint("x", i%10)}})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
		time.Sleep(time.Millisecond) // what the calls set off (a derivation) ends
		cpu[k] += benchCPU() - t0
	}
	for b.Loop() {
		run(0, bare, "echo")
		run(1, hosted, "bench.search.type_into")
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N*block) }
	b.ReportMetric(per(cpu[0]), "bare-cpu-us/call")
	b.ReportMetric(per(cpu[1]), "hosted-cpu-us/call")
	b.ReportMetric(per(cpu[1])/per(cpu[0]), "ratio")
}

// bareEcho serves a bare go-sdk server with one echo tool over
// Streamable HTTP and connects a client to it.
func bareEcho(b *testing.B) *mcp.ClientSession {
	return testkit.ConnectBench(b, testkit.BareEchoServer(b).URL, "")
}

// hostedBench serves benchProgram with New, starts one headless session
// and connects an agent to it.
func hostedBench(b *testing.B) *mcp.ClientSession {
	app := New("bench", func(ui.Identity) tea.Model {
		ti := textinput.New()
		ti.Prompt = "search: "
		return benchProgram{search: ti}
	})
	srv, err := server.New(app, server.Options{DataDir: b.TempDir(), Logger: slog.New(slog.DiscardHandler),
		MCP: server.MCPOptions{ToolCallsPerSecond: 1e9, ToolCallBurst: 1e9}}) // the floor has no rate limit
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	se, _, err := srv.StartHeadless(session.Owner{User: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(hs.Close)
	return testkit.ConnectBench(b, hs.URL+"/sessions/"+se.ID+"/mcp", se.Token())
}

// benchCallLoop calls tool with {"text": ...} b.N times and reports the
// process's CPU per call.
func benchCallLoop(b *testing.B, cs *mcp.ClientSession, tool string) {
	ctx := context.Background()
	// One call first: the session's tools derived, the connection warm.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
		b.Fatal(err, res)
	}
	i := 0
	b.ReportAllocs()
	cpu0 := benchCPU()
	for b.Loop() {
		i++
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": fmt.Sprint("x", i%10)}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64((benchCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// benchCPU is the process's user and system CPU time so far.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
