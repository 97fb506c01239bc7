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
	"net/http/cookiejar"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/tui"
)

// `raxol-load viewers` measures what watching one session costs the
// server, per viewer: --n browsers on the session's web view (each opened
// with a one-time link the owner's attach panel shows, then let in by the
// owner's terminal as an observer) or --n SSH joiners (`join <id>` with the
// owner's own key, let in without a prompt). It reports, against the same
// server with the owner alone: memory per viewer (heap in use and RSS,
// settled), server CPU per keystroke frame per viewer, the bytes each
// viewer is sent per keystroke (payload: SSH channel data or the event
// stream's body; wire: the TCP bytes, SSH's encryption or HTTP's chunking
// included) and the latency from the owner's key to each viewer's frame.
//
// The keys are the owner's, one every --every: in the demo's services
// table (Down and Up in turn: the highlighted row, which is the owner's
// terminal's own state) and, with --type, in its Search input (a letter
// and Backspace in turn: the app's state, which every view shows).
//
//	go run ./cmd/raxol-ssh --max-browsers-per-session 128 --pprof-addr 127.0.0.1:6060 &
//	go run ./cmd/raxol-load viewers --kind browser --n 100 --pid $!
func runViewers(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("viewers", flag.ContinueOnError)
	kind := fs.String("kind", "browser", "the viewers: browser (the web view's live channel, let in as observers) or ssh (joiners with the owner's key)")
	n := fs.Int("n", 100, "viewers on the session")
	sshAddr := fs.String("ssh", "127.0.0.1:2222", "server SSH address")
	metricsURL := fs.String("metrics", "http://127.0.0.1:8080/metrics", "server metrics URL (heap in use; RSS and CPU when --pid is not given)")
	pid := fs.Int("pid", 0, "the server's process id: CPU time and RSS from /proc/<pid> (else from --metrics)")
	keys := fs.Int("keys", 100, "owner's keystrokes per phase")
	every := fs.Duration("every", 250*time.Millisecond, "time between two keystrokes")
	settle := fs.Duration("settle", 15*time.Second, "wait before memory is read, with the owner alone and with the viewers (raxol-ssh's GC pacer collects a quiet server at 3 s and 12 s)")
	hold := fs.Duration("hold", 5*time.Second, "idle period whose CPU is subtracted from the keystroke phases")
	cols := fs.Int("cols", 80, "SSH joiners' terminal width")
	rows := fs.Int("rows", 24, "SSH joiners' terminal height")
	typing := fs.Bool("type", true, "after the row keys, also type in the Search input (a letter, then Backspace)")
	pprofURL := fs.String("pprof", "", "the server's pprof base URL (raxol-ssh --pprof-addr), e.g. http://127.0.0.1:6060: memory is also read after a forced GC (its heap profile's gc=1), and a CPU profile of each keystroke phase with the viewers is saved to --profile-dir")
	profileDir := fs.String("profile-dir", ".", "where the keystroke phases' CPU profiles go")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kind != "browser" && *kind != "ssh" {
		return fmt.Errorf("--kind %q: want browser or ssh", *kind)
	}
	if *n < 1 || *keys < 1 {
		return errors.New("--n and --keys must be at least 1")
	}
	probe := serverProbe{metrics: *metricsURL, pid: *pid}

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		return err
	}
	cfg := &gossh.ClientConfig{User: "owner", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second}

	// The owner: wide enough for the attach panel's link on one line.
	owner, err := openTerm(*sshAddr, cfg, "", 220, 50)
	if err != nil {
		return fmt.Errorf("owner: %w", err)
	}
	defer func() { _ = owner.sess.Close(); _ = owner.conn.Close() }()
	scr, err := waitOn(owner, "the demo", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Services (") && sessionRe.MatchString(s)
	})
	if err != nil {
		return err
	}
	id := sessionRe.FindStringSubmatch(scr)[1]
	fmt.Fprintf(out, "session %s, %d %s viewers, %d keys per phase every %s\n", id, *n, *kind, *keys, *every)
	if err := send(owner, "\x1b[Z"); err != nil { // from the tabs to the services table
		return err
	}
	time.Sleep(300 * time.Millisecond)

	ph := phases{out: out, probe: probe, owner: owner, keys: *keys, every: *every, hold: *hold}
	time.Sleep(*settle)
	alone, aloneGC, err := probe.settled(*pprofURL)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "owner alone: heap_inuse=%.2f MiB rss=%.2f MiB goroutines=%.0f%s\n", alone.heap/(1<<20), alone.rss/(1<<20), alone.goroutines, aloneGC.afterGC())
	base, err := ph.run(nil, *typing, nil)
	if err != nil {
		return fmt.Errorf("owner alone: %w", err)
	}

	start := time.Now()
	var vs []viewer
	for i := range *n {
		var v viewer
		var err error
		if *kind == "ssh" {
			v, err = joinViewer(*sshAddr, cfg, id, *cols, *rows)
		} else {
			v, err = browserViewer(owner)
		}
		if err != nil {
			closeAll(vs)
			return fmt.Errorf("viewer %d: %w", i+1, err)
		}
		vs = append(vs, v)
	}
	defer closeAll(vs)
	fmt.Fprintf(out, "%d %s viewers in %s\n", len(vs), *kind, time.Since(start).Round(time.Millisecond))

	time.Sleep(*settle)
	with, withGC, err := probe.settled(*pprofURL)
	if err != nil {
		return err
	}
	nf := float64(len(vs))
	fmt.Fprintf(out, "with viewers: heap_inuse=%.2f MiB rss=%.2f MiB goroutines=%.0f%s\n", with.heap/(1<<20), with.rss/(1<<20), with.goroutines, withGC.afterGC())
	fmt.Fprintf(out, "memory per viewer: heap_inuse=%.1f KiB rss=%.1f KiB goroutines=%.1f\n",
		(with.heap-alone.heap)/nf/1024, (with.rss-alone.rss)/nf/1024, (with.goroutines-alone.goroutines)/nf)
	if withGC != nil {
		fmt.Fprintf(out, "memory per viewer after a forced GC: heap_inuse=%.1f KiB rss=%.1f KiB\n",
			(withGC.heap-aloneGC.heap)/nf/1024, (withGC.rss-aloneGC.rss)/nf/1024)
	}

	prof := ""
	if *pprofURL != "" {
		prof = strings.TrimRight(*pprofURL, "/") + "/debug/pprof/profile"
	}
	r, err := ph.run(vs, *typing, profilePath(prof, *profileDir, *kind))
	if err != nil {
		return err
	}
	for i, p := range r {
		b := base[i]
		perKey := float64(p.keys)
		net := p.netCPU() - b.netCPU() // what the viewers added
		fmt.Fprintf(out, "%s: owner alone %.3f ms CPU per key; with %d viewers %.3f ms per key: %.1f µs per frame per viewer (%.1f µs gross)\n",
			p.name, 1000*b.netCPU()/perKey, len(vs), 1000*p.netCPU()/perKey, 1e6*net/perKey/nf, 1e6*p.netCPU()/perKey/nf)
		fmt.Fprintf(out, "%s: per key per viewer: %.0f bytes payload, %.0f bytes on the wire; %d of %d frames arrived (%s)\n",
			p.name, float64(p.payload)/perKey/nf, float64(p.wire)/perKey/nf, len(p.lat), p.keys*len(vs), p.events)
		if len(p.lat) > 0 {
			fmt.Fprintf(out, "%s: owner's key → viewer's frame: p50=%s p90=%s p99=%s max=%s\n", p.name,
				p.lat[len(p.lat)/2], p.lat[len(p.lat)*9/10], p.lat[len(p.lat)*99/100], p.lat[len(p.lat)-1])
		}
	}
	return nil
}

