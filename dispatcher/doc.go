// Package dispatcher serializes one session's inputs (terminal keys, MCP
// tool calls, command results, timers) into ordered Update calls on the
// session's app model, and publishes the result as snapshots.
//
// # What flows in and out
//
//	terminals ─┐
//	agents ────┼─ Send, Call, SendFunc, CallFunc ─▶ queue ─▶ loop ─┬─▶ Subscription.C()
//	timers ────┘                                      ▲       │    ├─▶ Snapshot()
//	                                                  │       ▼    └─▶ Call's result
//	                                                  └◀──── tea.Cmd goroutines (results back in)
//
// In: messages ([tea.Msg]) tagged with an [Origin], either as they are or
// produced by a [Resolver] that runs against the current tree. They travel
// in envelopes through one bounded queue; [Dispatcher.Send] never blocks,
// [Dispatcher.Call] waits until its messages have been folded.
//
// Out: after each fold, a [Snapshot] (version, tree, model, origin) readable
// with [Dispatcher.Snapshot], a signal to every [Subscription], and the
// outcome returned to Call: nil, an [*UpdateError], [ErrTimeout] or
// [ErrClosed].
//
// # Folding
//
// One goroutine per dispatcher owns the model: it alone calls Init, Update
// and View (a model restored from a snapshot folds Options.Restored
// first instead of running Init). It runs only while there is work
// queued: it ends when the queue is empty and the next envelope starts
// another, one at a time, so an idle session holds no goroutine here. Each envelope is folded atomically: if any Update panics or
// returns a nil model, the model goes back to what it was before the
// envelope, its commands are discarded, and Call gets an [*UpdateError]
// (errors.Is [ErrUpdateFailed]). If View panics, the last good tree is kept
// while the model advances. Either way the session keeps working.
//
// Messages from one Send or Call are folded in order, and so are envelopes
// sent one after another from one goroutine.
//
// # Commands
//
// Commands returned by Init and Update run on their own goroutines, at most
// Options.MaxCommands at a time, and their results are folded with origin
// {Kind: OriginCommand, Name: <origin of the fold that returned them>}.
// tea.Batch runs its commands concurrently; tea.Sequence runs them in order,
// folding each result before the next command starts. A command's
// [tea.QuitMsg], ui.EndSessionMsg or ui.CloseTerminalMsg is not folded: it
// goes to Hooks.OnQuit with the command's origin, whose owner (the session
// manager) ends the session or closes the terminal that asked; without the
// hook it is dropped.
// Commands still inside their own code when the dispatcher closes keep
// running until they return; their results are dropped.
package dispatcher
