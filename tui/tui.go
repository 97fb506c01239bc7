package tui

import (
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Options configures a terminal projection.
type Options struct {
	// Terminal names this terminal in origins and presence (e.g. the SSH
	// user). Empty means "terminal".
	Terminal string
	// TerminalID tells this terminal from another of the same name (its
	// session.Attachment id): it is the ID of the origin of its input, by
	// which ui.CloseTerminal finds it.
	TerminalID string
	// BaseURL is the scheme and host of the MCP endpoints shown in the
	// attach panel, e.g. "http://127.0.0.1:8080".
	BaseURL string
	// ViewLink, when set, makes a one-time link for a browser to watch the
	// session; the owner's attach panel shows a fresh one each time it
	// opens.
	ViewLink func() (string, error)
	// Browsers lists the browsers with access to the session (name and
	// role) and RemoveBrowsers ends their access (ctrl+x with the attach
	// panel open), returning how many; the owner's terminal only.
	Browsers       func() []string
	RemoveBrowsers func() int
	// Theme defaults to [ui.DefaultTheme].
	Theme *ui.Theme
	// InputTimeout bounds how long one input event waits for the
	// dispatcher; 0 means the dispatcher's default.
	InputTimeout time.Duration
	// Output is the terminal. Frames are drawn there on demand, at most
	// once per frame interval; nil draws nothing (the model can still be
	// inspected with Frame). Run the program with tea.WithoutRenderer.
	Output io.Writer
	// Environ is the client's environment (TERM and friends).
	Environ []string
	// ColorProfile is what the terminal can show; colors are downsampled
	// to it.
	ColorProfile colorprofile.Profile
	// Width and Height are the initial terminal size; 0 means 80x24.
	Width, Height int
	// Primary marks the owner's terminal: its focus and hover drive the
	// focus lens and its screen is what agents see as the screen.
	Primary bool
	// Role is what this terminal may do; the zero value is RoleOwner.
	Role Role
	// IdleRelease is how long a terminal draws nothing before its copy of
	// the screen is released (and rebuilt, without output, at the next
	// frame); 0 means DefaultIdleRelease, negative never.
	IdleRelease time.Duration
	// PromptArming is how long a prompt (an approval, a join request)
	// ignores answer keys after it comes on top, so that a key typed
	// before the human saw it cannot answer it; 0 means
	// DefaultPromptArming, negative answers at once.
	PromptArming time.Duration
	// Now is the clock of prompt arming; nil means time.Now.
	Now func() time.Time
}

// DefaultPromptArming is how long a new prompt ignores answer keys.
const DefaultPromptArming = 700 * time.Millisecond

// DefaultIdleRelease is how long a terminal stays idle before its copy of
// the screen is released.
const DefaultIdleRelease = 5 * time.Second

// Role is what a terminal may do in a session.
type Role int

const (
	// RoleOwner may do everything, and alone sees the attach panel (the
	// bearer token) and answers prompts.
	RoleOwner Role = iota
	// RoleDriver types and clicks like the owner.
	RoleDriver
	// RoleObserver sees every frame and can only leave (ctrl+c).
	RoleObserver
)

func (r Role) String() string {
	switch r {
	case RoleDriver:
		return "driver"
	case RoleObserver:
		return "observer"
	}
	return "owner"
}

// SetPrimaryMsg makes this terminal the primary one (or not): the one
// whose focus and hover drive the focus lens and whose screen agents see.
type SetPrimaryMsg bool

// AgentKeysMsg delivers an agent's key presses as if typed in this
// terminal, with the agent as the origin of what they do. Keys are names
// such as "tab", "shift+tab", "enter", "esc", "space", "backspace",
// "up", "pgdown", or a single character to type. The outcome is sent on
// Result (buffered by the sender).
type AgentKeysMsg struct {
	Agent  string
	Keys   []string
	Result chan<- error
}

// FrameInterval is the shortest time between two frames on one terminal
// (60 per second). A change is drawn at once when the terminal has been
// quiet for that long, else at the end of the interval.
const FrameInterval = time.Second / 60

// MaxWidth and MaxHeight bound the size a terminal is drawn at. A client
// can claim any window size; the screen buffers cost about 112 bytes a
// cell, so a claimed 2000x1000 window cost ~450 MB. A larger terminal
// (beyond a 4K screen in a small font) shows the app in its top-left
// 400x150 cells.
const (
	MaxWidth  = 400
	MaxHeight = 150
)

// clampSize bounds a window size to 1..MaxWidth by 1..MaxHeight.
func clampSize(w, h int) (int, int) {
	return min(max(w, 1), MaxWidth), min(max(h, 1), MaxHeight)
}

// frameMsg asks for the frame deferred by the rate limit.
type frameMsg struct{ gen uint64 }

func newFrameMsg(gen uint64) tea.Msg { return frameMsg{gen} }

// presenceMsg says who is attached, or when they last acted, changed.
type presenceMsg struct{}

// NoticeMsg shows a one-line notice in the status bar, e.g. that the
// server is stopping.
type NoticeMsg string

// snapshotMsg tells the program a new snapshot is available.
type snapshotMsg struct{}

// Model is the Bubble Tea model of one terminal. Create it with [New]; it
// must be used by a single tea.Program.
type Model struct {
	// Fixed at creation (but opts.Primary, which SetPrimaryMsg changes on
	// the program's goroutine).
	sess   *session.Session
	sub    *dispatcher.Subscription
	opts   Options
	origin dispatcher.Origin
	done   chan struct{} // closed when the program ends (by Close)
	close  sync.Once
	// presence is signalled when someone attaches or detaches.
	presence     <-chan struct{}
	stopPresence func()

	// Owned by the program's goroutine, grouped by what they serve.
	snap        dispatcher.Snapshot // the tree drawn and that input is routed in
	frameState                      // drawing the screen (below)
	inputState                      // focus and hover (input.go)
	statusState                     // the status bar (statusbar.go)
	panelState                      // the attach panel and activity log (attach.go)
	promptState                     // approvals and join requests (approval.go)
	agentCues                       // what shows an agent's actions (activity.go)

	// wakeMu protects send and wakePending (see SetSend, wake.go).
	wakeMu      sync.Mutex
	send        func(tea.Msg)
	wakePending bool
	// timersMu guards the timers' pending AfterFuncs (timer.after).
	timersMu sync.Mutex

	mu     sync.Mutex // protects locals: input resolvers run on the dispatcher goroutine
	locals map[string]*ui.LocalState
	// renderCache keeps the widgets drawn in the last frame (under mu).
	renderCache ui.RenderCache
}

// frameState is what drawing the screen takes: its size, the last frame,
// the frame rate limit and the idle release.
type frameState struct {
	width      int
	height     int
	frame      ui.Frame             // last rendered app frame, for mouse hit tests
	scr        *screen              // nil when Options.Output is nil
	profile    colorprofile.Profile // what the terminal shows now (term.go)
	lastDraw   time.Time
	changed    bool  // a message since the last frame drawn may change the screen
	frameTimer timer // the deferred frame (frameMsg)
	// idle is a time.Timer rather than a timer: it is reset on every
	// frame drawn (armIdle), which a tick would pay with a goroutine.
	idle  *time.Timer   // marks idleC once no frame was drawn for idleAfter
	idleC chan struct{} // buffered 1
	// idleAfter is how long after the last frame the screen copy goes:
	// IdleRelease, or less after a lone frame (see armIdle).
	idleAfter time.Duration
	hostedState
}

// defaultTheme is the theme of every terminal given none: read only, so
// one copy serves them all (~10 KiB each otherwise).
var defaultTheme = ui.DefaultTheme()

// New returns the terminal model for sess. Call Close when its program has
// ended, to release its subscription.
func New(sess *session.Session, opts Options) *Model {
	if opts.Terminal == "" {
		opts.Terminal = "terminal"
	}
	if opts.Theme == nil {
		opts.Theme = defaultTheme
	}
	m := &Model{
		sess:       sess,
		opts:       opts,
		origin:     dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: opts.Terminal, ID: opts.TerminalID},
		done:       make(chan struct{}),
		frameState: frameState{profile: opts.ColorProfile, width: 80, height: 24},
		locals:     make(map[string]*ui.LocalState),
	}
	if opts.Width > 0 && opts.Height > 0 {
		m.width, m.height = clampSize(opts.Width, opts.Height)
	}
	if opts.Output != nil {
		m.scr = newScreen(opts.Output, opts.Environ, opts.ColorProfile, m.width, m.height)
	}
	if opts.IdleRelease == 0 {
		m.opts.IdleRelease = DefaultIdleRelease
	}
	if opts.PromptArming == 0 {
		m.opts.PromptArming = DefaultPromptArming
	}
	if opts.Now == nil {
		m.opts.Now = time.Now
	}
	m.sub = sess.Dispatcher.SubscribeFunc(m.wake)
	m.snap = m.sub.Latest()
	m.presence, m.stopPresence = sess.WatchPresenceFunc(m.wake)
	m.idleC = make(chan struct{}, 1)
	m.idle = time.AfterFunc(time.Hour, func() {
		select {
		case m.idleC <- struct{}{}:
		default:
		}
		m.wake()
	})
	m.idle.Stop()
	for _, t := range m.timers() {
		t.done = m.done // their ticks end with the model (Close)
		t.post = m.sender
		t.afterMu = &m.timersMu
	}
	m.fixFocus()
	return m
}

