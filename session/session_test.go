package session

import (
	"context"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type app struct{}

func (app) Init() tea.Cmd                        { return nil }
func (a app) Update(tea.Msg) (ui.Model, tea.Cmd) { return a, nil }
func (app) View() ui.Node                        { return ui.Text{Text: "hi"} }

var urlSafe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func TestIDsAndTokensAreRandomURLSafeAndLongEnough(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	seen := map[string]bool{}
	for range 200 {
		s, ok, err := m.Start("t", Owner{User: "u"}, app{}, 0)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		for _, v := range []string{s.ID, s.Token()} {
			if !urlSafe.MatchString(v) {
				t.Fatalf("%q is not URL-safe", v)
			}
			if seen[v] {
				t.Fatalf("%q repeated", v)
			}
			seen[v] = true
		}
		idBytes, _ := base64.RawURLEncoding.DecodeString(s.ID)
		tokBytes, _ := base64.RawURLEncoding.DecodeString(s.Token())
		if len(idBytes)*8 < 128 || len(tokBytes)*8 != 256 {
			t.Fatalf("id has %d bits, token %d bits", len(idBytes)*8, len(tokBytes)*8)
		}
		if s.ID == s.Token() {
			t.Fatal("token equals id")
		}
		if !s.CheckToken(s.Token()) || s.CheckToken(s.ID) || s.CheckToken("") {
			t.Fatal("CheckToken wrong")
		}
	}
}

func TestRegistryLifecycle(t *testing.T) {
	var ended atomic.Int32
	m := NewManager(&Options{OnEnd: func(*Session) { ended.Add(1) }})
	a, _, _ := m.Start("t", Owner{User: "a"}, app{}, 0)
	b, _, _ := m.Start("t", Owner{User: "b"}, app{}, 0)
	if m.Count() != 2 {
		t.Fatalf("count %d", m.Count())
	}
	if got, ok := m.Get(a.ID); !ok || got != a {
		t.Fatal("Get(a) failed")
	}
	if _, ok := m.Get("nope"); ok {
		t.Fatal("Get of unknown id succeeded")
	}
	m.End(a.ID)
	m.End(a.ID) // idempotent
	if _, ok := m.Get(a.ID); ok || m.Count() != 1 || ended.Load() != 1 {
		t.Fatalf("after End: count=%d ended=%d", m.Count(), ended.Load())
	}
	select {
	case <-a.Dispatcher.Done():
	case <-time.After(time.Second):
		t.Fatal("ending a session did not close its dispatcher")
	}
	m.Close()
	if m.Count() != 0 || ended.Load() != 2 {
		t.Fatalf("after Close: count=%d ended=%d", m.Count(), ended.Load())
	}
	<-b.Dispatcher.Done()
	if _, _, err := m.Start("t", Owner{}, app{}, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v, want ErrClosed", err)
	}
}

func TestPerOwnerCap(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	alice := Owner{User: "alice", KeyFingerprint: "SHA256:a"}
	s1, ok1, _ := m.Start("t", alice, app{}, 2)
	_, ok2, _ := m.Start("t", alice, app{}, 2)
	_, ok3, _ := m.Start("t", alice, app{}, 2)
	if !ok1 || !ok2 || ok3 {
		t.Fatalf("cap of 2 gave %v %v %v", ok1, ok2, ok3)
	}
	// The same key under another user name is the same owner: the name
	// is the client's to choose, the key is what it proved.
	for _, user := range []string{"bob", "", "alice\x00SHA256:a", "key"} {
		if _, ok, _ := m.Start("t", Owner{User: user, KeyFingerprint: "SHA256:a"}, app{}, 2); ok {
			t.Fatalf("the same key as user %q was given a session beyond the cap", user)
		}
	}
	// Another key is another owner, whatever the user name.
	if _, ok, _ := m.Start("t", Owner{User: "alice", KeyFingerprint: "SHA256:b"}, app{}, 2); !ok {
		t.Fatal("another key of the same user was refused")
	}
	// Without a key the user name is the owner, and never the same as a
	// key's owner.
	nokey := Owner{User: "SHA256:a"}
	for i := range 2 {
		if _, ok, _ := m.Start("t", nokey, app{}, 2); !ok {
			t.Fatalf("keyless session %d refused", i)
		}
	}
	if _, ok, _ := m.Start("t", nokey, app{}, 2); ok {
		t.Fatal("a keyless user got a session beyond the cap")
	}
	m.End(s1.ID)
	if _, ok, _ := m.Start("t", alice, app{}, 2); !ok {
		t.Fatal("slot not freed after End")
	}
}

func TestPresenceAndInputTimes(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	m := NewManager(&Options{Now: clock})
	defer m.Close()
	s, _, _ := m.Start("t", Owner{User: "u"}, app{}, 0)
	var changes atomic.Int32
	s.OnPresenceChange(func() { changes.Add(1) })
	_, detachT := s.Attach(KindTerminal, "u")
	_, detachA := s.Attach(KindAgent, "claude")
	if n := len(s.Attached()); n != 2 || len(s.Agents()) != 1 || s.Agents()[0].Name != "claude" {
		t.Fatalf("attached %v", s.Attached())
	}
	detachA()
	detachA()
	if len(s.Agents()) != 0 || len(s.Attached()) != 1 {
		t.Fatalf("after detach: %v", s.Attached())
	}
	detachT()
	if changes.Load() != 4 { // two attaches, two detaches; the repeated detach is a no-op
		t.Fatalf("presence hooks ran %d times, want 4", changes.Load())
	}
	if !s.LastInput().Equal(now) {
		t.Fatalf("LastInput %v, want start time", s.LastInput())
	}
	now = now.Add(time.Minute)
	s.Touch()
	if !s.LastInput().Equal(now) {
		t.Fatalf("LastInput %v after Touch, want %v", s.LastInput(), now)
	}
}

func TestRotateToken(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	s, _, _ := m.Start("t", Owner{User: "u"}, app{}, 0)
	old := s.Token()
	ch, stop := s.Watch()
	defer stop()
	tok, err := s.RotateToken()
	if err != nil || tok == old || s.Token() != tok {
		t.Fatalf("rotate: %q %v", tok, err)
	}
	if s.CheckToken(old) || !s.CheckToken(tok) {
		t.Fatal("old token still valid or new one not")
	}
	select {
	case <-ch:
	default:
		t.Fatal("rotation did not signal watchers")
	}
}

func TestActivityLogAndControl(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	s, _, _ := m.Start("t", Owner{User: "u"}, app{}, 0)
	ch, stop := s.Watch()
	defer stop()
	for i := range MaxActivity + 5 {
		s.Record(Action{Origin: "human:u", Action: "keys", Summary: string(rune('a' + i%26)), Outcome: "ok"})
	}
	s.Record(Action{Origin: "agent:bot", Agent: true, Action: "click", Outcome: "ok"})
	s.Record(Action{Origin: "human:u", Action: "keys", Outcome: "ok"})
	log := s.Activity()
	if len(log) != MaxActivity || log[len(log)-2].Origin != "agent:bot" || log[0].At.IsZero() {
		t.Fatalf("log of %d, second last %+v", len(log), log[len(log)-2])
	}
	a, seq, ok := s.LastAgentAction()
	if !ok || a.Origin != "agent:bot" || seq != MaxActivity+6 {
		t.Fatalf("last agent action %+v seq %d", a, seq)
	}
	<-ch
	s.SetControl(Control{Paused: true})
	if !s.Control().Paused {
		t.Fatal("pause not recorded")
	}
	select {
	case <-ch:
	default:
		t.Fatal("control change not signalled")
	}
}

type tick struct{}

// ticker folds a command's result: each tick schedules the next, three
// times.
type ticker struct{ n int }

func (t ticker) Init() tea.Cmd { return func() tea.Msg { return tick{} } }
func (t ticker) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if _, ok := msg.(tick); ok && t.n < 3 {
		t.n++
		return t, func() tea.Msg { return tick{} }
	}
	return t, nil
}
func (t ticker) View() ui.Node { return ui.Text{Text: "tick"} }

