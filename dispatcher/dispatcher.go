package dispatcher

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Defaults for the zero values of [Options].
const (
	DefaultQueueSize   = 256
	DefaultCallTimeout = 5 * time.Second
	DefaultMaxCommands = 64
)

// Snapshot is the state published after a fold. Snapshots are immutable
// values; readers on any goroutine may keep them.
type Snapshot struct {
	// Version is 1 for the snapshot published after Init and increases by
	// one with each later snapshot, that is with each envelope whose
	// Updates all succeeded and that folded at least one message.
	Version uint64
	// Tree is the last good view. When View panics the previous tree is
	// kept while Model still advances.
	Tree ui.Node
	// Model is the model after the fold. It is shared: read it, never
	// change it.
	Model ui.Model
	// Origin is the origin of the envelope whose fold produced this
	// snapshot.
	Origin Origin
	// At is when the snapshot was published.
	At time.Time
}

// Resolver turns the current tree into messages. It runs on the dispatcher
// goroutine, against the tree of the latest snapshot, so what it resolves
// (a widget id, say) cannot have changed by the time its messages are
// folded: [Dispatcher.Snapshot], called from a resolver, is the snapshot
// the tree belongs to (what a caller derived from that snapshot, it can
// use again). It must be quick and must not call back into the
// dispatcher, Snapshot apart. A non-nil error aborts the envelope:
// nothing is folded.
type Resolver func(tree ui.Node) ([]tea.Msg, error)

// Hooks observe the loop, typically for metrics. They run on the dispatcher
// goroutine and must return quickly. Any of them may be nil.
type Hooks struct {
	// OnFold is called after each published snapshot with the time the
	// fold took (resolver, Updates and View).
	OnFold func(d time.Duration)
	// OnUpdateFailed is called when an envelope is rolled back because an
	// Update panicked or returned a nil model, a resolver panicked, or
	// Init panicked.
	OnUpdateFailed func()
	// OnViewFailed is called when View panics; the last good tree is kept.
	OnViewFailed func()
	// OnPanic is called when app code panicked and was recovered, with
	// the hook ("init", "update", "view", "cmd", or "other" for a
	// resolver), the panic value and the stack where it was recovered.
	// It runs on the goroutine that recovered it (a command's, for
	// "cmd").
	OnPanic func(hook string, value any, stack []byte)
	// OnApplied is called on the dispatcher goroutine after an envelope's
	// messages were folded, with its origin and the messages Update took.
	// It must not block or call back into the dispatcher.
	OnApplied func(o Origin, msgs []tea.Msg)
	// OnQuit is called when a command of the app returns tea.QuitMsg,
	// ui.EndSessionMsg or ui.CloseTerminalMsg, with the command's origin
	// (whose ID and Led say whose input started it) and the message. It
	// runs on the command's goroutine and must not block; without it those
	// messages are dropped.
	OnQuit func(o Origin, msg tea.Msg)
}

// Options configure a [Dispatcher]. The zero value (or a nil *Options) is
// ready to use.
type Options struct {
	// QueueSize is the number of envelopes that may wait to be folded.
	// If zero, [DefaultQueueSize].
	QueueSize int
	// CallTimeout bounds how long Call and CallFunc wait (to enqueue and
	// then for the fold) when ctx has no earlier deadline.
	// If zero, [DefaultCallTimeout].
	CallTimeout time.Duration
	// MaxCommands is how many tea.Cmd functions may run at once; further
	// commands wait for a slot on their own goroutine.
	// If zero, [DefaultMaxCommands].
	MaxCommands int
	// Logger receives warnings about failed Updates, Views and commands.
	// They name message types only, never contents.
	// If nil, logs are discarded.
	Logger *slog.Logger
	// Hooks observe the loop, for metrics.
	Hooks Hooks
	// Restored, when non-nil, marks a model brought back from a saved
	// snapshot: the loop folds this message (ui.Restored) first instead
	// of calling Init, whose commands ran in the model's earlier life.
	Restored tea.Msg

	// linger is how long the loop goroutine waits for more work before it
	// ends: 0 means loopLinger, negative not at all (tests).
	linger time.Duration
}

