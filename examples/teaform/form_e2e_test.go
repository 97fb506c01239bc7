package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/internal/testserve"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/teaapp"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// ---- the example over real SSH clients with PTYs and a real MCP client over HTTP ----

const waitLong = 15 * time.Second

// sized is the example's model, untouched, with the tea.WindowSizeMsgs it
// is given counted on the way in. The model is embedded: its components
// keep their names (an embedded struct adds none).
type sized struct {
	model
	sizes *atomic.Int32
}

func (s sized) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tea.WindowSizeMsg); ok {
		s.sizes.Add(1)
	}
	next, cmd := s.model.Update(msg)
	s.model = next.(model)
	return s, cmd
}

// serveE2E serves app on loopback listeners of its own; it is drained
// when the test ends.
func serveE2E(t *testing.T, app server.App) *server.Server {
	t.Helper()
	return testserve.Start(t, app, server.Options{})
}

// approved calls a tool the app's policy asks the owner about, and the
// owner approves it on their terminal; the prompt must not show secret.
func approved(t *testing.T, cs *mcp.ClientSession, owner *testkit.Term, name string, args map[string]any, secret string) (map[string]any, string, bool) {
	t.Helper()
	type answer struct {
		out   map[string]any
		text  string
		isErr bool
	}
	done := make(chan answer, 1)
	go func() {
		out, text, isErr := testkit.CallTool(t, cs, name, args)
		done <- answer{out, text, isErr}
	}()
	owner.WaitFor("wants to run " + name)
	if strings.Contains(owner.Screen(), secret) {
		t.Errorf("the approval prompt shows the password:\n%s", owner.Screen())
	}
	testkit.Eventually(t, waitLong, func() bool { return !strings.Contains(owner.Screen(), tui.ArmingNote) }, "the prompt to arm")
	owner.Type("y")
	select {
	case a := <-done:
		return a.out, a.text, a.isErr
	case <-time.After(waitLong):
		t.Fatalf("%s was not answered after the owner approved it", name)
		return nil, "", true
	}
}

// focused names the component whose tools tools/list marks
// _meta.focused, "" if none; it fails the test if two are.
func focused(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := ""
	for _, tl := range tools.Tools {
		if f, _ := tl.Meta["focused"].(bool); !f {
			continue
		}
		parts := strings.Split(tl.Name, ".")
		if len(parts) != 3 {
			t.Fatalf("%s is marked focused", tl.Name)
		}
		if found != "" && found != parts[1] {
			t.Fatalf("two components are marked focused: %s and %s", found, parts[1])
		}
		found = parts[1]
	}
	return found
}

