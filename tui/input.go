package tui

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// inputState is where this terminal's input goes.
type inputState struct {
	focus string // the focused widget
	hover string // widget under the mouse
	// routeErr is the last routed input's fold error (routeFrom), read
	// by agentKeys to tell an agent its key made the app fail.
	routeErr error
}

// keyPress handles a key typed in this terminal: an observer's keys only
// leave; a prompt on top takes the others, else the bindings and the
// focused widget do.
func (m *Model) keyPress(k tea.KeyPressMsg) tea.Cmd {
	m.sess.Touch()
	switch {
	case m.opts.Role == RoleObserver:
		if bindingOf(k) == bindQuit {
			return tea.Quit
		}
	case !m.approvalKey(k):
		return m.keyFrom(k, m.origin)
	}
	return nil
}

// takesPointer reports whether pastes and clicks reach the app: not from
// an observer, nor under a prompt.
func (m *Model) takesPointer() bool {
	return len(m.approvals) == 0 && m.opts.Role != RoleObserver
}

// paste hands a paste to the focused widget.
func (m *Model) paste(p tea.PasteMsg) {
	m.sess.Touch()
	if m.takesPointer() {
		m.routeFrom(m.focus, p, m.origin)
	}
}

// mouseClick handles a click in this terminal.
func (m *Model) mouseClick(mo tea.Mouse) {
	m.sess.Touch()
	if m.takesPointer() {
		m.click(mo)
	}
}

// hoverAt notes the widget under the mouse. Hover only feeds the focus
// lens: nothing on screen changes.
func (m *Model) hoverAt(mo tea.Mouse) {
	id, _, _ := m.frame.HitTest(mo.X, mo.Y) // the app frame starts on the top row
	if id != m.hover {
		m.hover = id
		m.publishAttention()
	}
}

// runAgentKeys types an agent's keys and answers on its Result.
func (m *Model) runAgentKeys(msg AgentKeysMsg) {
	err := m.agentKeys(msg)
	if m.opts.Primary {
		// The agent's answer carries the screen its keys produced,
		// whenever the terminal itself gets to draw it.
		m.sess.SetScreen(m.Frame(), m.snap.Version)
	}
	if msg.Result != nil {
		msg.Result <- err
	}
}

func (m *Model) agentKeys(msg AgentKeysMsg) error {
	keys := make([]tea.KeyPressMsg, 0, len(msg.Keys))
	for _, name := range msg.Keys {
		k, err := ParseKey(name)
		if err != nil {
			return err
		}
		if b := bindingOf(k); b == bindQuit || (humansOnly(b) && !(m.hosted() && programTakes(b))) {
			return fmt.Errorf("key %q is reserved to the human", name)
		}
		keys = append(keys, k)
	}
	origin := dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: msg.Agent}
	for i, k := range keys {
		m.routeErr = nil
		m.keyFrom(k, origin)
		if errors.Is(m.routeErr, dispatcher.ErrUpdateFailed) {
			// The app's Update failed on it (a panic): the agent is told,
			// and the keys after it are not pressed.
			return fmt.Errorf("key %q (%d of %d): %w", msg.Keys[i], i+1, len(keys), m.routeErr)
		}
	}
	return nil
}

// humansOnly reports whether b is one of the terminal's own controls
// (the attach panel with the token and a browser link, the activity log,
// pause, focus only, a new token, removing browsers): an agent's keys
// never press them, though its answer would show what they open.
func humansOnly(b binding) bool {
	switch b {
	case bindQuit, bindAttach, bindLog, bindPause, bindFocusOnly, bindRotateToken, bindRemoveBrowsers:
		return true
	}
	return false
}