// loopLinger is how long the loop goroutine of a session that went quiet
// stays (see loop).
const loopLinger = time.Second

// Dispatcher owns one session's app model.
//
// Ownership rule: only the dispatcher's loop ever calls the model's Init,
// Update and View, and only it writes the model and the tree. The loop
// runs on a goroutine while there is work queued, one at a time, and on
// none while the session is idle (see kick): an idle session holds no
// goroutine here.
// Everything that changes the model (human keys, tool calls, command
// results, timers) is a message sent through [Dispatcher.Send] or
// [Dispatcher.Call]. Others read state only through snapshots, which are
// published atomically after each fold.
//
// All methods are safe for concurrent use, except that Update, View, Init
// and Resolvers must not call Call, CallFunc or Close on their own
// dispatcher (the loop would wait for itself); Send and SendFunc are fine.
type Dispatcher struct {
	// Fixed at creation.
	queue       chan *envelope // never closed; the loop is the only reader
	stop        chan struct{}  // closed by Close: stop accepting and folding
	done        chan struct{}  // closed when the loop has stopped for good
	sem         chan struct{}  // one token per running tea.Cmd
	callTimeout time.Duration
	log         *slog.Logger
	hooks       Hooks
	restored    tea.Msg // Options.Restored
	linger      time.Duration

	closeOnce sync.Once // closes stop

	// loopMu guards starting the loop goroutine (kick) against its
	// ending and against Close.
	loopMu  sync.Mutex
	running bool // a loop goroutine is running (or starting)
	stopped bool // Close was called: no loop goroutine starts again
	loops   sync.WaitGroup

	// snap is the latest snapshot; never nil once New has returned.
	snap atomic.Pointer[Snapshot]
	// subs is the current subscriber list, replaced (never modified in
	// place) under subMu so the loop can read it without a lock.
	subs atomic.Pointer[[]*Subscription]

	// subMu serializes changes to subs.
	subMu sync.Mutex

	// Owned by the loop goroutine; nobody else touches these.
	model   ui.Model
	tree    ui.Node // last good view
	version uint64
}

// envelope is one unit of work for the loop: messages (or a resolver that
// produces them) folded atomically with one origin.
type envelope struct {
	origin Origin
	msgs   []tea.Msg
	fn     Resolver
	// reply, when non-nil (cap 1), receives the outcome of the fold.
	reply chan error
}

