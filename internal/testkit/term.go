package testkit

import (
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	gossh "golang.org/x/crypto/ssh"
)

// Term is a human's SSH client running one command in a PTY (100x30
// unless RunSized), its
// output fed into a terminal emulator. It is closed when the test ends.
type Term struct {
	t      testing.TB
	conn   *gossh.Client
	sess   *gossh.Session
	mu     sync.Mutex // protects em
	em     *vt.Emulator
	stderr SyncBuffer
	stdin  io.Writer
	read   chan struct{} // closed when stdout ends
	exited chan struct{} // closed when the command exited
	once   sync.Once
}

// Run dials addr as user "human" with a fresh key and starts command.
func Run(t testing.TB, addr, command string) *Term {
	t.Helper()
	return RunAs(t, addr, "human", NewKey(t), command)
}

// NewKey returns a fresh Ed25519 key to log in with.
func NewKey(t testing.TB) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

// RunAs dials addr as user with key and starts command, or a login shell
// when command is "".
func RunAs(t testing.TB, addr, user string, signer gossh.Signer, command string) *Term {
	t.Helper()
	return RunSized(t, addr, user, signer, command, 100, 30)
}

// RunSized is RunAs in a PTY of width x height cells.
func RunSized(t testing.TB, addr, user string, signer gossh.Signer, command string, width, height int) *Term {
	t.Helper()
	EndToEnd(t)
	conn, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: user, Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("ssh %s: %v", addr, err)
	}
	m := &Term{t: t, conn: conn, em: vt.NewEmulator(width, height), read: make(chan struct{}), exited: make(chan struct{})}
	t.Cleanup(m.Close)
	if m.sess, err = conn.NewSession(); err != nil {
		t.Fatal(err)
	}
	if err := m.sess.RequestPty("xterm-256color", height, width, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	stdin, err := m.sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := m.sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	m.sess.Stderr = &m.stderr
	m.stdin = stdin
	if command == "" {
		err = m.sess.Shell()
	} else {
		err = m.sess.Start(command)
	}
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(stdin, m.em) }() // the emulator's replies to queries
	go func() {
		defer close(m.read)
		buf := make([]byte, 32<<10)
		for {
			n, err := stdout.Read(buf)
			if n > 0 {
				m.mu.Lock()
				_, _ = m.em.Write(buf[:n])
				m.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { _ = m.sess.Wait(); close(m.exited) }()
	return m
}

// Screen is the text on the terminal now.
func (m *Term) Screen() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.em.String()
}

// Cursor is where the terminal's cursor is, and whether it is shown.
func (m *Term) Cursor() (x, y int, shown bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.em.CursorPosition()
	return p.X, p.Y, !m.em.CursorHidden()
}

// Type sends s as typed keys.
func (m *Term) Type(s string) {
	m.t.Helper()
	if _, err := io.WriteString(m.stdin, s); err != nil {
		m.t.Fatalf("typing %q: %v", s, err)
	}
}

// Resize changes the window to width x height cells, as a human
// resizing their terminal does: the emulator first, then the server is
// told (window-change).
func (m *Term) Resize(width, height int) {
	m.t.Helper()
	m.mu.Lock()
	m.em.Resize(width, height)
	m.mu.Unlock()
	if err := m.sess.WindowChange(height, width); err != nil {
		m.t.Fatalf("resize to %dx%d: %v", width, height, err)
	}
}

// Stderr is what the command wrote to standard error so far.
func (m *Term) Stderr() string { return m.stderr.String() }

// WaitFor fails the test unless text is on the screen within 15 seconds.
func (m *Term) WaitFor(text string) {
	m.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(m.Screen(), text) {
		if time.Now().After(deadline) {
			m.t.Fatalf("%q not on the human's screen:\n%s\nstderr: %s", text, m.Screen(), m.Stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitExit fails the test unless the command ends within 10 seconds.
func (m *Term) WaitExit() {
	m.t.Helper()
	select {
	case <-m.exited:
	case <-time.After(10 * time.Second):
		m.t.Fatal("the human's ssh command did not end")
	}
}

// Close ends the session and the connection and waits for the reader.
func (m *Term) Close() {
	m.once.Do(func() {
		_ = m.sess.Close()
		_ = m.conn.Close()
		_ = m.em.InputPipe().(*io.PipeWriter).Close()
		select {
		case <-m.read:
		case <-time.After(5 * time.Second):
			m.t.Error("terminal reader did not stop")
		}
	})
}
