package teaapp

import (
	"fmt"
	"image/color"
	"os/exec"
	"reflect"
	"strings"
	"sync/atomic"
	"unsafe"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Default sizes: a session with no terminal draws the program at
// DefaultWidth x DefaultHeight.
const (
	DefaultWidth  = 80
	DefaultHeight = 24
)

// printedKeep bounds the lines a program printed (tea.Println) that the
// screen keeps above the program's view.
const printedKeep = 200

// hostOptions are the host's options (config.host).
type hostOptions struct {
	width, height int  // with no terminal
	smallest      bool // the smallest terminal decides the size, not the owner's
	rollbackSafe  bool // the app vouched its model's copies share nothing
	askKeys       bool // raxol_send_key asks the human (the default policy)
	noPolicy      bool // leave the policies to the operator
	blink         bool // leave the cursors' blinking on (BlinkingCursors)
}

func defaultHostOptions() hostOptions {
	return hostOptions{width: DefaultWidth, height: DefaultHeight, askKeys: true}
}

// Size sets the size a session with no terminal draws the program at
// (DefaultWidth x DefaultHeight when not set).
func Size(width, height int) Option {
	return func(c *config) {
		if width > 0 && height > 0 {
			c.host.width, c.host.height = width, height
		}
	}
}

// SmallestWindow makes the smallest attached terminal decide the size the
// program is drawn at, as tmux's `window-size smallest` does; by default
// the owner's window decides and other terminals crop or pad.
func SmallestWindow() Option { return func(c *config) { c.host.smallest = true } }

// RollbackSafe vouches that the model's copies share no memory (no
// slices, maps or pointers that Update changes in place): after its
// Update panics the session then goes on from the model before the
// failed input. Without it, a panic in Update ends the session, because
// going back to a model that shares state with the broken one is not
// safe. A panic in View never ends a session: the last good screen stays.
func RollbackSafe() Option { return func(c *config) { c.host.rollbackSafe = true } }

// model is the ui.Model the session's dispatcher folds: the foreign
// tea.Model and the host that serves it. Copies share the host (one per
// session); only the dispatcher's goroutine uses it.
type model struct {
	h     *host
	inner tea.Model
}

var (
	_ ui.Model          = model{}
	_ ui.Unrollbackable = model{}
)

// host is what one session's hosted program needs besides its model.
// Every field is used on the dispatcher goroutine only, except the
// screen it publishes (immutable once built).
type host struct {
	cfg   *config
	ident ui.Identity

	w, h  int                        // the size the model was last told
	sizes map[string]ui.TerminalSize // by terminal id

	printed []string // lines the program printed, oldest first
	broken  string   // why Update cannot be trusted any more ("" if it can)

	// outcome is the agent call being folded (apply), whose commands are
	// tracked for the lines they print.
	outcome *ui.Outcome

	// The last screen built, kept while the view and the components do
	// not change.
	last     *screen
	lastNode ui.Node // *last, as the tree holds it
	lastView string
	text     viewText // lastView split (splitView)
	widgets  map[string]ui.Widget
	builds   uint64 // screens built (screen.gen)

	// The components found in a model whose type alone tells where they
	// are (discoverStatic): found once per session, not per view.
	staticType reflect.Type
	static     []found
}

func newModel(ident ui.Identity, inner tea.Model, cfg *config) model {
	h := &host{cfg: cfg, ident: ident, sizes: map[string]ui.TerminalSize{}}
	h.w, h.h = cfg.host.width, cfg.host.height
	if !ident.Headless && ident.Width > 0 && ident.Height > 1 {
		// The terminal's app area: its window less the status bar.
		h.w, h.h = ident.Width, ident.Height-1
	}
	return model{h: h, inner: staticCursors(inner, cfg)}
}

// RollbackUnsafe implements ui.Unrollbackable.
func (m model) RollbackUnsafe() string {
	if m.h.cfg.host.rollbackSafe {
		return ""
	}
	return "the program failed (its Update panicked) and its state cannot be restored safely; the session ended"
}

// Init runs the program's Init and tells it its size, as a tea.Program
// does at start.
func (m model) Init() tea.Cmd {
	w, h := m.h.w, m.h.h
	size := func() tea.Msg { return tea.WindowSizeMsg{Width: w, Height: h} }
	return tea.Batch(m.h.track(m.inner.Init()), size)
}

// Update folds one message: the host's own (sizes, agent actions, what
// the program's commands returned) or the program's.
func (m model) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	h := m.h
	if h.broken != "" {
		return m, nil
	}
	switch msg := msg.(type) {
	case ui.TerminalSize:
		return m.resize(msg)
	case applyMsg:
		return m.apply(msg)
	case printedMsg:
		h.print(msg.text)
		msg.o.End() // the call answers once its lines are on the screen
		return m, nil
	case tea.InterruptMsg:
		// ctrl+c as tea.Interrupt sends it: the program ends, as it
		// would in a terminal of its own.
		return m, tea.Quit
	case ui.Restored:
		// Restored from a saved session: the program's timers start
		// again, as after Init.
		return m, tea.Batch(h.track(m.inner.Init()), func() tea.Msg { return tea.WindowSizeMsg{Width: h.w, Height: h.h} })
	}
	switch kindOf(msg) {
	case reqWindowSize:
		return m.step(tea.WindowSizeMsg{Width: h.w, Height: h.h})
	case reqBackground:
		return m.step(tea.BackgroundColorMsg{Color: color.Black})
	case reqForeground:
		return m.step(tea.ForegroundColorMsg{Color: color.White})
	case printLine:
		h.print(printedText(msg))
		return m, nil
	case execProcess:
		// No process of the server's runs for a program on a terminal
		// it does not own: the program's callback gets the error.
		if cb := execCallback(msg); cb != nil {
			return m.step(cb(ErrExec))
		}
		return m, nil
	case ignored:
		return m, nil
	}
	return m.step(msg)
}

