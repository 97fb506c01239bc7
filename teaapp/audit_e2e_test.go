package teaapp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/vt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/internal/testserve"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/teaapp"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// wire is a human's SSH client in a PTY that keeps every byte the server
// sent, besides feeding them to a terminal emulator: what reached the
// wire, not only what an emulator made of it.
type wire struct {
	t      *testing.T
	conn   *gossh.Client
	sess   *gossh.Session
	stdin  io.Writer
	stderr testkit.SyncBuffer
	mu     sync.Mutex // guards raw and em
	raw    []byte
	em     *vt.Emulator
	read   chan struct{}
	exited chan struct{}
}

func dialWire(t *testing.T, addr string, width, height int) *wire {
	t.Helper()
	conn, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(testkit.NewKey(t))},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w := &wire{t: t, conn: conn, em: vt.NewEmulator(width, height), read: make(chan struct{}), exited: make(chan struct{})}
	if w.sess, err = conn.NewSession(); err != nil {
		t.Fatal(err)
	}
	if err := w.sess.RequestPty("xterm-256color", height, width, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if w.stdin, err = w.sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := w.sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w.sess.Stderr = &w.stderr
	if err := w.sess.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(w.stdin, w.em) }() // the emulator's answers to queries
	go func() {
		defer close(w.read)
		buf := make([]byte, 32<<10)
		for {
			n, err := stdout.Read(buf)
			if n > 0 {
				w.mu.Lock()
				w.raw = append(w.raw, buf[:n]...)
				_, _ = w.em.Write(buf[:n])
				w.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { _ = w.sess.Wait(); close(w.exited) }()
	t.Cleanup(func() {
		_ = w.sess.Close()
		_ = w.conn.Close()
		_ = w.em.InputPipe().(*io.PipeWriter).Close()
		select {
		case <-w.read:
		case <-time.After(5 * time.Second):
			t.Error("the wire's reader did not stop")
		}
	})
	return w
}

func (w *wire) screen() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.em.String()
}

func (w *wire) bytes() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.raw)
}

func (w *wire) waitFor(text string) {
	w.t.Helper()
	testkit.Eventually(w.t, waitLong, func() bool { return strings.Contains(w.screen(), text) }, "%q on the screen", text)
}

func (w *wire) typeKeys(s string) {
	w.t.Helper()
	if _, err := io.WriteString(w.stdin, s); err != nil {
		w.t.Fatal(err)
	}
}

// tryCall calls a tool and returns its text, or the error that kept it
// from answering.
func tryCall(cs *mcp.ClientSession, name string, args map[string]any) (text string, isErr bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	return text, res.IsError, nil
}

// clipboardPayload is what rogue asks the terminal to put on the
// clipboard (OSC 52): base64 of "rm -rf ~".
const clipboardPayload = "cm0gLXJmIH4K"

// rogue's view clears the screen, sets the clipboard, moves the cursor
// far into the terminal, draws a line three times the window's width and
// three times as many lines as the window has; its Update panics on "x".
type rogue struct {
	n  int
	in textinput.Model
}

func newRogue() rogue {
	in := textinput.New()
	in.Focus()
	return rogue{in: in}
}

func (r rogue) Init() tea.Cmd { return nil }
func (r rogue) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if k.String() == "x" {
			panic("rogue: Update fails")
		}
		r.n++
	}
	var cmd tea.Cmd
	r.in, cmd = r.in.Update(msg)
	return r, cmd
}
func (r rogue) View() tea.View {
	var b strings.Builder
	fmt.Fprintf(&b, "\x1b]52;c;%s\x07\x1b[2J\x1b[20;70HMOVED keys=%d\x1b[H\x1b]0;pwned title\x07\n", clipboardPayload, r.n)
	b.WriteString(strings.Repeat("W", 300) + "\n")
	for i := range 90 {
		fmt.Fprintf(&b, "row %d\n", i)
	}
	b.WriteString(r.in.View())
	return tea.NewView(b.String())
}

