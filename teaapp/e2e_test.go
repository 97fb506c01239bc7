package teaapp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"charm.land/bubbles/v2/list"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/internal/testserve"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/teaapp"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

const waitLong = 15 * time.Second

// ---- the programs: written as for a terminal of their own ----

type dish string

func (d dish) FilterValue() string { return "" }

type dishDelegate struct{}

func (dishDelegate) Height() int                         { return 1 }
func (dishDelegate) Spacing() int                        { return 0 }
func (dishDelegate) Update(tea.Msg, *list.Model) tea.Cmd { return nil }
func (dishDelegate) Render(w io.Writer, m list.Model, i int, it list.Item) {
	d, _ := it.(dish)
	if i == m.Index() {
		fmt.Fprintf(w, "> %s", d)
		return
	}
	fmt.Fprintf(w, "  %s", d)
}

type picker struct {
	list   list.Model
	choice string
}

func newPicker() picker {
	items := []list.Item{dish("Ramen"), dish("Tomato Soup"), dish("Hamburgers"), dish("Cheeseburgers"), dish("Currywurst")}
	l := list.New(items, dishDelegate{}, 50, 12)
	l.Title = "What do you want for dinner?"
	l.SetShowStatusBar(false)
	l.SetFilteringEnabled(false)
	l.SetShowHelp(false)
	return picker{list: l}
}

func (m picker) Init() tea.Cmd { return nil }

func (m picker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if msg.String() == "enter" {
			if d, ok := m.list.SelectedItem().(dish); ok {
				m.choice = string(d)
			}
			return m, tea.Quit
		}
	}
	var cmd tea.Cmd
	m.list, cmd = m.list.Update(msg)
	return m, cmd
}

func (m picker) View() tea.View {
	if m.choice != "" {
		return tea.NewView(fmt.Sprintf("Okay, %s? Sounds good to me.", m.choice))
	}
	return tea.NewView(m.list.View())
}

// form is three inputs, Tab moving between them; it counts the sizes it
// is told.
type form struct {
	inputs []textinput.Model
	focus  int
	sizes  *atomic.Int32
}

func newForm(sizes *atomic.Int32) form {
	f := form{inputs: make([]textinput.Model, 3), sizes: sizes}
	for i, p := range []string{"Name", "Email", "Password"} {
		ti := textinput.New()
		ti.Placeholder = p
		ti.SetWidth(30)
		f.inputs[i] = ti
	}
	f.inputs[2].EchoMode = textinput.EchoPassword
	f.inputs[0].Focus()
	return f
}

func (f form) Init() tea.Cmd { return nil }

func (f form) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		f.sizes.Add(1)
	case tea.KeyPressMsg:
		switch msg.String() {
		case "tab", "shift+tab":
			f.inputs = append([]textinput.Model(nil), f.inputs...)
			f.inputs[f.focus].Blur()
			if msg.String() == "tab" {
				f.focus = (f.focus + 1) % len(f.inputs)
			} else {
				f.focus = (f.focus + len(f.inputs) - 1) % len(f.inputs)
			}
			return f, f.inputs[f.focus].Focus()
		}
	}
	f.inputs = append([]textinput.Model(nil), f.inputs...)
	var cmd tea.Cmd
	f.inputs[f.focus], cmd = f.inputs[f.focus].Update(msg)
	return f, cmd
}

func (f form) View() tea.View {
	var b strings.Builder
	for _, in := range f.inputs {
		b.WriteString(in.View() + "\n")
	}
	return tea.NewView(b.String())
}

// ---- the harness: a real server, real SSH clients, a real MCP client ----

func serve(t *testing.T, app server.App) *server.Server {
	t.Helper()
	return serveAt(t, app, t.TempDir())
}

// serveAt serves app with its data (host key, saved sessions) in dir.
func serveAt(t *testing.T, app server.App, dir string) *server.Server {
	t.Helper()
	return testserve.Start(t, app, server.Options{DataDir: dir})
}

