package teaapp

import (
	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/ui"
)

// componentOptions are the components' options, set by Rename, Exclude,
// Sensitive and WithAction.
type componentOptions struct {
	rename    map[string]string
	exclude   map[string]bool
	sensitive map[string]bool
	actions   map[string][]extraAction
}

// extraAction is one action an app added to a component with WithAction.
type extraAction struct {
	spec  ui.ToolSpec
	apply func(m tea.Model, args map[string]any) (tea.Model, tea.Cmd, any, error)
}

// Rename gives the component found at path (its snake-case field path as
// discovered, "inputs_1") the tool id name.
func Rename(path, name string) Option {
	return func(c *config) {
		if c.comps.rename == nil {
			c.comps.rename = map[string]string{}
		}
		c.comps.rename[path] = name
	}
}

// Exclude leaves the component found at path out: no widget, no tools.
func Exclude(path string) Option {
	return func(c *config) {
		if c.comps.exclude == nil {
			c.comps.exclude = map[string]bool{}
		}
		c.comps.exclude[path] = true
	}
}

// Sensitive marks every tool of the component found at path
// {"sensitive": true}.
func Sensitive(path string) Option {
	return func(c *config) {
		if c.comps.sensitive == nil {
			c.comps.sensitive = map[string]bool{}
		}
		c.comps.sensitive[path] = true
	}
}

// WithAction adds an action to the component named component (its tool
// id, after renames): spec describes the tool and apply performs it on
// the model, on the dispatcher goroutine.
func WithAction(component string, spec ui.ToolSpec, apply func(m tea.Model, args map[string]any) (tea.Model, tea.Cmd, any, error)) Option {
	return func(c *config) {
		if c.comps.actions == nil {
			c.comps.actions = map[string][]extraAction{}
		}
		c.comps.actions[component] = append(c.comps.actions[component], extraAction{spec: spec, apply: apply})
	}
}

// discover walks m and returns every bubbles component in it.
func discover(m tea.Model, cfg *config) []found { return nil }

// componentWidgets returns one widget per component the screen shows.
func componentWidgets(m tea.Model, comps []found, screen string, prev map[string]ui.Widget, cfg *config) []ui.Widget {
	return nil
}

// focusedComponent returns the Name of the focused component, or "".
func focusedComponent(m tea.Model, comps []found) string { return "" }

// apply performs an agent action on the model.
func apply(m tea.Model, comps []found, a applyMsg, step stepFunc, cfg *config) (tea.Model, any, error) {
	return m, nil, nil
}
