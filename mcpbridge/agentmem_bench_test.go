package mcpbridge_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// BenchmarkAgentMemory is issue 29's "memory per attached agent" in
// process: what N agents keep live in the server, a go-sdk client each
// over Streamable HTTP with its standalone GET stream, read after forced
// collections before and after they attach, divided by N (B/agent: the
// live heap, HeapAlloc); the goroutines they add and their stacks
// (stackB/agent: StackInuse, outside the heap). The agents run in a child process (this test
// binary again, agentMemHelperEnv set), so only the server's side is
// counted, as raxol-load counts it from outside.
//
//   - bare: one go-sdk server with one echo tool (raxol-load's floor),
//     shared by every client;
//   - raxol: N+1 live sessions of a small app (form); agent i attaches
//     to session i, which makes that session's MCP server (on its first
//     authenticated request), as an agent attaching to an SSH session
//     does;
//   - raxol-second: the same, each session with an agent attached
//     already: a second agent's cost, its session's server made.
//
// In all, one agent attaches before the first reading (what the first
// client of a process builds once is not an agent's). Each agent
// connects (initialize, initialized, its GET stream), as raxol-load's
// agents do before its idle measure ("connect"), or connects and lists
// the tools, as a chat host does at once ("listed": what is built on
// first use is counted too). Then the child closes its idle connections,
// so that each agent holds one, its stream, in both stacks alike (how
// many a client keeps idle besides varies from run to run).
//
//	go test ./mcpbridge -run '^$' -bench AgentMemory -benchtime 3x -cpu 2
//
// RAXOL_AGENTMEM_N sets N (default 100); RAXOL_AGENTMEM_PROFILE=<dir>
// writes heap and goroutine profiles before and after the agents attach
// (go tool pprof -sample_index=inuse_space -base before.heap after.heap).
func BenchmarkAgentMemory(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("RAXOL_AGENTMEM_N")); err == nil && v > 0 {
		n = v
	}
	if os.Getenv("RAXOL_AGENTMEM_PROFILE") != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1 // every allocation: the difference is exact
	}
	for _, mode := range []string{"connect", "listed"} {
		for _, stack := range []struct {
			name string
			make func(b *testing.B, n int) agentMemTarget
		}{
			{"bare", bareAgentMemTarget},
			{"raxol", raxolAgentMemTarget},
			{"raxol-second", raxolSecondAgentMemTarget},
		} {
			b.Run(mode+"/"+stack.name, func(b *testing.B) {
				var sum agentCost
				runs := 0
				for i := 0; i < b.N; i++ {
					c := measureAgents(b, mode+"."+stack.name, mode, n, stack.make(b, n))
					sum.heap += c.heap
					sum.stack += c.stack
					sum.goroutines += c.goroutines
					runs++
				}
				b.ReportMetric(sum.heap/float64(runs), "B/agent")
				b.ReportMetric(sum.stack/float64(runs), "stackB/agent")
				b.ReportMetric(sum.goroutines/float64(runs), "goroutines/agent")
				b.ReportMetric(0, "ns/op") // the time is the child's connecting, not a measure
			})
		}
	}
}

// agentMemTarget is a server to attach agents to: the endpoints (URL and
// bearer token) of the warm-up agents and of the N measured ones, and how
// to stop it.
type agentMemTarget struct {
	warm  []agentEndpoint
	each  []agentEndpoint
	close func()
}

type agentEndpoint struct{ url, token string }

// bareAgentMemTarget is raxol-load's floor's MCP side: one go-sdk server
// with one echo tool, shared by every client.
func bareAgentMemTarget(b *testing.B, n int) agentMemTarget {
	ms := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(ms, &mcp.Tool{Name: "echo", Description: "Echo the text."}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, nil))
	srv := httptest.NewServer(mux)
	ep := agentEndpoint{url: srv.URL + "/mcp"}
	t := agentMemTarget{warm: []agentEndpoint{ep}, close: srv.Close}
	for range n {
		t.each = append(t.each, ep)
	}
	return t
}

// raxolAgentMemTarget is a bridge over N+1 live sessions, none of which
// has had an MCP request yet.
func raxolAgentMemTarget(b *testing.B, n int) agentMemTarget {
	var bridge *mcpbridge.Bridge
	mgr := session.NewManager(&session.Options{OnEnd: func(s *session.Session) { bridge.SessionEnded(s.ID) }})
	bridge = newTestBridge(b, mgr, mcpbridge.Options{Namespace: "app", Metrics: metrics.New()})
	srv := httptest.NewServer(bridge)
	var eps []agentEndpoint
	for range n + 1 {
		s, ok, err := mgr.Start("app", session.Owner{User: "u"}, form{}, 0)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		eps = append(eps, agentEndpoint{url: srv.URL + "/sessions/" + s.ID + "/mcp", token: s.Token()})
	}
	return agentMemTarget{warm: eps[:1], each: eps[1:], close: func() {
		bridge.Close()
		srv.Close()
		mgr.Close()
	}}
}

// agentCost is what an agent keeps in the server: live heap bytes,
// goroutine stack bytes, goroutines.
type agentCost struct{ heap, stack, goroutines float64 }

