package main

import (
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/internal/testserve"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
)

// ---- the example over a real SSH client with a PTY and a real MCP client over HTTP ----

const waitLong = 15 * time.Second

// serveE2E serves app on loopback listeners of its own; it is drained
// when the test ends.
func serveE2E(t *testing.T, app server.App) *server.Server {
	t.Helper()
	return testserve.Start(t, app, server.Options{})
}

// lastLine is the last line of screen with anything on it, trimmed.
func lastLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, " \n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// The list bullet, with the example program itself: an agent
// selects the third tea by its label; the human's screen marks it and
// nothing else, raxol_screenshot agrees; the human presses Enter and the
// program's own goodbye is the last thing drawn as the session ends.
func TestPickerExampleOverSSHAndMCP(t *testing.T) {
	srv := serveE2E(t, App())
	human := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	human.WaitFor("Which tea would you like?")
	se := testserve.OnlySession(t, srv)
	cs := testserve.Agent(t, srv, se)
	if got := marked(human.Screen()); len(got) != 1 || got[0] != "> Sencha" {
		t.Fatalf("marked lines at start = %q, want only the first tea:\n%s", got, human.Screen())
	}

	res := testkit.MustCall(t, cs, Name+".list.select", map[string]any{"label": "Oolong"})
	r, _ := res["result"].(map[string]any)
	if r, _ := r["result"].(map[string]any); r == nil || r["index"] != float64(2) || r["label"] != "Oolong" {
		t.Errorf("select{label: Oolong} answered %v, want index 2 (the third tea)", res)
	}
	human.WaitFor("> Oolong")
	testkit.Eventually(t, waitLong, func() bool {
		got := marked(human.Screen())
		return len(got) == 1 && got[0] == "> Oolong"
	}, "the human's screen to mark Oolong and nothing else")
	if n := strings.Count(human.Screen(), ">"); n != 1 {
		t.Errorf("the human's screen shows %d markers:\n%s", n, human.Screen())
	}
	_, shot, isErr := testkit.CallTool(t, cs, "raxol_screenshot", nil)
	if isErr {
		t.Fatalf("raxol_screenshot failed: %s", shot)
	}
	if got := marked(shot); len(got) != 1 || got[0] != "> Oolong" {
		t.Errorf("raxol_screenshot marks %q, want only \"> Oolong\":\n%s", got, shot)
	}
	for _, tea := range []string{"Sencha", "Earl Grey", "Rooibos"} {
		if !strings.Contains(shot, tea) {
			t.Errorf("raxol_screenshot lost %q, which the human sees:\n%s", tea, shot)
		}
	}

	human.Type("\r")
	human.WaitExit()
	time.Sleep(200 * time.Millisecond) // the last bytes written are read
	screen := human.Screen()
	if got := lastLine(screen); got != "Okay, Oolong? Sounds good to me." {
		t.Errorf("the last thing drawn is %q, want the program's goodbye:\n%s", got, screen)
	}
	for _, stale := range []string{"Which tea would you like?", "Sencha", "> "} {
		if strings.Contains(screen, stale) {
			t.Errorf("the screen the session ended on still holds %q:\n%s", stale, screen)
		}
	}
	if reason := session.EndReason(se); reason != "the app ended the session" {
		t.Errorf("the session ended with %q, want the program's own quit", reason)
	}
}