var (
	sessionRe  = regexp.MustCompile(`session ([A-Za-z0-9_-]{24})`)
	viewLinkRe = regexp.MustCompile(`http://\S+/sessions/\S+/view\?link=[A-Za-z0-9_-]+`)
)

// The owner's prompt for a browser that opened a link (server/webview.go).
const browserPrompt = "A browser asks to join your session"

func profilePath(url, dir, kind string) func(phase string) (string, string) {
	if url == "" {
		return nil
	}
	return func(phase string) (string, string) {
		return url, fmt.Sprintf("%s/viewers-%s-%s.pprof", strings.TrimRight(dir, "/"), kind, phase)
	}
}

// waitOn waits until c's screen satisfies ok, and returns it.
func waitOn(c *client, what string, d time.Duration, ok func(string) bool) (string, error) {
	deadline := time.Now().Add(d)
	for {
		s := c.screen()
		if ok(s) {
			return s, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no %s on the owner's screen within %s; the screen:\n%s", what, d, s)
		}
		select {
		case <-c.out:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func send(c *client, keys string) error {
	_, err := io.WriteString(c.stdin, keys)
	return err
}

// sample is what the server uses, read from /proc or its /metrics.
type sample struct{ cpu, heap, rss, goroutines float64 }

type serverProbe struct {
	metrics string
	pid     int
}

func (p serverProbe) read() (sample, error) {
	m, err := scrape(p.metrics)
	if err != nil {
		return sample{}, err
	}
	s := sample{cpu: m["process_cpu_seconds_total"], heap: m["go_memstats_heap_inuse_bytes"],
		rss: m["process_resident_memory_bytes"], goroutines: m["go_goroutines"]}
	if p.pid > 0 {
		if s.cpu, s.rss, err = procCPURSS(p.pid); err != nil {
			return s, err
		}
	}
	return s, nil
}

// settled reads the server as it is, then, given its pprof base URL,
// again after a forced collection (the heap profile's gc=1): what is
// live, apart from the garbage the GC has not collected yet.
func (p serverProbe) settled(pprofURL string) (sample, *sample, error) {
	s, err := p.read()
	if err != nil || pprofURL == "" {
		return s, nil, err
	}
	resp, err := http.Get(strings.TrimRight(pprofURL, "/") + "/debug/pprof/heap?gc=1")
	if err != nil {
		return s, nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, nil, fmt.Errorf("forced GC: %s", resp.Status)
	}
	gc, err := p.read()
	return s, &gc, err
}

// afterGC is what the server used after a forced GC, for a line of the
// output ("" if none was forced).
func (s *sample) afterGC() string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("; after a forced GC: heap_inuse=%.2f MiB rss=%.2f MiB", s.heap/(1<<20), s.rss/(1<<20))
}

// procCPURSS reads a process's CPU time (user and system, in seconds) and
// resident memory (bytes) from /proc.
func procCPURSS(pid int) (cpu, rss float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The fields after the command (which may hold spaces) in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 22 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, _ := strconv.ParseFloat(f[11], 64) // field 14
	stime, _ := strconv.ParseFloat(f[12], 64) // field 15
	pages, _ := strconv.ParseFloat(f[21], 64) // field 24
	const ticks = 100                         // USER_HZ on Linux
	return (utime + stime) / ticks, pages * float64(os.Getpagesize()), nil
}

// viewer is one browser or SSH joiner watching the session: it reads all
// it is sent, counts it, and notes when each frame arrived.
type viewer interface {
	counts() (payload, wire int64)
	// frames has the arrival time of the frames (SSH: any output; a
	// browser: each "frame" or "patch" event); only the latest is kept.
	frames() <-chan time.Time
	events() map[string]int64
	close()
}

// reader is what both kinds of viewer share.
type reader struct {
	payload, wire atomic.Int64
	arrived       chan time.Time
	mu            sync.Mutex
	names         map[string]int64 // events by name (a browser's)
}

func newReader() *reader {
	return &reader{arrived: make(chan time.Time, 1), names: map[string]int64{}}
}

func (r *reader) counts() (int64, int64)   { return r.payload.Load(), r.wire.Load() }
func (r *reader) frames() <-chan time.Time { return r.arrived }
func (r *reader) events() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int64, len(r.names))
	for k, v := range r.names {
		out[k] = v
	}
	return out
}

