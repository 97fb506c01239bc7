package server_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Timeouts for polling. Generous: under -race on two cores everything is
// several times slower than usual.
const (
	waitShort = 5 * time.Second
	waitLong  = 15 * time.Second
)

// Keys as a terminal sends them.
const (
	keyTab      = "\t"
	keyShiftTab = "\x1b[Z"
	keyEnter    = "\r"
	keyEsc      = "\x1b"
	keyCtrlC    = "\x03"
	keyCtrlO    = "\x0f"
	keyCtrlX    = "\x18"
	keyUp       = "\x1b[A"
	keyDown     = "\x1b[B"
	keyRight    = "\x1b[C"
	keyLeft     = "\x1b[D"
)

// testServer is a started server on loopback ports.
type testServer struct {
	*server.Server
	t        testing.TB
	mu       sync.Mutex
	shutdown bool
}

// testOptions fills in loopback addresses, a temporary data directory and
// the test's logger where opts leaves them empty.
func testOptions(t testing.TB, opts server.Options) server.Options {
	if opts.SSH.Addr == "" {
		opts.SSH.Addr = "127.0.0.1:0"
	}
	if opts.MCP.Addr == "" {
		opts.MCP.Addr = "127.0.0.1:0"
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.SSH.ResumeGrace == 0 {
		// These tests were written for a dropped owner ending the session
		// at once unless a test asks for a grace; the library's zero value
		// is now DefaultResumeGrace, the command's default.
		opts.SSH.ResumeGrace = -1
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testkit.NewLogWriter(t), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return opts
}

// demoApp is the demo as the tests serve it.
func demoApp() server.App {
	return server.App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, Projections: demo.Projections(), ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy()}
}

// newServerOpts creates (but does not start) a demo server with
// testOptions.
func newServerOpts(t testing.TB, opts server.Options) (*server.Server, error) {
	t.Helper()
	return server.New(demoApp(), testOptions(t, opts))
}

// startServer creates and starts a demo server; it is shut down when the
// test ends (unless the test shut it down itself).
func startServer(t testing.TB, opts server.Options) *testServer {
	t.Helper()
	return startApp(t, demoApp(), opts)
}

// startApp is startServer with app.
func startApp(t testing.TB, app server.App, opts server.Options) *testServer {
	t.Helper()
	srv, err := server.New(app, testOptions(t, opts))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	ts := &testServer{Server: srv, t: t}
	t.Cleanup(func() {
		ts.mu.Lock()
		done := ts.shutdown
		ts.shutdown = true
		ts.mu.Unlock()
		if done {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return ts
}

// Shutdown shuts the server down and keeps the cleanup from doing it again.
func (ts *testServer) Shutdown(ctx context.Context) error {
	ts.mu.Lock()
	ts.shutdown = true
	ts.mu.Unlock()
	return ts.Server.Shutdown(ctx)
}

// newKey returns a fresh ed25519 signer.
func newKey(t testing.TB) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// clientOpts configures a test client.
type clientOpts struct {
	user    string
	key     gossh.Signer // nil: a fresh key
	w, h    int          // terminal size; 0: 100x30
	noPty   bool         // don't request a PTY
	noRead  bool         // never read stdout (a stuck client)
	local   string       // local IP to dial from; "" means any
	proxy   bool         // dial through a proxy that can stall the output
	command string       // run this command (exec, as `ssh -t host cmd`) instead of a shell
	hostKey gossh.HostKeyCallback
	keepRaw bool              // keep every byte of stdout (Raw)
	term    string            // TERM of the PTY; "": xterm-256color
	env     map[string]string // environment variables to send
}

// client is one SSH connection with one session running the shell, its
// output fed into a terminal emulator.
type client struct {
	t      testing.TB
	conn   *gossh.Client
	sess   *gossh.Session
	stdin  io.WriteCloser
	w, h   int
	noRead bool

	mu      sync.Mutex // protects em and raw
	em      *vt.Emulator
	raw     []byte // stdout as received, with clientOpts.keepRaw
	keepRaw bool

	errMu  sync.Mutex
	stderr bytes.Buffer

	stderrDone chan struct{} // closed when stderr reaches EOF
	stdoutDone chan struct{} // closed when stdout reaches EOF
	exited     chan struct{} // closed when sess.Wait returned
	exitErr    error         // sess.Wait's result, set before exited is closed

	proxy    *stallProxy // nil unless clientOpts.proxy
	ownsConn bool        // Close closes conn

	closeOnce sync.Once
}

// dialSSH connects and authenticates, or returns the error.
func dialSSH(t testing.TB, addr string, o clientOpts) (*gossh.Client, error) {
	t.Helper()
	testkit.EndToEnd(t)
	if o.user == "" {
		o.user = "tester"
	}
	if o.key == nil {
		o.key = newKey(t)
	}
	if o.hostKey == nil {
		o.hostKey = gossh.InsecureIgnoreHostKey()
	}
	cfg := &gossh.ClientConfig{
		User:            o.user,
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(o.key)},
		HostKeyCallback: o.hostKey,
		Timeout:         waitShort,
	}
	d := net.Dialer{Timeout: waitShort}
	if o.local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(o.local)}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(waitLong))
	c, chans, reqs, err := gossh.NewClientConn(nc, addr, cfg)
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	return gossh.NewClient(c, chans, reqs), nil
}

// connect dials addr, starts a shell and returns the client; it is closed
// when the test ends.
func connect(t testing.TB, addr string, o clientOpts) *client {
	t.Helper()
	var proxy *stallProxy
	if o.proxy {
		proxy = newStallProxy(t, addr)
		addr = proxy.addr()
	}
	conn, err := dialSSH(t, addr, o)
	if err != nil {
		if proxy != nil {
			proxy.close()
		}
		t.Fatalf("dial %s: %v", addr, err)
	}
	c := connectOn(t, conn, o)
	c.ownsConn = true
	c.proxy = proxy
	return c
}

// connectOn starts a shell in a new session on conn, which the client
// does not close.
func connectOn(t testing.TB, conn *gossh.Client, o clientOpts) *client {
	t.Helper()
	if o.w == 0 {
		o.w = 100
	}
	if o.h == 0 {
		o.h = 30
	}
	c := &client{
		t:          t,
		conn:       conn,
		w:          o.w,
		h:          o.h,
		noRead:     o.noRead,
		keepRaw:    o.keepRaw,
		em:         vt.NewEmulator(o.w, o.h),
		stderrDone: make(chan struct{}),
		stdoutDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	t.Cleanup(c.Close)
	fail := func(what string, err error) {
		t.Helper()
		c.Close()
		t.Fatalf("%s: %v", what, err)
	}
	var err error
	if c.sess, err = conn.NewSession(); err != nil {
		fail("NewSession", err)
	}
	for k, v := range o.env {
		if err := c.sess.Setenv(k, v); err != nil {
			fail("Setenv "+k, err)
		}
	}
	if o.term == "" {
		o.term = "xterm-256color"
	}
	if !o.noPty {
		if err := c.sess.RequestPty(o.term, o.h, o.w, gossh.TerminalModes{}); err != nil {
			fail("RequestPty", err)
		}
	}
	if c.stdin, err = c.sess.StdinPipe(); err != nil {
		fail("StdinPipe", err)
	}
	stdout, err := c.sess.StdoutPipe()
	if err != nil {
		fail("StdoutPipe", err)
	}
	stderr, err := c.sess.StderrPipe()
	if err != nil {
		fail("StderrPipe", err)
	}
	if o.command != "" {
		if err := c.sess.Start(o.command); err != nil {
			fail("Start "+o.command, err)
		}
	} else if err := c.sess.Shell(); err != nil {
		fail("Shell", err)
	}
	// The emulator's replies to the program's terminal queries go back as
	// input; without this reader em.Write blocks on its unbuffered pipe.
	// Close ends it by closing the emulator's input pipe (not em.Close,
	// whose write of its closed flag would race with em.Read).
	go func() { _, _ = io.Copy(c.stdin, c.em) }()
	if o.noRead {
		close(c.stdoutDone)
	} else {
		go func() {
			defer close(c.stdoutDone)
			buf := make([]byte, 32<<10)
			for {
				n, err := stdout.Read(buf)
				if n > 0 {
					c.mu.Lock()
					if c.keepRaw {
						c.raw = append(c.raw, buf[:n]...)
					}
					_, _ = c.em.Write(buf[:n])
					c.mu.Unlock()
				}
				if err != nil {
					return
				}
			}
		}()
	}
	go func() {
		defer close(c.stderrDone)
		buf := make([]byte, 4<<10)
		for {
			n, err := stderr.Read(buf)
			if n > 0 {
				c.errMu.Lock()
				c.stderr.Write(buf[:n])
				c.errMu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		c.exitErr = c.sess.Wait()
		close(c.exited)
	}()
	return c
}

// Close ends the session and the connection; safe to call more than once.
func (c *client) Close() {
	c.closeOnce.Do(func() {
		if c.sess != nil {
			_ = c.sess.Close()
		}
		if c.ownsConn {
			_ = c.conn.Close()
		}
		if c.proxy != nil {
			c.proxy.close()
		}
		// Ends the io.Copy of the emulator's replies.
		_ = c.em.InputPipe().(*io.PipeWriter).Close()
		// Wait for the readers so nothing outlives the test.
		for _, ch := range []chan struct{}{c.stdoutDone, c.stderrDone} {
			select {
			case <-ch:
			case <-time.After(waitShort):
				c.t.Errorf("client reader did not stop")
			}
		}
	})
}

// send writes raw bytes to the session's input.
func (c *client) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, s); err != nil {
		c.t.Fatalf("write %q: %v", truncate(s, 40), err)
	}
}

// Type types text.
func (c *client) Type(s string) { c.t.Helper(); c.send(s) }

// Key sends one key's bytes.
func (c *client) Key(k string) { c.t.Helper(); c.send(k) }

// Screen returns the plain text of the emulator's active screen.
func (c *client) Screen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.em.String()
}

// Raw returns every byte of stdout so far (clientOpts.keepRaw).
func (c *client) Raw() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.raw...)
}

