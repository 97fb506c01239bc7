package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"github.com/charmbracelet/x/vt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// increment is the message the counter's button sends.
type increment struct{}

// counter is the smallest useful app: a count and a button, and "r"
// anywhere resets the count (a key no widget takes reaches the app).
type counter struct {
	who string
	n   int
}

func (c counter) Init() tea.Cmd { return nil }

func (c counter) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case increment:
		c.n++
	case tea.KeyPressMsg:
		if msg.String() == "r" {
			c.n = 0
		}
	}
	return c, nil
}

func (c counter) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.Text{Text: fmt.Sprintf("%s's count: %d", c.who, c.n)},
		ui.Button{ID: "inc", Label: "+1", OnClick: increment{}},
	}}
}

// counterApp is the counter with the policy agents are held to: its own
// tools and the screenshot, every read method.
func counterApp() server.App {
	tools, err := authz.Allowlist([]string{"counter.*.*", "raxol_screenshot", "discover_tools"})
	if err != nil {
		panic(err)
	}
	return server.App{
		Name:       "counter",
		New:        func(id ui.Identity) ui.Model { return counter{who: id.User} },
		ToolPolicy: tools,
		ReadPolicy: authz.AllowAll(),
	}
}

// Serve an app with one call. A real main passes a context canceled on
// SIGINT/SIGTERM and leaves the addresses and the data directory to their
// defaults (DefaultSSHAddr, DefaultHTTPAddr, DefaultDataDir); here they
// are free loopback ports and a temporary directory, and a human and an
// agent each take one turn.
func Example() {
	dir, _ := os.MkdirTemp("", "raxol-example")
	defer os.RemoveAll(dir)
	sshAddr, httpAddr := freeAddr(), freeAddr()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- server.ListenAndServe(ctx, counterApp(), server.Options{
			SSH:     server.SSHOptions{Addr: sshAddr},
			MCP:     server.MCPOptions{Addr: httpAddr},
			DataDir: dir,
			Logger:  slog.New(slog.DiscardHandler),
		})
	}()
	if err := roundTrip(sshAddr, "http://"+httpAddr); err != nil {
		fmt.Println(err)
	}
	stop()
	fmt.Println("stopped:", <-done)
	// Output:
	// human sees: alice's count: 0
	// agent clicked: counter.inc.click
	// human sees: alice's count: 1
	// stopped: <nil>
}

// Serve on listeners you own: in a test, a supervisor's sockets, or
// anything that is a net.Listener.
func ExampleServer_Serve() {
	dir, _ := os.MkdirTemp("", "raxol-example")
	defer os.RemoveAll(dir)
	srv, err := server.New(counterApp(), server.Options{DataDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	sshLn, _ := net.Listen("tcp", "127.0.0.1:0")
	httpLn, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, sshLn, httpLn) }()
	if err := roundTrip(sshLn.Addr().String(), "http://"+httpLn.Addr().String()); err != nil {
		fmt.Println(err)
	}
	stop()
	fmt.Println("stopped:", <-done)
	// Output:
	// human sees: alice's count: 0
	// agent clicked: counter.inc.click
	// human sees: alice's count: 1
	// stopped: <nil>
}

