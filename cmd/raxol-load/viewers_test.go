package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// A short run of `raxol-load viewers` of each kind against a demo server
// in the test: the owner's keys reach the viewers, and the figures are
// printed.
func TestViewersSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a server and a few viewers")
	}
	srv, err := server.New(server.App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() },
		ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy()}, server.Options{
		SSH:       server.SSHOptions{Addr: "127.0.0.1:0", PromptArming: -1},
		MCP:       server.MCPOptions{Addr: "127.0.0.1:0"},
		DataDir:   t.TempDir(),
		Snapshots: server.SnapshotOptions{Disabled: true},
		Limits:    server.Limits{MaxBrowsersPerSession: 8},
		Logger:    discardLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	for _, kind := range []string{"ssh", "browser"} {
		t.Run(kind, func(t *testing.T) {
			var out bytes.Buffer
			err := runViewers([]string{"--kind", kind, "--n", "2", "--keys", "4", "--every", "300ms", "--settle", "10ms", "--hold", "100ms",
				"--ssh", srv.SSHAddr(), "--metrics", "http://" + srv.HTTPAddr() + "/metrics"}, &out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			s := out.String()
			for _, want := range []string{"memory per viewer: heap_inuse=", "row: per key per viewer:", "type: per key per viewer:", "type: owner's key → viewer's frame: p50="} {
				if !strings.Contains(s, want) {
					t.Errorf("the output lacks %q:\n%s", want, s)
				}
			}
			// Typing in Search changes what every viewer shows: each gets
			// every frame. The row is the owner's terminal's own: a
			// browser shows it, a joiner keeps its own.
			arrived := regexp.MustCompile(`(?m)^(row|type): .* (\d+) of (\d+) frames arrived`)
			ms := arrived.FindAllStringSubmatch(s, -1)
			if len(ms) != 2 {
				t.Fatalf("want the frames that arrived in two phases, row and type:\n%s", s)
			}
			t.Logf("\n%s", s)
			for _, m := range ms {
				all := m[2] == m[3]
				if (m[1] == "type" || kind == "browser") && !all {
					t.Errorf("%s keys: %s of %s frames reached the %s viewers:\n%s", m[1], m[2], m[3], kind, s)
				}
				if m[1] == "row" && kind == "ssh" && m[2] != "0" {
					t.Errorf("row keys: %s frames reached the joiners, which keep their own row:\n%s", m[2], s)
				}
			}
		})
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
