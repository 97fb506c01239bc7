// Package session is the registry of live sessions.
//
// What flows in: a request to start a session for an owner (SSH user and
// key fingerprint) with a fresh app model, or to restore one from what
// [Session.Save] gave ([Manager.Restore]: the same id, the token as its
// hash, owner, start time, activity and control, around a decoded model
// that folds ui.Restored instead of Init); terminals and agents attaching
// and detaching; input timestamps. A saver ([Session.SetSaver], the
// server's snapshot store) is called by [Session.RotateToken] and
// [Session.SetControl] before they return, so a change to who may act is
// durable before anyone is told of it.
//
// What flows out: [Session] values holding the session's id (the public
// handle in URLs, 144 random bits), its separate MCP bearer token (256
// random bits), its owner, its times, who is attached, and the
// [dispatcher.Dispatcher] that owns its model. Ending a session
// ([Manager.EndCause]) cancels its [Session.Context] with the cause (an
// error matching [ErrEnded] whose message its humans are told), closes its
// dispatcher and runs the end hook. The app's own end commands (tea.Quit,
// ui.EndSession, ui.CloseTerminal) arrive here from the dispatcher and are
// carried out: the first two end the session, the last goes to
// Options.OnCloseTerminal with the terminal's attachment id. Every session
// entering the registry (started or restored) and leaving it is counted
// once through Options.Count, under the registry's lock: the server's
// raxol_sessions_open.
//
// # Parts
//
// A [Session] keeps its identity (ID, App, Owner, Created), its bearer
// token, its [dispatcher.Dispatcher], its context and end, and what makes
// it durable (saver and committer, durable.go). The rest is held in parts,
// embedded so that their methods are the session's:
//
//   - presence (presence.go, roster): who is attached and when each last
//     acted ([Session.Attach], [Session.Join], [Presence],
//     [Session.Attached], [Session.Agents], [Session.OnPresenceChange]);
//   - the primary terminal's share (share.go, share): the human's
//     [Attention], the screen the owner's terminal shows, the sinks that
//     reach the human ([KeySink], [ApprovalSink], [JoinSink]) and the
//     prompts pending there ([Session.Pending]);
//   - the activity (activity.go, activity): the log of [Action]s, the
//     widgets recently acted on ([Session.NoteAction]) and what agents may
//     do ([Control]).
//
// The parts share the session's one lock, clock and watchers (watch.go,
// hub: [Session.Watch], [Session.WatchPresence]) through a pointer, so a
// change made by any part is made under the same lock and signals the
// same watchers, in the same order, as one struct did.
//
// Text from outside (attachment names, activity entries, approval and join
// requests, the agent named with keys) is cleaned with safetext.Clean and
// bounded where it enters, so what flows out is safe to draw.
package session