// The list example's path: an agent selects the third dish by its label;
// the human's screen shows the mark on it and nowhere else, and so does
// raxol_screenshot; the human presses Enter and the program's goodbye is
// what stays on the screen as the session ends.
func TestPickerOverSSHAndMCP(t *testing.T) {
	srv := serve(t, teaapp.New("dinner", func(ui.Identity) tea.Model { return newPicker() }))
	human := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	human.WaitFor("What do you want for dinner?")
	se := testserve.OnlySession(t, srv)
	cs := testserve.Agent(t, srv, se)

	testkit.MustCall(t, cs, "dinner.list.select", map[string]any{"label": "Hamburgers"})
	human.WaitFor("> Hamburgers")
	if n := strings.Count(human.Screen(), "> "); n != 1 {
		t.Fatalf("the selection mark shows %d times:\n%s", n, human.Screen())
	}
	_, text, isErr := testkit.CallTool(t, cs, "raxol_screenshot", nil)
	if isErr || !strings.Contains(text, "> Hamburgers") || strings.Contains(text, "> Ramen") {
		t.Fatalf("raxol_screenshot disagrees with the human's screen: %q", text)
	}

	human.Type("\r")
	human.WaitExit()
	human.WaitFor("Okay, Hamburgers? Sounds good to me.")
}

// The form: an agent types into the second input and both the owner's
// 100x30 and a driver's 60x15 terminals show it; the password input's
// tools are sensitive and never return its value; the driver's Tab moves
// the focus the agent's tool list marks; the owner's resize tells the
// model its size once, the driver's never.
func TestFormAcrossTerminals(t *testing.T) {
	var sizes atomic.Int32
	srv := serve(t, teaapp.New("signup", func(ui.Identity) tea.Model { return newForm(&sizes) }, teaapp.AllowKeys()))
	owner := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	owner.WaitFor("Name")
	se := testserve.OnlySession(t, srv)
	cs := testserve.Agent(t, srv, se)

	bob := testkit.RunSized(t, srv.SSHAddr(), "bob", testkit.NewKey(t), "join "+se.ID, 60, 15)
	owner.WaitFor("Someone asks to join your session")
	testkit.Eventually(t, waitLong, func() bool { return !strings.Contains(owner.Screen(), tui.ArmingNote) }, "the prompt to arm")
	owner.Type("r") // as a driver
	bob.WaitFor("Email")

	testkit.MustCall(t, cs, "signup.inputs_1.type_into", map[string]any{"text": "ada@example.com"})
	owner.WaitFor("ada@example.com")
	bob.WaitFor("ada@example.com")

	// The password input: sensitive tools, so the default policy asks
	// the owner first; its value is never returned.
	if _, isErr := approvedCall(t, cs, owner, "signup.inputs_2.type_into", map[string]any{"text": "hunter2-secret"}); isErr {
		t.Fatal("typing the approved password failed")
	}
	text, _ := approvedCall(t, cs, owner, "signup.inputs_2.get_value", nil)
	if strings.Contains(text, "hunter2") {
		t.Fatalf("the password's value came back: %s", text)
	}
	if tree := readTree(t, cs); strings.Contains(tree, "hunter2") {
		t.Fatalf("the tree resource holds the password: %s", tree)
	}
	// Its tools carry the sensitive mark, wherever the lens lists them.
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tl := range tools.Tools {
		listed = append(listed, tl.Name)
		if strings.HasPrefix(tl.Name, "signup.inputs_2.") {
			if s, _ := tl.Meta["sensitive"].(bool); !s {
				t.Errorf("%s is not marked sensitive: %v", tl.Name, tl.Meta)
			}
		}
	}
	if _, found, _ := testkit.CallTool(t, cs, "discover_tools", map[string]any{"query": "inputs_2"}); !strings.Contains(found, "signup.inputs_2.type_into") && !slices.Contains(listed, "signup.inputs_2.type_into") {
		t.Fatalf("the password input offers no type_into: listed %v, discovered %s", listed, found)
	}

	// The driver's Tab moves the program's focus, which the lens follows.
	focusedBefore := focusedTools(t, cs)
	bob.Type("\t")
	testkit.Eventually(t, waitLong, func() bool {
		now := focusedTools(t, cs)
		return now != "" && now != focusedBefore
	}, "the driver's Tab to move the focus marked in the tool list (was %q)", focusedBefore)

	// Sizes: the owner's resize is told once, the driver's never.
	before := sizes.Load()
	bob.Resize(50, 12)
	time.Sleep(300 * time.Millisecond) // the driver's size has reached the model: nothing to wait for but time
	if got := sizes.Load(); got != before {
		t.Fatalf("the driver's resize told the model %d sizes", got-before)
	}
	owner.Resize(90, 25)
	testkit.Eventually(t, waitLong, func() bool { return sizes.Load() == before+1 }, "the owner's resize to reach the model")
	time.Sleep(300 * time.Millisecond) // a second WindowSizeMsg for the one resize would land by now
	if got := sizes.Load(); got != before+1 {
		t.Fatalf("the owner's one resize told the model %d sizes", got-before)
	}
}

