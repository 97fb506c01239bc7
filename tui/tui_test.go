package tui

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type openModal struct{}

// form is a small app: an input, a button that opens a modal with a
// checkbox inside, a disabled button and a password field.
type form struct {
	name    string
	secret  string
	open    bool
	checked bool
	clicks  int
	last    string
}

func (f form) Init() tea.Cmd { return nil }

func (f form) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ui.TextInputChanged:
		f.name = msg.Text
	case ui.PasswordFieldChanged:
		f.secret = msg.Text
	case openModal:
		f.open = true
		f.clicks++
	case ui.CheckboxToggled:
		f.checked = msg.Checked
	case ui.ModalConfirmed:
		f.open, f.last = false, "confirmed"
	case ui.ModalDismissed:
		f.open, f.last = false, "dismissed"
	}
	return f, nil
}

func (f form) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.TextInput{ID: "name", Label: "Name", Value: f.name},
		ui.Button{ID: "open", Label: "Open", OnClick: openModal{}},
		ui.Button{ID: "off", Label: "Off", Disabled: true},
		ui.PasswordField{ID: "pw", Label: "Password", Value: f.secret},
		ui.Text{Text: "last: " + f.last},
		ui.Modal{ID: "dlg", Title: "Sure?", Visible: f.open, Body: ui.Checkbox{ID: "agree", Label: "I agree", Checked: f.checked}},
	}}
}

// newSession starts a session of the test form; it ends with the test.
func newSession(t *testing.T) *session.Session {
	t.Helper()
	mgr := session.NewManager(nil)
	t.Cleanup(mgr.Close)
	s, ok, err := mgr.Start("test", session.Owner{User: "u"}, form{}, 0)
	if err != nil || !ok {
		t.Fatalf("start session: ok=%v err=%v", ok, err)
	}
	return s
}

func newTerm(t *testing.T) (*Model, *session.Session) {
	t.Helper()
	s := newSession(t)
	m := New(s, Options{Terminal: "u", BaseURL: "http://127.0.0.1:8080"})
	t.Cleanup(m.Close)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return m, s
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "ctrl+o":
		return tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func model(s *session.Session) form { return s.Dispatcher.Snapshot().Model.(form) }

func screenText(m *Model) string { return ansiStrip(m.Frame()) }

func ansiStrip(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		b.WriteString(lipgloss.NewStyle().Render(stripEsc(l)))
		b.WriteByte('\n')
	}
	return b.String()
}

func stripEsc(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestFocusCyclesOverEnabledWidgetsInTreeOrder(t *testing.T) {
	m, _ := newTerm(t)
	if m.Focus() != "name" {
		t.Fatalf("initial focus = %q, want name", m.Focus())
	}
	var got []string
	for range 4 {
		m.Update(key("tab"))
		got = append(got, m.Focus())
	}
	if want := "open,pw,name,open"; strings.Join(got, ",") != want {
		t.Fatalf("tab order = %v, want %s (the disabled button is skipped)", got, want)
	}
	m.Update(key("shift+tab"))
	if m.Focus() != "name" {
		t.Fatalf("shift+tab focus = %q, want name", m.Focus())
	}
}

func TestTypingIsResolvedAgainstTheCurrentValue(t *testing.T) {
	m, s := newTerm(t)
	// Keys arrive back to back, as they do from one network read: each
	// must see the value the previous one produced.
	for _, r := range "hello" {
		m.Update(key(string(r)))
	}
	m.Update(tea.PasteMsg{Content: " world"})
	if got := model(s).name; got != "hello world" {
		t.Fatalf("model name = %q, want %q", got, "hello world")
	}
	if !strings.Contains(screenText(m), "hello world") {
		t.Fatalf("screen does not show the typed text:\n%s", screenText(m))
	}
	if s.Dispatcher.Snapshot().Origin != (dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "u"}) {
		t.Fatalf("origin = %v, want human:u", s.Dispatcher.Snapshot().Origin)
	}
}