// New starts a dispatcher for m. The loop goroutine runs m.Init, starts its
// command and publishes the first snapshot (Version 1, origin "system:init")
// before New returns. New panics if m is nil.
//
// Call [Dispatcher.Close] to stop the loop.
func New(m ui.Model, opts *Options) *Dispatcher {
	if m == nil {
		panic("dispatcher.New: nil model")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxCommands <= 0 {
		o.MaxCommands = DefaultMaxCommands
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Dispatcher{
		queue:       make(chan *envelope, o.QueueSize),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
		sem:         make(chan struct{}, o.MaxCommands),
		callTimeout: o.CallTimeout,
		log:         o.Logger,
		hooks:       o.Hooks,
		restored:    o.Restored,
		linger:      o.linger,
	}
	switch {
	case d.linger == 0:
		d.linger = loopLinger
	case d.linger < 0:
		d.linger = 0
	}
	ready := make(chan struct{})
	d.running = true
	d.loops.Go(func() {
		d.init(m)
		close(ready)
		d.loop()
	})
	<-ready
	return d
}

// Send enqueues msgs to be folded, in order and atomically, with origin o.
// It never blocks: it returns [ErrQueueFull] when the queue has no room and
// [ErrClosed] after Close. Send with no messages does nothing. Nil messages
// are skipped and tea.QuitMsg sent this way is ignored (only a command of
// the app ends its session: see Hooks.OnQuit).
func (d *Dispatcher) Send(o Origin, msgs ...tea.Msg) error {
	if d.closed() {
		return ErrClosed
	}
	if len(msgs) == 0 {
		return nil
	}
	return d.trySend(&envelope{origin: o, msgs: slices.Clone(msgs)})
}

// SendFunc enqueues fn to run on the dispatcher goroutine against the
// current tree; the messages it returns are folded with origin o. It never
// blocks, like Send. A resolver error is logged and nothing is folded.
func (d *Dispatcher) SendFunc(o Origin, fn Resolver) error {
	if d.closed() {
		return ErrClosed
	}
	return d.trySend(&envelope{origin: o, fn: fn})
}

// Call folds msgs, in order and atomically, with origin o, and returns only
// after the fold: when it returns nil, [Dispatcher.Snapshot] already shows
// the effect. With no messages it is a barrier: it returns once everything
// enqueued before it has been folded.
//
// It returns a *[UpdateError] (errors.Is [ErrUpdateFailed]) when the
// envelope was rolled back, [ErrClosed] when the dispatcher is or gets
// closed first, and [ErrTimeout] when ctx ends or the call timeout passes
// first (wrapping ctx.Err() when ctx caused it). A timeout does not cancel
// the messages: they may still be applied.
func (d *Dispatcher) Call(ctx context.Context, o Origin, msgs ...tea.Msg) error {
	return d.call(ctx, &envelope{origin: o, msgs: slices.Clone(msgs)})
}

// CallFunc runs fn on the dispatcher goroutine against the current tree and
// folds the messages it returns with origin o, then returns like Call.
// If fn returns an error, CallFunc returns that error as-is and nothing is
// folded. A panicking fn gives an *[UpdateError].
func (d *Dispatcher) CallFunc(ctx context.Context, o Origin, fn Resolver) error {
	return d.call(ctx, &envelope{origin: o, fn: fn})
}

// Snapshot returns the latest snapshot without locking.
func (d *Dispatcher) Snapshot() Snapshot {
	return *d.snap.Load()
}

// Close stops the loop and waits for it to return. Calls still waiting and
// all later calls get [ErrClosed]; envelopes still queued are dropped.
// Close is idempotent. It waits for an Update or View already running, so
// it must not be called from one.
//
// Command goroutines waiting for a slot or for queue room stop at once.
// A command still inside its own code keeps running until it returns (Go
// cannot stop it); its result is dropped.
func (d *Dispatcher) Close() {
	d.closeOnce.Do(func() {
		close(d.stop)
		d.loopMu.Lock()
		d.stopped = true
		d.loopMu.Unlock()
		d.loops.Wait()
		close(d.done)
	})
	<-d.done
}

// kick starts the loop goroutine if none is running: every sender calls
// it after putting an envelope in the queue. A loop that finds the queue
// empty ends (loop), so whichever of the two looks last under loopMu
// sees the envelope.
func (d *Dispatcher) kick() {
	d.loopMu.Lock()
	defer d.loopMu.Unlock()
	if d.running || d.stopped {
		return
	}
	d.running = true
	d.loops.Go(d.loop)
}

// Done is closed once the dispatcher's loop has stopped.
func (d *Dispatcher) Done() <-chan struct{} { return d.done }

func (d *Dispatcher) closed() bool {
	select {
	case <-d.stop:
		return true
	default:
		return false
	}
}

func (d *Dispatcher) trySend(env *envelope) error {
	select {
	case <-d.stop:
		return ErrClosed
	case d.queue <- env:
		d.kick()
		return nil
	default:
		return ErrQueueFull
	}
}

func (d *Dispatcher) call(ctx context.Context, env *envelope) error {
	if d.closed() {
		return ErrClosed
	}
	// The call timeout applies unless ctx ends sooner anyway.
	var expired <-chan time.Time
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > d.callTimeout {
		t := time.NewTimer(d.callTimeout)
		defer t.Stop()
		expired = t.C
	}
	env.reply = make(chan error, 1)
	select {
	case d.queue <- env:
		d.kick()
	case <-d.stop:
		return ErrClosed
	case <-ctx.Done():
		return timeoutError(ctx.Err())
	case <-expired:
		return ErrTimeout
	}
	select {
	case err := <-env.reply:
		return err
	case <-d.done:
		// The loop may have replied just before it stopped.
		select {
		case err := <-env.reply:
			return err
		default:
			return ErrClosed
		}
	case <-ctx.Done():
		return timeoutError(ctx.Err())
	case <-expired:
		return ErrTimeout
	}
}

// loop folds what is queued and, once nothing more has come for
// d.linger, ends; kick starts it again when there is more. It is the only
// code that touches the model.
//
// The linger keeps a busy session's goroutine (an agent calling every few
// hundred milliseconds, a human typing): a new goroutine for every fold
// would grow its stack again each time, through the tree walks a call
// makes. An idle session holds none.
func (d *Dispatcher) loop() {
	if d.linger <= 0 {
		for d.next(closedTimeChan) { // end as soon as the queue is empty
		}
		return
	}
	t := time.NewTimer(d.linger)
	defer t.Stop()
	for {
		t.Reset(d.linger)
		if !d.next(t.C) {
			return
		}
	}
}

// next folds the next envelope, waiting for one until expired; it
// reports whether the loop goes on: false once it was stopped or nothing
// came (and none is queued: see kick).
func (d *Dispatcher) next(expired <-chan time.Time) bool {
	select {
	case env := <-d.queue:
		d.foldEnvelope(env)
		return true
	case <-d.stop:
		return false
	case <-expired:
	}
	d.loopMu.Lock()
	defer d.loopMu.Unlock()
	if len(d.queue) == 0 || d.stopped {
		d.running = false
		return false
	}
	return true
}

// closedTimeChan is a channel that is always ready.
var closedTimeChan = func() <-chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()

// foldEnvelope folds env and replies to its caller, unless the dispatcher
// is closing: Close wins over queued work even when both are ready.
func (d *Dispatcher) foldEnvelope(env *envelope) {
	if d.closed() {
		return
	}
	err := d.fold(env)
	if env.reply != nil {
		env.reply <- err // cap 1: never blocks
	}
}

func (d *Dispatcher) init(m ui.Model) {
	d.model = m
	var cmd tea.Cmd
	func() {
		defer func() {
			if r := recover(); r != nil {
				d.panicked("init", r)
				d.updateFailed(initOrigin, nil, r, "Init panicked")
				cmd = nil
			}
		}()
		if d.restored != nil {
			next, c := m.Update(d.restored)
			if next == nil {
				panic("Update returned a nil model")
			}
			d.model, cmd = next, c
			return
		}
		cmd = m.Init()
	}()
	d.runCmds(initOrigin, []tea.Cmd{cmd})
	d.view(initOrigin)
	d.publish(initOrigin)
}

// fold applies one envelope. Its messages take effect all together or, if
// one Update fails, not at all.
func (d *Dispatcher) fold(env *envelope) error {
	start := time.Now()
	msgs := env.msgs
	if env.fn != nil {
		var err error
		msgs, err = d.resolve(env)
		if err != nil {
			return err
		}
	}
	m := d.model
	var cmds []tea.Cmd
	var applied []tea.Msg
	for _, msg := range msgs {
		switch msg.(type) {
		case nil, tea.QuitMsg:
			continue
		}
		if _, _, ok := cmdList(msg); ok {
			// A batch or sequence sent as a message is run, not folded,
			// as tea.Program does.
			cmds = append(cmds, func() tea.Msg { return msg })
			continue
		}
		next, cmd, err := d.update(env.origin, m, msg)
		if err != nil {
			return err // d.model untouched: the envelope is rolled back
		}
		m = next
		applied = append(applied, msg)
		if cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	d.model = m
	d.runCmds(env.origin, cmds)
	if len(applied) == 0 {
		return nil
	}
	prev := d.tree
	d.view(env.origin)
	if u, ok := d.tree.(ui.Unchanging); ok && prev != nil && u.Unchanged(prev) {
		// Nothing visible changed: no snapshot (see ui.Unchanging).
		if d.hooks.OnApplied != nil {
			d.hooks.OnApplied(env.origin, applied)
		}
		return nil
	}
	d.publish(env.origin)
	if d.hooks.OnFold != nil {
		d.hooks.OnFold(time.Since(start))
	}
	if d.hooks.OnApplied != nil {
		d.hooks.OnApplied(env.origin, applied)
	}
	return nil
}

// resolve runs the envelope's resolver against the current tree.
func (d *Dispatcher) resolve(env *envelope) (msgs []tea.Msg, err error) {
	defer func() {
		if r := recover(); r != nil {
			d.panicked("other", r)
			msgs = nil
			err = d.updateFailed(env.origin, nil, r, "resolver panicked")
		}
	}()
	msgs, err = env.fn(d.tree)
	if err != nil && env.reply == nil {
		d.log.Debug("dispatcher: resolver failed", "origin", env.origin.String(), "error", err)
	}
	return msgs, err
}

// update calls m.Update(msg), turning a panic or a nil model into an error.
func (d *Dispatcher) update(o Origin, m ui.Model, msg tea.Msg) (next ui.Model, cmd tea.Cmd, err error) {
	defer func() {
		if r := recover(); r != nil {
			d.panicked("update", r)
			next, cmd = nil, nil
			err = d.updateFailed(o, msg, r, "Update panicked")
			if u, ok := m.(ui.Unrollbackable); ok {
				if reason := u.RollbackUnsafe(); reason != "" {
					// The model before the envelope may be changed too:
					// the session ends rather than go on from it.
					d.unsafeEnd(o, reason)
				}
			}
		}
	}()
	next, cmd = m.Update(msg)
	if next == nil {
		return nil, nil, d.updateFailed(o, msg, nil, "Update returned a nil model")
	}
	return next, cmd, nil
}

// unsafeEnd ends the session after an Update of a model that cannot be
// rolled back panicked: Hooks.OnQuit gets ui.EndSessionMsg with reason,
// on a goroutine of its own (it may wait for this loop).
func (d *Dispatcher) unsafeEnd(o Origin, reason string) {
	if d.hooks.OnQuit == nil {
		d.log.Warn("dispatcher: an Update that cannot be rolled back panicked, and nobody ends the session", "origin", o.String())
		return
	}
	quit := d.hooks.OnQuit
	go quit(o, ui.EndSessionMsg{Reason: reason})
}

// updateFailed reports a failed fold and returns its error.
func (d *Dispatcher) updateFailed(o Origin, msg tea.Msg, p any, reason string) error {
	if d.hooks.OnUpdateFailed != nil {
		d.hooks.OnUpdateFailed()
	}
	attrs := []any{"origin", o.String(), "reason", reason, "msg_type", fmt.Sprintf("%T", msg)}
	if p != nil {
		attrs = append(attrs, "panic_type", fmt.Sprintf("%T", p))
		// Panic values and stacks may quote the message; keep them out
		// of warnings.
		d.log.Debug("dispatcher: update panic", "origin", o.String(), "panic", p, "stack", string(debug.Stack()))
	}
	d.log.Warn("dispatcher: update failed; envelope rolled back", attrs...)
	return &UpdateError{Msg: msg, Panic: p, Reason: reason}
}

// panicked reports a recovered panic of app code to the OnPanic hook. It
// is called from the deferred function that recovered it, so the stack
// shows where the panic happened.
func (d *Dispatcher) panicked(hook string, value any) {
	if d.hooks.OnPanic != nil {
		d.hooks.OnPanic(hook, value, debug.Stack())
	}
}

// view recomputes the tree, keeping the last good one if View panics.
func (d *Dispatcher) view(o Origin) {
	defer func() {
		if r := recover(); r != nil {
			d.panicked("view", r)
			if d.hooks.OnViewFailed != nil {
				d.hooks.OnViewFailed()
			}
			d.log.Warn("dispatcher: View panicked; keeping the last good tree",
				"origin", o.String(), "model_type", fmt.Sprintf("%T", d.model), "panic_type", fmt.Sprintf("%T", r))
			d.log.Debug("dispatcher: view panic", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	d.tree = d.model.View()
}

// publish stores a new snapshot and signals the subscribers without
// blocking.
func (d *Dispatcher) publish(o Origin) {
	d.version++
	d.snap.Store(&Snapshot{
		Version: d.version,
		Tree:    d.tree,
		Model:   d.model,
		Origin:  o,
		At:      time.Now(),
	})
	if subs := d.subs.Load(); subs != nil {
		for _, s := range *subs {
			select {
			case s.c <- struct{}{}:
			default: // a signal is already pending
			}
			if s.notify != nil {
				s.notify()
			}
		}
	}
}