// The form bullet, with the example program itself: type_into on
// the second input shows in the owner's 100x30 and a joiner's 60x15
// terminal; the password input's tools are sensitive and never return its
// value; the joiner's Tab moves _meta.focused; resizing the owner's window
// gives the model exactly one tea.WindowSizeMsg, resizing the joiner's
// none.
func TestFormExampleAcrossTerminals(t *testing.T) {
	var sizes atomic.Int32
	app := teaapp.New(Name, func(ui.Identity) tea.Model { return sized{model: initialModel(), sizes: &sizes} })
	srv := serveE2E(t, app)
	owner := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	owner.WaitFor("Create your account")
	var se *session.Session
	testkit.Eventually(t, waitLong, func() bool {
		if l := srv.LiveSessions(); len(l) == 1 {
			se = l[0]
		}
		return se != nil
	}, "the session to start")
	cs := testserve.Agent(t, srv, se)

	joiner := testkit.RunSized(t, srv.SSHAddr(), "bob", testkit.NewKey(t), "join "+se.ID, 60, 15)
	owner.WaitFor("Someone asks to join your session")
	testkit.Eventually(t, waitLong, func() bool { return !strings.Contains(owner.Screen(), tui.ArmingNote) }, "the prompt to arm")
	owner.Type("r") // as a driver
	joiner.WaitFor("Create your account")

	// type_into on the second input, in both terminals.
	testkit.MustCall(t, cs, Name+".inputs_1.type_into", map[string]any{"text": "ada@example.com"})
	owner.WaitFor("Email     ada@example.com")
	joiner.WaitFor("Email     ada@example.com")
	// The program is drawn at the owner's size: the smaller terminal crops
	// it and says so; the owner's shows it whole.
	joiner.WaitFor("the program is drawn at 100x29 (the owner's window)")
	if strings.Contains(owner.Screen(), "the program is drawn at") {
		t.Errorf("the owner's terminal says it crops the program:\n%s", owner.Screen())
	}

	// The password input's tools: each listed, each marked sensitive (and
	// the name input's not: the mark tells them apart).
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]map[string]any{}
	for _, tl := range tools.Tools {
		meta[tl.Name] = tl.Meta
	}
	for _, action := range []string{"type_into", "clear", "get_value"} {
		pw, ok := meta[Name+".inputs_2."+action]
		if !ok {
			t.Errorf("%s.inputs_2.%s is not in tools/list: %v", Name, action, meta)
		} else if s, _ := pw["sensitive"].(bool); !s {
			t.Errorf("%s.inputs_2.%s is not marked sensitive: %v", Name, action, pw)
		}
		if s, _ := meta[Name+".inputs_0."+action]["sensitive"].(bool); s {
			t.Errorf("%s.inputs_0.%s is marked sensitive", Name, action)
		}
	}
	// ... and never return its value: not the calls' answers, the tree or
	// the screen.
	const secret = "hunter2-secret"
	out, text, isErr := approved(t, cs, owner, Name+".inputs_2.type_into", map[string]any{"text": secret}, secret)
	if isErr {
		t.Fatalf("typing the approved password failed: %s", text)
	}
	owner.WaitFor("Password  " + strings.Repeat("*", len(secret)))
	out2, text2, isErr := approved(t, cs, owner, Name+".inputs_2.get_value", nil, secret)
	if isErr {
		t.Fatalf("get_value of the approved password failed: %s", text2)
	}
	tree, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "raxol://session/tree"})
	if err != nil {
		t.Fatal(err)
	}
	_, shot, _ := testkit.CallTool(t, cs, "raxol_screenshot", nil)
	for what, v := range map[string]any{"type_into's answer": out, "get_value's answer": out2, "get_value's text": text2, "the tree": tree, "raxol_screenshot": shot} {
		raw, _ := json.Marshal(v)
		if strings.Contains(string(raw), "hunter2") {
			t.Errorf("%s holds the password: %s", what, raw)
		}
	}
	for _, term := range []*testkit.Term{owner, joiner} {
		if strings.Contains(term.Screen(), "hunter2") {
			t.Errorf("a terminal shows the password:\n%s", term.Screen())
		}
	}

	// The joiner's Tab moves the program's focus, which tools/list marks.
	if got := focused(t, cs); got != "inputs_0" {
		t.Fatalf("tools/list marks %q focused at start, want inputs_0", got)
	}
	joiner.Type("\t")
	testkit.Eventually(t, waitLong, func() bool { return focused(t, cs) == "inputs_1" },
		"the joiner's Tab to move _meta.focused to inputs_1")

	// The owner's ctrl+f (the terminal keeps it) lets agents act only on
	// the component the program has focused: the one Tab moved to.
	owner.Type("\x06")
	testkit.Eventually(t, waitLong, func() bool { return se.Control().FocusOnly }, "ctrl+f to turn focus-only on")
	if _, text, isErr := testkit.CallTool(t, cs, Name+".inputs_0.type_into", map[string]any{"text": "Ada"}); !isErr || !strings.Contains(text, "focused") {
		t.Errorf("type_into an unfocused input in focus-only mode answered %s (isError %v), want a refusal", text, isErr)
	}
	testkit.MustCall(t, cs, Name+".inputs_1.type_into", map[string]any{"text": "ada@lovelace.dev"})
	joiner.WaitFor("Email     ada@lovelace.dev")
	if v := testkit.MustCall(t, cs, Name+".inputs_0.get_value", nil); fmt.Sprint(v["result"]) != "map[value:]" {
		t.Errorf("after the refused call the name holds %v, want nothing", v["result"])
	}

	// Sizes: the joiner's resize tells the model nothing, the owner's once.
	before := sizes.Load()
	if before == 0 {
		t.Fatal("the model was never told its size")
	}
	joiner.Resize(50, 12)
	testkit.Eventually(t, waitLong, func() bool { return joiner.Screen() != "" && strings.Contains(joiner.Screen(), "Create your account") },
		"the joiner to draw again")
	time.Sleep(300 * time.Millisecond) // the joiner's size has reached the model: nothing to wait for but time
	if got := sizes.Load(); got != before {
		t.Fatalf("the joiner's resize told the model %d sizes", got-before)
	}
	owner.Resize(90, 25)
	testkit.Eventually(t, waitLong, func() bool { return sizes.Load() >= before+1 }, "the owner's resize to reach the model")
	time.Sleep(300 * time.Millisecond) // a second WindowSizeMsg for the one resize would land by now
	if got := sizes.Load(); got != before+1 {
		t.Fatalf("the owner's one resize told the model %d sizes", got-before)
	}
}
