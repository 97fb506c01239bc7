package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// readParts are the reads a per-URI policy may grant apart, each the
// governor of some part of the answers.
var readParts = []string{
	mcpbridge.URIScreen, mcpbridge.URITree, mcpbridge.URIContext, mcpbridge.URIActivity,
	"notes://state/notes", "tools/list",
}

// partPolicy is a read policy deciding per URI (and tools/list) from a
// set that the test changes as it goes; deny, when set, refuses those
// reads to one connection alone.
type partPolicy struct {
	allowed atomic.Pointer[map[string]bool]
	mu      sync.Mutex
	deny    map[string]map[string]bool // conn id -> reads refused to it
	refused map[string]int             // conn id + " " + read -> refusals made by deny
}

// refusals is how often deny refused read to conn.
func (p *partPolicy) refusals(conn, read string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused[conn+" "+read]
}

func (p *partPolicy) set(reads map[string]bool) { p.allowed.Store(&reads) }

func (p *partPolicy) denyTo(conn string, reads ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := map[string]bool{}
	for _, r := range reads {
		m[r] = true
	}
	p.deny[conn] = m
}

func (p *partPolicy) decide(method string, args map[string]any, actx authz.Context) authz.Decision {
	read := method
	switch method {
	case "resources/read":
		read, _ = args["uri"].(string)
	case "tools/list":
	default:
		// The methods themselves; what they carry is decided per URI.
		return authz.Allow()
	}
	p.mu.Lock()
	refused := p.deny[actx.ConnID][read]
	if refused {
		if p.refused == nil {
			p.refused = map[string]int{}
		}
		p.refused[actx.ConnID+" "+read]++
	}
	p.mu.Unlock()
	if m := p.allowed.Load(); m != nil && (*m)[read] && !refused {
		return authz.Allow()
	}
	return authz.Deny("not " + read)
}

// TestEachPartFollowsItsRead: for every combination of the reads a policy
// may grant apart (screen, tree, context, activity, the model projection,
// tools/list), each answer carries exactly the parts whose read is
// granted: raxol_send_key's screen, raxol_screenshot, a widget's result
// and error text, discover_tools' list, every resource, the context's
// widgets and model; and the context can be subscribed to only when
// every part of it is readable.
func TestEachPartFollowsItsRead(t *testing.T) {
	pol := &partPolicy{deny: map[string]map[string]bool{}}
	pol.set(map[string]bool{})
	srv, _, se := realServer(t, noteServerApp(), server.MCPOptions{ToolAuthorizer: authz.AllowAll(), ReadAuthorizer: pol.decide}, secret)
	a := connectAgent(t, srv, se, false)

	for mask := range 1 << len(readParts) {
		may := map[string]bool{}
		var names []string
		for i, r := range readParts {
			if mask&(1<<i) != 0 {
				may[r] = true
				names = append(names, r)
			}
		}
		pol.set(may)
		where := fmt.Sprintf("reads %v", names)

		text, out, isErr := a.call(mcpbridge.ToolSendKey, map[string]any{"keys": []any{"end"}})
		if isErr || out["pressed"] != float64(1) || may[mcpbridge.URIScreen] != strings.Contains(text, secret) ||
			may[mcpbridge.URIScreen] == withheldPart(out, "screen") {
			t.Fatalf("%s: raxol_send_key = %s", where, text)
		}
		if text, _, isErr := a.call(mcpbridge.ToolScreenshot, nil); isErr == may[mcpbridge.URIScreen] || strings.Contains(text, secret) != may[mcpbridge.URIScreen] {
			t.Fatalf("%s: raxol_screenshot = %s", where, text)
		}
		text, out, isErr = a.call("notes.note.get_value", nil)
		if isErr || may[mcpbridge.URITree] != strings.Contains(text, secret) || may[mcpbridge.URITree] == withheldPart(out, "result") {
			t.Fatalf("%s: get_value = %s", where, text)
		}
		if text, _, isErr := a.call("notes.safe.open", map[string]any{"code": "0"}); !isErr || may[mcpbridge.URITree] != strings.Contains(text, secret) {
			t.Fatalf("%s: a widget's error = %s", where, text)
		}
		text, out, isErr = a.call(mcpbridge.ToolDiscover, nil)
		if isErr || may["tools/list"] != (out["tools"] != nil) || may["tools/list"] == withheldPart(out, "tools") {
			t.Fatalf("%s: discover_tools = %s", where, text)
		}

		for _, uri := range readParts[:5] {
			text, err := a.read(uri)
			if may[uri] != (err == nil) || (err != nil && !isReadDenied(err)) {
				t.Fatalf("%s: read %s: %v", where, uri, err)
			}
			if uri != mcpbridge.URIContext || err != nil {
				continue
			}
			var ctx map[string]any
			if err := json.Unmarshal([]byte(text), &ctx); err != nil {
				t.Fatal(err)
			}
			widgets, _ := ctx["widgets"].([]any)
			model, _ := ctx["model"].(map[string]any)
			w, _ := ctx["withheld"].(map[string]any)
			switch {
			case may[mcpbridge.URITree] != (len(widgets) > 0) || may[mcpbridge.URITree] == (w["widgets"] != nil):
				t.Fatalf("%s: the context's widgets: %s", where, text)
			case may["notes://state/notes"] != (model["notes"] != nil) || may["notes://state/notes"] == (w["model.notes"] != nil):
				t.Fatalf("%s: the context's model: %s", where, text)
			case may[mcpbridge.URIActivity] == (w["activity"] != nil):
				t.Fatalf("%s: the context's activity: %s", where, text)
			case may["tools/list"] == (w["lens.advertised"] != nil):
				t.Fatalf("%s: the context's advertised tools: %s", where, text)
			case strings.Contains(text, secret) != (may[mcpbridge.URITree] || may["notes://state/notes"]):
				t.Fatalf("%s: the context carries the note: %v (tree %v, model %v): %s", where, strings.Contains(text, secret),
					may[mcpbridge.URITree], may["notes://state/notes"], text)
			}
		}

		whole := may[mcpbridge.URIContext] && may[mcpbridge.URITree] && may[mcpbridge.URIActivity] && may["notes://state/notes"]
		err := a.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: mcpbridge.URIContext})
		if whole != (err == nil) || (err != nil && !isReadDenied(err)) {
			t.Fatalf("%s: subscribe to the context: %v", where, err)
		}
		if err == nil {
			if err := a.cs.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: mcpbridge.URIContext}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestContextUpdatesStopWithAnyPart: a client subscribed to the context
