package dispatcher

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Commands run off the loop. Each tea.Cmd gets its own goroutine, owned by
// the dispatcher: it waits for one of MaxCommands slots (or Close), runs the
// command, gives the slot back, and sends the result into the queue with
// the command origin, waiting for room unless the dispatcher is closed.
// The loop never waits for a command. After Close these goroutines end as
// soon as they are out of the command's own code.

var (
	cmdType      = reflect.TypeFor[tea.Cmd]()
	batchType    = reflect.TypeFor[tea.BatchMsg]()
	cmdSliceType = reflect.TypeFor[[]tea.Cmd]()
)

// cmdList reports whether msg is a list of commands to run rather than a
// message to fold (ok), and whether they run in order (sequential).
// tea.BatchMsg runs concurrently. Any other slice of tea.Cmd is taken to be
// the unexported result of tea.Sequence, which runs in order; that includes
// an app's own []tea.Cmd types.
func cmdList(msg tea.Msg) (cmds []tea.Cmd, sequential, ok bool) {
	if b, ok := msg.(tea.BatchMsg); ok {
		return b, false, true
	}
	if msg == nil {
		return nil, false, false
	}
	t := reflect.TypeOf(msg)
	if t.Kind() != reflect.Slice || t.Elem() != cmdType || t == batchType {
		return nil, false, false
	}
	return reflect.ValueOf(msg).Convert(cmdSliceType).Interface().([]tea.Cmd), true, true
}

// runCmds starts the commands returned by a fold of messages from o.
// Called on the loop; never blocks.
func (d *Dispatcher) runCmds(o Origin, cmds []tea.Cmd) {
	co := commandOrigin(o)
	for _, cmd := range cmds {
		if cmd != nil {
			go d.exec(co, cmd, false)
		}
	}
}

// exec runs cmd on the calling goroutine once a slot is free and delivers
// its result. With wait set it returns only after the result (and whatever
// it expands into) has been folded, which is how sequences keep order.
func (d *Dispatcher) exec(o Origin, cmd tea.Cmd, wait bool) {
	if d.closed() {
		return
	}
	select {
	case d.sem <- struct{}{}:
	case <-d.stop:
		return
	}
	msg, ok := d.callCmd(o, cmd)
	<-d.sem
	if ok {
		d.deliver(o, msg, wait)
	}
}

// callCmd runs cmd, recovering a panic (logged; the result is dropped).
func (d *Dispatcher) callCmd(o Origin, cmd tea.Cmd) (msg tea.Msg, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			d.panicked("cmd", r)
			msg, ok = nil, false
			d.log.Warn("dispatcher: command panicked; result dropped",
				"origin", o.String(), "panic_type", fmt.Sprintf("%T", r))
			d.log.Debug("dispatcher: command panic", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	return cmd(), true
}

// deliver handles a command's result: nothing for nil, Hooks.OnQuit for
// tea.QuitMsg and the ui's end messages,
// run the commands of a batch (concurrently) or a sequence (in order),
// otherwise enqueue it to be folded.
func (d *Dispatcher) deliver(o Origin, msg tea.Msg, wait bool) {
	switch msg.(type) {
	case nil:
		return
	case tea.QuitMsg, ui.EndSessionMsg, ui.CloseTerminalMsg:
		if d.hooks.OnQuit == nil {
			d.log.Debug("dispatcher: dropping a quit message; nobody handles it", "origin", o.String(), "msg", fmt.Sprintf("%T", msg))
			return
		}
		d.hooks.OnQuit(o, msg)
		return
	}
	cmds, seq, isList := cmdList(msg)
	switch {
	case isList && seq:
		for _, c := range cmds {
			if c == nil {
				continue
			}
			if d.closed() {
				return
			}
			d.exec(o, c, true)
		}
	case isList:
		if !wait {
			for _, c := range cmds {
				if c != nil {
					go d.exec(o, c, false)
				}
			}
			return
		}
		// Inside a sequence: the step ends when the whole batch has.
		var wg sync.WaitGroup
		for _, c := range cmds {
			if c != nil {
				wg.Go(func() { d.exec(o, c, true) })
			}
		}
		wg.Wait()
	default:
		d.enqueue(o, msg, wait)
	}
}

// enqueue sends one command result to the loop, waiting for room (and,
// with wait set, for its fold) unless the dispatcher closes first.
func (d *Dispatcher) enqueue(o Origin, msg tea.Msg, wait bool) {
	env := &envelope{origin: o, msgs: []tea.Msg{msg}}
	if wait {
		env.reply = make(chan error, 1)
	}
	if d.closed() {
		return
	}
	select {
	case d.queue <- env:
		d.kick()
	case <-d.stop:
		return
	}
	if wait {
		select {
		case <-env.reply:
		case <-d.done:
		}
	}
}
