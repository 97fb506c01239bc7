package teaapp

import (
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// New serves an unmodified Bubble Tea program: every session gets the
// model newModel returns, folded by the session's dispatcher for every
// terminal and agent, drawn as the program draws it, with typed tools
// for the bubbles components inside it. name is the app's short name (the
// namespace of its tools; see server.App).
//
// The policy it sets allows the components' tools and every read, and
// asks the human before an agent presses raw keys (raxol_send_key) or
// calls a sensitive component's tools (a password input); an operator's
// settings (server.Options.MCP) replace it, and WithoutPolicy leaves it
// to them.
func New(name string, newModel func(ui.Identity) tea.Model, opts ...Option) server.App {
	cfg := &config{host: defaultHostOptions()}
	for _, o := range opts {
		o(cfg)
	}
	app := server.App{
		Name: name,
		New: func(id ui.Identity) ui.Model {
			return newModelFor(id, newModel(id), cfg)
		},
	}
	if !cfg.host.noPolicy {
		app.ToolPolicy = cfg.toolPolicy(name)
		app.ReadPolicy = authz.AllowAll()
	}
	if cfg.codec != nil {
		app.Snapshots = cfg.codec(cfg)
	}
	return app
}

// newModelFor wraps inner, which must not be nil.
func newModelFor(id ui.Identity, inner tea.Model, cfg *config) ui.Model {
	if inner == nil {
		panic("teaapp: newModel returned a nil tea.Model")
	}
	return newModel(id, inner, cfg)
}

// WithoutPolicy sets no policy of the app's own: the operator's settings
// (server.Options.MCP, the command's flags) decide alone.
func WithoutPolicy() Option { return func(c *config) { c.host.noPolicy = true } }

// AllowKeys lets agents press raw keys (raxol_send_key) without asking
// the human, under the app's own policy.
func AllowKeys() Option { return func(c *config) { c.host.askKeys = false } }

// toolPolicy is the app's default tool policy (see New).
func (c *config) toolPolicy(app string) authz.Func {
	prefix := app + "."
	return func(name string, _ map[string]any, _ authz.Context) authz.Decision {
		if name == "raxol_send_key" && c.host.askKeys {
			return authz.Ask("press keys in the program")
		}
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			comp, _, _ := strings.Cut(rest, ".")
			if _, sensitive := c.sensitive.Load(comp); sensitive {
				return authz.Ask("use " + comp + ", which holds a secret")
			}
		}
		return authz.Allow()
	}
}

// Snapshots saves and restores the sessions of a program whose model
// marshals as JSON (M is the model's type, as newModel returns it; give
// it MarshalJSON and UnmarshalJSON to carry unexported state): they then
// survive a restart of the server (see server.SnapshotCodec). version is
// saved with every snapshot; change it when the model's JSON changes, and
// snapshots of another version are refused. Without it a hosted
// program's sessions end with the server.
func Snapshots[M tea.Model](version int) Option {
	return func(c *config) {
		c.codec = func(cfg *config) *server.SnapshotCodec {
			return &server.SnapshotCodec{
				Version: version,
				Encode: func(m ui.Model) ([]byte, error) {
					hm, ok := m.(model)
					if !ok {
						return nil, fmt.Errorf("teaapp: encode a %T: not a hosted program", m)
					}
					return json.Marshal(hm.inner)
				},
				Decode: func(v int, data []byte) (ui.Model, error) {
					if v != version {
						return nil, fmt.Errorf("teaapp: a snapshot of version %d, this program's is %d", v, version)
					}
					var inner M
					if err := json.Unmarshal(data, &inner); err != nil {
						return nil, fmt.Errorf("teaapp: decode the program's model: %w", err)
					}
					var im tea.Model = inner
					if im == nil {
						return nil, fmt.Errorf("teaapp: decode the program's model: null")
					}
					return newModel(ui.Identity{Headless: true}, im, cfg), nil
				},
			}
		}
	}
}