func TestModalTrapsFocusAndEscDismissesFromInside(t *testing.T) {
	m, s := newTerm(t)
	m.Update(key("tab")) // open
	m.Update(key("enter"))
	if !model(s).open {
		t.Fatal("Enter on the button did not open the modal")
	}
	seen := map[string]bool{}
	for range 5 {
		m.Update(key("tab"))
		seen[m.Focus()] = true
	}
	if len(seen) != 2 || !seen["dlg"] || !seen["agree"] {
		t.Fatalf("focus while the modal is open visited %v, want only dlg and agree", seen)
	}
	for m.Focus() != "agree" {
		m.Update(key("tab"))
	}
	m.Update(key("space"))
	if !model(s).checked {
		t.Fatal("space on the checkbox inside the modal did not toggle it")
	}
	m.Update(key("esc"))
	if f := model(s); f.open || f.last != "dismissed" {
		t.Fatalf("esc inside the modal: open=%v last=%q, want dismissed", f.open, f.last)
	}
	if m.Focus() == "dlg" || m.Focus() == "agree" {
		t.Fatalf("focus %q stayed inside a closed modal", m.Focus())
	}
}

func hit(t *testing.T, m *Model, id string) ui.Rect {
	t.Helper()
	m.Frame() // lay out, so hit rectangles exist
	for _, h := range m.frame.Hits {
		if h.ID == id {
			return h.Rect
		}
	}
	t.Fatalf("widget %s has no hit rectangle", id)
	return ui.Rect{}
}

func click(m *Model, r ui.Rect) {
	m.Update(tea.MouseClickMsg{X: r.X + 1, Y: r.Y, Button: tea.MouseLeft})
}

func TestMouseClickFocusesAndActivates(t *testing.T) {
	m, s := newTerm(t)
	m.Update(key("tab"))
	m.Update(key("tab")) // pw
	click(m, hit(t, m, "name"))
	if m.Focus() != "name" {
		t.Fatalf("focus after clicking the input = %q, want name", m.Focus())
	}
	click(m, hit(t, m, "open"))
	if model(s).clicks != 1 {
		t.Fatalf("clicks = %d, want 1", model(s).clicks)
	}
	if m.Focus() != "dlg" {
		t.Fatalf("focus = %q, want the modal the click opened", m.Focus())
	}
	// Clicks outside an open modal do nothing to the widgets under it.
	openRect := hit(t, m, "open")
	click(m, openRect)
	if model(s).clicks != 1 {
		t.Fatalf("a click under the open modal activated a button (clicks = %d)", model(s).clicks)
	}
	m.Update(key("esc"))
	// A click on a disabled button neither focuses nor activates it.
	before := m.Focus()
	click(m, hit(t, m, "off"))
	if m.Focus() != before {
		t.Fatalf("clicking a disabled button moved focus to %q", m.Focus())
	}
}

func TestAttachPanelShowsWholeURLsAndToken(t *testing.T) {
	m, s := newTerm(t)
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 20})
	if strings.Contains(screenText(m), s.Token()) {
		t.Fatal("token shown before ctrl+o")
	}
	m.Update(key("ctrl+o"))
	lines := strings.Split(screenText(m), "\n")
	streamable, sse := AttachURLs("http://127.0.0.1:8080", s.ID)
	// Values longer than the 40 columns wrap onto lines that start at the
	// left edge and join back into the value.
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %d is %d cells wide: %q", i, w, l)
		}
	}
	joined := strings.Join(lines, "")
	for _, want := range []string{streamable, sse, s.Token()} {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, want[:min(len(want), 40)]) {
				found = true
			}
		}
		if !found || !strings.Contains(joined, want) {
			t.Errorf("attach panel lacks %q, whole from the left edge:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if !strings.HasSuffix(streamable, "/sessions/"+s.ID+"/mcp") || !strings.HasSuffix(sse, "/sessions/"+s.ID+"/sse") {
		t.Fatalf("URLs %q %q do not follow /sessions/<id>/{mcp,sse}", streamable, sse)
	}
	m.Update(key("ctrl+o"))
	if strings.Contains(screenText(m), s.Token()) {
		t.Fatal("token still shown after the second ctrl+o")
	}
}

