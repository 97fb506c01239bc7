package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// whoApp shows the identity it was made with and counts the keys that
// reach it: "g" counts, "q" quits (tea.Quit), "e" ends the session with a
// reason, "x" closes the terminal it came from.
type whoApp struct {
	id      ui.Identity
	globals int
	keys    []string
	note    string
}

func (a whoApp) Init() tea.Cmd { return nil }

func (a whoApp) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		a.keys = append(a.keys, msg.String())
		switch msg.String() {
		case "g":
			a.globals++
		case "q":
			return a, tea.Quit
		case "e":
			return a, ui.EndSession("checkout closed the session")
		case "x":
			return a, ui.CloseTerminal("see you, " + a.id.User)
		}
	case ui.TextInputChanged:
		a.note = msg.Text
	}
	return a, nil
}

func (a whoApp) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.Text{Text: fmt.Sprintf("user=%s term=%s size=%dx%d headless=%v", a.id.User, a.id.Term, a.id.Width, a.id.Height, a.id.Headless)},
		ui.Text{Text: "fp=" + a.id.KeyFingerprint},
		ui.Text{Text: "id=" + a.id.SessionID},
		ui.Text{Text: fmt.Sprintf("globals=%d", a.globals)},
		ui.Button{ID: "ok", Label: "OK", OnClick: struct{}{}},
		ui.TextInput{ID: "note", Label: "Note", Value: a.note},
	}}
}

// whoServer serves whoApp and records every identity New was given.
func whoServer(t *testing.T, opts server.Options) (*testServer, func() []ui.Identity) {
	t.Helper()
	var mu sync.Mutex
	var seen []ui.Identity
	app := server.App{
		Name: "who",
		New: func(id ui.Identity) ui.Model {
			mu.Lock()
			seen = append(seen, id)
			mu.Unlock()
			return whoApp{id: id}
		},
		ToolPolicy: authz.AllowAll(),
		ReadPolicy: authz.AllowAll(),
	}
	srv, err := server.New(app, testOptions(t, opts))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: srv, t: t}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		defer cancel()
		if err := ts.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return ts, func() []ui.Identity {
		mu.Lock()
		defer mu.Unlock()
		return append([]ui.Identity(nil), seen...)
	}
}

// TestAppKnowsWhoItServes: New gets the session's id, the SSH user, the
// proven key, the address, TERM and the window size; a headless session's
// identity says so.
func TestAppKnowsWhoItServes(t *testing.T) {
	t.Parallel()
	srv, seen := whoServer(t, server.Options{})
	key := newKey(t)
	c := connect(t, srv.SSHAddr(), clientOpts{user: "alice", key: key, w: 90, h: 28, term: "xterm-256color"})
	c.WaitFor(t, "user=alice term=xterm-256color size=90x28 headless=false", waitLong)
	ids := seen()
	if len(ids) != 1 {
		t.Fatalf("New called %d times, want 1", len(ids))
	}
	id := ids[0]
	if want := gossh.FingerprintSHA256(key.PublicKey()); id.KeyFingerprint != want {
		t.Errorf("KeyFingerprint %q, want %q", id.KeyFingerprint, want)
	}
	if _, ok := srv.Sessions().Get(id.SessionID); !ok {
		t.Errorf("SessionID %q is no live session", id.SessionID)
	}
	if !strings.HasPrefix(id.RemoteAddr, "127.0.0.1:") {
		t.Errorf("RemoteAddr %q, want the client's loopback address", id.RemoteAddr)
	}
	c.WaitFor(t, "id="+id.SessionID, waitShort)

	se, end, err := srv.StartHeadless(session.Owner{User: "robot"})
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	ids = seen()
	if h := ids[len(ids)-1]; !h.Headless || h.User != "robot" || h.SessionID != se.ID || h.Term != "" || h.Width != 0 {
		t.Errorf("headless identity %+v, want Headless, user robot, session %s, no terminal", h, se.ID)
	}
}

