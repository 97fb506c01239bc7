// Command raxol-load opens many real SSH sessions with PTYs against a
// raxol-ssh server and reports what they cost the server, read from the
// server's own /metrics: resident memory and Go heap per session, CPU used
// while the sessions sit idle, keystroke round-trip latency and server CPU
// per keystroke. With --agents it attaches MCP agents the way a human hands
// a session over (the attach panel's URL and token), times tool calls,
// and with --closed-loop drives every agent at once, back to back or
// --paced, reporting calls/s, latency and server CPU per call.
//
// `raxol-load floor` serves the floor the numbers are compared with: a
// bare wish + Bubble Tea server and a go-sdk echo tool; point the load at
// it with --mcp-url and --tool echo (see floor.go). `raxol-load viewers`
// measures what a browser on a session's web view costs against an SSH
// joiner (viewers.go).
//
// Memory the way an operator sees it (issue 29): --distinct-users,
// --source-addrs, --busy-keys and --after-settle shape the load; with
// --pprof (and --pid) memory is broken down per session and per attached
// agent after forced collections, and the heap profiles saved are split
// among a session's owners by `raxol-load heapsplit` (breakdown.go,
// heapsplit.go). round3.sh and tenk.sh run the comparisons with the floor.
//
// Against a cluster, --ssh and --metrics take the nodes' addresses,
// comma-separated: sessions are opened on each node in turn, the nodes'
// metrics are added up, and --agent-via picks the node each agent goes
// through (its session's home, another node, or the nodes in turn). The
// output then also counts sessions and agents per node (targets.go).
//
// It only talks to the addresses it is given, which should be loopback,
// and stops by itself after --hold.
//
//	go run ./cmd/raxol-ssh --max-per-ip 2000 --max-sessions-per-user 2000 --max-connections 2000 --max-http-per-ip 2000 &
//	go run ./cmd/raxol-load --sessions 1000 --hold 30s
package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	gossh "golang.org/x/crypto/ssh"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		if err := serveFloor(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "raxol-load floor:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "hosted" {
		if err := serveHosted(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "raxol-load hosted:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "heapsplit" {
		if err := runHeapsplit(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "raxol-load heapsplit:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "viewers" {
		if err := runViewers(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "raxol-load viewers:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "raxol-load:", err)
		os.Exit(1)
	}
}

type client struct {
	conn  *gossh.Client
	sess  *gossh.Session
	stdin io.WriteCloser
	bytes atomic.Int64
	out   chan struct{} // signalled on output
	mu    sync.Mutex    // protects em
	em    *vt.Emulator  // the screen, as a terminal would show it
	agent *mcp.ClientSession

	missedInRow int          // keys in a row without a redraw (the typing goroutine's)
	missedAll   atomic.Int64 // keys without a redraw in all

	sshAddr   string // the address it was opened on
	home, via string // its agent's: the session's home (its URL's host:port), the host reached
}

// screen returns the client's screen text.
func (c *client) screen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.em.String()
}

func run() error {
	sshFlag := flag.String("ssh", "127.0.0.1:2222", "server SSH address; several, comma-separated (the nodes of a cluster): sessions are opened on each in turn")
	metricsFlag := flag.String("metrics", "http://127.0.0.1:8080/metrics", "server metrics URL; several, comma-separated: the nodes' samples are added up")
	n := flag.Int("sessions", 100, "sessions to open")
	parallel := flag.Int("parallel", 16, "connections opened at once")
	hold := flag.Duration("hold", 10*time.Second, "how long the sessions stay open and idle")
	settle := flag.Duration("settle", 2*time.Second, "how long to wait after opening the sessions and attaching the agents before the idle period is measured (raxol-ssh's GC pacer collects a quiet server at 3 s and 12 s: with --settle 15s the idle period is the steady state)")
	keys := flag.Int("keys", 200, "keystroke round trips to time (spread over the sessions)")
	agents := flag.Int("agents", 0, "sessions that also get an MCP agent, attached with the URL and token read off the attach panel (ctrl+o)")
	calls := flag.Int("calls", 500, "MCP tool calls to time (spread over the agents)")
	closedLoop := flag.Duration("closed-loop", 0, "after the timed calls, have every agent make write calls back to back for this long, all at once, and report calls/s and server CPU per call")
	typists := flag.Int("typists", 0, "sessions whose humans type back to back (a key, then the redraw) for --typing, all at once; reports keys/s and server CPU per keystroke")
	typing := flag.Duration("typing", 10*time.Second, "how long the --typists type")
	typingKeys := flag.String("typing-keys", "tab", `what the --typists type: "tab" (Tab and Shift+Tab in turn: the focus moves, restyling the widgets it leaves and enters) or "chars:<prelude>" (after the prelude's keys, one byte each, e.g. "\t" to focus a text input, and one x, x and Backspace in turn: a key that changes one cell, as the floor's key moves its one-character marker; x must match nothing the input filters)`)
	agentScreen := flag.Bool("agent-screen", false, "with --closed-loop: after each call, also time until its text is on the session's own terminal (agent→screen; raxol-ssh only)")
	paced := flag.Float64("paced", 0, "with --closed-loop: each agent makes this many calls per second instead of back to back (an open loop)")
	mcpFlag := flag.String("mcp-url", "", "connect agents to this MCP endpoint instead of reading each session's off its attach panel (the floor's /mcp); several, comma-separated: the agents take them in turn")
	viaFlag := flag.String("agent-via", "home", "the node each agent reaches its session through: home (the attach panel's URL), other (a node that is not the session's home, so calls are passed between nodes) or round-robin (the --agent-nodes in turn)")
	nodesFlag := flag.String("agent-nodes", "", "comma-separated base URLs of the nodes' HTTP (http://host:port) for --agent-via other and round-robin, the attach panel's URL naming one of them (default: the --metrics URLs' scheme://host:port)")
	flag.StringVar(&writeTool, "tool", "demo.search.type_into", "the write tool agents call with {\"text\": ...}")
	flag.StringVar(&readTool, "read-tool", "demo.search.get_value", "the read tool agents call with {} (\"\" calls the write tool instead)")
	distinct := flag.Bool("distinct-users", false, "each session its own user name and its own key (load-<i>), as distinct people would connect")
	sources := flag.Int("source-addrs", 1, "connect from this many loopback source addresses in turn (127.0.0.1, 127.0.0.2, …), as clients from distinct addresses would")
	afterSettle := flag.Duration("after-settle", 0, "after every phase, wait this long and report the server's memory per session again (what an operator sees once a busy spell is over)")
	pprofBase := flag.String("pprof", "", "the server's pprof base URL (raxol-ssh --pprof-addr): its heap and goroutine profiles are saved to --profile-dir when the idle period ends (idle-*) and after --after-settle (after-*)")
	profDir := flag.String("profile-dir", ".", "where --pprof's profiles go")
	busyKeys := flag.Int("busy-keys", 0, "before the idle period, every session gets this many keys (Tab and Shift+Tab, each after the last one's redraw): 1,000 busy sessions rather than 1,000 that drew one frame")
	pid := flag.Int("pid", 0, "the server's process id, on this machine: its anonymous and file-backed RSS and peak RSS are read from /proc")
	flag.Parse()
	saveProfiles := func(phase string) {
		if *pprofBase == "" {
			return
		}
		for _, kind := range []string{"goroutine", "allocs"} {
			url := strings.TrimRight(*pprofBase, "/") + "/debug/pprof/" + kind
			if err := fetchProfile(url, fmt.Sprintf("%s/%s-%s.pprof", strings.TrimRight(*profDir, "/"), phase, kind)); err != nil {
				fmt.Printf("profile %s: %v\n", kind, err)
			}
		}
	}
	if *sources < 1 || *sources > 250 {
		return errors.New("--source-addrs: between 1 and 250")
	}
	sshAddrs, err := splitList("--ssh", *sshFlag)
	if err != nil {
		return err
	}
	if len(sshAddrs) == 0 {
		return errors.New("--ssh: no address")
	}
	metricsURLs, err := splitList("--metrics", *metricsFlag)
	if err != nil {
		return err
	}
	if len(metricsURLs) == 0 {
		return errors.New("--metrics: no URL")
	}
	if mcpURLs, err = splitList("--mcp-url", *mcpFlag); err != nil {
		return err
	}
	via, err := parseVia(*viaFlag)
	if err != nil {
		return err
	}
	if via != viaHome && len(mcpURLs) > 0 {
		return errors.New("--agent-via is for the attach panel's URLs: with --mcp-url, the agents take the --mcp-url endpoints in turn")
	}
	nodeURLs, err := splitList("--agent-nodes", *nodesFlag)
	if err != nil {
		return err
	}
	if len(nodeURLs) == 0 {
		if nodeURLs, err = origins(metricsURLs); err != nil {
			return err
		}
	}
	rt, err := newRouter(via, nodeURLs)
	if err != nil {
		return err
	}

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		return err
	}
	cfg := &gossh.ClientConfig{
		User:            "load",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         30 * time.Second,
	}

	memBefore, err := readMemory(metricsURLs, "", "", *pid)
	if err != nil {
		return fmt.Errorf("scrape before: %w", err)
	}
	before := memBefore.raw
	// breakdown prints where the server's memory is, per session, forcing
	// a collection (and saving the heap profile it gives) when --pprof is
	// set.
	breakdown := func(phase string, n float64) (memSample, error) {
		prof := ""
		if *pprofBase != "" {
			prof = fmt.Sprintf("%s/%s-heap.pprof", strings.TrimRight(*profDir, "/"), phase)
		}
		m, err := readMemory(metricsURLs, *pprofBase, prof, *pid)
		if err != nil {
			return m, err
		}
		fmt.Printf("memory per session, %s: %s\n", phase, m.perSession(memBefore, n))
		return m, nil
	}
	fmt.Printf("server before: rss=%.1f MiB heap_inuse=%.1f MiB goroutines=%.0f sessions=%.0f\n",
		before["process_resident_memory_bytes"]/(1<<20), before["go_memstats_heap_inuse_bytes"]/(1<<20),
		before["go_goroutines"], before["raxol_sessions_open"])

	start := time.Now()
	clients := make([]*client, *n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, *parallel)
	var failures atomic.Int64
	var firstErr atomic.Value
	for i := range clients {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ccfg := cfg
			if *distinct {
				own, err := ownUser(cfg, i)
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
					return
				}
				ccfg = own
			}
			local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i%*sources))}
			if *sources == 1 {
				local = nil
			}
			c, err := openFrom(sshAddrs[i%len(sshAddrs)], ccfg, local)
			if err != nil {
				failures.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			clients[i] = c
		})
	}
	wg.Wait()
	clients = slices.DeleteFunc(clients, func(c *client) bool { return c == nil })
	fmt.Printf("opened %d sessions in %s (%d failed)\n", len(clients), time.Since(start).Round(time.Millisecond), failures.Load())
	if len(sshAddrs) > 1 {
		var per counts
		for _, c := range clients {
			per.add(c.sshAddr)
		}
		fmt.Printf("sessions per SSH address: %s\n", per.format(sshAddrs))
	}
	if e := firstErr.Load(); e != nil {
		fmt.Printf("first failure: %v\n", e)
	}
	defer func() {
		for _, c := range clients {
			_ = c.sess.Close()
			_ = c.conn.Close()
		}
	}()
	if len(clients) == 0 {
		return errors.New("no session opened")
	}

	if *busyKeys > 0 {
		start := time.Now()
		var wg sync.WaitGroup
		for _, c := range clients {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				if err := typeKeys(c, *busyKeys); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			})
		}
		wg.Wait()
		fmt.Printf("%d keys in each of %d sessions in %s\n", *busyKeys, len(clients), time.Since(start).Round(time.Millisecond))
		if e := firstErr.Load(); e != nil {
			fmt.Printf("first failure: %v\n", e)
		}
	}
	var memBeforeAgents memSample
	if *agents > 0 {
		// What the sessions alone hold, settled, to tell what the agents add.
		time.Sleep(*settle)
		if memBeforeAgents, err = readMemory(metricsURLs, *pprofBase, "", *pid); err != nil {
			return err
		}
		n := min(*agents, len(clients))
		start := time.Now()
		var attached atomic.Int64
		var wg sync.WaitGroup
		for i, c := range clients[:n] {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				if err := attach(c, i, rt); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				attached.Add(1)
			})
		}
		wg.Wait()
		fmt.Printf("attached %d MCP agents in %s\n", attached.Load(), time.Since(start).Round(time.Millisecond))
		if len(rt.nodes) > 1 || via != viaHome || len(mcpURLs) > 1 {
			fmt.Println(agentsPerNode(clients, via))
		}
		if e := firstErr.Load(); e != nil {
			fmt.Printf("first failure: %v\n", e)
		}
		defer func() {
			for _, c := range clients {
				if c.agent != nil {
					_ = c.agent.Close()
				}
			}
		}()
	}

	// Let first frames settle, then measure an idle period.
	time.Sleep(*settle)
	idleStart, err := scrapeAll(metricsURLs)
	if err != nil {
		return err
	}
	time.Sleep(*hold)
	idleEnd, err := scrapeAll(metricsURLs)
	if err != nil {
		return err
	}
	open, ok := idleEnd["raxol_sessions_open"]
	if !ok {
		open = float64(len(clients)) // the floor counts no sessions of its own
	}
	cpu := idleEnd["process_cpu_seconds_total"] - idleStart["process_cpu_seconds_total"]
	rss := idleEnd["process_resident_memory_bytes"] - before["process_resident_memory_bytes"]
	heap := idleEnd["go_memstats_heap_inuse_bytes"] - before["go_memstats_heap_inuse_bytes"]
	fmt.Printf("server with sessions: rss=%.1f MiB heap_inuse=%.1f MiB goroutines=%.0f sessions=%.0f\n",
		idleEnd["process_resident_memory_bytes"]/(1<<20), idleEnd["go_memstats_heap_inuse_bytes"]/(1<<20),
		idleEnd["go_goroutines"], open)
	if len(metricsURLs) > 1 {
		line, err := sessionsPerNode(metricsURLs)
		if err != nil {
			return err
		}
		fmt.Println(line)
	}
	if open > 0 {
		fmt.Printf("per session: rss=%.1f KiB heap_inuse=%.1f KiB goroutines=%.1f\n",
			rss/open/1024, heap/open/1024, (idleEnd["go_goroutines"]-before["go_goroutines"])/open)
	}
	fmt.Printf("idle CPU over %s: %.3f CPU-seconds (%.2f%% of one core; %.4f%% per session)\n",
		*hold, cpu, 100*cpu/hold.Seconds(), 100*cpu/hold.Seconds()/max(open, 1))
	saveProfiles("idle")
	idleMem, err := breakdown("idle", open)
	if err != nil {
		return err
	}
	if attached := countAgents(clients); memBeforeAgents.raw != nil && attached > 0 {
		// With --pprof both after a forced collection: what the agents keep live.
		fmt.Printf("memory per attached agent (%d): %s\n", attached, idleMem.perSession(memBeforeAgents, float64(attached)))
	}

	// Keystroke round trips: a key in, the first byte of the redraw out.
	var lat []time.Duration
	keysStart, err := scrapeAll(metricsURLs)
	if err != nil {
		return err
	}
	keysT0 := time.Now()
	for i := 0; i < *keys; i++ {
		c := clients[i%len(clients)]
		drain(c.out)
		key := "\t"
		if i%2 == 1 {
			key = "\x1b[Z"
		}
		t0 := time.Now()
		if _, err := io.WriteString(c.stdin, key); err != nil {
			return err
		}
		if d, ok := awaitRedraw(c, t0); ok {
			lat = append(lat, d)
		} else if err := c.missed(); err != nil {
			return err
		}
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		fmt.Printf("keystroke round trip over %d keys: p50=%s p90=%s p99=%s max=%s\n", len(lat),
			lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)*99/100], lat[len(lat)-1])
		keysEnd, err := scrapeAll(metricsURLs)
		if err != nil {
			return err
		}
		kcpu := keysEnd["process_cpu_seconds_total"] - keysStart["process_cpu_seconds_total"]
		knet := max(kcpu-cpu/hold.Seconds()*time.Since(keysT0).Seconds(), 0)
		fmt.Printf("server CPU per keystroke: %.3f ms (%.3f ms net of idle)\n", 1000*kcpu/float64(len(lat)), 1000*knet/float64(len(lat)))
	}

	if *typists > 0 {
		if err := typeBackToBack(clients[:min(*typists, len(clients))], *typing, *typingKeys, metricsURLs, cpu/hold.Seconds()); err != nil {
			return err
		}
	}
	if *agents > 0 {
		if err := timeCalls(clients, *calls); err != nil {
			return err
		}
		if *closedLoop > 0 {
			if err := closedLoopCalls(clients, *closedLoop, *paced, *agentScreen, metricsURLs, cpu/hold.Seconds()); err != nil {
				return err
			}
		}
	}
	if *afterSettle > 0 {
		time.Sleep(*afterSettle)
		saveProfiles("after")
		after, err := breakdown("after", open)
		if err != nil {
			return err
		}
		fmt.Printf("server after the load, settled %s: rss=%.1f MiB heap_inuse=%.1f MiB goroutines=%.0f\n", *afterSettle,
			after.rss/(1<<20), after.heapInuse/(1<<20), after.goroutines)
	}

	return nil
}

