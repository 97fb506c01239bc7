package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// TestContextResourcePartsAndPatches: every part of raxol://session/context
// is there and follows the session, through patches that take the last
// content to the new one: the session, who is attached, the human's
// attention, the control mode, the lens, the model, the widgets in the
// lens, recent widgets, activity, and the pending notifications (approval
// prompts and join requests waiting for the human, which leave the context
// once answered).
func TestContextResourcePartsAndPatches(t *testing.T) {
	e := newEnv(t)
	cs, n := e.connect(false)
	ctx := context.Background()
	read := func() []byte {
		t.Helper()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpbridge.URIContext})
		if err != nil {
			t.Fatal(err)
		}
		return []byte(res.Contents[0].Text)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: mcpbridge.URIContext}); err != nil {
		t.Fatal(err)
	}
	doc := read()
	var top map[string]any
	if err := json.Unmarshal(doc, &top); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"session", "attached", "attention", "control", "lens", "model", "widgets", "recent", "activity", "pending"} {
		if _, ok := top[part]; !ok {
			t.Errorf("context has no %q: %s", part, doc)
		}
	}
	seen := 0
	// expect applies the context's updates until the content at path
	// satisfies ok, checking that each patch applies to what came before.
	expect := func(what, path string, ok func(v any) bool) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			var v any
			_ = json.Unmarshal(doc, &v)
			if got, found := pointer(v, path); found && ok(got) {
				return
			}
			select {
			case <-n.updateCh:
			case <-deadline:
				t.Fatalf("%s: %s never changed as expected; context now %s", what, path, doc)
			}
			n.mu.Lock()
			upds := n.updates[seen:]
			seen = len(n.updates)
			n.mu.Unlock()
			for _, u := range upds {
				if u.URI != mcpbridge.URIContext {
					continue
				}
				raw, _ := json.Marshal(u.Meta["patch"])
				p, err := jsonpatch.DecodePatch(raw)
				if err != nil {
					t.Fatalf("%s: patch %s: %v", what, raw, err)
				}
				if doc, err = p.Apply(doc); err != nil {
					t.Fatalf("%s: patch %s does not apply: %v", what, raw, err)
				}
			}
		}
	}
	has := func(s string) func(any) bool { return func(v any) bool { return strings.Contains(fmt.Sprint(v), s) } }

	before := top["session"].(map[string]any)["version"]
	call(t, cs, "app.name.type_into", map[string]any{"text": "Ada"})
	expect("model", "/model/form/Name", func(v any) bool { return v == "Ada" })
	expect("session version", "/session/version", func(v any) bool { return v != before })
	expect("recent", "/recent", has("name"))
	e.session.SetAttention(session.Attention{Focus: "agree"})
	expect("attention", "/attention/focus", func(v any) bool { return v == "agree" })
	expect("lens", "/lens/advertised", has("app.agree.toggle"))
	expect("widgets", "/widgets", has("agree"))
	e.session.SetControl(session.Control{Paused: true})
	expect("control", "/control/paused", func(v any) bool { return v == true })
	e.session.Record(session.Action{Origin: "human:h", Widget: "go", Action: "click", Summary: "clicked Go", Outcome: "ok"})
	expect("activity", "/activity", has("clicked Go"))
	_, detach := e.session.Attach(session.KindTerminal, "grace")
	expect("attached", "/attached", has("grace"))
	detach()
	expect("detached", "/attached", func(v any) bool { return !strings.Contains(fmt.Sprint(v), "grace") })

	// Pending notifications: a prompt waiting for the human is listed
	// with its tool, asking agent and since when; it leaves once answered.
	answer := make(chan session.Approval)
	e.session.SetApprovalSink(func(ctx context.Context, _ session.ApprovalRequest) (session.Approval, error) {
		select {
		case a := <-answer:
			return a, nil
		case <-ctx.Done():
			return session.Refused, ctx.Err()
		}
	})
	joined := make(chan session.JoinAnswer)
	e.session.SetJoinSink(func(ctx context.Context, _ session.JoinRequest) (session.JoinAnswer, error) {
		select {
		case a := <-joined:
			return a, nil
		case <-ctx.Done():
			return session.JoinRefused, ctx.Err()
		}
	})
	go func() {
		_, _ = e.session.RequestApproval(ctx, session.ApprovalRequest{ID: "a1", Agent: "claude 1", Tool: "app.go.click"})
	}()
	expect("pending approval", "/pending/approvals", func(v any) bool {
		l, _ := v.([]any)
		if len(l) != 1 {
			return false
		}
		m := l[0].(map[string]any)
		return m["tool"] == "app.go.click" && m["agent"] == "claude 1" && m["since"] != ""
	})
	go func() {
		_, _ = e.session.RequestJoin(ctx, session.JoinRequest{ID: "j1", User: "bob"})
	}()
	expect("pending join", "/pending/joins", func(v any) bool {
		l, _ := v.([]any)
		return len(l) == 1 && l[0].(map[string]any)["user"] == "bob"
	})
	answer <- session.ApprovedOnce
	expect("approval answered", "/pending/approvals", func(v any) bool { l, _ := v.([]any); return len(l) == 0 })
	joined <- session.JoinAsObserver
	expect("join answered", "/pending/joins", func(v any) bool { l, _ := v.([]any); return len(l) == 0 })

	// What the patches built is what a read returns.
	if now := read(); !jsonpatch.Equal(doc, now) {
		t.Fatalf("patched context %s\n!= read %s", doc, now)
	}
}

// pointer resolves an RFC 6901 JSON pointer in v.
func pointer(v any, path string) (any, bool) {
	for _, tok := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return v, true
}