// TestKeysNoWidgetTakesReachTheApp: a key the focused button does not take
// reaches the app's Update as a tea.KeyPressMsg; a key a text input takes,
// and the keys the terminal keeps (tab), do not.
func TestKeysNoWidgetTakesReachTheApp(t *testing.T) {
	t.Parallel()
	srv, seen := whoServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{user: "bob"})
	c.WaitFor(t, "globals=0", waitLong)
	c.Type("g") // focus is on the OK button, which takes Enter and Space only
	c.WaitFor(t, "globals=1", waitShort)
	c.Key("\t") // to the text input: the terminal keeps tab
	c.Type("g") // typed into the note, not a shortcut
	c.WaitFor(t, "Note", waitShort)
	se, _ := srv.Sessions().Get(seen()[0].SessionID)
	testkit.Eventually(t, waitShort, func() bool { return modelOf(se).note == "g" }, "the g to reach the note")
	if m := modelOf(se); m.globals != 1 || strings.Join(m.keys, ",") != "g" {
		t.Fatalf("app saw keys %v (globals %d), want only the first g", m.keys, m.globals)
	}
}

// TestAppEndsItsSessionOrTerminal: tea.Quit and ui.EndSession end the
// session for everyone, with the reason shown; ui.CloseTerminal closes
// only the terminal whose key asked, and the session goes on.
func TestAppEndsItsSessionOrTerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, reason string }{
		{"q", "the app ended the session"},
		{"e", "checkout closed the session"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			t.Parallel()
			srv, id, owner, other := twoTerminals(t, "carol")
			se, _ := srv.Sessions().Get(id)
			ag := attachAgent(t, srv, se, false)
			owner.Type(tc.key)
			for _, c := range []*client{owner, other} {
				_, out := c.WaitExit(t, waitLong)
				if !strings.Contains(out+c.Screen(), tc.reason) {
					t.Errorf("a terminal was not told %q: %q / %q", tc.reason, out, c.Screen())
				}
			}
			testkit.Eventually(t, waitShort, func() bool { _, ok := srv.Sessions().Get(id); return !ok }, "the session to end")
			if _, err := ag.cs.ListTools(t.Context(), nil); err == nil {
				t.Errorf("the agent's client still works after the app ended the session")
			}
		})
	}
	t.Run("close terminal", func(t *testing.T) {
		t.Parallel()
		srv, id, owner, other := twoTerminals(t, "dave")
		other.Type("x")
		_, out := other.WaitExit(t, waitLong)
		if !strings.Contains(out+other.Screen(), "see you, dave") {
			t.Errorf("the closed terminal was not told why: %q / %q", out, other.Screen())
		}
		owner.Type("g")
		owner.WaitFor(t, "globals=1", waitShort)
		if owner.Exited() {
			t.Fatal("closing one terminal closed the owner's too")
		}
		if _, ok := srv.Sessions().Get(id); !ok {
			t.Fatal("closing a terminal ended the session")
		}
	})
}

// twoTerminals serves whoApp with a resume grace and logs user in twice
// with one key: a new session, and a second owner terminal joined to it.
func twoTerminals(t *testing.T, user string) (srv *testServer, id string, owner, other *client) {
	t.Helper()
	srv, seen := whoServer(t, server.Options{SSH: server.SSHOptions{ResumeGrace: time.Minute}})
	key := newKey(t)
	owner = connect(t, srv.SSHAddr(), clientOpts{user: user, key: key})
	owner.WaitFor(t, "globals=0", waitLong)
	id = seen()[0].SessionID
	other = connect(t, srv.SSHAddr(), clientOpts{user: user, key: key, command: "join " + id})
	other.WaitFor(t, "globals=0", waitLong)
	return srv, id, owner, other
}

// modelOf is the session's latest whoApp.
func modelOf(se *session.Session) whoApp { return se.Dispatcher.Snapshot().Model.(whoApp) }
