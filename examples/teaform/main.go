// Command teaform serves a sign-up form of three Bubbles text inputs, an unmodified Bubble Tea program
// (model.go), over SSH with an MCP endpoint for agents: every login gets its
// own program, and the Bubbles components in it become agents' tools. See
// README.md. Run it, then: ssh -p 2222 localhost
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/teaapp"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Name is the app's name, the namespace of its tools.
const Name = "form"

// App is the program as the server serves it.
func App() server.App {
	return teaapp.New(Name, func(ui.Identity) tea.Model { return initialModel() })
}

func main() {
	sshAddr := flag.String("ssh-addr", server.DefaultSSHAddr, "SSH listen address")
	httpAddr := flag.String("http-addr", server.DefaultHTTPAddr, "HTTP listen address of the agents' MCP endpoints")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Where the program ran tea.NewProgram(initialModel()).Run():
	opts := server.Options{SSH: server.SSHOptions{Addr: *sshAddr}, MCP: server.MCPOptions{Addr: *httpAddr}}
	if err := server.ListenAndServe(ctx, App(), opts); err != nil {
		log.Fatal(err)
	}
}