// arrive notes a frame: the channel keeps the first one not yet taken.
func (r *reader) arrive(t time.Time) {
	select {
	case r.arrived <- t:
	default:
	}
}

// countedConn counts the bytes read from the connection.
type countedConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// sshViewer is a terminal that joined the session with the owner's key.
type sshViewer struct {
	*reader
	conn *gossh.Client
}

func (v *sshViewer) close() { _ = v.conn.Close() }

// joinViewer runs `join id` with the owner's key (cfg) on a cols×rows PTY
// and waits for its first frame.
func joinViewer(addr string, cfg *gossh.ClientConfig, id string, cols, rows int) (*sshViewer, error) {
	r := newReader()
	conn, _, _, stdout, err := dialTerm(addr, cfg, "join "+id, cols, rows, nil, func(c net.Conn) net.Conn { return countedConn{c, &r.wire} })
	if err != nil {
		return nil, err
	}
	v := &sshViewer{reader: r, conn: conn}
	if err := readFrames(stdout, conn, func(b []byte) {
		r.payload.Add(int64(len(b)))
		r.arrive(time.Now())
	}); err != nil {
		return nil, fmt.Errorf("joiner: %w", err)
	}
	return v, nil
}

// webViewer is a browser on the session's view: the page, then its live
// channel (server-sent events).
type webViewer struct {
	*reader
	cancel context.CancelFunc
}

func (v *webViewer) close() { v.cancel() }