func TestStatusBarAndQuit(t *testing.T) {
	m, s := newTerm(t)
	lines := strings.Split(strings.TrimRight(screenText(m), "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "session "+s.ID) || !strings.Contains(last, "agents: none") {
		t.Fatalf("status bar = %q", last)
	}
	if len(lines) != 24 {
		t.Fatalf("screen has %d lines, want 24 (status bar on the last line)", len(lines))
	}
	_, cmd := m.Update(key("ctrl+c"))
	if cmd == nil {
		t.Fatal("ctrl+c returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c did not quit")
	}
	m.Update(NoticeMsg("the server is stopping"))
	if !strings.Contains(screenText(m), "the server is stopping") {
		t.Fatal("notice not shown")
	}
}

func TestPasswordNeverDrawn(t *testing.T) {
	m, s := newTerm(t)
	if err := s.Dispatcher.Call(context.Background(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "a"},
		ui.PasswordFieldChanged{ID: "pw", Text: "hunter2secret"}); err != nil {
		t.Fatal(err)
	}
	m.Update(snapshotMsg{})
	if strings.Contains(m.Frame(), "hunter2secret") {
		t.Fatal("the password field's text reached the screen")
	}
}

func TestSnapshotsFromOtherOriginsRedraw(t *testing.T) {
	m, s := newTerm(t)
	if err := s.Dispatcher.Call(context.Background(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "a"},
		ui.TextInputChanged{ID: "name", Text: "from-agent"}); err != nil {
		t.Fatal(err)
	}
	// The waiting command wakes on the subscription and yields a refresh.
	msg := m.waitSnapshot()()
	if _, ok := msg.(snapshotMsg); !ok {
		t.Fatalf("wait returned %T, want snapshotMsg", msg)
	}
	m.Update(msg)
	if !strings.Contains(screenText(m), "from-agent") {
		t.Fatalf("agent's change not on screen:\n%s", screenText(m))
	}
}

func TestAnySizeRendersWithoutPanic(t *testing.T) {
	m, _ := newTerm(t)
	m.Update(key("ctrl+o"))
	for _, sz := range [][2]int{{1, 1}, {2, 1}, {1, 5}, {10, 3}, {80, 24}, {1000, 500}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		v := m.Frame()
		if n := len(strings.Split(v, "\n")); n > sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], n)
		}
	}
}

func TestCloseStopsWaiting(t *testing.T) {
	m, _ := newTerm(t)
	done := make(chan tea.Msg)
	go func() { done <- m.waitSnapshot()() }()
	m.Close()
	if msg := <-done; msg != nil {
		t.Fatalf("wait after Close returned %T, want nil", msg)
	}
}

func newPrimary(t *testing.T) (*Model, *session.Session) {
	t.Helper()
	return newPrimaryOf(t, form{})
}

// newPrimaryOf is newPrimary with the app app.
func newPrimaryOf(t *testing.T, app ui.Model) (*Model, *session.Session) {
	t.Helper()
	mgr := session.NewManager(nil)
	t.Cleanup(mgr.Close)
	s, _, err := mgr.Start("test", session.Owner{User: "u"}, app, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := New(s, Options{Terminal: "u", Primary: true})
	t.Cleanup(m.Close)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return m, s
}

func TestAgentKeysActAsTypedWithTheAgentAsOrigin(t *testing.T) {
	m, s := newPrimary(t)
	res := make(chan error, 1)
	m.Update(AgentKeysMsg{Agent: "bot", Keys: []string{"h", "i", "tab"}, Result: res})
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if model(s).name != "hi" || m.Focus() != "open" {
		t.Fatalf("name %q focus %q", model(s).name, m.Focus())
	}
	if o := s.Dispatcher.Snapshot().Origin; o != (dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "bot"}) {
		t.Fatalf("origin %v", o)
	}
	if scr, _, _ := s.Screen(); !strings.Contains(stripEsc(scr), "hi") {
		t.Fatalf("published screen lacks the agent's text: %q", scr)
	}
	for _, keys := range [][]string{{"ctrl+c"}, {"h", "nosuchkey"}} {
		m.Update(AgentKeysMsg{Agent: "bot", Keys: keys, Result: res})
		if err := <-res; err == nil {
			t.Errorf("keys %v were accepted", keys)
		}
	}
	if model(s).name != "hi" {
		t.Fatalf("a refused key batch changed the model to %q", model(s).name)
	}
}