func TestCommandsAreLoggedAndCoalesced(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	s, _, _ := m.Start("t", Owner{User: "u"}, ticker{}, 0)
	var log []Action
	testkit.Eventually(t, 5*time.Second, func() bool {
		log = s.Activity()
		return len(log) == 1 && log[0].Count == 4 // Init's tick and the three it schedules
	}, "one coalesced entry for the 4 ticks; activity %+v", &log)
	if !strings.HasPrefix(log[0].Origin, "command:") || log[0].Action != "command" || !strings.Contains(log[0].Summary, "session.tick") {
		t.Fatalf("entry %+v", log[0])
	}
}

// TestPresenceTracksWhenAgentsLastActed: an agent's LastActive follows its
// Touch; watchers learn when it becomes idle (exactly AgentIdleAfter after
// it last acted: the test runs on synctest's virtual clock, with the
// default of two minutes) and when it acts again; it leaves at once on
// Detach.
func TestPresenceTracksWhenAgentsLastActed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewManager(nil)
		defer m.Close()
		s, _, err := m.Start("app", Owner{User: "u"}, app{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		changed, stop := s.Watch()
		defer stop()
		drain := func() {
			for {
				select {
				case <-changed:
				default:
					return
				}
			}
		}
		signalled := func() bool {
			synctest.Wait()
			select {
			case <-changed:
				return true
			default:
				return false
			}
		}
		p := s.Join(KindAgent, "claude-code")
		term := s.Join(KindTerminal, "ada")
		at := s.Attached()
		if len(at) != 2 || at[0].Idle || at[0].LastActive.Before(at[0].Since) {
			t.Fatalf("attached %+v", at)
		}
		drain()
		time.Sleep(DefaultAgentIdleAfter - time.Nanosecond)
		if signalled() || s.Attached()[0].Idle {
			t.Fatalf("the agent was shown idle before %v quiet: %+v", DefaultAgentIdleAfter, s.Attached())
		}
		time.Sleep(time.Nanosecond)
		if !signalled() {
			t.Fatalf("watchers were not told that the agent became idle after %v", DefaultAgentIdleAfter)
		}
		if at := s.Attached(); !at[0].Idle || at[1].Idle {
			t.Fatalf("after %v quiet: %+v (a terminal is never idle)", DefaultAgentIdleAfter, at)
		}
		drain()
		p.Touch()
		select {
		case <-changed:
		default:
			t.Fatal("watchers were not told that the idle agent acted")
		}
		if a := s.Agents(); len(a) != 1 || a[0].Idle || !a[0].LastActive.Equal(time.Now()) {
			t.Fatalf("after Touch at %v: %+v", time.Now(), a)
		}
		// Idle again a full AgentIdleAfter after that Touch, not before.
		drain()
		time.Sleep(DefaultAgentIdleAfter - time.Second)
		synctest.Wait()
		if s.Agents()[0].Idle {
			t.Fatal("an agent that acted was shown idle again too soon")
		}
		time.Sleep(time.Second)
		if !signalled() {
			t.Fatalf("watchers were not told that the agent became idle again %v after it acted", DefaultAgentIdleAfter)
		}
		if !s.Agents()[0].Idle {
			t.Fatalf("the agent was not idle again %v after it acted: %+v", DefaultAgentIdleAfter, s.Agents())
		}
		p.Detach()
		p.Detach()
		term.Detach()
		if len(s.Attached()) != 0 {
			t.Fatalf("after Detach: %+v", s.Attached())
		}
	})
}