// typingPair reads --typing-keys: the two keys typed in turn, and the
// keys typed once before them (one byte each).
func typingPair(keys string) (pair [2]string, prelude []string, err error) {
	if keys == "tab" {
		return [2]string{"\t", "\x1b[Z"}, nil, nil
	}
	p, ok := strings.CutPrefix(keys, "chars:")
	if !ok {
		return pair, nil, fmt.Errorf("--typing-keys %q: want tab or chars:<prelude>", keys)
	}
	p, err = strconv.Unquote(`"` + p + `"`)
	if err != nil {
		return pair, nil, fmt.Errorf("--typing-keys %q: the prelude: %w", keys, err)
	}
	return [2]string{"x", "\x7f"}, strings.Split(p+"x", ""), nil
}

// sendKey types one key into c's session and waits for its redraw (a
// key without one counts as missed).
func sendKey(c *client, key string) error {
	drain(c.out)
	if _, err := io.WriteString(c.stdin, key); err != nil {
		return err
	}
	if _, ok := awaitRedraw(c, time.Now()); !ok {
		return c.missed()
	}
	return nil
}

// typeKeys types n keys into c's session, Tab and Shift+Tab in turn, each
// once the last one's redraw began.
func typeKeys(c *client, n int) error {
	tabs, _, _ := typingPair("tab")
	for i := range n {
		if err := sendKey(c, tabs[i%2]); err != nil {
			return err
		}
	}
	return nil
}

