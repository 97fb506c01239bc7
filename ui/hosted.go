package ui

import (
	"errors"
	"sync"
	"time"
)

// Hosted is the root of a tree that draws a whole program's screen
// itself: a Bubble Tea program served by package teaapp. A terminal
// gives such a program every key but the few it keeps for the session
// (ctrl+o, ctrl+g, ctrl+p, ctrl+f, and ctrl+r while the attach panel is
// open): Tab and Shift+Tab, ctrl+c and Esc reach the program, which is
// where its own users expect them. An agent's keys reach it too when no
// terminal is attached.
type Hosted interface {
	Node
	// Focused is the id of the widget (a component inside the program)
	// that has the program's own focus, or "": the human's attention, for
	// the MCP lens, as a terminal's focus is for other apps.
	Focused() string
}

// IsHosted reports whether root is a [Hosted] program's tree.
func IsHosted(root Node) bool {
	_, ok := root.(Hosted)
	return ok
}

// Comparer is implemented by app-defined widgets that can say whether
// another value is the same widget in the same state. [SameWidget] asks
// it, and a leaf widget that implements it is [SelfContained]: the MCP
// bridge keeps its derived tools while it stays the same, and the
// terminal's render cache keeps its lines.
type Comparer interface {
	Widget
	// SameAs reports whether other holds exactly what the receiver
	// holds. It must be quick and must not block.
	SameAs(other Widget) bool
}

// Outcome is a tool result that the fold of the call's own messages
// completes: a widget's CallTool returns one with the messages, the
// app's Update (on the dispatcher goroutine) records what came of them
// with Set, and the MCP bridge answers with Result after the fold. An
// error from Set (the app ignored the change, say) answers the call with
// a tool error, never a success.
type Outcome struct {
	mu      sync.Mutex
	set     bool
	value   any
	err     error
	pending int           // commands of the fold still running
	idle    chan struct{} // closed when pending drops to 0
}

// NewOutcome returns an Outcome not yet set.
func NewOutcome() *Outcome { return &Outcome{} }

// Set records the call's result, or err. The first Set wins.
func (o *Outcome) Set(value any, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.set {
		return
	}
	o.set, o.value, o.err = true, value, err
}

// Update changes the recorded value by fn, under the outcome's lock
// (printed lines appended as the fold's commands return them).
func (o *Outcome) Update(fn func(value any) any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.value = fn(o.value)
}

// Begin notes one command of the fold started; End, that it returned.
// Result waits (boundedly) for the commands begun.
func (o *Outcome) Begin() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending == 0 {
		o.idle = make(chan struct{})
	}
	o.pending++
}

// End notes that a command begun with Begin returned.
func (o *Outcome) End() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending == 0 {
		return
	}
	if o.pending--; o.pending == 0 {
		close(o.idle)
	}
}

// Result waits up to wait for the commands the fold started (Begin) to
// return, then returns what was recorded. An Outcome never Set reports
// errOutcomeUnset: the app's Update never saw the call's messages.
func (o *Outcome) Result(wait time.Duration) (any, error) {
	o.mu.Lock()
	idle := o.idle
	busy := o.pending > 0
	o.mu.Unlock()
	if busy && wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-idle:
		case <-t.C:
		}
		t.Stop()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.set {
		return nil, ErrOutcomeUnset
	}
	return o.value, o.err
}

// ErrOutcomeUnset is Outcome.Result's error when nothing recorded what
// came of the call: the app never received its messages.
var ErrOutcomeUnset = errors.New("the app did not take the change: its Update never received it")

// TerminalSize tells a [Hosted] program's model the size one terminal
// gives it: the terminal sends it when it attaches, when its window
// changes, and with Gone when it leaves. Width and Height are the cells
// the app area has (the terminal's window less the session's status
// bar). Owner marks the session owner's terminal. The model decides from
// all of them the one size it draws at.
type TerminalSize struct {
	Terminal      string // the terminal's attachment id
	Width, Height int
	Owner         bool
	Gone          bool
}

// Unrollbackable is implemented by a model whose copies share memory (a
// hosted Bubble Tea program's components share slices and pointers): when
// its Update panics, the model as it was before the envelope may already
// be changed, so the dispatcher cannot go back to it. RollbackUnsafe
// returns why, or "" when rolling back is safe after all (the app vouched
// for its model). The dispatcher then ends the session with that reason
// instead of going on.
type Unrollbackable interface {
	RollbackUnsafe() string
}

// Unchanging is implemented by a tree root that can tell it draws exactly
// what the previous root drew (a hosted program whose Update changed
// nothing it shows: a timer it does not draw, a cursor that does not
// blink). The dispatcher publishes no snapshot for such a fold: the
// terminals, the agents' watchers and the saver are not woken. The model
// still advances; the next snapshot carries it.
type Unchanging interface {
	Node
	Unchanged(prev Node) bool
}

// Secret is implemented by app-defined widgets that hold a secret (a
// password input of a hosted program): the arguments of their tools are
// masked wherever they are shown to a human, as a PasswordField's are.
type Secret interface {
	Widget
	HoldsSecret() bool
}

// CursorOwner is implemented by a tree root that places the terminal's
// own cursor (a hosted program whose view sets tea.View.Cursor): X and Y
// are cells from the top-left of the root's rectangle; ok is false when
// it shows none. A terminal moves its cursor there and shows it when that
// cell is on its screen, and hides it otherwise.
type CursorOwner interface {
	Node
	Cursor() (x, y int, ok bool)
}