// An agent's activate makes the program quit: the owner is asked first.
// Refused, the session goes on; approved, it ends, and the program's
// goodbye is the last thing drawn.
func TestPickerExampleAgentQuitAsksTheOwner(t *testing.T) {
	srv := serveE2E(t, App())
	for _, c := range []struct {
		key  string
		ends bool
	}{{"n", false}, {"y", true}} {
		human := testkit.RunSized(t, srv.SSHAddr(), "alice"+c.key, testkit.NewKey(t), "", 100, 30)
		human.WaitFor("Which tea would you like?")
		var se *session.Session
		testkit.Eventually(t, waitLong, func() bool {
			for _, s := range srv.LiveSessions() {
				if s.Owner.User == "alice"+c.key {
					se = s
				}
			}
			return se != nil
		}, "the session to start")
		cs := testserve.Agent(t, srv, se)

		res := testkit.MustCall(t, cs, Name+".list.activate", map[string]any{"label": "Rooibos"})
		if r, _ := res["result"].(map[string]any); r == nil {
			t.Fatalf("activate answered %v", res)
		}
		human.WaitFor("the app wants to quit after this agent's action")
		if err := se.Context().Err(); err != nil {
			t.Fatalf("the session ended (%s) before the owner answered", session.EndReason(se))
		}
		testkit.Eventually(t, waitLong, func() bool { return !strings.Contains(human.Screen(), tui.ArmingNote) }, "the prompt to arm")
		human.Type(c.key)
		if !c.ends {
			human.WaitFor("Okay, Rooibos? Sounds good to me.")
			time.Sleep(time.Second) // an end already decided would land by now
			if se.Context().Err() != nil {
				t.Fatalf("the session ended (%s) though the owner refused the quit", session.EndReason(se))
			}
			human.Close()
			continue
		}
		human.WaitExit()
		time.Sleep(200 * time.Millisecond) // the last bytes written are read
		if got := lastLine(human.Screen()); got != "Okay, Rooibos? Sounds good to me." {
			t.Errorf("the last thing drawn is %q, want the program's goodbye:\n%s", got, human.Screen())
		}
		if reason := session.EndReason(se); reason != "the app ended the session" {
			t.Errorf("the session ended with %q, want the program's own quit", reason)
		}
	}
}

// Item 1 of issue 27, the default policy of teaapp.New: an agent's typed
// tools and reads run without asking; its raw keys (raxol_send_key) are
// put to the owner first: refused, nothing is pressed; approved, the key
// reaches the program.
func TestPickerExampleDefaultPolicy(t *testing.T) {
	srv := serveE2E(t, App())
	human := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	human.WaitFor("Which tea would you like?")
	se := testserve.OnlySession(t, srv)
	cs := testserve.Agent(t, srv, se)

	// Typed tools and reads: no prompt.
	testkit.MustCall(t, cs, Name+".list.select", map[string]any{"index": 1})
	testkit.MustCall(t, cs, Name+".list.get_options", nil)
	testkit.MustCall(t, cs, "raxol_screenshot", nil)
	human.WaitFor("> Earl Grey")
	if strings.Contains(human.Screen(), "wants to run") {
		t.Fatalf("a typed tool or a read asked the owner:\n%s", human.Screen())
	}

	press := func(answer string) (string, bool) {
		t.Helper()
		type result struct {
			text  string
			isErr bool
		}
		done := make(chan result, 1)
		go func() {
			_, text, isErr := testkit.CallTool(t, cs, "raxol_send_key", map[string]any{"keys": []string{"down"}})
			done <- result{text, isErr}
		}()
		human.WaitFor("wants to run raxol_send_key")
		testkit.Eventually(t, waitLong, func() bool { return !strings.Contains(human.Screen(), tui.ArmingNote) }, "the prompt to arm")
		human.Type(answer)
		select {
		case r := <-done:
			return r.text, r.isErr
		case <-time.After(waitLong):
			t.Fatal("raxol_send_key was not answered after the owner answered")
			return "", false
		}
	}
	if text, isErr := press("n"); !isErr {
		t.Errorf("a refused raxol_send_key answered %s, want an error", text)
	}
	time.Sleep(300 * time.Millisecond) // a key pressed anyway would have moved the list by now
	if got := marked(human.Screen()); len(got) != 1 || got[0] != "> Earl Grey" {
		t.Fatalf("after a refused key the screen marks %q, want Earl Grey still", got)
	}
	if text, isErr := press("y"); isErr {
		t.Fatalf("an approved raxol_send_key failed: %s", text)
	}
	human.WaitFor("> Oolong")
}
