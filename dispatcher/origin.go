package dispatcher

import "strings"

// OriginKind says what kind of source a message came from.
type OriginKind string

// The kinds of origin a message can have.
const (
	// OriginHuman is a person at a terminal; the Name is the terminal id.
	OriginHuman OriginKind = "human"
	// OriginAgent is an agent's tool call; the Name is the MCP client name.
	OriginAgent OriginKind = "agent"
	// OriginCommand is the result of a tea.Cmd; the Name is the String()
	// of the origin whose fold returned the command.
	OriginCommand OriginKind = "command"
	// OriginTimer is a timer run by the server on the session's behalf.
	OriginTimer OriginKind = "timer"
	// OriginSystem is the server itself (for example "system:init", the
	// origin of the first snapshot).
	OriginSystem OriginKind = "system"
)

// Origin records where a message came from. The dispatcher stamps it on
// every snapshot, so a terminal can show what an agent did and an activity
// log can be replayed.
type Origin struct {
	Kind OriginKind
	// Name identifies the source within its kind: the terminal id for
	// humans, the MCP client name for agents. It may be empty.
	Name string
	// ID, when set, tells one source from another of the same Name (a
	// terminal's attachment id: one user may have two terminals). It is
	// not part of String, and the results of commands keep it.
	ID string
}

// String returns "kind:name", or just "kind" when Name is empty, for
// example "agent:claude-code".
func (o Origin) String() string {
	if o.Name == "" {
		return string(o.Kind)
	}
	return string(o.Kind) + ":" + o.Name
}

// initOrigin is the origin of the snapshot published after Init.
var initOrigin = Origin{Kind: OriginSystem, Name: "init"}

// Led returns the kind of the source that led to a message of origin o:
// o's own kind, or for a command's result the kind of the origin whose
// fold started the command.
func (o Origin) Led() OriginKind {
	if o.Kind != OriginCommand {
		return o.Kind
	}
	kind, _, _ := strings.Cut(o.Name, ":")
	return OriginKind(kind)
}

// commandOrigin is the origin of the results of commands returned while
// folding messages from o. Results of commands started by command results
// keep the original attribution instead of nesting "command:command:…".
func commandOrigin(o Origin) Origin {
	if o.Kind == OriginCommand {
		return o
	}
	return Origin{Kind: OriginCommand, Name: o.String(), ID: o.ID}
}