func (m *Model) keyFrom(k tea.KeyPressMsg, origin dispatcher.Origin) tea.Cmd {
	b := bindingOf(k)
	if m.hosted() && programTakes(b) {
		m.toProgram(k, origin)
		return nil
	}
	switch b {
	case bindQuit:
		return tea.Quit
	case bindAttach:
		if m.opts.Role == RoleOwner {
			m.showAttach = !m.showAttach
			// The panel shows the token: the session is saved first, so
			// that a crash cannot lose a session an agent was given.
			if m.showAttach && m.sess.Durable() != nil {
				m.notice = "saving this session failed: it may not survive a restart"
			}
			m.viewLink = ""
			if m.showAttach && m.opts.ViewLink != nil {
				if link, err := m.opts.ViewLink(); err == nil {
					m.viewLink = link
				}
			}
		}
		return nil
	case bindLog:
		m.showLog = !m.showLog
		return nil
	case bindPause, bindFocusOnly:
		if m.opts.Role == RoleOwner && origin.Kind == dispatcher.OriginHuman {
			c := m.sess.Control()
			if b == bindPause {
				c.Paused = !c.Paused
			} else {
				c.FocusOnly = !c.FocusOnly
			}
			// SetControl returns once the change is saved: the status
			// bar shows it only then.
			if err := m.sess.SetControl(c); err != nil {
				m.notice = "saving this failed, so a restart of the server may undo it"
			}
		}
		return nil
	case bindRotateToken:
		if m.showAttach && origin.Kind == dispatcher.OriginHuman {
			// A new token: the old one stops working and the agents that
			// used it are disconnected. RotateToken returns once the new
			// token is saved, so the human reads it only then.
			switch _, err := m.sess.RotateToken(); {
			case errors.Is(err, session.ErrNotSaved):
				m.notice = "new token: agents using the old one were disconnected; saving failed, so this session may not survive a restart"
			case err != nil:
				m.notice = "could not rotate the token"
			default:
				m.notice = "new token: agents using the old one were disconnected"
			}
			return nil
		}
	case bindRemoveBrowsers:
		if m.showAttach && m.opts.Role == RoleOwner && origin.Kind == dispatcher.OriginHuman && m.opts.RemoveBrowsers != nil {
			n := m.opts.RemoveBrowsers()
			m.notice = fmt.Sprintf("removed %d browser(s): their pages closed and their links stopped working", n)
			return nil
		}
	case bindFocusNext:
		m.moveFocus(false)
		return nil
	case bindFocusPrev:
		m.moveFocus(true)
		return nil
	case bindEscape:
		// Esc always reaches an open modal, wherever focus is inside it.
		if o, ok := ui.ActiveOverlay(m.snap.Tree); ok {
			if w, ok := o.(ui.Widget); ok {
				m.routeFrom(w.WidgetID(), k, origin)
				return nil
			}
		}
	}
	m.routeFrom(m.focus, k, origin)
	return nil
}

func (m *Model) click(mo tea.Mouse) {
	if mo.Button != tea.MouseLeft {
		return
	}
	id, rel, ok := m.frame.HitTest(mo.X, mo.Y) // the app frame starts on the top row
	if !ok {
		return
	}
	// An open modal traps the mouse as it traps focus.
	if o, open := ui.ActiveOverlay(m.snap.Tree); open {
		if _, inside := ui.Find(o, id); !inside {
			return
		}
	}
	if w, ok := ui.Find(m.snap.Tree, id); ok && w.Focusable() && inFocusScope(m.snap.Tree, id) {
		m.focus = id
	}
	m.routeFrom(id, rel, m.origin)
}

func inFocusScope(tree ui.Node, id string) bool {
	for _, f := range ui.FocusOrder(tree) {
		if f == id {
			return true
		}
	}
	return false
}

// routeFrom hands ev to widget id, resolved on the dispatcher goroutine
// against the current tree, and waits until its messages are folded.
func (m *Model) routeFrom(id string, ev ui.Event, origin dispatcher.Origin) {
	ctx := context.Background()
	if m.opts.InputTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.opts.InputTimeout)
		defer cancel()
	}
	// Errors (update_failed, timeout, closed) leave the screen as the
	// latest snapshot shows it, which is the truth either way.
	_, m.routeErr = Route(ctx, m.sess, id, ev, origin, func(id string) (*ui.LocalState, func()) {
		m.mu.Lock()
		return m.localLocked(id), m.mu.Unlock
	})
	m.refresh()
}