// Mount the app into a wish server of your own: your server listens and
// authenticates, the middleware serves a session to every PTY login with
// no command, and the MCP endpoints are served on your HTTP mux.
func ExampleServer_Middleware() {
	dir, _ := os.MkdirTemp("", "raxol-example")
	defer os.RemoveAll(dir)
	mux := http.NewServeMux()
	httpLn, _ := net.Listen("tcp", "127.0.0.1:0")
	base := "http://" + httpLn.Addr().String()
	srv, err := server.New(counterApp(), server.Options{
		DataDir: dir,
		MCP:     server.MCPOptions{PublicURL: base}, // where agents reach mux
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux.Handle("/", srv.Handler())
	hs := &http.Server{Handler: mux}
	go func() { _ = hs.Serve(httpLn) }()

	sshLn, _ := net.Listen("tcp", "127.0.0.1:0")
	ws, err := wish.NewServer(
		wish.WithHostKeyPath(dir+"/my_host_key"),
		wish.WithPublicKeyAuth(func(ssh.Context, ssh.PublicKey) bool { return true }),
		wish.WithMiddleware(srv.Middleware()),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() { _ = ws.Serve(sshLn) }()

	if err := roundTrip(sshLn.Addr().String(), base); err != nil {
		fmt.Println(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Println("drained:", srv.Shutdown(ctx))
	_ = ws.Close()
	_ = hs.Close()
	// Output:
	// human sees: alice's count: 0
	// agent clicked: counter.inc.click
	// human sees: alice's count: 1
	// drained: <nil>
}

// Mount the MCP endpoints on a mux of your own, next to your handlers,
// while the server keeps its own SSH listener.
func ExampleServer_Handler() {
	dir, _ := os.MkdirTemp("", "raxol-example")
	defer os.RemoveAll(dir)
	httpLn, _ := net.Listen("tcp", "127.0.0.1:0")
	base := "http://" + httpLn.Addr().String()
	srv, err := server.New(counterApp(), server.Options{
		DataDir: dir,
		MCP:     server.MCPOptions{PublicURL: base},
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hi") })
	mux.Handle("/", srv.Handler())
	hs := &http.Server{Handler: mux}
	go func() { _ = hs.Serve(httpLn) }()

	sshLn, _ := net.Listen("tcp", "127.0.0.1:0")
	if err := srv.StartOn(sshLn, nil); err != nil { // SSH only: HTTP is yours
		fmt.Println(err)
		return
	}
	if err := roundTrip(sshLn.Addr().String(), base); err != nil {
		fmt.Println(err)
	}
	fmt.Println("drained:", srv.Shutdown(context.Background()))
	_ = hs.Close()
	// Output:
	// human sees: alice's count: 0
	// agent clicked: counter.inc.click
	// human sees: alice's count: 1
	// drained: <nil>
}

// ---- what the examples do as a human and an agent ----

// roundTrip logs in over SSH as alice with a PTY, waits for the counter,
// reads the session's MCP URL and token from the attach panel as a human
// would to give them to an agent, has the agent click the button over
// MCP, and waits for the human to see the change.
func roundTrip(sshAddr, base string) error {
	h, err := login(sshAddr, "alice")
	if err != nil {
		return err
	}
	defer h.close()
	if err := h.waitFor("alice's count: 0"); err != nil {
		return err
	}
	fmt.Println("human sees: alice's count: 0")
	// The attach panel (ctrl+o) shows the session's MCP URL and token.
	h.send("\x0f")
	url, token, err := h.attachPanel(base)
	if err != nil {
		return err
	}
	h.send("\x0f")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "example-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: testkit.Bearer(nil, token)}}, nil)
	if err != nil {
		return fmt.Errorf("agent connect: %w", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "counter.inc.click"})
	if err != nil || res.IsError {
		return fmt.Errorf("click: %v %v", err, res)
	}
	fmt.Println("agent clicked: counter.inc.click")
	if err := h.waitFor("alice's count: 1"); err != nil {
		return err
	}
	fmt.Println("human sees: alice's count: 1")
	return nil
}

// human is an SSH client with a PTY whose output is fed to an emulator.
type human struct {
	conn  *gossh.Client
	sess  *gossh.Session
	stdin io.Writer
	mu    sync.Mutex
	em    *vt.Emulator
}

func login(addr, user string) (*human, error) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := gossh.NewSignerFromKey(priv)
	cfg := &gossh.ClientConfig{User: user, Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second}
	conn, err := gossh.Dial("tcp", addr, cfg)
	for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // the server may still be starting
		conn, err = gossh.Dial("tcp", addr, cfg)
	}
	if err != nil {
		return nil, err
	}
	h := &human{conn: conn, em: vt.NewEmulator(120, 30)}
	if h.sess, err = conn.NewSession(); err != nil {
		return nil, err
	}
	if err := h.sess.RequestPty("xterm-256color", 30, 120, gossh.TerminalModes{}); err != nil {
		return nil, err
	}
	if h.stdin, err = h.sess.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := h.sess.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := h.sess.Shell(); err != nil {
		return nil, err
	}
	go func() { _, _ = io.Copy(h.stdin, h.em) }()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := out.Read(buf)
			h.mu.Lock()
			_, _ = h.em.Write(buf[:n])
			h.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return h, nil
}

func (h *human) screen() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.em.String()
}

func (h *human) send(s string) { _, _ = io.WriteString(h.stdin, s) }

func (h *human) waitFor(text string) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(h.screen(), text) {
			return nil
		}
	}
	return fmt.Errorf("%q not on the screen:\n%s", text, h.screen())
}

// attachPanel reads the session's MCP URL (under base) and bearer token
// from the open attach panel: each is the line under its label.
func (h *human) attachPanel(base string) (url, token string, err error) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		lines := strings.Split(h.screen(), "\n")
		for i := 0; i+1 < len(lines); i++ {
			next := strings.TrimSpace(lines[i+1])
			switch {
			case strings.Contains(lines[i], "MCP Streamable HTTP URL:"):
				url = next
			case strings.Contains(lines[i], "Bearer token"):
				token = next
			}
		}
		if strings.HasPrefix(url, base+"/sessions/") && strings.HasSuffix(url, "/mcp") && len(token) == 43 {
			return url, token, nil
		}
	}
	return "", "", errors.New("no MCP URL and token in the attach panel:\n" + h.screen())
}

func (h *human) close() {
	_ = h.sess.Close()
	_ = h.conn.Close()
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}
