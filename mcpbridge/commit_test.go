package mcpbridge_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestAChangeIsAnsweredOnceCommitted: an agent's change (a widget tool,
// raxol_send_key) is answered only after the session's committer made the
// model as of that change durable (a cluster's snapshot bucket); when the
// committer fails, the change stays applied and the answer is the
// not_saved error, never a success. Reads commit nothing.
func TestAChangeIsAnsweredOnceCommitted(t *testing.T) {
	srv, _, se := realServer(t, noteServerApp(), server.MCPOptions{ToolAuthorizer: authz.AllowAll(), AllowedReads: authz.ReadMethods()}, secret)
	a := connectAgent(t, srv, se, false)

	var mu sync.Mutex
	var committed []uint64
	var fail error
	se.SetCommitter(func(_ context.Context, v uint64) error {
		mu.Lock()
		defer mu.Unlock()
		committed = append(committed, v)
		return fail
	})
	commits := func() []uint64 {
		mu.Lock()
		defer mu.Unlock()
		return append([]uint64(nil), committed...)
	}

	if _, _, isErr := a.call("notes.note.type_into", map[string]any{"text": "kept-1"}); isErr {
		t.Fatal("type_into failed with a committer that succeeds")
	}
	got := commits()
	if len(got) != 1 || got[0] < se.Dispatcher.Snapshot().Version {
		t.Fatalf("commits %v after one change, want one at the version that shows it (now %d)", got, se.Dispatcher.Snapshot().Version)
	}
	if _, _, isErr := a.call("raxol_send_key", map[string]any{"keys": []any{"end"}}); isErr {
		t.Fatal("raxol_send_key failed with a committer that succeeds")
	}
	if n := len(commits()); n != 2 {
		t.Fatalf("%d commits after a change and keys, want 2", n)
	}
	if _, _, isErr := a.call("notes.note.get_value", nil); isErr {
		t.Fatal("get_value failed")
	}
	if n := len(commits()); n != 2 {
		t.Fatalf("a read committed: %d commits, want 2", n)
	}

	mu.Lock()
	fail = errors.New("bucket unreachable")
	mu.Unlock()
	text, out, isErr := a.call("notes.note.type_into", map[string]any{"text": "applied-not-saved"})
	if !isErr || out["error"] != mcpbridge.ErrKindNotSaved || !strings.Contains(text, "bucket unreachable") {
		t.Fatalf("a change whose commit failed answered %s, want the %s error naming the cause", text, mcpbridge.ErrKindNotSaved)
	}
	if _, _, isErr := a.call("raxol_send_key", map[string]any{"keys": []any{"end"}}); !isErr {
		t.Fatal("keys whose commit failed were answered as a success")
	}
	// Applied all the same: the model holds it.
	tree, err := a.read(mcpbridge.URITree)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tree, "applied-not-saved") {
		t.Fatalf("the change whose commit failed is not applied:\n%s", tree)
	}
}
