package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server/internal/saver"
	"github.com/raxol-ssh/raxol-ssh/store"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// TestDurableHeadlessStartAndStop: the saver's tick is an hour away, so
// what the store holds is what was written at once. When raxol_start
// answers with the token, the session's record (with that token) is in
// the store already; when raxol_stop answers, it is gone: a crash at
// either moment neither loses a session whose token was handed out nor
// brings back one that was stopped.
func TestDurableHeadlessStartAndStop(t *testing.T) {
	t.Parallel()
	keys := writeKeys(t, keyA)
	app := App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, Projections: demo.Projections(),
		ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy(), Snapshots: JSONCodec[demo.Model](1)}
	srv := startHeadlessApp(t, app, Options{DataDir: t.TempDir(), Headless: HeadlessOptions{APIKeysFile: keys},
		Snapshots: SnapshotOptions{Every: time.Hour}})
	p := srv.persist.Load()
	ctl := control(t, srv, keyA)
	for range 3 {
		started := testkit.MustCall(t, ctl, "raxol_start", nil)
		id, token := started["id"].(string), started["token"].(string)
		data, err := p.Store().Get(context.Background(), id)
		if err != nil {
			t.Fatalf("raxol_start answered and the store has no record: %v", err)
		}
		r, err := saver.DecodeRecord(data)
		if err != nil || r.TokenSHA256 != hashOf(token) || r.StartedBy == "" {
			t.Fatalf("raxol_start answered and the record is %+v (%v)", r, err)
		}
		testkit.MustCall(t, ctl, "raxol_stop", map[string]any{"id": id})
		if _, err := p.Store().Get(context.Background(), id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("raxol_stop answered and the store still has the record: %v", err)
		}
	}
}