// timers lists the model's scheduled messages.
func (m *Model) timers() []*timer {
	return []*timer{&m.frameTimer, &m.highlightTimer, &m.noticeTimer, &m.ageTimer, &m.armTimer, &m.countdown}
}

// Close releases the model's subscription, stops its waiting command and
// restores the terminal (main screen, cursor, mouse and paste modes). Call
// it after the program has ended; it is safe to call more than once.
func (m *Model) Close() {
	m.close.Do(func() {
		close(m.done)
		m.idle.Stop()
		for _, t := range m.timers() {
			t.stop()
		}
		m.refuseAll() // a prompt left open when the terminal goes is refused
		m.tellSize(true)
		m.sub.Close()
		m.stopPresence()
		if m.scr != nil {
			_ = m.scr.close()
			if words := m.lastWords(); words != "" {
				_ = m.scr.writeAfter(words)
			}
		}
	})
}

// Focus returns the id of the focused widget ("" when none).
func (m *Model) Focus() string { return m.focus }

// Init draws the first frame and starts waiting for snapshots.
func (m *Model) Init() tea.Cmd {
	if m.scr != nil {
		// A failed write means the client is gone; the session ends with it.
		_ = m.scr.start("raxol-ssh · " + m.sess.App)
	}
	m.tellSize(false)
	m.changed = true
	return tea.Batch(m.waitSnapshot(), m.redraw())
}

