package teaapp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// probe is a Bubble Tea program written as one would for a terminal of
// its own: it counts the sizes it was told, prints on "p", panics on "x"
// (in Update) and on "v" (in View), asks for its size on "s", runs a
// process on "e", and draws whatever text it was given.
type probe struct {
	log   *probeLog
	text  string
	w, h  int
	viewX bool
	exec  string
}

// probeLog is shared by every copy of a probe: what the program saw.
type probeLog struct {
	mu    sync.Mutex
	sizes []tea.WindowSizeMsg
}

func (l *probeLog) add(m tea.WindowSizeMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sizes = append(l.sizes, m)
}

func (l *probeLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sizes)
}

func (p probe) Init() tea.Cmd { return nil }

func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.log.add(msg)
		p.w, p.h = msg.Width, msg.Height
	case tea.KeyPressMsg:
		switch msg.String() {
		case "p":
			return p, tea.Println("printed by the program")
		case "x":
			panic("probe: Update fails on x")
		case "v":
			p.viewX = true
		case "s":
			return p, tea.RequestWindowSize
		case "e":
			return p, tea.Exec(nil, func(err error) tea.Msg { return execDone{err} })
		}
	case execDone:
		p.exec = fmt.Sprint(msg.err)
	case setText:
		p.text = string(msg)
	}
	return p, nil
}

type execDone struct{ err error }
type setText string

func (p probe) View() tea.View {
	if p.viewX {
		panic("probe: View fails")
	}
	return tea.NewView(fmt.Sprintf("size %dx%d\n%s\nexec:%s", p.w, p.h, p.text, p.exec))
}

// hostRun is a dispatcher folding a probe as a session does.
type hostRun struct {
	d    *dispatcher.Dispatcher
	log  *probeLog
	ends chan string // the reasons the session was ended with
}

func startProbe(t *testing.T, ident ui.Identity, opts ...Option) *hostRun {
	t.Helper()
	cfg := &config{host: defaultHostOptions()}
	for _, o := range opts {
		o(cfg)
	}
	r := &hostRun{log: &probeLog{}, ends: make(chan string, 4)}
	m := newModel(ident, probe{log: r.log}, cfg)
	r.d = dispatcher.New(m, &dispatcher.Options{Hooks: dispatcher.Hooks{
		OnQuit: func(_ dispatcher.Origin, msg tea.Msg) {
			if e, ok := msg.(ui.EndSessionMsg); ok {
				r.ends <- e.Reason
			} else {
				r.ends <- fmt.Sprintf("%T", msg)
			}
		},
	}})
	t.Cleanup(r.d.Close)
	return r
}

var human = dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "t", ID: "t1"}

func (r *hostRun) call(t *testing.T, msgs ...tea.Msg) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return r.d.Call(ctx, human, msgs...)
}

func (r *hostRun) screen() string {
	return ui.RenderNode(r.d.Snapshot().Tree, 120, ui.RenderOptions{})
}

// eventually waits for cond, failing with what.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func press(s string) tea.KeyPressMsg {
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func TestHostDrawsTheViewAndTellsTheSizeOnce(t *testing.T) {
	r := startProbe(t, ui.Identity{Width: 100, Height: 31})
	// Init's size: the owner's app area (the window less the status bar).
	eventually(t, "the first size", func() bool { return r.log.count() == 1 })
	if got := r.log.sizes[0]; got.Width != 100 || got.Height != 30 {
		t.Fatalf("first size %v, want 100x30", got)
	}
	// The owner's terminal attaches at the size it started with: no news.
	if err := r.call(t, ui.TerminalSize{Terminal: "o", Width: 100, Height: 30, Owner: true}); err != nil {
		t.Fatal(err)
	}
	// A joiner of another size changes nothing.
	if err := r.call(t, ui.TerminalSize{Terminal: "j", Width: 60, Height: 15}); err != nil {
		t.Fatal(err)
	}
	if err := r.call(t, ui.TerminalSize{Terminal: "j", Width: 70, Height: 20}); err != nil {
		t.Fatal(err)
	}
	if n := r.log.count(); n != 1 {
		t.Fatalf("the model got %d sizes after a joiner's resizes, want 1: %v", n, r.log.sizes)
	}
	// The owner resizes: exactly one more.
	if err := r.call(t, ui.TerminalSize{Terminal: "o", Width: 90, Height: 25, Owner: true}); err != nil {
		t.Fatal(err)
	}
	if n := r.log.count(); n != 2 || r.log.sizes[1] != (tea.WindowSizeMsg{Width: 90, Height: 25}) {
		t.Fatalf("sizes %v, want a second one of 90x25", r.log.sizes)
	}
	if s := r.screen(); !strings.Contains(s, "size 90x25") {
		t.Fatalf("screen %q does not show the new size", s)
	}
	// The joiner's terminal is cropped and says so.
	tree := r.d.Snapshot().Tree
	small := ui.Render(tree, ui.RenderOptions{Width: 40, Height: 3}).Content
	if !strings.Contains(small, "drawn at 90x25") || strings.Count(small, "\n") > 2 {
		t.Fatalf("a 40x3 terminal shows %q, want at most 3 lines ending in the crop note", small)
	}
}