func TestPrimaryPublishesAttentionAndRecentActions(t *testing.T) {
	m, s := newPrimary(t)
	m.Update(key("tab"))
	if a := s.Attention(); a.Focus != "open" {
		t.Fatalf("attention %+v", a)
	}
	m.Update(key("x")) // on a button: nothing happens, nothing noted
	if len(s.Recent()) != 0 {
		t.Fatalf("recent %v after a key that did nothing", s.Recent())
	}
	m.Update(key("enter"))
	if r := s.Recent(); len(r) == 0 || r[0] != "open" {
		t.Fatalf("recent %v", r)
	}
	// A secondary terminal does not steer the lens.
	other := New(s, Options{Terminal: "v"})
	defer other.Close()
	other.Update(key("tab"))
	if a := s.Attention(); a.Focus != "dlg" && a.Focus != "open" {
		t.Fatalf("secondary terminal moved attention to %+v", a)
	}
}

func TestPresenceWakesTheTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, s := newPrimary(t)
		got := make(chan tea.Msg, 1)
		go func() { got <- m.waitSnapshot()() }()
		_, detach := s.Attach(session.KindAgent, "bot")
		defer detach()
		select {
		case msg := <-got:
			m.Update(msg)
		case <-time.After(2 * time.Second):
			t.Fatal("attaching an agent did not wake the terminal")
		}
		if !strings.Contains(screenText(m), "agent: bot") {
			t.Fatalf("status bar: %q", screenText(m))
		}
	})
}

func TestCtrlRInTheAttachPanelRotatesTheToken(t *testing.T) {
	m, s := newTerm(t)
	old := s.Token()
	m.Update(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	if s.Token() != old {
		t.Fatal("ctrl+r rotated the token with the attach panel closed")
	}
	m.Update(key("ctrl+o"))
	m.Update(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	if s.Token() == old || s.CheckToken(old) {
		t.Fatal("ctrl+r in the attach panel did not rotate the token")
	}
	if !strings.Contains(screenText(m), s.Token()) {
		t.Fatal("the panel does not show the new token")
	}
	// Agents cannot press it: it is not among the keys they may send.
	if _, err := ParseKey("ctrl+r"); err == nil {
		t.Fatal("agents may press ctrl+r")
	}
}

func TestApprovalPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, s := newPrimary(t)
		m.opts.PromptArming = -1 // answered at once here; TestPromptArming waits
		ask := func(id string) chan session.Approval {
			reply := make(chan session.Approval, 1)
			m.Update(ApprovalMsg{Req: session.ApprovalRequest{ID: id, Agent: "bot 1.0", Tool: "test.open.click", Widget: "Open", Args: "{}",
				Deadline: time.Now().Add(45 * time.Second)}, Reply: reply})
			return reply
		}
		for _, tc := range []struct {
			key  tea.KeyPressMsg
			want session.Approval
		}{{key("a"), session.ApprovedOnce}, {key("s"), session.ApprovedForSession}, {key("d"), session.Refused}, {key("esc"), session.Refused}} {
			reply := ask("r1")
			scr := screenText(m)
			if !strings.Contains(scr, "bot 1.0 wants to run test.open.click on Open") || !strings.Contains(scr, "[s] allow for this session") ||
				!strings.Contains(scr, "denied in 45 s without an answer") {
				t.Fatalf("prompt not shown:\n%s", scr)
			}
			m.Update(tc.key)
			select {
			case got := <-reply:
				if got != tc.want {
					t.Fatalf("key %s answered %v, want %v", tc.key, got, tc.want)
				}
			default:
				t.Fatalf("key %s did not answer", tc.key)
			}
		}
		if strings.Contains(screenText(m), "Approve an agent") {
			t.Fatal("prompt still shown after the answers")
		}

		// While a prompt is open, keys do not reach the app.
		reply := ask("r2")
		m.Update(key("x"))
		m.Update(tea.PasteMsg{Content: "pasted"})
		if model(s).name != "" {
			t.Fatalf("typing reached the app under a prompt: %q", model(s).name)
		}
		// A withdrawn request is refused and leaves.
		m.Update(WithdrawApprovalMsg{ID: "r2"})
		if got := <-reply; got != session.Refused {
			t.Fatalf("withdrawn: %v", got)
		}
		// The countdown is redrawn every second while a prompt is open.
		reply = make(chan session.Approval, 1)
		m.Update(ApprovalMsg{Req: session.ApprovalRequest{ID: "r5", Agent: "bot", Tool: "test.go.click", Deadline: time.Now().Add(2300 * time.Millisecond)}, Reply: reply})
		if !m.countdown.pending || !strings.Contains(screenText(m), "denied in 3 s") {
			t.Fatalf("countdown not started (ticking %v):\n%s", m.countdown.pending, screenText(m))
		}
		m.countdown.pending = false
		tick := m.tickCountdown()
		start := time.Now()
		m.Update(tick())
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Fatalf("the countdown ticked after %v, want 300ms (when 2.3s left becomes 2s)", d)
		}
		if !strings.Contains(screenText(m), "denied in 2 s") || !m.countdown.pending {
			t.Fatalf("countdown not redrawn a second later (ticking %v):\n%s", m.countdown.pending, screenText(m))
		}
		m.Update(key("d"))
		<-reply
		m.Update(countdownMsg{m.countdown.gen}) // the tick pending when the prompt went
		if m.countdown.pending {
			t.Fatal("countdown still ticking with no prompt open")
		}
		// Prompts left open when the terminal closes are refused.
		r3, r4 := ask("r3"), ask("r4")
		if !strings.Contains(screenText(m), "more waiting") {
			t.Fatal("the queue is not shown")
		}
		m.Close()
		if <-r3 != session.Refused || <-r4 != session.Refused {
			t.Fatal("closing the terminal did not refuse pending prompts")
		}
	})
}