// Update handles one event, then draws the screen if it changed.
func (m *Model) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	// The app's widgets run here too (Focusable, WidgetID, Children in
	// focus order, hit tests): a panic in one costs this message, not the
	// terminal. A lost snapshot wait is re-armed.
	defer func() {
		if v := recover(); v != nil {
			m.sess.Guard().Report(metrics.HookOther, "", v, debug.Stack())
			cmd = nil
			if _, ok := msg.(snapshotMsg); ok {
				cmd = m.waitSnapshot()
			}
			// Still show the latest snapshot (Frame contains its own
			// panics).
			m.changed = true
			_ = m.sess.Guard().Do(metrics.HookOther, "", func() { cmd = tea.Batch(cmd, m.redraw()) })
		}
	}()
	return m.update(msg)
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case wakeMsg:
		return m, m.woken()
	case snapshotMsg:
		m.refresh()
		m.tellSize(false) // a hosted program learns this terminal's size
		cmd = tea.Batch(m.waitSnapshot(), m.agentActivity())
	case presenceMsg:
		// Who is here changed (an agent acted, came or went): drawn at the
		// end of a frame interval, not at once, so that the change an
		// agent's call is about to fold is drawn with it rather than a
		// frame later.
		cmd = tea.Batch(m.waitSnapshot(), m.agentActivity()) // a refused call is news too
		m.changed = true
		m.agesMoved = true
		return m, tea.Batch(cmd, m.frameTimer.arm(FrameInterval, newFrameMsg))
	case highlightDoneMsg:
		if !m.highlightTimer.fire(msg.gen) {
			return m, nil
		}
		if time.Now().Before(m.highlightUntil) {
			return m, m.highlightTick() // an action since moved the end
		}
		m.highlight = ""
	case noticeDoneMsg:
		if !m.noticeTimer.fire(msg.gen) {
			return m, nil
		}
		if m.agentNotice() != "" {
			return m, m.noticeTick() // an action since moved the end
		}
		// The redraw after this message drops the notice whose time is up.
	case idleMsg:
		m.releaseIfIdle()
		return m, m.waitSnapshot()
	case frameMsg:
		if !m.frameTimer.fire(msg.gen) || !m.changed {
			// What it was scheduled to draw was drawn since (an agent's
			// presence, then the snapshot of its call): no frame to
			// compose.
			return m, nil
		}
	case countdownMsg:
		if !m.countdown.fire(msg.gen) {
			return m, nil
		}
	case ageMsg:
		// A stale one redraws too, as it always did.
		m.ageTimer.fire(msg.gen)
	case armedMsg:
		if !m.armTimer.fire(msg.gen) {
			return m, nil
		}
	case tea.WindowSizeMsg:
		m.width, m.height = clampSize(msg.Width, msg.Height)
		if m.scr != nil {
			m.scr.resize(m.width, m.height)
		}
		m.tellSize(false)
	case tea.ColorProfileMsg:
		m.profile = limitProfile(msg.Profile, m.opts.Environ, m.opts.ColorProfile)
		if m.scr != nil {
			m.scr.setProfile(m.profile)
		}
	case NoticeMsg:
		m.notice = string(msg)
	case SetPrimaryMsg:
		m.opts.Primary = bool(msg)
		if m.opts.Primary {
			m.sess.SetScreen(m.Frame(), m.snap.Version)
		}
	case tea.KeyPressMsg:
		cmd = m.keyPress(msg)
	case ApprovalMsg:
		m.addApproval(msg)
	case JoinMsg:
		m.addJoin(msg)
	case WithdrawApprovalMsg:
		m.withdraw(msg.ID)
	case tea.PasteMsg:
		m.paste(msg)
	case tea.MouseClickMsg:
		m.mouseClick(msg.Mouse())
	case tea.MouseMotionMsg:
		m.hoverAt(msg.Mouse()) // nothing on screen changes
		return m, nil
	case AgentKeysMsg:
		m.runAgentKeys(msg)
	default:
		return m, nil
	}
	// The attention goes out with the frame redraw draws, or at once if
	// the frame waits.
	m.arm()
	m.changed = true
	return m, tea.Batch(cmd, m.redraw(), m.tickCountdown(), m.tickArming(), m.tickAges())
}

