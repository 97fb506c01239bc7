package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// Identity is who and what a session serves. The server gives it to the
// app's constructor, once per session: it describes whoever started the
// session (terminals that join later see the same model).
type Identity struct {
	// SessionID is the session's id, as in its MCP endpoint's URL.
	SessionID string
	// User is the SSH user name the client gave (for a headless session,
	// the owner the server made up for the API key or process that
	// started it). It is outside text: clean it before drawing it
	// anywhere but through this package's widgets, which draw text safely.
	User string
	// KeyFingerprint is the SHA256 fingerprint of the public key the
	// client proved, or "" when it logged in otherwise.
	KeyFingerprint string
	// RemoteAddr is the client's network address ("" for a session a
	// process started for itself).
	RemoteAddr string
	// Term is the client's TERM; Width and Height its window size in cells
	// when the session started. All zero for a headless session.
	Term          string
	Width, Height int
	// Headless reports a session started with no terminal (by an agent
	// over /mcp, over stdio, or by a program): nobody may ever look at it.
	Headless bool
}

// Keys that no widget takes reach the app's Update as the
// [tea.KeyPressMsg] itself, as in any Bubble Tea program: a key that the
// focused widget neither turned into messages nor used to move its own
// cursor or highlight (there may be no focused widget at all). So an app
// can offer global shortcuts. The keys the terminal keeps for itself
// (tab and shift+tab move focus, ctrl+c leaves, ctrl+o, ctrl+g, ctrl+p,
// ctrl+f and, with the attach panel open, ctrl+r) never reach it. Keys an
// agent sends with raxol_send_key take the same path.

// EndSessionMsg ends the session when a command of the app returns it:
// every terminal is told Reason and closed, every agent's MCP client
// session is closed, and the model is gone. [tea.Quit] (tea.QuitMsg) does
// the same with the reason "the app ended the session". Sent as a plain
// message (not from a command) it is ignored.
type EndSessionMsg struct{ Reason string }

// EndSession is a command that ends the session; see [EndSessionMsg].
func EndSession(reason string) tea.Cmd {
	return func() tea.Msg { return EndSessionMsg{Reason: reason} }
}

// CloseTerminalMsg, returned by a command the app started while folding
// a human's key or click, closes that human's terminal (the one whose
// input led to the command; "Reason" is shown to them as it closes). The
// session goes on for everyone else, and, when it was its owner's last
// terminal, waits to be resumed as after a dropped link. Led to by an
// agent's call, a timer or another command's result, it does nothing.
type CloseTerminalMsg struct{ Reason string }

// CloseTerminal is a command that closes the terminal whose input led to
// it; see [CloseTerminalMsg].
func CloseTerminal(reason string) tea.Cmd {
	return func() tea.Msg { return CloseTerminalMsg{Reason: reason} }
}

// Restored is the first message a model brought back from a saved
// snapshot receives (a session restored after a restart or adopted from a
// lost node), in place of Init: the app restarts its timers and anything
// else a command kept going. Commands that were running when the snapshot
// was saved are not run again. At is when the snapshot was saved.
type Restored struct{ At time.Time }