// Lines returns the screen's rows, padded to the terminal's height.
func (c *client) Lines() []string {
	c.mu.Lock()
	h := c.em.Height()
	s := c.em.String()
	c.mu.Unlock()
	lines := strings.Split(s, "\n")
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines
}

// Stderr returns what the session wrote to stderr so far.
func (c *client) Stderr() string {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.stderr.String()
}

// WaitFor polls the screen until it contains want (a string) or satisfies
// want (a func(screen string) bool), and fails the test with the screen
// otherwise.
func (c *client) WaitFor(t testing.TB, want any, timeout time.Duration) string {
	t.Helper()
	var ok func(string) bool
	var desc string
	switch w := want.(type) {
	case string:
		ok = func(s string) bool { return strings.Contains(s, w) }
		desc = strconv.Quote(w)
	case func(string) bool:
		ok = w
		desc = "predicate"
	default:
		t.Fatalf("WaitFor: unsupported %T", want)
	}
	deadline := time.Now().Add(timeout)
	for {
		s := c.Screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; screen:\n%s\nstderr: %q", timeout, desc, s, c.Stderr())
		}
		select {
		case <-c.exited:
			// One last look: the final frame may have arrived with the exit.
			s := c.Screen()
			if ok(s) {
				return s
			}
			t.Fatalf("session exited (%v) while waiting for %s; screen:\n%s\nstderr: %q", c.exitErr, desc, s, c.Stderr())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Resize resizes the emulator and tells the server.
func (c *client) Resize(w, h int) {
	c.t.Helper()
	c.mu.Lock()
	c.em.Resize(w, h)
	c.w, c.h = w, h
	c.mu.Unlock()
	if err := c.sess.WindowChange(h, w); err != nil {
		c.t.Fatalf("WindowChange: %v", err)
	}
}

// WaitExit waits for the session to end and returns sess.Wait's error and
// the whole stderr.
func (c *client) WaitExit(t testing.TB, timeout time.Duration) (error, string) {
	t.Helper()
	select {
	case <-c.exited:
	case <-time.After(timeout):
		t.Fatalf("session still running after %v; screen:\n%s\nstderr: %q", timeout, c.Screen(), c.Stderr())
	}
	select {
	case <-c.stderrDone:
	case <-time.After(waitShort):
		t.Fatalf("stderr not closed after the session ended")
	}
	return c.exitErr, c.Stderr()
}

// Exited reports whether the session has ended.
func (c *client) Exited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// requireExitStatus checks that err is an *ExitError with a non-zero status.
func requireNonZeroExit(t testing.TB, err error) {
	t.Helper()
	var ee *gossh.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("exit error = %v (%T), want *ssh.ExitError", err, err)
	}
	if ee.ExitStatus() == 0 {
		t.Fatalf("exit status 0, want non-zero")
	}
}

// sessionIDRe matches the id in the status bar.
var sessionIDRe = regexp.MustCompile(`session ([A-Za-z0-9_-]{24})`)

// sessionIDOnScreen returns the session id shown in the status bar.
func sessionIDOnScreen(t testing.TB, c *client) string {
	t.Helper()
	s := c.WaitFor(t, func(s string) bool { return sessionIDRe.MatchString(s) }, waitLong)
	return sessionIDRe.FindStringSubmatch(s)[1]
}

// waitDemo waits for the demo's first frame and returns the session id.
func waitDemo(t testing.TB, c *client) string {
	t.Helper()
	c.WaitFor(t, func(s string) bool {
		return strings.Contains(s, "Overview") && strings.Contains(s, "Services (") && sessionIDRe.MatchString(s)
	}, waitLong)
	return sessionIDOnScreen(t, c)
}

// armedPrompt is a WaitFor predicate: a prompt showing text is on the
// screen and takes answer keys (its arming delay is over).
func armedPrompt(text string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, text) && !strings.Contains(s, tui.ArmingNote) }
}