// gets no update while the policy refuses it any part of the context (the
// widgets' state, the activity, the model), and gets them again once it
// may read every part; another client that may read all along gets each
// update.
func TestContextUpdatesStopWithAnyPart(t *testing.T) {
	pol := &partPolicy{deny: map[string]map[string]bool{}}
	all := map[string]bool{}
	for _, r := range readParts {
		all[r] = true
	}
	pol.set(all)
	srv, _, se := realServer(t, noteServerApp(), server.MCPOptions{ToolAuthorizer: authz.AllowAll(), ReadAuthorizer: pol.decide}, secret)
	reader := connectAgent(t, srv, se, false)
	victim := connectAgent(t, srv, se, false)
	for _, a := range []*wireAgent{reader, victim} {
		if err := a.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: mcpbridge.URIContext}); err != nil {
			t.Fatal(err)
		}
	}
	for i, part := range []string{mcpbridge.URITree, mcpbridge.URIActivity, "notes://state/notes"} {
		hidden, shown := fmt.Sprintf("HIDDEN-%d", i), fmt.Sprintf("SHOWN-%d", i)
		pol.denyTo(victim.cs.ID(), part)
		before := pol.refusals(victim.cs.ID(), part)
		reader.call("notes.note.type_into", map[string]any{"text": hidden})
		testkit.Eventually(t, 10*time.Second, func() bool { return strings.Contains(reader.received(), hidden) },
			"the reader's context update with %s", hidden)
		// The update is sent to one subscriber after the other, each
		// checked as it is sent: wait until the victim's was refused,
		// not merely the reader's delivered, before the policy changes.
		testkit.Eventually(t, 10*time.Second, func() bool { return pol.refusals(victim.cs.ID(), part) > before },
			"the victim's update with %s refused", hidden)
		pol.denyTo(victim.cs.ID())
		reader.call("notes.note.type_into", map[string]any{"text": shown})
		// Updates reach a client in order: once the later one is there,
		// the earlier one would be too.
		testkit.Eventually(t, 10*time.Second, func() bool { return strings.Contains(victim.received(), shown) },
			"the context update with %s, once every part is readable again", shown)
		if got := victim.received(); strings.Contains(got, hidden) {
			t.Fatalf("a context update reached a client that may not read %s:\n%s", part, got)
		}
	}
}