// raxolSecondAgentMemTarget is raxolAgentMemTarget with an agent attached
// to every session before the first reading: what a second agent of a
// session costs, its session's MCP server made already.
func raxolSecondAgentMemTarget(b *testing.B, n int) agentMemTarget {
	t := raxolAgentMemTarget(b, n)
	t.warm = append(t.warm, t.each...)
	return t
}

// measureAgents attaches the warm-up agents, reads the heap, attaches the
// N agents, reads it again, and ends it all: what the N agents added, per
// agent.
func measureAgents(b *testing.B, name, mode string, n int, t agentMemTarget) agentCost {
	defer t.close()
	warm := startAgents(b, mode, t.warm)
	defer warm.stop(b)
	m0 := settledHeap(b, name, "before")
	agents := startAgents(b, mode, t.each)
	m1 := settledHeap(b, name, "after")
	agents.stop(b)
	per := func(a, b uint64) float64 { return float64(int64(b)-int64(a)) / float64(n) }
	return agentCost{heap: per(m0.heap, m1.heap), stack: per(m0.stack, m1.stack), goroutines: per(m0.goroutines, m1.goroutines)}
}

// memReading is one reading of the server's memory.
type memReading struct{ heap, stack, goroutines uint64 }

// settledHeap is the live heap and the goroutines once what starting the
// sessions and attaching left behind has settled (a quiet session's
// dispatcher loop ends after a second; the SDK's debounced
// notifications; the go-sdk client's server/discover probe session,
// closed right after), after two forced collections.
func settledHeap(b *testing.B, name, when string) memReading {
	time.Sleep(1500 * time.Millisecond)
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r := memReading{heap: ms.HeapAlloc, stack: ms.StackInuse, goroutines: uint64(runtime.NumGoroutine())}
	if dir := os.Getenv("RAXOL_AGENTMEM_PROFILE"); dir != "" {
		for _, p := range []struct{ profile, ext string }{{"heap", "heap"}, {"goroutine", "goroutines.txt"}} {
			f, err := os.Create(filepath.Join(dir, name+"."+when+"."+p.ext))
			if err != nil {
				b.Fatal(err)
			}
			debug := 0
			if p.profile == "goroutine" {
				debug = 1
			}
			if err := pprof.Lookup(p.profile).WriteTo(f, debug); err != nil {
				b.Fatal(err)
			}
			_ = f.Close()
		}
	}
	return r
}

// agentMemHelperEnv marks the child process that holds the agents.
const agentMemHelperEnv = "RAXOL_AGENTMEM_HELPER"

// agentProcess is a child process holding connected agents.
type agentProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startAgents starts a child that connects one agent to each endpoint
// (and lists its tools when mode is "listed") and returns once all are
// connected.
func startAgents(b *testing.B, mode string, eps []agentEndpoint) *agentProcess {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), agentMemHelperEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &agentProcess{cmd: cmd, stdin: stdin}
	var in strings.Builder
	in.WriteString(mode + "\n")
	for _, ep := range eps {
		fmt.Fprintf(&in, "%s %s\n", ep.url, ep.token)
	}
	in.WriteString("go\n")
	if _, err := io.WriteString(stdin, in.String()); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready "+strconv.Itoa(len(eps)) {
		_ = stdin.Close()
		_ = cmd.Wait()
		b.Fatalf("agents: %q, %v", line, err)
	}
	return p
}

// stop closes the child's agents and waits for it to exit.
func (p *agentProcess) stop(b *testing.B) {
	_ = p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		b.Fatalf("agents' process: %v", err)
	}
}

func init() {
	if os.Getenv(agentMemHelperEnv) == "" {
		return
	}
	if err := holdAgents(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// holdAgents is the child: it reads the mode, then "<url> <token>" lines
// up to "go", connects one go-sdk client to each (its own HTTP transport,
// as raxol-load's agents have), lists its tools in mode "listed", closes
// the idle connections, says "ready <n>", and closes the clients when its
// input ends.
func holdAgents(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	var clients []*mcp.ClientSession
	var transports []*http.Transport
	defer func() {
		for _, cs := range clients {
			_ = cs.Close()
		}
	}()
	if !sc.Scan() {
		return errors.New("no mode")
	}
	mode := sc.Text()
	for sc.Scan() {
		line := sc.Text()
		if line == "go" {
			break
		}
		url, token, _ := strings.Cut(line, " ")
		tr := http.DefaultTransport.(*http.Transport).Clone()
		transports = append(transports, tr)
		rt := http.RoundTripper(tr)
		if token != "" {
			rt = testkit.Bearer(tr, token)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "agentmem", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}}, nil)
		if err != nil {
			return fmt.Errorf("connect %s: %w", url, err)
		}
		clients = append(clients, cs)
		if mode == "listed" {
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				return fmt.Errorf("tools/list %s: %w", url, err)
			}
		}
	}
	for _, tr := range transports {
		tr.CloseIdleConnections()
	}
	if _, err := fmt.Fprintf(w, "ready %d\n", len(clients)); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, r)
	return err
}