// approvedCall calls a tool the policy asks the owner about, and
// approves it on the owner's terminal.
func approvedCall(t *testing.T, cs *mcp.ClientSession, owner *testkit.Term, name string, args map[string]any) (string, bool) {
	t.Helper()
	type answer struct {
		text  string
		isErr bool
	}
	done := make(chan answer, 1)
	go func() {
		_, text, isErr := testkit.CallTool(t, cs, name, args)
		done <- answer{text, isErr}
	}()
	owner.WaitFor("wants to run " + name)
	if text, _ := args["text"].(string); text != "" && strings.Contains(name, "inputs_2") && strings.Contains(owner.Screen(), text) {
		t.Errorf("the approval prompt shows the password:\n%s", owner.Screen())
	}
	testkit.Eventually(t, waitLong, func() bool { return !strings.Contains(owner.Screen(), tui.ArmingNote) }, "the prompt to arm")
	owner.Type("y")
	a := <-done
	return a.text, a.isErr
}

func readTree(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "raxol://session/tree"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Contents {
		b.WriteString(c.Text)
	}
	return b.String()
}

// focusedTools names the component whose tools the list marks focused.
func focusedTools(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if f, _ := tl.Meta["focused"].(bool); f {
			parts := strings.Split(tl.Name, ".")
			if len(parts) == 3 {
				return parts[1]
			}
		}
	}
	return ""
}

// hostile draws escapes that would clear the screen, move the cursor and
// set the clipboard, and panics in Update on "x".
type hostile struct{ n int }

func (h hostile) Init() tea.Cmd { return nil }
func (h hostile) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if k.String() == "x" {
			panic("hostile: Update fails")
		}
		h.n++
	}
	return h, nil
}
func (h hostile) View() tea.View {
	return tea.NewView(fmt.Sprintf("\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J\x1b[20;70HMOVED keys=%d\x1b[H", h.n))
}

// A program that writes escapes and then panics: the process lives, the
// screen holds only the app's cells, and the session ends with a clear
// message.
func TestHostileProgramOverSSH(t *testing.T) {
	srv := serve(t, teaapp.New("hostile", func(ui.Identity) tea.Model { return hostile{} }))
	human := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	human.WaitFor("MOVED keys=0")
	human.Type("a")
	human.WaitFor("MOVED keys=1")
	// The text is on the app's first line, where the program's view
	// starts: no cursor move took it to row 20, column 70.
	lines := strings.Split(human.Screen(), "\n")
	if !strings.HasPrefix(strings.TrimSpace(lines[0]), "MOVED keys=1") {
		t.Fatalf("the program's text is not where the app's rectangle starts:\n%s", human.Screen())
	}
	human.Type("x")
	human.WaitExit()
	if !strings.Contains(human.Stderr(), "cannot be restored safely") {
		t.Fatalf("the human was not told why the session ended: %q", human.Stderr())
	}
	// The server still serves.
	again := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	again.WaitFor("MOVED keys=0")
}

// spinning is a program with a spinner that never stops and an input an
// agent can type into.
type spinning struct {
	spin spinner.Model
	in   textinput.Model
}

func newSpinning() spinning {
	in := textinput.New()
	in.Placeholder = "notes"
	in.SetWidth(20)
	return spinning{spin: spinner.New(spinner.WithSpinner(spinner.Dot)), in: in}
}

func (s spinning) Init() tea.Cmd { return s.spin.Tick }
func (s spinning) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "q" {
		return s, tea.Quit
	}
	var cmd tea.Cmd
	s.spin, cmd = s.spin.Update(msg)
	return s, cmd
}
func (s spinning) View() tea.View { return tea.NewView(s.spin.View() + " working\n" + s.in.View()) }