// publishAttention tells the session where the human's attention is, when
// this is the primary terminal.
func (m *Model) publishAttention() {
	if m.opts.Primary {
		m.sess.SetAttention(m.attention())
	}
}

func (m *Model) attention() session.Attention {
	if f, ok := m.hostedFocus(); ok {
		return session.Attention{Focus: f, Hover: m.hover}
	}
	a := session.Attention{Focus: m.focus, Hover: m.hover}
	m.mu.Lock()
	if st, ok := m.locals[m.focus]; ok && m.focus != "" {
		a.Row = st.Row
	}
	m.mu.Unlock()
	return a
}

// publish gives the session the primary terminal's frame and the human's
// attention together: their watchers (the agents' bridge) wake once for a
// key that moves the focus and redraws.
func (m *Model) publish(frame string) {
	m.sess.Show(frame, m.snap.Version, m.attention())
}

// redraw draws the current frame now, or schedules it for the end of the
// frame interval when the last frame was drawn less than that ago.
func (m *Model) redraw() tea.Cmd {
	if m.scr == nil {
		if m.opts.Primary {
			m.publish(m.Frame())
		}
		return nil
	}
	if wait := FrameInterval - time.Since(m.lastDraw); wait > 0 {
		m.publishAttention()
		return m.frameTimer.arm(wait, newFrameMsg)
	}
	m.lastDraw = time.Now()
	frame := m.Frame()
	if m.opts.Primary {
		m.publish(frame)
	}
	m.scr.setFocus(m.focusRect())
	m.scr.setCursor(m.programCursor())
	// A failed write means the client is gone; the session ends with it.
	_ = m.scr.draw(frame)
	m.changed = false
	m.armIdle(m.scr.takeRebuilt())
	return nil
}