// quitter returns, for each message naming one, the command asking the
// session to end or a terminal to close.
type quitter struct{}

type (
	askQuit  struct{}
	askEnd   struct{ reason string }
	askClose struct{}
)

func (quitter) Init() tea.Cmd { return nil }
func (q quitter) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case askQuit:
		return q, tea.Quit
	case askEnd:
		return q, ui.EndSession(msg.reason)
	case askClose:
		return q, ui.CloseTerminal("bye\x1b[2J")
	case tea.QuitMsg:
		return q, ui.EndSession("a QuitMsg folded as a message must not end it")
	}
	return q, nil
}
func (quitter) View() ui.Node { return ui.Text{Text: "q"} }

// TestAppEndsItsSession: tea.Quit and ui.EndSession from a command end the
// session with their reason as its context's cause; a QuitMsg sent as a
// message does not; ui.CloseTerminal reaches OnCloseTerminal only when a
// human's input led to it, with the terminal's id and a cleaned reason.
func TestAppEndsItsSession(t *testing.T) {
	type closed struct{ id, reason string }
	closes := make(chan closed, 4)
	m := NewManager(&Options{OnCloseTerminal: func(_ *Session, id, reason string) { closes <- closed{id, reason} }})
	defer m.Close()
	start := func() *Session {
		s, _, err := m.Start("q", Owner{User: "u"}, quitter{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	human := dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "u", ID: "t7"}

	s := start()
	if err := s.Dispatcher.Send(human, tea.QuitMsg{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Dispatcher.Call(t.Context(), human, askClose{}); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-closes:
		if c.id != "t7" || c.reason != "bye" {
			t.Fatalf("OnCloseTerminal(%q, %q), want t7 and the cleaned reason", c.id, c.reason)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("CloseTerminal from a human's key never reached OnCloseTerminal")
	}
	agent := dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "bot"}
	if err := s.Dispatcher.Call(t.Context(), agent, askClose{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Dispatcher.Call(t.Context(), agent, askEnd{"second"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("ui.EndSession did not end the session")
	}
	if got := EndReason(s); got != "second" {
		t.Fatalf("end reason %q, want the app's (a folded QuitMsg must not have ended it first)", got)
	}
	if !errors.Is(context.Cause(s.Context()), ErrEnded) {
		t.Fatalf("cause %v does not match ErrEnded", context.Cause(s.Context()))
	}
	select {
	case c := <-closes:
		t.Fatalf("an agent's CloseTerminal closed terminal %q", c.id)
	default:
	}
	if _, ok := m.Get(s.ID); ok {
		t.Fatal("ended session still registered")
	}

	s = start()
	if err := s.Dispatcher.Call(t.Context(), human, askQuit{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("tea.Quit did not end the session")
	}
	if got := EndReason(s); got != "the app ended the session" {
		t.Fatalf("end reason %q", got)
	}
	s = start()
	m.End(s.ID)
	if got := EndReason(s); got != ErrEnded.Error() {
		t.Fatalf("End's reason %q, want %q", got, ErrEnded)
	}
}

// TestStartFuncGivesTheIDAndReleasesTheSlotOnError: the model is made with
// the new session's id; a failed constructor starts nothing and leaves the
// owner's slot free.
func TestStartFuncGivesTheIDAndReleasesTheSlotOnError(t *testing.T) {
	m := NewManager(nil)
	defer m.Close()
	o := Owner{User: "solo"}
	boom := errors.New("boom")
	if _, _, err := m.StartFunc("a", o, func(string) (ui.Model, error) { return nil, boom }, 1); !errors.Is(err, boom) {
		t.Fatalf("a failing constructor: %v, want its error", err)
	}
	if _, _, err := m.StartFunc("a", o, func(string) (ui.Model, error) { return nil, nil }, 1); err == nil {
		t.Fatal("a nil model started a session")
	}
	var gotID string
	s, ok, err := m.StartFunc("a", o, func(id string) (ui.Model, error) { gotID = id; return app{}, nil }, 1)
	if err != nil || !ok {
		t.Fatalf("the owner's only slot was not free after failed starts: %v %v", ok, err)
	}
	if gotID != s.ID {
		t.Fatalf("constructor got id %q, session is %q", gotID, s.ID)
	}
	if m.Count() != 1 {
		t.Fatalf("%d sessions, want 1", m.Count())
	}
}