func TestJoinPromptAndRoles(t *testing.T) {
	m, s := newPrimary(t)
	m.opts.PromptArming = -1 // answered at once here; TestPromptArming waits
	for _, tc := range []struct {
		key  string
		want session.JoinAnswer
	}{{"o", session.JoinAsObserver}, {"r", session.JoinAsDriver}, {"n", session.JoinRefused}} {
		reply := make(chan session.JoinAnswer, 1)
		m.Update(JoinMsg{Req: session.JoinRequest{ID: "j", User: "stranger", RemoteAddr: "10.0.0.9:5555", Deadline: time.Now().Add(30500 * time.Millisecond)}, Reply: reply})
		if scr := screenText(m); !strings.Contains(scr, "stranger from 10.0.0.9:5555") || !strings.Contains(scr, "refused in 31 s without an answer") {
			t.Fatalf("join prompt not shown:\n%s", screenText(m))
		}
		m.Update(key(tc.key))
		if got := <-reply; got != tc.want {
			t.Fatalf("key %s answered %v", tc.key, got)
		}
	}
	// An observer's keys do nothing but leave; it cannot open the token panel.
	obs := New(s, Options{Terminal: "watcher", Role: RoleObserver})
	defer obs.Close()
	obs.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	obs.Update(key("x"))
	obs.Update(key("ctrl+o"))
	if model(s).name != "" || strings.Contains(screenText(obs), s.Token()) {
		t.Fatal("an observer typed or saw the token")
	}
	if !strings.Contains(screenText(obs), "observer") {
		t.Fatalf("observer's status bar: %s", screenText(obs))
	}
	if _, cmd := obs.Update(key("ctrl+c")); cmd == nil {
		t.Fatal("an observer cannot leave")
	}
	// A driver types like the owner, but sees no token either.
	drv := New(s, Options{Terminal: "pair", Role: RoleDriver})
	defer drv.Close()
	drv.Update(tea.WindowSizeMsg{Width: 60, Height: 20})
	drv.Update(key("z"))
	drv.Update(key("ctrl+o"))
	if model(s).name != "z" || strings.Contains(screenText(drv), s.Token()) {
		t.Fatalf("driver: name %q", model(s).name)
	}
}

func TestTypingContinuesTextChangedElsewhere(t *testing.T) {
	m, s := newPrimary(t)
	other := New(s, Options{Terminal: "v", Role: RoleDriver})
	defer other.Close()
	other.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for _, r := range "hello" {
		m.Update(key(string(r)))
	}
	// The second terminal has never touched the input: it continues the text.
	other.Update(key("!"))
	if got := model(s).name; got != "hello!" {
		t.Fatalf("second terminal typed into %q", got)
	}
	// Back in the first, the cursor follows the text the other one changed.
	m.Update(key("?"))
	if got := model(s).name; got != "hello!?" {
		t.Fatalf("first terminal typed into %q", got)
	}
	// Editing in the middle still works: the cursor stays where this
	// terminal put it.
	m.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	m.Update(key("x"))
	if got := model(s).name; got != "hello!x?" {
		t.Fatalf("mid-text edit gave %q", got)
	}
}