// The hostile bullet over a real SSH client: the escapes a view
// prints never reach the wire (no clipboard, no clear, no title), the
// screen holds the app's cells only (its text where its rectangle starts,
// a long line cut at the window's edge, its rows above the status bar);
// an agent's key that makes Update panic answers update_failed, the
// human is told why the session ended, and the process serves on.
func TestRogueProgramOnTheWire(t *testing.T) {
	srv := serve(t, teaapp.New("rogue", func(ui.Identity) tea.Model { return newRogue() }, teaapp.AllowKeys()))
	human := dialWire(t, srv.SSHAddr(), 100, 30)
	human.waitFor("MOVED keys=0")
	human.typeKeys("a")
	human.waitFor("MOVED keys=1")
	time.Sleep(200 * time.Millisecond) // the frame is whole

	raw := human.bytes()
	for what, seq := range map[string]string{"the clipboard (OSC 52)": "\x1b]52", "the clipboard's payload": clipboardPayload,
		"a window title (OSC 0)": "pwned title", "a cursor move of the program's": "\x1b[20;70H"} {
		if strings.Contains(raw, seq) {
			t.Errorf("%s reached the wire: %q", what, seq)
		}
	}
	screen := human.screen()
	rows := strings.Split(screen, "\n")
	if len(rows) != 30 {
		t.Fatalf("the screen has %d rows, want 30:\n%s", len(rows), screen)
	}
	if got := strings.TrimRight(rows[0], " "); got != "MOVED keys=1" {
		t.Errorf("row 0 is %q, want the program's first line where its rectangle starts:\n%s", got, screen)
	}
	if got := strings.TrimRight(rows[1], " "); got != strings.Repeat("W", 100) {
		t.Errorf("row 1 is %q, want the long line cut at the window's edge:\n%s", got, screen)
	}
	if got := strings.TrimSpace(rows[2]); got != "row 0" {
		t.Errorf("row 2 is %q, want the program's next line (the long one did not wrap):\n%s", got, screen)
	}
	if strings.Count(screen, "MOVED") != 1 {
		t.Errorf("MOVED drawn %d times:\n%s", strings.Count(screen, "MOVED"), screen)
	}
	// The last row is the terminal's status bar, not the program's.
	if last := rows[29]; strings.Contains(last, "row ") || !strings.Contains(last, "rogue") && strings.TrimSpace(last) == "" {
		t.Errorf("the status bar row holds %q:\n%s", last, screen)
	}

	// An agent's key that makes Update panic: pressed in the human's
	// terminal, as if typed there, it is answered update_failed before
	// the session ends.
	se := testserve.OnlySession(t, srv)
	cs := testserve.Agent(t, srv, se)
	if text, isErr, err := tryCall(cs, "raxol_send_key", map[string]any{"keys": []string{"x"}}); err != nil || !isErr || !strings.Contains(text, "update_failed") {
		t.Errorf("the key that made Update panic answered %q (isError %v, err %v), want update_failed", text, isErr, err)
	}
	select {
	case <-human.exited:
	case <-time.After(waitLong):
		t.Fatal("the human's session did not end after the program's Update panicked")
	}
	if !strings.Contains(human.stderr.String(), "cannot be restored safely") {
		t.Errorf("the human was not told why the session ended: %q", human.stderr.String())
	}
	// What the terminal leaves on the main screen as the session ends
	// (the program's last view) carries none of its escapes either.
	select {
	case <-human.read:
	case <-time.After(waitLong):
		t.Fatal("the human's output did not end")
	}
	for _, seq := range []string{"\x1b]52", clipboardPayload, "pwned title", "\x1b[20;70H"} {
		if strings.Contains(human.bytes(), seq) {
			t.Errorf("%q reached the wire as the session ended", seq)
		}
	}
	if !strings.Contains(human.screen(), "MOVED keys=1") {
		t.Errorf("the program's last view is not left on the screen:\n%s", human.screen())
	}
	again := testkit.RunSized(t, srv.SSHAddr(), "bob", testkit.NewKey(t), "", 100, 30)
	again.WaitFor("MOVED keys=0")

	// An agent's tool call whose keys make Update panic answers
	// update_failed too, and ends that session.
	se2 := testserve.OnlySession(t, srv)
	cs2 := testserve.Agent(t, srv, se2)
	if text, isErr, err := tryCall(cs2, "rogue.in.type_into", map[string]any{"text": "x"}); err != nil || !isErr || !strings.Contains(text, "update_failed") {
		t.Errorf("the tool call that made Update panic answered %q (isError %v, err %v), want update_failed", text, isErr, err)
	}
	again.WaitExit()
	if !strings.Contains(again.Stderr(), "cannot be restored safely") {
		t.Errorf("the human was not told why the session ended: %q", again.Stderr())
	}
}