// A spinner left running sends agents no tools/list_changed and costs no
// tool derivation; when the session ends its goroutines are gone.
func TestSpinnerIsCheapForAgents(t *testing.T) {
	srv := serve(t, teaapp.New("spin", func(ui.Identity) tea.Model { return newSpinning() }))
	time.Sleep(100 * time.Millisecond) // the server's own goroutines are up
	baseline := runtime.NumGoroutine()
	human := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	human.WaitFor("working")
	se := testserve.OnlySession(t, srv)

	var changed atomic.Int32
	own := &http.Transport{}
	hc := &http.Client{Transport: testkit.Bearer(own, se.Token())}
	tr := &mcp.StreamableClientTransport{Endpoint: "http://" + srv.HTTPAddr() + "/sessions/" + se.ID + "/mcp", HTTPClient: hc}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	}).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	testkit.MustCall(t, cs, "spin.in.type_into", map[string]any{"text": "x"})
	time.Sleep(500 * time.Millisecond) // the list_changed of the agent's own change, if any, is in
	changed.Store(0)
	derived := teaapp.ToolsDerived()
	v0 := se.Dispatcher.Snapshot().Version

	time.Sleep(5 * time.Second) // the spinner runs: what it costs is what this measures
	if v := se.Dispatcher.Snapshot().Version; v-v0 < 20 {
		t.Fatalf("the spinner drew %d frames in 5 s: it is not running, and the test shows nothing", v-v0)
	}
	if n := changed.Load(); n != 0 {
		t.Errorf("the spinner sent the agent %d tools/list_changed", n)
	}
	if n := teaapp.ToolsDerived() - derived; n != 0 {
		t.Errorf("the spinner cost %d tool derivations", n)
	}

	_ = cs.Close()
	own.CloseIdleConnections()
	human.Type("q") // the program quits: the session ends
	human.WaitExit()
	human.Close()
	deadline := time.Now().Add(waitLong)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines %s after the session ended, %d before it started:\n%s", n, waitLong, baseline, buf[:runtime.Stack(buf, true)])
	}
}

// tally is a program whose model marshals as JSON: its sessions can be
// saved.
type tally struct {
	Count int    `json:"count"`
	Note  string `json:"note"`
}

func (m tally) Init() tea.Cmd { return nil }
func (m tally) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "+" {
		m.Count++
	}
	return m, nil
}
func (m tally) View() tea.View { return tea.NewView(fmt.Sprintf("tally %d", m.Count)) }

// A hosted program with a codec is saved and restored: after a restart
// its owner resumes it as it was, and it goes on.
func TestHostedSessionSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	app := teaapp.New("tally", func(ui.Identity) tea.Model { return tally{} }, teaapp.Snapshots[tally](1))
	srv := serveAt(t, app, dir)
	key := testkit.NewKey(t)
	owner := testkit.RunSized(t, srv.SSHAddr(), "alice", key, "", 100, 30)
	owner.WaitFor("tally 0")
	owner.Type("+++")
	owner.WaitFor("tally 3")
	id := testserve.OnlySession(t, srv).ID
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	owner.Close()

	srv2 := serveAt(t, app, dir)
	back := testkit.RunSized(t, srv2.SSHAddr(), "alice", key, "resume "+id, 100, 30)
	back.WaitFor("tally 3")
	back.Type("+")
	back.WaitFor("tally 4")
}

// fullscreen draws in the alternate screen and quits on "q".
type fullscreen struct{}

func (fullscreen) Init() tea.Cmd { return nil }
func (f fullscreen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "q" {
		return f, tea.Quit
	}
	return f, nil
}
func (fullscreen) View() tea.View {
	v := tea.NewView("FULLSCREEN-VIEW")
	v.AltScreen = true
	return v
}

// A program in the alternate screen leaves nothing on the main screen when
// it quits (the picker, inline, leaves its goodbye).
func TestAltScreenProgramLeavesNothing(t *testing.T) {
	srv := serve(t, teaapp.New("full", func(ui.Identity) tea.Model { return fullscreen{} }))
	human := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	human.WaitFor("FULLSCREEN-VIEW")
	human.Type("q")
	human.WaitExit()
	time.Sleep(200 * time.Millisecond) // the last bytes written are read
	if strings.Contains(human.Screen(), "FULLSCREEN-VIEW") {
		t.Fatalf("an alternate-screen program left its view on the main screen:\n%s", human.Screen())
	}
}

// pointer places the terminal's real cursor where its view says.
type pointer struct{ x int }

func (pointer) Init() tea.Cmd { return nil }
func (p pointer) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "l" {
		p.x++
	}
	return p, nil
}
func (p pointer) View() tea.View {
	v := tea.NewView("first line\nsecond line")
	v.Cursor = tea.NewCursor(p.x, 1)
	return v
}

// A program's real cursor (tea.View.Cursor) is where it puts it in each
// terminal, and shown; moving it moves it.
func TestRealCursorFollowsTheProgram(t *testing.T) {
	srv := serve(t, teaapp.New("cur", func(ui.Identity) tea.Model { return pointer{x: 3} }))
	human := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	human.WaitFor("second line")
	testkit.Eventually(t, waitLong, func() bool { x, y, shown := human.Cursor(); return shown && x == 3 && y == 1 },
		"the cursor at 3,1 and shown")
	human.Type("l")
	testkit.Eventually(t, waitLong, func() bool { x, y, shown := human.Cursor(); return shown && x == 4 && y == 1 },
		"the cursor to move to 4,1")
}