// browserViewer has the owner make a link (ctrl+o), opens it as a browser
// does (the link for a cookie, then the page), opens the live channel and
// has the owner let it in as an observer ("o" on the prompt, once its
// answer keys are active), and waits for its first frame.
func browserViewer(owner *client) (*webViewer, error) {
	drain0(owner.out)
	if err := send(owner, "\x0f"); err != nil {
		return nil, err
	}
	scr, err := waitOn(owner, "browser link", 30*time.Second, func(s string) bool { return viewLinkRe.MatchString(s) })
	if err != nil {
		return nil, err
	}
	link := viewLinkRe.FindString(scr)
	if err := send(owner, "\x0f"); err != nil {
		return nil, err
	}
	if _, err := waitOn(owner, "closed attach panel", 30*time.Second, func(s string) bool { return !viewLinkRe.MatchString(s) }); err != nil {
		return nil, err
	}

	r := newReader()
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countedConn{c, &r.wire}, nil
	}}
	hc := &http.Client{Jar: jar, Transport: tr}
	ctx, cancel := context.WithCancel(context.Background())
	v := &webViewer{reader: r, cancel: cancel}
	fail := func(err error) (*webViewer, error) { cancel(); return nil, err }
	page, err := hc.Get(link) // 303 to the page, with the cookie
	if err != nil {
		return fail(err)
	}
	_, _ = io.Copy(io.Discard, page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("the link's page answered %d", page.StatusCode))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page.Request.URL.String()+"/events", nil)
	if err != nil {
		return fail(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return fail(fmt.Errorf("the live channel answered %d: %s", resp.StatusCode, strings.TrimSpace(string(b))))
	}
	go func() {
		defer resp.Body.Close()
		readEvents(resp.Body, r)
	}()

	if _, err := waitOn(owner, "armed browser prompt", 30*time.Second, func(s string) bool {
		return strings.Contains(s, browserPrompt) && !strings.Contains(s, tui.ArmingNote)
	}); err != nil {
		return fail(err)
	}
	if err := send(owner, "o"); err != nil {
		return fail(err)
	}
	select {
	case <-r.arrived:
	case <-time.After(30 * time.Second):
		return fail(fmt.Errorf("no first frame on the live channel within 30s after the owner let it in (events %v)", r.events()))
	}
	if _, err := waitOn(owner, "prompt gone", 30*time.Second, func(s string) bool { return !strings.Contains(s, browserPrompt) }); err != nil {
		return fail(err)
	}
	return v, nil
}