// coalesceWait is how long a key's redraw is waited for before the key
// counts as drawn with the one before it. The server draws the latest
// state once per frame interval: a Tab and a Shift+Tab that reach it
// within one interval are one frame that changes nothing, so nothing is
// sent for them. That happens when the tool took an unrelated frame (an
// agent's age in the status bar) for the first key's redraw and sent the
// second at once.
const coalesceWait = time.Second

// maxMissed is how many keys in a row may go without a redraw before the
// tool gives up on the session.
const maxMissed = 5

// awaitRedraw waits for c's next output after a key sent at t0: the time
// it took, or false after coalesceWait.
func awaitRedraw(c *client, t0 time.Time) (time.Duration, bool) {
	select {
	case <-c.out:
		c.missedInRow = 0
		return time.Since(t0), true
	case <-time.After(coalesceWait):
		return 0, false
	}
}

// missed counts a key that got no redraw (see coalesceWait), failing once
// maxMissed came in a row.
func (c *client) missed() error {
	c.missedInRow++
	c.missedAll.Add(1)
	if c.missedInRow >= maxMissed {
		return fmt.Errorf("no redraw for %d keys in a row (%s each); the screen:\n%s", maxMissed, coalesceWait, c.screen())
	}
	return nil
}

// ownUser is cfg with the user name load-<i> and a key of its own.
func ownUser(cfg *gossh.ClientConfig, i int) (*gossh.ClientConfig, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	c := *cfg
	c.User = fmt.Sprintf("load-%d", i)
	c.Auth = []gossh.AuthMethod{gossh.PublicKeys(signer)}
	return &c, nil
}

