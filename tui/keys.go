package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/internal/keyname"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// binding is what a key bound by the terminal does, before (or instead
// of) the focused widget: see keyFrom for who may use each.
type binding int

const (
	bindNone           binding = iota // the key goes to the focused widget
	bindQuit                          // leave; never an agent's key
	bindAttach                        // open or close the attach panel (owner)
	bindLog                           // open or close the activity log
	bindPause                         // pause agents or hand back (owner, human)
	bindFocusOnly                     // agents may act on the focused widget only (owner, human)
	bindRotateToken                   // a new token, with the attach panel open (human)
	bindRemoveBrowsers                // end the browsers' access, with the attach panel open (owner, human)
	bindFocusNext                     // focus the next widget
	bindFocusPrev                     // focus the previous widget
	bindEscape                        // to the open modal, wherever focus is in it
)

// bindings are the keys the terminal takes, by name (tea.KeyPressMsg's
// String): one table for the input code (keyFrom, approvalKey,
// agentKeys, the observer's keys) and for the hints on screen (keyFor).
var bindings = map[string]binding{
	"ctrl+c":    bindQuit,
	"ctrl+o":    bindAttach,
	"ctrl+g":    bindLog,
	"ctrl+p":    bindPause,
	"ctrl+f":    bindFocusOnly,
	"ctrl+r":    bindRotateToken,
	"ctrl+x":    bindRemoveBrowsers,
	"tab":       bindFocusNext,
	"shift+tab": bindFocusPrev,
	"esc":       bindEscape,
}

// bindingOf is what k does in the terminal (bindNone: it goes to the
// focused widget).
func bindingOf(k tea.KeyPressMsg) binding { return bindings[k.String()] }

// keyFor is the key bound to b, as the hints on screen spell it.
func keyFor(b binding) string {
	for k, kb := range bindings {
		if kb == b {
			return k
		}
	}
	panic(fmt.Sprintf("tui: no key bound to binding %d", b))
}

// approvalKeys answer an agent's call waiting for approval.
var approvalKeys = map[string]session.Approval{
	"a":   session.ApprovedOnce,
	"y":   session.ApprovedOnce,
	"s":   session.ApprovedForSession,
	"d":   session.Refused,
	"n":   session.Refused,
	"esc": session.Refused,
}

// joinKeys answer a request to join the session.
var joinKeys = map[string]session.JoinAnswer{
	"o":   session.JoinAsObserver,
	"r":   session.JoinAsDriver,
	"m":   session.JoinAsOwner, // a browser request only
	"n":   session.JoinRefused,
	"esc": session.JoinRefused,
}

// KeyNames lists the named keys ParseKey accepts, for documentation.
func KeyNames() []string { return keyname.Names() }

// ParseKey turns a key name, or a single printable character, into the
// key press a terminal would produce (the table is package keyname's,
// which the MCP bridge shares).
func ParseKey(name string) (tea.KeyPressMsg, error) { return keyname.Parse(name) }