func TestSetPrimaryMsg(t *testing.T) {
	m, s := newTerm(t) // not primary
	m.Update(key("tab"))
	if s.Attention().Focus != "" {
		t.Fatal("a secondary terminal published its focus")
	}
	m.Update(SetPrimaryMsg(true))
	if scr, _, ok := s.Screen(); !ok || !strings.Contains(stripEsc(scr), "[ Open ]") {
		t.Fatal("a promoted terminal did not publish its screen")
	}
	m.Update(key("tab"))
	if s.Attention().Focus != "pw" {
		t.Fatalf("a promoted terminal's focus %q was not published", s.Attention().Focus)
	}
}

// TestIdleTerminalReleasesItsScreenCopy: a terminal that drew nothing for
// IdleRelease drops the renderer's copy of the screen, and the next change
// still reaches the terminal correctly.
func TestIdleTerminalReleasesItsScreenCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSession(t)
		ew := &emuWriter{em: vt.NewEmulator(80, 24)}
		m := New(s, Options{Terminal: "u", Output: ew, Environ: []string{"TERM=xterm-256color"}, ColorProfile: colorprofile.ANSI256, IdleRelease: 20 * time.Millisecond})
		t.Cleanup(m.Close)
		m.Init()
		if m.scr.scr == nil {
			t.Fatal("no renderer after the first frame")
		}
		// The waiting command yields idleMsg once the terminal has been quiet
		// for IdleRelease (the clock is the bubble's: exactly).
		start := time.Now()
		msg := m.waitSnapshot()()
		if _, ok := msg.(idleMsg); !ok {
			t.Fatalf("wait returned %T, want idleMsg", msg)
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Fatalf("idleMsg after %v, want IdleRelease 20ms", d)
		}
		if m.renderCache.Len() == 0 {
			t.Fatal("no widget drawing kept after a frame")
		}
		m.Update(msg)
		if m.scr.scr != nil {
			t.Fatal("idle terminal kept its renderer")
		}
		if m.renderCache.Len() != 0 {
			t.Fatal("idle terminal kept its widgets' drawing")
		}
		if err := s.Dispatcher.Call(context.Background(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "a"},
			ui.TextInputChanged{ID: "name", Text: "after-idle"}); err != nil {
			t.Fatal(err)
		}
		msg = m.waitSnapshot()()
		if _, ok := msg.(snapshotMsg); !ok {
			t.Fatalf("wait returned %T, want snapshotMsg", msg)
		}
		m.Update(msg)
		if !strings.Contains(ew.em.String(), "after-idle") {
			t.Fatalf("change after release not on the terminal:\n%s", ew.em.String())
		}
		if m.scr.scr == nil {
			t.Fatal("renderer not rebuilt for the new frame")
		}

		// A negative IdleRelease never releases: nothing comes in an hour
		// but the Close.
		m2 := New(s, Options{Terminal: "v", Output: &emuWriter{em: vt.NewEmulator(80, 24)}, IdleRelease: -1})
		t.Cleanup(m2.Close)
		m2.Init()
		go func() { time.Sleep(time.Hour); m2.Close() }()
		if msg := m2.waitSnapshot()(); msg != nil {
			t.Fatalf("wait returned %T with IdleRelease < 0, want nil after Close", msg)
		}
	})
}