// countAgents is how many clients have an agent attached.
func countAgents(clients []*client) int {
	n := 0
	for _, c := range clients {
		if c.agent != nil {
			n++
		}
	}
	return n
}

// typeBackToBack has each client type two keys in turn for d (Tab and
// Shift+Tab, or with keys "chars:<prelude>" x and Backspace after the
// prelude and one x), each key sent once the previous one's redraw began,
// all clients at once, and reports keys/s, the round trips and the
// server's CPU per key net of what the sessions cost idle.
func typeBackToBack(clients []*client, d time.Duration, keys string, metricsURLs []string, idleCores float64) error {
	pair, prelude, err := typingPair(keys)
	if err != nil {
		return err
	}
	for _, c := range clients {
		for _, k := range prelude {
			if err := sendKey(c, k); err != nil {
				return fmt.Errorf("--typing-keys prelude: %w", err)
			}
		}
	}
	var bytes0 int64
	for _, c := range clients {
		drain(c.out)
		bytes0 += c.bytes.Load()
	}
	deadline := time.Now().Add(d)
	r, err := runPhase(len(clients), metricsURLs, "typing", func(i int) ([]time.Duration, error) {
		c := clients[i]
		var lat []time.Duration
		for n := 0; time.Now().Before(deadline); n++ {
			key := pair[n%2]
			t0 := time.Now()
			if _, err := io.WriteString(c.stdin, key); err != nil {
				return lat, err
			}
			if d, ok := awaitRedraw(c, t0); ok {
				lat = append(lat, d)
			} else if err := c.missed(); err != nil {
				return lat, fmt.Errorf("key %d (%q): %w", n, key, err)
			}
		}
		return lat, nil
	})
	if err != nil {
		return err
	}
	var bytes1 int64
	for _, c := range clients {
		bytes1 += c.bytes.Load()
	}
	var missed int64
	for _, c := range clients {
		missed += c.missedAll.Load()
	}
	// What each key redrew, on the wire: how much of the screen it changed.
	fmt.Printf("typing, %d typists for %s: %d keys, %s, server CPU %s per key, %.0f bytes drawn per key; %d keys drawn with the one before (no change: see coalesceWait)\n",
		len(clients), r.elapsed.Round(time.Millisecond), len(r.lat), r.rate("keys"), r.cpuPer(idleCores),
		float64(bytes1-bytes0)/float64(max(len(r.lat), 1)), missed)
	return nil
}