// idleMsg says the terminal may have drawn nothing for IdleRelease.
type idleMsg struct{}

// releaseIfIdle releases the terminal's copy of the screen when it has
// drawn nothing for idleAfter.
func (m *Model) releaseIfIdle() {
	if m.scr != nil && time.Since(m.lastDraw) >= m.idleAfter {
		m.scr.release()
		// The widgets' last drawing goes too: an idle terminal keeps no
		// copy of its screen in any form.
		m.mu.Lock()
		m.renderCache = ui.RenderCache{}
		m.mu.Unlock()
	}
}

// armIdle (re)starts the idle timer after a frame. The timer sends nothing
// itself: it marks idleC, which the snapshot-waiting command turns into an
// idleMsg.
//
// lone says the frame woke a released screen (the terminal had been idle):
// then the copy goes again after loneRelease unless another frame follows.
// A terminal whose only frames are occasional (an agent's age in the
// status bar every ten seconds, an agent acting now and then) otherwise
// held its two cell buffers (~430 KB at 80x24) for IdleRelease after each,
// which at a frame every ten seconds was half the time.
func (m *Model) armIdle(lone bool) {
	if m.opts.IdleRelease <= 0 {
		return
	}
	m.idleAfter = m.opts.IdleRelease
	if lone {
		m.idleAfter = min(m.idleAfter, loneRelease)
	}
	m.idle.Reset(m.idleAfter)
}

// loneRelease is how long a screen woken from idle by one frame keeps its
// copy: a second frame within it (a human who starts typing, an agent at
// work) keeps it for IdleRelease from then on.
const loneRelease = keepFrameWithin

// View is required by tea.Model. The program runs without Bubble Tea's
// renderer (see Options.Output), which still calls View after every
// update, so it returns nothing to draw; [Model.Frame] is the screen.
func (m *Model) View() tea.View { return tea.View{} }

// Frame renders the screen: the app, the attach panel when open, and the
// status bar, as at most Height lines of at most Width cells.
func (m *Model) Frame() string {
	var bottom []string
	if m.showLog {
		bottom = append(bottom, m.activityPanel(max(2, m.height/3))...)
	}
	bottom = append(bottom, m.approvalBox(m.width)...)
	if m.showAttach {
		bottom = append(bottom, m.attachPanel(m.height-len(bottom)-1)...)
	}
	bottom = append(bottom, m.statusBar())
	appH := max(0, m.height-len(bottom))

	var app string
	if appH > 0 {
		m.mu.Lock()
		err := m.sess.Guard().Do(metrics.HookRender, "", func() {
			m.frame = ui.Render(m.snap.Tree, ui.RenderOptions{
				Width:     m.width,
				Height:    appH,
				Focus:     m.focus,
				Local:     m.localLocked,
				Theme:     m.opts.Theme,
				Highlight: m.highlight,
				MarkFocus: markFocus(m.profile),
				Cache:     &m.renderCache,
				// A widget that panics is drawn as a placeholder.
				OnPanic: func(id string, v any, stack []byte) {
					m.sess.Guard().Report(metrics.HookRender, id, v, stack)
				},
			})
		})
		m.mu.Unlock()
		if err != nil {
			m.frame = ui.Frame{Content: "⚠ the app failed to draw"}
		}
		app = m.frame.Content
	} else {
		m.frame = ui.Frame{}
	}

	if appH <= 0 {
		if len(bottom) > m.height {
			bottom = bottom[len(bottom)-m.height:]
		}
		return strings.Join(bottom, "\n")
	}
	// The app, padded so that the panel and status bar sit at the
	// bottom, then they: one copy of the screen's text.
	pad := max(0, appH-(strings.Count(app, "\n")+1))
	n := len(app) + pad
	for _, l := range bottom {
		n += 1 + len(l)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(app)
	for range pad {
		b.WriteByte('\n')
	}
	for _, l := range bottom {
		b.WriteByte('\n')
		b.WriteString(l)
	}
	return b.String()
}
