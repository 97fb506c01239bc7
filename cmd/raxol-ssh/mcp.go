package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/server"
)

// runMCP is `raxol-ssh mcp --stdio [flags]`: the demo runs headless in one
// session whose MCP server speaks on standard input and output (t, or
// mcp.StdioTransport when nil), so that a local agent spawns it like any
// stdio MCP server. Logs go to stderr only: stdout carries the protocol.
// Every flag of the server applies; with --ssh-addr given on the command
// line the same process also serves SSH (and HTTP on --http-addr), and a
// human joins that very session with the join command and the one-time
// code printed on stderr. It returns when the client closes stdin or ctx
// is done.
func runMCP(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, t mcp.Transport) int {
	var stdio bool
	var fs *flag.FlagSet
	opts, logCfg, err := parse(args, getenv, stderr, func(f *flag.FlagSet) {
		fs = f
		f.BoolVar(&stdio, "stdio", false, "mcp: serve one headless session's MCP server on stdin/stdout")
	})
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil && !stdio {
		err = errors.New("mcp: pass --stdio (the only transport of this subcommand; HTTP agents use the server's endpoints)")
	}
	if err != nil {
		fmt.Fprintln(stderr, "raxol-ssh:", err)
		return 2
	}
	withSSH := false
	fs.Visit(func(f *flag.Flag) { withSSH = withSSH || f.Name == "ssh-addr" })
	opts.Logger = newLogger(stderr, logCfg)
	if t == nil {
		t = &mcp.StdioTransport{}
	}
	err = server.ServeStdio(ctx, demoApp(), opts, t, withSSH, func(s server.StdioSession) {
		fmt.Fprintf(stderr, "raxol-ssh mcp: serving session %s on stdio\n", s.ID)
		if s.JoinCommand != "" {
			fmt.Fprintf(stderr, "raxol-ssh mcp: a human joins with: %s\n", s.JoinCommand)
			fmt.Fprintf(stderr, "raxol-ssh mcp: join code (once): %s\n", s.JoinCode)
		}
	})
	if err != nil {
		fmt.Fprintln(stderr, "raxol-ssh:", err)
		return 1
	}
	return 0
}
