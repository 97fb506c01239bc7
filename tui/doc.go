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
package tui
