package tui

import tea "charm.land/bubbletea/v2"

// SetSend makes the model learn of new snapshots, presence changes and
// its idle timer without a goroutine waiting for them: whoever causes one
// wakes the model through send, a tea.Program's Send, given before the
// program runs. Without it the model waits in a command of its own (a
// goroutine for as long as the terminal is open, one more stack for
// every garbage collection to scan).
//
// A wake is delivered on a goroutine of its own, since Send waits for the
// program's loop; at most one is on its way at a time, and it ends when
// the program takes it or ends.
func (m *Model) SetSend(send func(tea.Msg)) {
	m.wakeMu.Lock()
	defer m.wakeMu.Unlock()
	m.send = send
	if send != nil && m.wakePending {
		go send(wakeMsg{})
	}
}

// wake tells the program something it waits for happened (see SetSend).
// It is called by the dispatcher and the session with their own locks
// held: it only marks and starts the delivery.
func (m *Model) wake() {
	select {
	case <-m.done:
		return
	default:
	}
	m.wakeMu.Lock()
	defer m.wakeMu.Unlock()
	if m.wakePending {
		return
	}
	m.wakePending = true
	if m.send != nil {
		go m.send(wakeMsg{})
	}
}

// wakeMsg says a snapshot, a presence change or the idle timer may have
// come (SetSend).
type wakeMsg struct{}

// woken handles a wake: each source that fired is handled as the
// waiting command's message would have been.
func (m *Model) woken() tea.Cmd {
	m.wakeMu.Lock()
	m.wakePending = false // from here on a new event wakes again
	m.wakeMu.Unlock()
	var cmds []tea.Cmd
	drain(m.sub.C())
	if m.sess.Dispatcher.Snapshot().Version != m.snap.Version {
		_, c := m.update(snapshotMsg{})
		cmds = append(cmds, c)
	}
	if drain(m.presence) {
		_, c := m.update(presenceMsg{})
		cmds = append(cmds, c)
	}
	if drain(m.idleC) {
		_, c := m.update(idleMsg{})
		cmds = append(cmds, c)
	}
	return tea.Batch(cmds...)
}

// drain takes a pending signal off ch, reporting whether there was one.
func drain(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// sender returns the program's Send when the model is woken (SetSend),
// else nil: the timers' ticks are sent with it.
func (m *Model) sender() func(tea.Msg) {
	m.wakeMu.Lock()
	defer m.wakeMu.Unlock()
	return m.send
}

// pushed reports whether the model is woken (SetSend) rather than waiting.
func (m *Model) pushed() bool {
	m.wakeMu.Lock()
	defer m.wakeMu.Unlock()
	return m.send != nil
}

// waitSnapshot is the command that waits for what SetSend's wakes
// deliver otherwise; nil when the model is woken.
func (m *Model) waitSnapshot() tea.Cmd {
	if m.pushed() {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-m.sub.C():
			return snapshotMsg{}
		case <-m.presence:
			return presenceMsg{} // redraw the status bar
		case <-m.idleC:
			return idleMsg{}
		case <-m.done:
			return nil
		}
	}
}
