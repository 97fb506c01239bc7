package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// increment is the message the counter's button sends.
type increment struct{}

// counter is the smallest useful app: a count and a button.
type counter struct{ n int }

func (c counter) Init() tea.Cmd { return nil }

func (c counter) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if _, ok := msg.(increment); ok {
		c.n++
	}
	return c, nil
}

func (c counter) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.Text{Text: fmt.Sprintf("count: %d", c.n)},
		ui.Button{ID: "inc", Label: "+1", OnClick: increment{}},
	}}
}

// Serve an app over SSH. A real main would call srv.Run with a context
// canceled on SIGINT/SIGTERM; this example starts, connects nobody, and
// drains at once.
func Example() {
	dir, err := os.MkdirTemp("", "raxol-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// Agents reach the app over MCP only under a policy someone chose:
	// here its own reads and clicks, and every read method.
	tools, err := authz.Allowlist([]string{"counter.*.*", "raxol_screenshot", "discover_tools"})
	if err != nil {
		panic(err)
	}
	srv, err := server.New(
		server.App{
			Name:       "counter",
			New:        func(ui.Identity) ui.Model { return counter{} },
			ToolPolicy: tools,
			ReadPolicy: authz.AllowAll(),
		},
		server.Options{SSH: server.SSHOptions{Addr: "127.0.0.1:0"}, MCP: server.MCPOptions{Addr: "127.0.0.1:0"}, DataDir: dir, // the host key lives here
			Logger: slog.New(slog.DiscardHandler),
		},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := srv.Start(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sessions:", srv.Sessions().Count())
	if err := srv.Shutdown(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: sessions: 0
}
