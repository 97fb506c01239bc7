// Package server serves an app over SSH, one live session per login, with
// each session's MCP endpoints for agents, metrics and health over HTTP.
// It is the library; cmd/raxol-ssh is one program built on it.
//
// What flows in: an [App] (a name, a constructor of fresh models given the
// session's [ui.Identity], optional projections and policies, an optional
// [SnapshotCodec] that lets its sessions survive a restart) and
// [Options], nested by concern (SSH, MCP, Headless, Limits) with every
// zero value documented and every default an exported constant. What
// flows out: SSH and HTTP served on the options' addresses
// ([Server.ListenAndServe]), on listeners the caller owns ([Server.Serve],
// [Server.StartOn]), or mounted into the caller's own servers
// ([Server.Middleware] for wish, [Server.Handler] for an http mux); a
// posture log line at start and one line per finished connection;
// Prometheus metrics; saved sessions in a store (a bbolt file under
// Options.DataDir, or the cluster's JetStream KV) for an app with a codec;
// and an orderly drain on [Server.Shutdown]. Errors
// about options are [*OptionError]s naming the Go field to set; callers
// branch on [ErrShutdown], [ErrSessionLimit] and [ErrStarted].
//
// An app in a few lines, served with one call:
//
//	type counter struct{ who string; n int }
//
//	func (c counter) Init() tea.Cmd { return nil }
//	func (c counter) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
//		switch msg := msg.(type) {
//		case increment:
//			c.n++
//		case tea.KeyPressMsg: // a key no widget took
//			if msg.String() == "q" {
//				return c, tea.Quit // ends the session
//			}
//		}
//		return c, nil
//	}
//	func (c counter) View() ui.Node {
//		return ui.Column{Items: []ui.Node{
//			ui.Text{Text: fmt.Sprintf("%s's count: %d", c.who, c.n)},
//			ui.Button{ID: "inc", Label: "+1", OnClick: increment{}},
//		}}
//	}
//
//	func main() {
//		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//		defer stop()
//		tools, _ := authz.Allowlist([]string{"counter.*.*", "raxol_screenshot"})
//		err := server.ListenAndServe(ctx, server.App{
//			Name:       "counter",
//			New:        func(id ui.Identity) ui.Model { return counter{who: id.User} },
//			ToolPolicy: tools,             // what agents may call
//			ReadPolicy: authz.AllowAll(), // what agents may read
//		}, server.Options{})
//		if err != nil {
//			log.Fatal(err)
//		}
//	}
//
// Humans log in with `ssh -p 2222 localhost`; ctrl+o shows the session's
// MCP URL and token for an agent. The package example runs this app
// (with free ports) and takes a human's and an agent's turn.
package server

// Names inside the package, one per concept (docs/ARCHITECTURE.md has
// the file by file map):
//   - a session is a session.Session; the lifecycle's record of one is a
//     liveSession (lifecycle.go), the saver's a saveState and the store's
//     a saver.Record (package server/internal/saver, which saving.go
//     makes and plugs in);
//   - one line of the resume picker is a pickerItem, of raxol_list's
//     answer a listItem, for this node's sessions and other nodes' alike;
//   - an SSH channel with a terminal is a conn (conn.go), one terminal
//     of a session a terminal (terminal.go), the /mcp endpoint a
//     controlEndpoint (control.go), a browser let into a session a
//     viewGrant (webview.go);
//   - why a connection ends is an endReason: the outcome counted and the
//     line the client is told, the cause its context is cancelled with
//     (conn.end, first cause wins) and read back with context.Cause
//     (conn.ended); the reasons given in more than one place are
//     sentinels in errors.go;
//   - being a node of a cluster is a clusterNode (cluster.go): the
//     membership, a clusternode.Node (package
//     server/internal/clusternode), with the cluster's /mcp and SSH
//     bridges, which are made of this package's types and stay here
//     (cluster_mcp.go, cluster_ssh.go);
//   - what single-node code asks about other nodes is an interface with
//     a single-node default: sshElsewhere (sshAlone), others (alone),
//     httpElsewhere (httpAlone), saver.Home (saver.Standalone); the
//     cluster node supplies the other implementation (clusterPeers,
//     sshPeers, clusterNode, clusternode.Node).