// readEvents reads an event stream to its end, counting its bytes and its
// events by name, and noting when each frame or patch arrived.
func readEvents(body io.Reader, r *reader) {
	br := bufio.NewReaderSize(body, 64<<10)
	name := ""
	lineStart := true
	for {
		line, err := br.ReadSlice('\n')
		r.payload.Add(int64(len(line)))
		if len(line) > 0 {
			if lineStart {
				switch {
				case len(line) == 1 && line[0] == '\n': // an event ends
					if name == "frame" || name == "patch" {
						r.arrive(time.Now())
					}
					r.mu.Lock()
					r.names[name]++
					r.mu.Unlock()
					name = ""
				case strings.HasPrefix(string(line), "event: "):
					name = strings.TrimSpace(string(line[len("event: "):]))
				}
			}
			lineStart = line[len(line)-1] == '\n'
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func closeAll(vs []viewer) {
	for _, v := range vs {
		v.close()
	}
}

// phases runs the owner's keystroke phases.
type phases struct {
	out   io.Writer
	probe serverProbe
	owner *client
	keys  int
	every time.Duration
	hold  time.Duration
}

// phaseFigures is what one keystroke phase measured.
type phaseFigures struct {
	name           string
	keys           int
	cpu            float64 // server CPU-seconds over the phase
	idleCPU        float64 // what the same time idle costs, measured before
	payload, wire  int64   // bytes the viewers got over the phase
	lat            []time.Duration
	events         string // the viewers' events over the phase, by name
	elapsedSeconds float64
}

// netCPU is the phase's CPU less what the same time costs idle.
func (p phaseFigures) netCPU() float64 { return max(p.cpu-p.idleCPU, 0) }

// run measures the idle CPU for --hold, then the row keys, then (typing)
// the Search keys, with the viewers vs (none: the owner alone).
func (ph phases) run(vs []viewer, typing bool, profile func(string) (string, string)) ([]phaseFigures, error) {
	a, err := ph.probe.read()
	if err != nil {
		return nil, err
	}
	time.Sleep(ph.hold)
	b, err := ph.probe.read()
	if err != nil {
		return nil, err
	}
	idle := (b.cpu - a.cpu) / ph.hold.Seconds() // CPU-seconds per second
	fmt.Fprintf(ph.out, "idle (%d viewers): %.2f%% of one core\n", len(vs), 100*idle)

	// Down and Up in the services table: its highlighted row, in the
	// owner's terminal.
	var figs []phaseFigures
	p, err := ph.keystrokes(vs, "row", []string{"\x1b[B", "\x1b[A"}, idle, profile)
	if err != nil {
		return nil, err
	}
	figs = append(figs, p)
	if typing {
		// Tab twice: the services table, the tabs, Search.
		if err := send(ph.owner, "\t\t"); err != nil {
			return nil, err
		}
		time.Sleep(500 * time.Millisecond)
		p, err := ph.keystrokes(vs, "type", []string{"x", "\x7f"}, idle, profile)
		if err != nil {
			return nil, err
		}
		figs = append(figs, p)
		// Back to the services table for the next run.
		if err := send(ph.owner, "\x1b[Z\x1b[Z"); err != nil {
			return nil, err
		}
		time.Sleep(500 * time.Millisecond)
	}
	return figs, nil
}

// keystrokes has the owner press keys in turn, one every ph.every, and
// measures the server's CPU, what the viewers get and when.
func (ph phases) keystrokes(vs []viewer, name string, keys []string, idle float64, profile func(string) (string, string)) (phaseFigures, error) {
	p := phaseFigures{name: name, keys: ph.keys}
	events0 := map[string]int64{}
	for _, v := range vs {
		for k, n := range v.events() {
			events0[k] += n
		}
		pl, w := v.counts()
		p.payload -= pl
		p.wire -= w
	}
	profDone := make(chan error, 1)
	if profile != nil && len(vs) > 0 {
		url, file := profile(name)
		secs := int(ph.every.Seconds()*float64(ph.keys)) + 1
		go func() { profDone <- fetchProfile(fmt.Sprintf("%s?seconds=%d", url, secs), file) }()
		time.Sleep(100 * time.Millisecond) // the profile is running
	} else {
		profDone <- nil
	}
	before, err := ph.probe.read()
	if err != nil {
		return p, err
	}
	start := time.Now()
	marker := "x"
	for i := range ph.keys {
		for _, v := range vs {
			drainTimes(v.frames())
		}
		t0 := time.Now()
		if err := send(ph.owner, keys[i%len(keys)]); err != nil {
			return p, err
		}
		if name == "type" && i == 0 {
			if _, err := waitOn(ph.owner, "the typed letter in Search", 5*time.Second, func(s string) bool {
				return strings.Contains(s, "Search: "+marker) || strings.Contains(s, "Search:"+marker)
			}); err != nil {
				return p, err
			}
		}
		deadline := time.NewTimer(time.Until(t0.Add(ph.every * 9 / 10)))
	wait:
		for _, v := range vs {
			select {
			case t := <-v.frames():
				p.lat = append(p.lat, t.Sub(t0))
			case <-deadline.C:
				break wait
			}
		}
		deadline.Stop()
		time.Sleep(time.Until(t0.Add(ph.every)))
	}
	p.elapsedSeconds = time.Since(start).Seconds()
	after, err := ph.probe.read()
	if err != nil {
		return p, err
	}
	p.cpu = after.cpu - before.cpu
	p.idleCPU = idle * p.elapsedSeconds
	events := map[string]int64{}
	for _, v := range vs {
		for k, n := range v.events() {
			events[k] += n
		}
		pl, w := v.counts()
		p.payload += pl
		p.wire += w
	}
	var names []string
	for k, n := range events {
		if d := n - events0[k]; d > 0 {
			names = append(names, fmt.Sprintf("%s=%d", k, d))
		}
	}
	slices.Sort(names)
	p.events = strings.Join(names, " ")
	if p.events == "" {
		p.events = "no events"
		if len(vs) > 0 {
			if _, ok := vs[0].(*sshViewer); ok {
				p.events = "terminal output"
			}
		}
	}
	slices.Sort(p.lat)
	if err := <-profDone; err != nil {
		fmt.Fprintf(ph.out, "%s: CPU profile: %v\n", name, err)
	} else if profile != nil && len(vs) > 0 {
		_, file := profile(name)
		fmt.Fprintf(ph.out, "%s: CPU profile of the phase: %s\n", name, file)
	}
	return p, nil
}

func drainTimes(c <-chan time.Time) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// fetchProfile saves the CPU profile at url (it takes its seconds) to file.
func fetchProfile(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