func TestHostSmallestWindow(t *testing.T) {
	r := startProbe(t, ui.Identity{Width: 100, Height: 31}, SmallestWindow())
	eventually(t, "the first size", func() bool { return r.log.count() == 1 })
	if err := r.call(t, ui.TerminalSize{Terminal: "o", Width: 100, Height: 30, Owner: true},
		ui.TerminalSize{Terminal: "j", Width: 60, Height: 40}); err != nil {
		t.Fatal(err)
	}
	if n := r.log.count(); n != 2 || r.log.sizes[1] != (tea.WindowSizeMsg{Width: 60, Height: 30}) {
		t.Fatalf("sizes %v, want 60x30 (smallest each way)", r.log.sizes)
	}
	// The small one leaves: the owner's size again.
	if err := r.call(t, ui.TerminalSize{Terminal: "j", Gone: true}); err != nil {
		t.Fatal(err)
	}
	if n := r.log.count(); n != 3 || r.log.sizes[2] != (tea.WindowSizeMsg{Width: 100, Height: 30}) {
		t.Fatalf("sizes %v, want 100x30 after the joiner left", r.log.sizes)
	}
}

func TestHostHeadlessDefaultSize(t *testing.T) {
	r := startProbe(t, ui.Identity{Headless: true}, Size(50, 10))
	eventually(t, "the size", func() bool { return r.log.count() == 1 })
	if got := r.log.sizes[0]; got.Width != 50 || got.Height != 10 {
		t.Fatalf("size %v, want 50x10", got)
	}
}

