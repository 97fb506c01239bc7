package teaapp

import (
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// This file is the contract between the host (host.go: the adapter that
// folds a foreign tea.Model in a session's dispatcher and draws its
// screen) and the components (components*.go: the bubbles components
// found in the model, their widgets, tools and actions).

// found is one bubbles component inside the model, as discover finds it.
type found struct {
	// Name is the component's tool id: its field path in snake case
	// ("list", "inputs_1", "form_email"), or what an option renamed it
	// to. Unique within one model.
	Name string
	// Kind names the component type: "textinput", "textarea", "list",
	// "table", "viewport", "paginator", "filepicker", "progress",
	// "spinner", "help".
	Kind string
	// Path is how to reach it from the model again (field indexes,
	// pointer dereferences, slice/array indexes), for apply.
	Path []step
}

// step is one move on a path through the model: a struct field by index,
// a slice or array element by index, or following a pointer or an
// interface (Field and Index both -1).
type step struct {
	Field int // struct field index, or -1
	Index int // slice or array index, or -1
}

// applyMsg carries one agent action on a component to the host's Update,
// which calls apply with it on the dispatcher goroutine. It is what a
// component widget's CallTool returns as its one message; Outcome is the
// call's result, which the host Sets (the MCP bridge answers with it).
type applyMsg struct {
	Component string // found.Name
	Action    string
	Args      map[string]any
	Outcome   *ui.Outcome
}

// stepFunc runs the model's own Update on msg, as the host does for any
// message (its commands are run and tracked for the call's outcome), and
// returns the next model. The host panics through it when Update panics.
type stepFunc func(m tea.Model, msg tea.Msg) tea.Model

// Option configures New.
type Option func(*config)

// config is what New's options set. The host's fields are in host.go's
// options; comps is the components' (components_options.go).
type config struct {
	host  hostOptions
	comps componentOptions
	// sensitive holds the names of components whose tools are sensitive
	// (a password input), as sessions find them: the default policy asks
	// the human before they run. Shared by every session of the app.
	sensitive sync.Map
	codec     func(*config) *server.SnapshotCodec // Snapshots; nil: not saved
}