// phaseResult is what runPhase measured.
type phaseResult struct {
	lat     []time.Duration // sorted
	elapsed time.Duration
	cpu     float64 // server CPU-seconds over the phase
}

// rate is the operations per second with their p50 and p99.
func (r phaseResult) rate(unit string) string {
	return fmt.Sprintf("%.0f %s/s, p50=%s p99=%s", float64(len(r.lat))/r.elapsed.Seconds(), unit,
		r.lat[len(r.lat)/2], r.lat[len(r.lat)*99/100])
}

// cpuPer is the server's CPU per operation, and net of what the sessions
// cost idle (idleCores, measured before).
func (r phaseResult) cpuPer(idleCores float64) string {
	n := float64(len(r.lat))
	net := max(r.cpu-idleCores*r.elapsed.Seconds(), 0)
	return fmt.Sprintf("%.3f ms (%.3f ms net of idle; %.0f%% of one core)", 1000*r.cpu/n, 1000*net/n, 100*r.cpu/r.elapsed.Seconds())
}

// runPhase runs work for workers 0..n-1 at once and measures them: their
// latencies, the time taken and the server's CPU (from metricsURLs, added
// up).
func runPhase(n int, metricsURLs []string, what string, work func(i int) ([]time.Duration, error)) (phaseResult, error) {
	before, err := scrapeAll(metricsURLs)
	if err != nil {
		return phaseResult{}, err
	}
	lat := make([][]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() { lat[i], errs[i] = work(i) })
	}
	wg.Wait()
	r := phaseResult{elapsed: time.Since(start)}
	after, err := scrapeAll(metricsURLs)
	if err != nil {
		return r, err
	}
	if err := errors.Join(errs...); err != nil {
		return r, fmt.Errorf("%s: %w", what, err)
	}
	for _, l := range lat {
		r.lat = append(r.lat, l...)
	}
	if len(r.lat) == 0 {
		return r, fmt.Errorf("%s: nothing answered", what)
	}
	slices.Sort(r.lat)
	r.cpu = after["process_cpu_seconds_total"] - before["process_cpu_seconds_total"]
	return r, nil
}