// step folds msg into the program: its Update, its commands tracked.
func (m model) step(msg tea.Msg) (ui.Model, tea.Cmd) {
	next, cmd := m.run(msg)
	m.inner = next
	return m, m.h.track(cmd)
}

// run calls the program's Update; a panic marks the host broken (unless
// the app vouched for rollback) and goes on to the dispatcher, which
// answers update_failed.
func (m model) run(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			if reason := m.RollbackUnsafe(); reason != "" {
				m.h.broken = reason
			}
			panic(r)
		}
	}()
	next, cmd := m.inner.Update(msg)
	if next == nil {
		panic("teaapp: the program's Update returned a nil model")
	}
	return next, cmd
}

// resize notes one terminal's size and tells the program the size it is
// drawn at when that changed: once, whatever number of terminals.
func (m model) resize(ts ui.TerminalSize) (ui.Model, tea.Cmd) {
	h := m.h
	if ts.Gone {
		delete(h.sizes, ts.Terminal)
	} else if ts.Width > 0 && ts.Height > 0 {
		h.sizes[ts.Terminal] = ts
	}
	w, ht, ok := h.decide()
	if !ok || (w == h.w && ht == h.h) {
		return m, nil
	}
	h.w, h.h = w, ht
	return m.step(tea.WindowSizeMsg{Width: w, Height: ht})
}

// decide is the size the program is drawn at: the owner's window (the
// smallest of the owner's terminals), or the smallest of all with
// SmallestWindow; with no terminal that counts, the size stays.
func (h *host) decide() (w, ht int, ok bool) {
	for _, ts := range h.sizes {
		if !h.cfg.host.smallest && !ts.Owner {
			continue
		}
		if !ok || ts.Width*ts.Height < w*ht {
			w, ht, ok = ts.Width, ts.Height, true
		}
	}
	if h.cfg.host.smallest {
		// Smallest in each direction, as tmux does.
		for _, ts := range h.sizes {
			w, ht = min(w, ts.Width), min(ht, ts.Height)
		}
	}
	return w, ht, ok
}

// apply runs an agent's action on a component (applyMsg) through the
// program's own Update and records its outcome.
func (m model) apply(a applyMsg) (ui.Model, tea.Cmd) {
	h := m.h
	h.outcome = a.Outcome
	defer func() { h.outcome = nil }()
	var cmds []tea.Cmd
	step := func(cur tea.Model, msg tea.Msg) tea.Model {
		next, cmd := model{h: h, inner: cur}.run(msg)
		cmds = append(cmds, h.track(cmd))
		return next
	}
	comps := h.discover(m.inner)
	next, result, err := apply(m.inner, comps, a, step, h.cfg)
	if next != nil {
		m.inner = next
	}
	if a.Outcome != nil {
		if err != nil {
			a.Outcome.Set(nil, err)
		} else {
			a.Outcome.Set(callResult{Result: result}, nil)
		}
	}
	return m, tea.Batch(cmds...)
}