// httpGet fetches http://addr+path and returns the status and body.
func httpGet(t testing.TB, addr, path string) (int, string) {
	t.Helper()
	cl := &http.Client{Timeout: waitShort, Transport: &http.Transport{DisableKeepAlives: true}}
	defer cl.CloseIdleConnections()
	resp, err := cl.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

// metricValue returns the value of the sample series (name with labels, as
// written in the text format, e.g. `x_total{limit="a"}`) in a /metrics body.
func metricValue(body, series string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		rest, ok := strings.CutPrefix(line, series)
		if !ok || !strings.HasPrefix(rest, " ") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// scrapeMetric fetches /metrics and returns one series' value.
func scrapeMetric(t testing.TB, httpAddr, series string) float64 {
	t.Helper()
	code, body := httpGet(t, httpAddr, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", code)
	}
	v, ok := metricValue(body, series)
	if !ok {
		t.Fatalf("series %s not in /metrics:\n%s", series, body)
	}
	return v
}

// cellCol returns the 0-based column (in cells) of the first occurrence of
// sub in line, or -1.
func cellCol(line, sub string) int {
	i := strings.Index(line, sub)
	if i < 0 {
		return -1
	}
	return ansi.StringWidth(line[:i])
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}

// stallProxy forwards one TCP connection to the server and can stop
// forwarding the server's bytes, the way a client that stops reading
// (suspended, or on a dead network) stalls its TCP connection: the
// server's writes to it block once the kernel buffers are full.
type stallProxy struct {
	t  testing.TB
	ln net.Listener

	stallOnce sync.Once
	stalled   chan struct{} // closed by stall
	closeOnce sync.Once
	closed    chan struct{} // closed by close
	wg        sync.WaitGroup

	mu        sync.Mutex
	up, down  net.Conn
	downBytes int64 // forwarded from the server
}

func newStallProxy(t testing.TB, server string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{t: t, ln: ln, stalled: make(chan struct{}), closed: make(chan struct{})}
	p.wg.Go(func() {
		down, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", server)
		if err != nil {
			_ = down.Close()
			return
		}
		// Keep what the kernel buffers for the stalled reader small.
		_ = up.(*net.TCPConn).SetReadBuffer(4 << 10)
		p.mu.Lock()
		p.up, p.down = up, down
		p.mu.Unlock()
		select {
		case <-p.closed: // closed before the connection was set
			_ = up.Close()
			_ = down.Close()
			return
		default:
		}
		p.wg.Go(func() { _, _ = io.Copy(up, down); _ = up.Close() })
		buf := make([]byte, 4<<10)
		for {
			select {
			case <-p.stalled:
				<-p.closed
				return
			default:
			}
			n, err := up.Read(buf)
			if n > 0 {
				p.mu.Lock()
				p.downBytes += int64(n)
				p.mu.Unlock()
				if _, werr := down.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				_ = down.Close()
				return
			}
		}
	})
	return p
}

func (p *stallProxy) addr() string { return p.ln.Addr().String() }

// stall stops reading from the server.
func (p *stallProxy) stall() { p.stallOnce.Do(func() { close(p.stalled) }) }

// forwarded returns how many bytes of the server's came through.
func (p *stallProxy) forwarded() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.downBytes
}

func (p *stallProxy) close() {
	p.closeOnce.Do(func() {
		close(p.closed)
		_ = p.ln.Close()
		p.mu.Lock()
		if p.up != nil {
			_ = p.up.Close()
			_ = p.down.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
}