// TestLoneFrameReleasesSooner: a frame that wakes a released screen (an
// agent's age ticking in the status bar, an occasional agent action)
// releases the copy again after loneRelease, not IdleRelease, unless
// another frame follows; a terminal that goes on drawing keeps it for
// IdleRelease after its last frame.
func TestLoneFrameReleasesSooner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSession(t)
		ew := &emuWriter{em: vt.NewEmulator(80, 24)}
		m := New(s, Options{Terminal: "u", Output: ew, Environ: []string{"TERM=xterm-256color"}, ColorProfile: colorprofile.ANSI256, IdleRelease: 5 * time.Second})
		t.Cleanup(m.Close)
		m.Init()
		idleAfter := func(what string, want time.Duration) {
			t.Helper()
			start := time.Now()
			msg := m.waitSnapshot()()
			if _, ok := msg.(idleMsg); !ok {
				t.Fatalf("%s: wait returned %T, want idleMsg", what, msg)
			}
			if d := time.Since(start); d != want {
				t.Fatalf("%s: idleMsg after %v, want %v", what, d, want)
			}
			m.Update(msg)
			if m.scr.scr != nil {
				t.Fatalf("%s: the renderer was kept", what)
			}
		}
		change := func(text string) {
			t.Helper()
			if err := s.Dispatcher.Call(context.Background(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "a"},
				ui.TextInputChanged{ID: "name", Text: text}); err != nil {
				t.Fatal(err)
			}
			msg := m.waitSnapshot()()
			if _, ok := msg.(snapshotMsg); !ok {
				t.Fatalf("wait returned %T, want snapshotMsg", msg)
			}
			m.Update(msg)
			if !strings.Contains(ew.em.String(), text) {
				t.Fatalf("%q not on the terminal:\n%s", text, ew.em.String())
			}
		}
		idleAfter("after the first frame", 5*time.Second)
		change("lone")
		idleAfter("after a lone frame", loneRelease)
		change("first")
		time.Sleep(time.Second) // past the frame interval, within loneRelease
		change("second")
		idleAfter("after a second frame", 5*time.Second)
	})
}

// TestHugeWindowSizesAreBounded: a client can claim any window size; the
// terminal is drawn at most MaxWidth x MaxHeight, so its buffers stay
// bounded (a claimed 2000x1000 window cost ~450 MB before).
func TestHugeWindowSizesAreBounded(t *testing.T) {
	s := newSession(t)
	ew := &emuWriter{em: vt.NewEmulator(80, 24)}
	m := New(s, Options{Terminal: "u", Output: ew, Width: 65535, Height: 65535})
	t.Cleanup(m.Close)
	if m.width != MaxWidth || m.height != MaxHeight || m.scr.width != MaxWidth || m.scr.height != MaxHeight {
		t.Fatalf("initial size %dx%d (screen %dx%d), want %dx%d", m.width, m.height, m.scr.width, m.scr.height, MaxWidth, MaxHeight)
	}
	for _, sz := range [][2]int{{100000, 3}, {3, 100000}, {1 << 30, 1 << 30}, {-5, 0}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		w, h := min(max(sz[0], 1), MaxWidth), min(max(sz[1], 1), MaxHeight)
		if m.width != w || m.height != h || m.scr.width != w || m.scr.height != h {
			t.Fatalf("%dx%d: drawn at %dx%d (screen %dx%d), want %dx%d", sz[0], sz[1], m.width, m.height, m.scr.width, m.scr.height, w, h)
		}
		if n := len(strings.Split(m.Frame(), "\n")); n > h {
			t.Fatalf("%dx%d: %d lines", sz[0], sz[1], n)
		}
	}
}

// TestAFocusMoveWakesWatchersOnce: a key that moves the primary
// terminal's focus and redraws gives the session's watchers (the agents'
// bridge) the new attention and the new screen with one signal, whether
// the frame is drawn at once or at the end of the frame interval; the
// attention never waits for a deferred frame.
func TestAFocusMoveWakesWatchersOnce(t *testing.T) {
	for _, withScreen := range []bool{false, true} {
		t.Run(map[bool]string{false: "no terminal", true: "terminal"}[withScreen], func(t *testing.T) {
			s := newSession(t)
			o := Options{Terminal: "u", Primary: true, IdleRelease: -1}
			if withScreen {
				o.Output = &emuWriter{em: vt.NewEmulator(80, 24)}
			}
			m := New(s, o)
			t.Cleanup(m.Close)
			m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
			var wakes atomic.Int32
			_, stop := s.WatchFunc(func() { wakes.Add(1) })
			defer stop()
			for i, k := range []string{"tab", "tab", "shift+tab"} {
				if withScreen {
					// Drawn at once: nothing was drawn in the last interval.
					time.Sleep(2 * FrameInterval)
				}
				before := wakes.Load()
				m.Update(key(k))
				if got := wakes.Load() - before; got != 1 {
					t.Fatalf("key %d (%s): the watchers were woken %d times, want once", i, k, got)
				}
				if s.Attention().Focus != m.Focus() {
					t.Fatalf("key %d: the session's focus %q, the terminal's %q", i, s.Attention().Focus, m.Focus())
				}
				if scr, _, _ := s.Screen(); scr != m.Frame() {
					t.Fatalf("key %d: the session's screen is not the terminal's frame", i)
				}
			}
			if !withScreen {
				return
			}
			// A key right after a frame: the frame waits for the interval's
			// end, the attention does not.
			m.lastDraw = time.Now()
			before := wakes.Load()
			m.Update(key("tab"))
			if !m.frameTimer.pending {
				t.Fatal("a key right after a frame was drawn at once")
			}
			if got := wakes.Load() - before; got != 1 {
				t.Fatalf("a key whose frame waits woke the watchers %d times, want once", got)
			}
			if s.Attention().Focus != m.Focus() {
				t.Fatalf("with the frame waiting, the session's focus %q, the terminal's %q", s.Attention().Focus, m.Focus())
			}
		})
	}
}

