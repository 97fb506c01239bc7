// Package keyname turns the key names agents send (raxol_send_key) into
// the key presses a terminal would produce: one table, shared by the
// terminal that types an agent's keys (package tui) and the MCP bridge,
// which hands them straight to a hosted program's model when no terminal
// is attached.
//
// In: a key name ("enter", "shift+tab", "ctrl+a", …) or a single
// printable character. Out: a [tea.KeyPressMsg], or an error naming the
// keys there are ([Names]).
//
// It imports nothing of this module.
package keyname
