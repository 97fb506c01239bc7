package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// TestSnapshotHeadlessSessionSurvivesRestart: a session raxol_start
// started comes back after a restart as its API key's: raxol_list lists
// it, its agent's token works, raxol_stop ends it and its snapshot goes.
func TestSnapshotHeadlessSessionSurvivesRestart(t *testing.T) {
	dir, keys := t.TempDir(), writeKeys(t, keyA, keyB)
	app := App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, Projections: demo.Projections(),
		ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy(), Snapshots: JSONCodec[demo.Model](1)}
	start := func() *Server {
		return startHeadlessApp(t, app, Options{DataDir: dir, Headless: HeadlessOptions{APIKeysFile: keys}})
	}
	srv := start()
	started := testkit.MustCall(t, control(t, srv, keyA), "raxol_start", nil)
	id, token := started["id"].(string), started["token"].(string)
	ag := dial(t, started["mcp_url"].(string), token, "worker")
	testkit.MustCall(t, ag, "demo.search.type_into", map[string]any{"text": "headless-work"})
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	srv = start()
	list := testkit.MustCall(t, control(t, srv, keyA), "raxol_list", nil)
	if got := fmt.Sprint(list["sessions"]); !containsID(list, id) {
		t.Fatalf("raxol_list after the restart: %s", got)
	}
	if containsID(testkit.MustCall(t, control(t, srv, keyB), "raxol_list", nil), id) {
		t.Fatal("another API key lists the restored session")
	}
	ag = dial(t, "http://"+srv.HTTPAddr()+"/sessions/"+id+"/mcp", token, "worker")
	if got := testkit.MustCall(t, ag, "demo.search.get_value", nil); fmt.Sprint(got["result"]) != "map[value:headless-work]" {
		t.Fatalf("search after the restart: %v", got)
	}
	testkit.MustCall(t, control(t, srv, keyA), "raxol_stop", map[string]any{"id": id})
	if srv.persist.Load().IsTracked(id) {
		t.Fatal("the saver still tracks the stopped session")
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv = start()
	if n := srv.sessions.Count(); n != 0 {
		t.Fatalf("%d sessions after a restart; the stopped one came back", n)
	}
}

func containsID(list map[string]any, id string) bool {
	ss, _ := list["sessions"].([]any)
	for _, s := range ss {
		if m, ok := s.(map[string]any); ok && m["id"] == id {
			return true
		}
	}
	return false
}