// servePosture starts a server for app and returns its posture line.
func servePosture(t *testing.T, app server.App) string {
	t.Helper()
	var logs testkit.SyncBuffer
	srv := testserve.Start(t, app, server.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "raxol-ssh serving") {
			return l
		}
	}
	t.Fatalf("no posture line in the server's log:\n%s", logs.String())
	return ""
}

// Item 10 of issue 27: a hosted program's sessions are saved only with a
// codec, and without one the posture line says why they are not.
func TestPostureSaysWhyHostedSessionsAreNotSaved(t *testing.T) {
	testkit.EndToEnd(t)
	without := servePosture(t, teaapp.New("tally", func(ui.Identity) tea.Model { return tally{} }))
	if !strings.Contains(without, `snapshots="off (the app has no snapshot codec: sessions end with the server)"`) {
		t.Errorf("the posture line of a program without a codec does not say why its sessions are not saved:\n%s", without)
	}
	with := servePosture(t, teaapp.New("tally", func(ui.Identity) tea.Model { return tally{} }, teaapp.Snapshots[tally](1)))
	if strings.Contains(with, "no snapshot codec") || strings.Contains(with, "snapshots=off") || strings.Contains(with, `snapshots="off`) {
		t.Errorf("the posture line of a program with a codec says its sessions are not saved:\n%s", with)
	}
}

// Item 3 of issue 27: a terminal of another size than the program's
// crops or pads it, and says so: here the owner's window is the smaller,
// so a joiner's larger terminal pads the program and says at what size it
// is drawn; the owner's says nothing.
func TestLargerTerminalPadsAndSaysSo(t *testing.T) {
	var sizes atomic.Int32
	srv := serve(t, teaapp.New("signup", func(ui.Identity) tea.Model { return newForm(&sizes) }))
	owner := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 60, 15)
	owner.WaitFor("Name")
	se := testserve.OnlySession(t, srv)
	joiner := testkit.RunSized(t, srv.SSHAddr(), "bob", testkit.NewKey(t), "join "+se.ID, 100, 30)
	owner.WaitFor("Someone asks to join your session")
	testkit.Eventually(t, waitLong, func() bool { return !strings.Contains(owner.Screen(), tui.ArmingNote) }, "the prompt to arm")
	owner.Type("o") // as an observer
	joiner.WaitFor("Email")
	joiner.WaitFor("the program is drawn at 60x14 (the owner's window); this terminal is 100x29")
	rows := strings.Split(joiner.Screen(), "\n")
	if !strings.Contains(rows[28], "the program is drawn at 60x14") {
		t.Errorf("the note is not on the last row of the joiner's app area:\n%s", joiner.Screen())
	}
	if strings.Contains(owner.Screen(), "the program is drawn at") {
		t.Errorf("the owner's terminal, the program's size, says it crops or pads:\n%s", owner.Screen())
	}
}
