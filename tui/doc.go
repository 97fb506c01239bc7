// Package tui projects a session into one SSH terminal as a Bubble Tea v2
// program.
//
// What flows in: the session's snapshots (re-rendered as they arrive: with
// [Model.SetSend] they wake the program, without it a command waits for
// them), the terminal's key presses, pastes, mouse clicks and resizes,
// and notices from the server (such as "server is stopping").
//
// What flows out: app messages, produced by the focused widget from each
// input event and folded by the session's dispatcher with a human origin,
// and the rendered screen: the component tree, an optional attach panel
// (ctrl+o) with the session's MCP URLs and token, and a status bar.
//
// Input is resolved on the dispatcher goroutine against the tree as it is
// at that moment, so keys typed faster than the screen refreshes are never
// computed from a stale value. Focus and local widget state (cursors,
// highlights) belong to this terminal alone.
//
// # Files
//
// The model is split by concern, each file holding the part of [Model]'s
// state it uses (an embedded struct) and the code that uses it:
//
//   - tui.go: [Options], [Model], [New], Init, Update's dispatch, the
//     frame (size, rate limit, idle release) and [Model.Frame];
//   - input.go: keys, clicks and pastes routed to the focused widget,
//     focus and hover, agents' keys;
//   - keys.go: the key bindings of the terminal and its prompts, in one
//     table, and the key names agents may press ([ParseKey]);
//   - statusbar.go, attach.go, approval.go, activity.go: the status bar,
//     the attach panel, the prompts (approvals, join requests) and the
//     cues of agents' actions (highlight, notice, ages, activity log);
//   - wake.go: how snapshots, presence changes and the idle timer reach
//     the program ([Model.SetSend], or a waiting command);
//   - timer.go: the one type every scheduled redraw uses (at most one
//     tick pending, a stale one ignored; an AfterFunc, no goroutine
//     waiting, once the model is woken);
//   - screen*.go, term.go: drawing frames on the terminal and what it can
//     show.
package tui