// callResult is what an agent's call on a component answers: the
// component's own result and the lines the program printed because of it.
type callResult struct {
	Result  any      `json:"result,omitempty"`
	Printed []string `json:"printed,omitempty"`
}

// print keeps a line the program printed.
func (h *host) print(text string) {
	for _, l := range strings.Split(text, "\n") {
		h.printed = append(h.printed, cleanLine(l))
	}
	if over := len(h.printed) - printedKeep; over > 0 {
		h.printed = append(h.printed[:0:0], h.printed[over:]...)
	}
	h.last = nil
}

// printedMsg is a line the program printed, intercepted from a command
// of an agent's call (its text already given to the call's outcome, o,
// which waits until the line is folded: a screenshot after the answer
// shows it).
type printedMsg struct {
	text string
	o    *ui.Outcome
}

// track wraps a command of the program so that what it returns is seen
// by the host first: lines printed for an agent's call go to its outcome.
func (h *host) track(cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	o := h.outcome
	if o == nil {
		return cmd
	}
	return h.trackFor(cmd, o)
}

// intercept runs on a command's goroutine with what the command returned.
// The command's place in o (Begin) is given back here, except for a
// printed line, whose fold gives it back.
func (h *host) intercept(msg tea.Msg, o *ui.Outcome) tea.Msg {
	ended := false
	defer func() {
		if !ended {
			o.End()
		}
	}()
	switch v := msg.(type) {
	case tea.BatchMsg:
		out := make(tea.BatchMsg, len(v))
		for i, c := range v {
			out[i] = h.trackFor(c, o)
		}
		return out
	}
	if kindOf(msg) == printLine {
		text := printedText(msg)
		o.Update(func(v any) any {
			r, _ := v.(callResult)
			for _, l := range strings.Split(text, "\n") {
				r.Printed = append(r.Printed, cleanLine(l))
			}
			return r
		})
		ended = true
		return printedMsg{text: text, o: o}
	}
	return msg
}

// trackFor wraps cmd as one of o's: o waits for what it returns.
func (h *host) trackFor(cmd tea.Cmd, o *ui.Outcome) tea.Cmd {
	if cmd == nil {
		return nil
	}
	o.Begin()
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				o.End() // the dispatcher reports the command's panic
				panic(r)
			}
		}()
		return h.intercept(cmd(), o)
	}
}

// View draws the program's view as the session's screen, with the
// components the screen shows as widgets inside it.
func (m model) View() ui.Node {
	h := m.h
	v := m.inner.View()
	content := v.Content
	// The components are read where they are in the model (a value
	// model's too: readRoot), each once.
	comps := h.discover(m.inner)
	if content != h.lastView || h.text.raw == nil {
		h.text = splitView(content, &h.text)
	}
	widgets, focus := componentWidgetsFocus(m.inner, comps, h.text.text(), h.widgets, h.cfg)
	mouse := v.MouseMode != tea.MouseModeNone
	var cursor *cell
	if v.Cursor != nil {
		cursor = &cell{X: v.Cursor.X, Y: v.Cursor.Y}
	}
	if h.last != nil && content == h.lastView && sameWidgets(h.last.comps, widgets) && focus == h.last.focus && mouse == h.last.mouse &&
		v.AltScreen == h.last.alt && samePoint(cursor, h.last.cursor) {
		return h.lastNode
	}
	if h.widgets == nil {
		h.widgets = make(map[string]ui.Widget, len(widgets))
	}
	for _, w := range widgets {
		if p, ok := h.widgets[w.WidgetID()]; !ok || !ui.SameWidget(p, w) {
			h.noteSensitive(w) // a new or changed component only: Tools costs
		}
	}
	clear(h.widgets) // the last view's, used up: only this goroutine has it
	for _, w := range widgets {
		h.widgets[w.WidgetID()] = w
	}
	h.builds++
	s := &screen{
		gen:     h.builds,
		lines:   h.text.lines, // immutable: shared by the builds
		widths:  h.text.widths,
		printed: append([]string(nil), h.printed...),
		w:       h.w,
		h:       h.h,
		comps:   widgets,
		focus:   focus,
		owner:   !h.cfg.host.smallest,
		mouse:   mouse,
		alt:     v.AltScreen,
		cursor:  cursor,
	}
	h.last, h.lastView, h.lastNode = s, content, *s
	return h.lastNode
}