// TestAgentKeysNeverPressTheHumansControls: an agent's raxol_send_key
// cannot open the owner's attach panel (the token and a browser link,
// which its answer's screen would then carry), the activity log, pause,
// focus only, a new token or the browsers' removal: each is refused, the
// whole batch with it, and nothing of the terminal changes.
func TestAgentKeysNeverPressTheHumansControls(t *testing.T) {
	mgr := session.NewManager(nil)
	t.Cleanup(mgr.Close)
	s, _, err := mgr.Start("test", session.Owner{User: "u"}, form{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := New(s, Options{Terminal: "u", Primary: true, Role: RoleOwner})
	t.Cleanup(m.Close)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	token := s.Token()
	res := make(chan error, 1)
	for _, k := range []string{"ctrl+o", "ctrl+g", "ctrl+p", "ctrl+f", "ctrl+r", "ctrl+x"} {
		m.Update(AgentKeysMsg{Agent: "bot", Keys: []string{"h", k}, Result: res})
		// ctrl+o is a key name agents may send (it reaches widgets and
		// hosted programs as a key); the others are no key names at all.
		if err := <-res; err == nil || (k == "ctrl+o" && !strings.Contains(err.Error(), "reserved to the human")) {
			t.Errorf("an agent's %s: %v, want refused as the human's", k, err)
		}
	}
	if m.showAttach || m.showLog {
		t.Errorf("an agent's keys opened the attach panel (%v) or the log (%v)", m.showAttach, m.showLog)
	}
	if c := s.Control(); c.Paused || c.FocusOnly {
		t.Errorf("an agent's keys changed the control: %+v", c)
	}
	if s.Token() != token || model(s).name != "" {
		t.Errorf("token changed %v, model %q: a refused batch presses nothing", s.Token() != token, model(s).name)
	}
	// The human's own ctrl+o still opens it.
	m.Update(key("ctrl+o"))
	if !m.showAttach {
		t.Error("the owner's ctrl+o did not open the attach panel")
	}
}

// panicky is form whose Update panics when the name would end in "!".
type panicky struct{ form }

func (p panicky) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if c, ok := msg.(ui.TextInputChanged); ok && strings.HasSuffix(c.Text, "!") {
		panic("no exclamations")
	}
	next, cmd := p.form.Update(msg)
	return panicky{next.(form)}, cmd
}

// TestAgentKeysReportAFailedUpdate: an agent's key on which the app's
// Update panics is reported to the agent (dispatcher.ErrUpdateFailed,
// which raxol_send_key answers update_failed), not as pressed; the keys
// before it are applied, the ones after it are not pressed.
func TestAgentKeysReportAFailedUpdate(t *testing.T) {
	m, s := newPrimaryOf(t, panicky{})
	res := make(chan error, 1)
	m.Update(AgentKeysMsg{Agent: "bot", Keys: []string{"h", "!", "i"}, Result: res})
	if err := <-res; !errors.Is(err, dispatcher.ErrUpdateFailed) {
		t.Fatalf("keys whose second made Update panic: %v, want ErrUpdateFailed", err)
	}
	if name := s.Dispatcher.Snapshot().Model.(panicky).name; name != "h" {
		t.Fatalf("name %q after the failed key: want %q (the key before applied, the one after not pressed)", name, "h")
	}
	m.Update(AgentKeysMsg{Agent: "bot", Keys: []string{"i"}, Result: res})
	if err := <-res; err != nil {
		t.Fatalf("a key after the failure: %v", err)
	}
}