func TestHostAnswersWhatAProgramAnswers(t *testing.T) {
	r := startProbe(t, ui.Identity{Headless: true})
	eventually(t, "the size", func() bool { return r.log.count() == 1 })
	// A size request is answered with the size the program is drawn at.
	if err := r.call(t, press("s")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the answer to a size request", func() bool { return r.log.count() == 2 })
	if got := r.log.sizes[1]; got.Width != DefaultWidth || got.Height != DefaultHeight {
		t.Fatalf("answered %v", got)
	}
	// A printed line is shown above the view.
	if err := r.call(t, press("p")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the printed line", func() bool { return strings.Contains(r.screen(), "printed by the program") })
	// tea.Exec: the callback gets ErrExec.
	if err := r.call(t, press("e")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the exec error", func() bool { return strings.Contains(r.screen(), "exec:teaapp: a hosted program cannot run") })
}

func TestHostViewIsCleaned(t *testing.T) {
	r := startProbe(t, ui.Identity{Headless: true})
	hostile := "ok\x1b]52;c;SGVsbG8=\x07 clip\x1b[2J\x1b[10;10Hmoved\x1b[31mred\x1b[0m\x1b]0;title\x07\x1b]8;;https://x.test\x07link\x1b]8;;\x07\r\bbell\x07\x9b31m\u202eevil"
	if err := r.call(t, setText(hostile)); err != nil {
		t.Fatal(err)
	}
	s := r.screen()
	for _, bad := range []string{"\x1b]52", "\x1b[2J", "\x1b[10;10H", "\x1b]0;", "\r", "\b", "bell\x07", "\x9b", "\u202e"} {
		if strings.Contains(s, bad) {
			t.Errorf("screen holds %q: %q", bad, s)
		}
	}
	for _, good := range []string{"\x1b[31mred", "\x1b]8;;https://x.test\x07link", "ok clipmoved"} {
		if !strings.Contains(s, good) {
			t.Errorf("screen lost %q: %q", good, s)
		}
	}
}

func TestHostUpdatePanicEndsTheSession(t *testing.T) {
	r := startProbe(t, ui.Identity{Headless: true})
	err := r.call(t, press("x"))
	if !errors.Is(err, dispatcher.ErrUpdateFailed) {
		t.Fatalf("a panicking Update answered %v, want update_failed", err)
	}
	select {
	case reason := <-r.ends:
		if !strings.Contains(reason, "cannot be restored safely") {
			t.Fatalf("ended with %q", reason)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not end after the program's Update panicked")
	}
	// Nothing more reaches the broken model.
	if err := r.call(t, setText("after")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.screen(), "after") {
		t.Fatal("a broken program was given another message")
	}
}

func TestHostUpdatePanicRollsBackWhenVouched(t *testing.T) {
	r := startProbe(t, ui.Identity{Headless: true}, RollbackSafe())
	if err := r.call(t, setText("before")); err != nil {
		t.Fatal(err)
	}
	if err := r.call(t, press("x")); !errors.Is(err, dispatcher.ErrUpdateFailed) {
		t.Fatalf("got %v", err)
	}
	if err := r.call(t, setText("after")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.screen(), "after") {
		t.Fatal("the session did not go on from the last good model")
	}
	select {
	case reason := <-r.ends:
		t.Fatalf("the session ended (%q) though the app vouched for rollback", reason)
	default:
	}
}

func TestHostViewPanicKeepsTheLastScreen(t *testing.T) {
	r := startProbe(t, ui.Identity{Headless: true})
	if err := r.call(t, setText("last good")); err != nil {
		t.Fatal(err)
	}
	if err := r.call(t, press("v")); err != nil {
		t.Fatalf("a View panic failed the input: %v", err)
	}
	if !strings.Contains(r.screen(), "last good") {
		t.Fatalf("screen %q lost the last good view", r.screen())
	}
	select {
	case reason := <-r.ends:
		t.Fatalf("a View panic ended the session: %q", reason)
	default:
	}
}

func TestCleanLineKeepsText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":           "plain",
		"a\tb":            "a       b",
		"日本語 ✓":           "日本語 ✓",
		"\x1b[1;38;5;2mx": "\x1b[1;38;5;2mx",
		"\x1b[?1049h":     "",
		"\x1bPq#0\x1b\\":  "",
		"x\x1b":           "x",
	} {
		if got := strings.TrimSuffix(cleanLine(in), "\x1b[m"); got != want {
			t.Errorf("cleanLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// blinker is a form of one focused input, as Bubble Tea's textinput
// example starts: its Init starts the cursor's blinking.
type blinker struct{ in textinput.Model }

func newBlinker() blinker {
	ti := textinput.New()
	ti.Focus()
	return blinker{in: ti}
}

func (b blinker) Init() tea.Cmd { return textinput.Blink }
func (b blinker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	b.in, cmd = b.in.Update(msg)
	return b, cmd
}
func (b blinker) View() tea.View { return tea.NewView(b.in.View()) }

// An idle session of a program with a focused input folds nothing and
// publishes nothing: cursors are static unless the app asks for blinking.
func TestIdleCursorCostsNothing(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  []Option
		quiet bool
	}{{"static by default", nil, true}, {"blinking when asked", []Option{BlinkingCursors()}, false}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := &config{host: defaultHostOptions()}
			for _, o := range c.opts {
				o(cfg)
			}
			var folds atomic.Int32
			d := dispatcher.New(newModel(ui.Identity{Headless: true}, newBlinker(), cfg), &dispatcher.Options{Hooks: dispatcher.Hooks{
				OnApplied: func(dispatcher.Origin, []tea.Msg) { folds.Add(1) },
			}})
			t.Cleanup(d.Close)
			time.Sleep(200 * time.Millisecond) // Init's commands fold
			start, v0 := folds.Load(), d.Snapshot().Version
			time.Sleep(1200 * time.Millisecond) // two blink periods (530 ms each)
			got, published := folds.Load()-start, d.Snapshot().Version-v0
			if c.quiet && (got != 0 || published != 0) {
				t.Fatalf("an idle input folded %d messages and published %d snapshots in 1.2 s", got, published)
			}
			if !c.quiet && got == 0 {
				t.Fatal("a blinking cursor folded nothing in 1.2 s: the test cannot tell static from blinking")
			}
		})
	}
}

// A click reaches a program that asked for mouse events, at the cell of
// its view (the printed lines above it are not the program's), and no
// other program.
func TestScreenClicks(t *testing.T) {
	s := screen{lines: []string{"row 0", "row 1"}, printed: []string{"printed"}, w: 20, h: 5, gen: 1, mouse: true}
	st := &ui.LocalState{}
	out := s.Render(ui.RenderContext{Width: 20, Height: 5, Local: st, Theme: ui.DefaultTheme()})
	if !strings.HasPrefix(out, "printed\nrow 0") || st.Offset != 1 {
		t.Fatalf("rendered %q with offset %d", out, st.Offset)
	}
	msgs := s.HandleEvent(ui.ClickEvent{X: 3, Y: 2}, st)
	if len(msgs) != 2 {
		t.Fatalf("a click gave %v", msgs)
	}
	if c, ok := msgs[0].(tea.MouseClickMsg); !ok || c.X != 3 || c.Y != 1 || c.Button != tea.MouseLeft {
		t.Fatalf("the press is %#v, want a left click at 3,1 of the view", msgs[0])
	}
	if _, ok := msgs[1].(tea.MouseReleaseMsg); !ok {
		t.Fatalf("no release after the press: %#v", msgs[1])
	}
	if got := s.HandleEvent(ui.ClickEvent{X: 3, Y: 0}, st); got != nil {
		t.Fatalf("a click on a printed line reached the program: %v", got)
	}
	s.mouse = false
	if got := s.HandleEvent(ui.ClickEvent{X: 3, Y: 2}, st); got != nil {
		t.Fatalf("a program that asked for no mouse events got %v", got)
	}
}