// discover is discover(m), found again only for a model whose type does
// not alone tell where its components are.
func (h *host) discover(m tea.Model) []found {
	t := reflect.TypeOf(m)
	if t != nil && t == h.staticType {
		return h.static
	}
	comps, static := discoverStatic(m, h.cfg)
	if static {
		h.staticType, h.static = t, comps
	}
	return comps
}

// noteSensitive records the components whose tools are sensitive, for the
// default policy (which asks the human before they run).
func (h *host) noteSensitive(w ui.Widget) {
	tp, ok := w.(ui.ToolProvider)
	if !ok {
		return
	}
	for _, spec := range tp.Tools() {
		if s, _ := spec.Annotations["sensitive"].(bool); s {
			h.cfg.sensitive.Store(w.WidgetID(), true)
			return
		}
	}
}

func samePoint(a, b *cell) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func sameWidgets(a, b []ui.Widget) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !ui.SameWidget(a[i], b[i]) {
			return false
		}
	}
	return true
}

// ---- what a tea.Program answers itself ----

// msgKind classifies the messages a tea.Program handles before the model.
type msgKind int

const (
	programMsg msgKind = iota
	reqWindowSize
	reqBackground
	reqForeground
	printLine
	execProcess
	ignored // clipboard, raw output, titles, cursor: not a hosted program's to send
)

var (
	typeWindowSize = reflect.TypeOf(tea.RequestWindowSize())
	typeBackground = reflect.TypeOf(tea.RequestBackgroundColor())
	typeForeground = reflect.TypeOf(tea.RequestForegroundColor())
	typePrintLine  = reflect.TypeOf(tea.Println("")())
	typeExec       = reflect.TypeOf(tea.Exec(nil, nil)())
	typesIgnored   = map[reflect.Type]bool{
		reflect.TypeOf(tea.SetClipboard("")()):            true,
		reflect.TypeOf(tea.ReadClipboard()):               true,
		reflect.TypeOf(tea.Raw("")()):                     true,
		reflect.TypeOf(tea.RequestCursorColor()):          true,
		reflect.TypeOf(tea.RequestCursorPosition()):       true,
		reflect.TypeOf(tea.RequestTerminalVersion()):      true,
		reflect.TypeOf(tea.RequestCapability("")()):       true,
		reflect.TypeOf(tea.ClearScreen()):                 true,
		reflect.TypeOf(tea.Suspend()):                     true,
		reflect.TypeOf(tea.RequestProgramStatusSupport()): true,
	}
)

func kindOf(msg tea.Msg) msgKind {
	if msg == nil {
		return ignored
	}
	t := reflect.TypeOf(msg)
	switch {
	case t == typeWindowSize:
		return reqWindowSize
	case t == typeBackground:
		return reqBackground
	case t == typeForeground:
		return reqForeground
	case t == typePrintLine:
		return printLine
	case t == typeExec:
		return execProcess
	case typesIgnored[t]:
		return ignored
	}
	return programMsg
}

// printedText is the text of a tea.Println/Printf message (its one string
// field, unexported).
func printedText(msg tea.Msg) string {
	v := reflect.ValueOf(msg)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String {
			return f.String()
		}
	}
	return ""
}

// ErrExec is what a hosted program's tea.Exec callback gets: the server
// runs no process on the program's behalf.
var ErrExec = fmt.Errorf("teaapp: a hosted program cannot run processes on the terminal (%w)", exec.ErrNotFound)

// execCallback returns the callback of a tea.Exec message, or nil.
func execCallback(msg tea.Msg) func(error) tea.Msg {
	v := reflect.ValueOf(msg)
	cp := reflect.New(v.Type()).Elem()
	cp.Set(v)
	for i := range cp.NumField() {
		f := cp.Field(i)
		if f.Kind() != reflect.Func || f.Type().NumIn() != 1 || f.Type().NumOut() != 1 {
			continue
		}
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		if f.IsNil() {
			return nil
		}
		fn := f
		return func(err error) tea.Msg {
			in := reflect.New(fn.Type().In(0)).Elem()
			if err != nil {
				in.Set(reflect.ValueOf(err))
			}
			return fn.Call([]reflect.Value{in})[0].Interface()
		}
	}
	return nil
}

// toolsDerived counts the components' Tools calls (tool derivations), for
// the tests that show an animation derives none.
var toolsDerived atomic.Int64