// Route hands ev to widget id of sess's app, as a terminal's key or click
// does: resolved on the dispatcher goroutine against the current tree, the
// widget's HandleEvent run (guarded) with the viewer's local state of it,
// its messages folded, and the action noted in the session's activity log
// as origin's. local returns a viewer's state of a widget and the func
// that releases it; it is called on the dispatcher goroutine. An event
// the widget does not take, and a key for a widget that is gone or not
// focusable, goes to the app itself (global shortcuts). It returns the
// messages folded (none: nothing happened) and the error of the fold.
// Terminals and the browser view use it alike: a person's input takes
// one path whatever they look at.
func Route(ctx context.Context, sess *session.Session, id string, ev ui.Event, origin dispatcher.Origin,
	local func(id string) (*ui.LocalState, func())) ([]tea.Msg, error) {
	var acted []tea.Msg
	var seen ui.Node
	key, isKey := ev.(tea.KeyPressMsg)
	untaken := func() ([]tea.Msg, error) {
		if isKey {
			return []tea.Msg{key}, nil
		}
		return nil, nil
	}
	err := sess.Dispatcher.CallFunc(ctx, origin, func(tree ui.Node) ([]tea.Msg, error) {
		seen = tree
		w, ok := ui.Find(tree, id)
		if !ok {
			return untaken()
		}
		if _, click := ev.(ui.ClickEvent); !click && !w.Focusable() {
			return untaken()
		}
		st, release := local(id)
		defer release()
		followText(w, st)
		before := *st
		var msgs []tea.Msg
		if err := sess.Guard().Do(metrics.HookHandleEvent, id, func() { msgs = w.HandleEvent(ev, st) }); err != nil {
			return nil, fmt.Errorf("widget %q: %w", id, err) // nothing folds
		}
		if len(msgs) == 0 && sameLocal(before, *st) {
			return untaken() // the widget did nothing with it
		}
		rememberText(st, msgs)
		acted = msgs
		return msgs, nil
	})
	if len(acted) > 0 {
		sess.NoteAction(id)
		outcome := "ok"
		switch {
		case errors.Is(err, dispatcher.ErrUpdateFailed):
			outcome = "update_failed"
		case err != nil:
			outcome = "error"
		}
		record(sess, id, seen, acted, origin.String(), origin.Kind == dispatcher.OriginAgent, outcome)
	}
	return acted, err
}

// sameLocal reports whether a widget's local state is as it was: a key
// that changed nothing there and sent no message was not taken.
func sameLocal(a, b ui.LocalState) bool {
	return a.Cursor == b.Cursor && a.Row == b.Row && a.Col == b.Col && a.Offset == b.Offset &&
		reflect.DeepEqual(a.Data, b.Data)
}

func (m *Model) refresh() {
	m.snap = m.sess.Dispatcher.Snapshot()
	m.fixFocus()
}

// fixFocus keeps focus on a focusable widget in scope: the first one when
// the focused widget is gone, disabled, or outside an open modal.
func (m *Model) fixFocus() {
	order := ui.FocusOrder(m.snap.Tree)
	for _, id := range order {
		if id == m.focus {
			return
		}
	}
	m.focus = ""
	if len(order) > 0 {
		m.focus = order[0]
	}
}

func (m *Model) moveFocus(back bool) {
	m.focus = ui.NextFocus(ui.FocusOrder(m.snap.Tree), m.focus, back)
}

func (m *Model) localLocked(id string) *ui.LocalState {
	st, ok := m.locals[id]
	if !ok {
		st = &ui.LocalState{}
		m.locals[id] = st
	}
	return st
}

// textOf returns the text of a text widget.
func textOf(w ui.Widget) (string, bool) {
	switch w := w.(type) {
	case ui.TextInput:
		return w.Value, true
	case ui.TextArea:
		return w.Value, true
	case ui.PasswordField:
		return w.Value, true
	}
	return "", false
}

// followText moves this terminal's cursor to the end of a text widget
// whose text someone else (another terminal, an agent) changed since this
// terminal last edited it, so that typing here continues the text instead
// of landing at a stale position.
func followText(w ui.Widget, st *ui.LocalState) {
	text, ok := textOf(w)
	if !ok {
		return
	}
	if last, seen := st.Data.(string); !seen || last != text {
		st.Cursor = utf8.RuneCountInString(text)
		st.Data = text
	}
}

// rememberText records the text this terminal's own edit produces.
func rememberText(st *ui.LocalState, msgs []tea.Msg) {
	for _, msg := range msgs {
		switch msg := msg.(type) {
		case ui.TextInputChanged:
			st.Data = msg.Text
		case ui.TextAreaChanged:
			st.Data = msg.Text
		case ui.PasswordFieldChanged:
			st.Data = msg.Text
		}
	}
}