func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		case <-time.After(20 * time.Millisecond):
			return
		}
	}
}

// openFrom opens an 80x24 session from the local address local (any
// when nil).
func openFrom(addr string, cfg *gossh.ClientConfig, local *net.TCPAddr) (*client, error) {
	return openTermFrom(addr, cfg, "", 80, 24, local)
}

// openTerm opens a session with a cols×rows PTY that runs command (a
// shell when ""), and keeps its screen.
func openTerm(addr string, cfg *gossh.ClientConfig, command string, cols, rows int) (*client, error) {
	return openTermFrom(addr, cfg, command, cols, rows, nil)
}

// openTermFrom is openTerm from the local address local (any when nil).
func openTermFrom(addr string, cfg *gossh.ClientConfig, command string, cols, rows int, local *net.TCPAddr) (*client, error) {
	conn, sess, stdin, stdout, err := dialTerm(addr, cfg, command, cols, rows, local, nil)
	if err != nil {
		return nil, err
	}
	c := &client{conn: conn, sess: sess, stdin: stdin, out: make(chan struct{}, 1), em: vt.NewEmulator(cols, rows), sshAddr: addr}
	go func() { _, _ = io.Copy(stdin, c.em) }() // the terminal's replies to queries
	if err := readFrames(stdout, conn, func(b []byte) {
		c.mu.Lock()
		_, _ = c.em.Write(b)
		c.mu.Unlock()
		c.bytes.Add(int64(len(b)))
		select {
		case c.out <- struct{}{}:
		default:
		}
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// readFrames reads stdout until it ends, handing each chunk to got on the
// reading goroutine, and returns once the first chunk came (or closes
// conn and fails after 30 s without one).
func readFrames(stdout io.Reader, conn io.Closer, got func([]byte)) error {
	first := make(chan struct{})
	go func() {
		buf := make([]byte, 32<<10)
		once := sync.OnceFunc(func() { close(first) })
		for {
			n, err := stdout.Read(buf)
			if n > 0 {
				got(buf[:n])
				once()
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-first:
		return nil
	case <-time.After(30 * time.Second):
		conn.Close()
		return errors.New("no first frame within 30s")
	}
}

// dialTerm connects to addr from local (any when nil; through wrap when not nil: the load's own
// count of the bytes on the wire) and starts command (a shell when "")
// on a cols×rows PTY.
func dialTerm(addr string, cfg *gossh.ClientConfig, command string, cols, rows int, local *net.TCPAddr, wrap func(net.Conn) net.Conn) (*gossh.Client, *gossh.Session, io.WriteCloser, io.Reader, error) {
	d := net.Dialer{Timeout: cfg.Timeout}
	if local != nil {
		d.LocalAddr = local
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if wrap != nil {
		nc = wrap(nc)
	}
	cc, chans, reqs, err := gossh.NewClientConn(nc, addr, cfg)
	if err != nil {
		nc.Close()
		return nil, nil, nil, nil, err
	}
	conn := gossh.NewClient(cc, chans, reqs)
	sess, err := conn.NewSession()
	if err == nil {
		err = sess.RequestPty("xterm-256color", rows, cols, gossh.TerminalModes{})
	}
	var stdin io.WriteCloser
	if err == nil {
		stdin, err = sess.StdinPipe()
	}
	var stdout io.Reader
	if err == nil {
		stdout, err = sess.StdoutPipe()
	}
	if err == nil {
		if command == "" {
			err = sess.Shell()
		} else {
			err = sess.Start(command)
		}
	}
	if err != nil {
		conn.Close()
		return nil, nil, nil, nil, err
	}
	return conn, sess, stdin, stdout, nil
}

// The agents' endpoint and tools (flags).
var (
	mcpURLs             []string
	writeTool, readTool string
)

var (
	urlRe   = regexp.MustCompile(`(http://\S+/sessions/\S+/mcp)`)
	tokenRe = regexp.MustCompile(`Bearer token[^\n]*\n\s*([A-Za-z0-9_-]{43})`)
)

// attach opens the attach panel with ctrl+o, reads the session's MCP URL
// and token off the screen, closes the panel and connects agent i through
// the node r picks.
func attach(c *client, i int, r *router) error {
	if len(mcpURLs) > 0 {
		endpoint := mcpURLs[i%len(mcpURLs)]
		cl := mcp.NewClient(&mcp.Implementation{Name: "raxol-load", Version: "1"}, nil)
		cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: agentTransport()}}, nil)
		if err != nil {
			return fmt.Errorf("mcp connect %s: %w", endpoint, err)
		}
		c.agent, c.via = cs, endpoint
		return nil
	}
	if _, err := io.WriteString(c.stdin, "\x0f"); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	var url, token string
	for {
		scr := c.screen()
		if m := urlRe.FindStringSubmatch(scr); m != nil {
			if t := tokenRe.FindStringSubmatch(scr); t != nil {
				url, token = m[1], t[1]
				break
			}
		}
		if time.Now().After(deadline) {
			return errors.New("no attach panel on screen within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := io.WriteString(c.stdin, "\x0f"); err != nil {
		return err
	}
	endpoint, home, via, err := r.route(i, url)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: bearer{token, agentTransport()}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "raxol-load", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		return fmt.Errorf("mcp connect %s: %w", endpoint, err)
	}
	c.agent, c.home, c.via = cs, home, via
	return nil
}

// agentTransport is an agent's own HTTP transport: its own pool of
// connections, as an agent in a process of its own has. Agents sharing
// http.DefaultTransport share its two idle connections per host, so that
// 100 agents in a closed loop open a new connection every few calls, and
// the servers measured pay for the accepts and the closes.
func agentTransport() *http.Transport {
	return http.DefaultTransport.(*http.Transport).Clone()
}

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

// timeCalls times tool calls, a write (type_into, folded before it
// answers) and a read (get_value) in turn, over the agents one by one.
func timeCalls(clients []*client, n int) error {
	var agents []*client
	for _, c := range clients {
		if c.agent != nil {
			agents = append(agents, c)
		}
	}
	if len(agents) == 0 {
		return errors.New("no agent attached")
	}
	var writes, reads []time.Duration
	for i := range n {
		c := agents[i%len(agents)]
		name, args := writeTool, map[string]any{"text": fmt.Sprintf("load-%d", i)}
		if i%2 == 1 && readTool != "" {
			name, args = readTool, map[string]any{}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t0 := time.Now()
		res, err := c.agent.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		d := time.Since(t0)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if res.IsError {
			return fmt.Errorf("%s: error result %v", name, res.Content)
		}
		if name == readTool {
			reads = append(reads, d)
		} else {
			writes = append(writes, d)
		}
	}
	for _, l := range []struct {
		name string
		d    []time.Duration
	}{{"write (" + writeTool + ")", writes}, {"read (" + readTool + ")", reads}} {
		if len(l.d) == 0 {
			continue
		}
		slices.Sort(l.d)
		fmt.Printf("tool call %s over %d calls: p50=%s p90=%s p99=%s\n", l.name, len(l.d),
			l.d[len(l.d)/2], l.d[len(l.d)*9/10], l.d[len(l.d)*99/100])
	}
	return nil
}

// closedLoopCalls has every agent make write calls back to back for d,
// all at once, and reports the calls per second, their latency and the
// server's CPU per call (process_cpu_seconds_total over the calls).
func closedLoopCalls(clients []*client, d time.Duration, rate float64, toScreen bool, metricsURLs []string, idleCores float64) error {
	var agents []*client
	for _, c := range clients {
		if c.agent != nil {
			agents = append(agents, c)
		}
	}
	deadline := time.Now().Add(d)
	screenLat := make([][]time.Duration, len(agents))
	afterLat := make([][]time.Duration, len(agents)) // from the call's answer
	r, err := runPhase(len(agents), metricsURLs, "closed loop", func(i int) ([]time.Duration, error) {
		c := agents[i]
		var lat []time.Duration
		next := time.Now()
		for n := 0; time.Now().Before(deadline); n++ {
			if rate > 0 {
				// Start to start, with the agents spread over the period.
				if n == 0 {
					next = next.Add(time.Duration(float64(time.Second) / rate * float64(i) / float64(len(agents))))
				}
				time.Sleep(time.Until(next))
				next = next.Add(time.Duration(float64(time.Second) / rate))
			}
			text := fmt.Sprintf("loop-%d", n%100)
			if toScreen {
				text = fmt.Sprintf("L%d-%d", i, n) // never on the screen before
				drain0(c.out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			t0 := time.Now()
			res, err := c.agent.CallTool(ctx, &mcp.CallToolParams{Name: writeTool, Arguments: map[string]any{"text": text}})
			cancel()
			if err == nil && res.IsError {
				err = fmt.Errorf("error result %v", res.Content)
			}
			if err != nil {
				return lat, err
			}
			took := time.Since(t0)
			lat = append(lat, took)
			if toScreen {
				d, err := waitScreen(c, text, t0)
				if err != nil {
					return lat, err
				}
				screenLat[i] = append(screenLat[i], d)
				afterLat[i] = append(afterLat[i], max(0, d-took))
			}
		}
		return lat, nil
	})
	if err != nil {
		return err
	}
	mode := "closed loop"
	if rate > 0 {
		mode = fmt.Sprintf("paced %g calls/s/agent", rate)
	}
	fmt.Printf("%s, %d agents for %s: %d calls, %s, server CPU %s per call\n",
		mode, len(agents), r.elapsed.Round(time.Millisecond), len(r.lat), r.rate("calls"), r.cpuPer(idleCores))
	if toScreen {
		var all []time.Duration
		for _, l := range screenLat {
			all = append(all, l...)
		}
		slices.Sort(all)
		fmt.Printf("agent→screen (the call's start until its text is on the session's terminal) over %d calls: p50=%s p99=%s\n",
			len(all), all[len(all)/2], all[len(all)*99/100])
		var after []time.Duration
		for _, l := range afterLat {
			after = append(after, l...)
		}
		slices.Sort(after)
		fmt.Printf("  of it after the call's answer (0 when the text was there first): p50=%s p99=%s\n",
			after[len(after)/2], after[len(after)*99/100])
	}
	return nil
}

// waitScreen waits until text is on c's screen and returns how long after
// t0 it was first seen there (output is checked as it arrives).
func waitScreen(c *client, text string, t0 time.Time) (time.Duration, error) {
	deadline := time.After(5 * time.Second)
	for {
		if strings.Contains(c.screen(), text) {
			return time.Since(t0), nil
		}
		select {
		case <-c.out:
		case <-deadline:
			return 0, fmt.Errorf("agent→screen: %q not on the terminal within 5s", text)
		}
	}
}

// drain0 empties c without waiting.
func drain0(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// scrapeAll scrapes every URL and adds the samples up: the cluster's
// total.
func scrapeAll(urls []string) (map[string]float64, error) {
	var all []map[string]float64
	for _, u := range urls {
		m, err := scrape(u)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		all = append(all, m)
	}
	return sumSamples(all), nil
}

// sessionsPerNode reads each node's raxol_sessions_open.
func sessionsPerNode(urls []string) (string, error) {
	hosts, err := origins(urls)
	if err != nil {
		return "", err
	}
	var parts []string
	for i, u := range urls {
		m, err := scrape(u)
		if err != nil {
			return "", fmt.Errorf("%s: %w", u, err)
		}
		parts = append(parts, fmt.Sprintf("%s=%.0f", strings.TrimPrefix(hosts[i], "http://"), m["raxol_sessions_open"]))
	}
	return "sessions open per node: " + strings.Join(parts, " "), nil
}

// agentsPerNode says where the agents' sessions live and which nodes they
// went through.
func agentsPerNode(clients []*client, via agentVia) string {
	var home, through counts
	away, n := 0, 0
	for _, c := range clients {
		if c.agent == nil {
			continue
		}
		n++
		if c.home != "" {
			home.add(c.home)
		}
		through.add(c.via)
		if c.home != "" && c.via != c.home {
			away++
		}
	}
	if len(mcpURLs) > 0 {
		return fmt.Sprintf("agents per endpoint: %s", &through)
	}
	return fmt.Sprintf("agents per node (--agent-via %s): sessions at home %s; through %s; %d of %d through a node other than their session's",
		via, &home, &through, away, n)
}

// scrape reads the unlabelled samples of a Prometheus text exposition.
func scrape(url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || strings.Contains(line, "{") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out, sc.Err()
}
