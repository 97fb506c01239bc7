package mcpbridge

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// sharedDefs is every definition a session's server is made with that is
// built once per process and shared by all sessions, as JSON.
func sharedDefs(t *testing.T) string {
	t.Helper()
	st, av := sessionToolDefs(), appViewDefs()
	b, err := json.Marshal(map[string]any{
		"tools":        []*mcp.Tool{st.screenshot, st.waitFor, st.sendKey, st.discover, av.show},
		"view":         av.resource,
		"viewContents": av.contents,
		"resources":    sessionResources(),
		"projection":   projectionResource("app", "note"),
		"capabilities": serverCapabilities(),
		"versions":     sessionProtocolVersions(),
		"impl":         implementation("dev"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSessionDefinitionsAreSharedAndUnchanged: two sessions' servers
// register the very same session tool, App and resource definitions (one
// per process, not one per session), and nothing an agent does through
// either (list tools, focused marks included, and resources, read the
// App's page, call raxol_show and discover_tools, subscribe) changes
// them; under -race, the two clients doing it at once would show a write
// to a shared definition.
func TestSessionDefinitionsAreSharedAndUnchanged(t *testing.T) {
	mgr := session.NewManager(nil)
	allow := authz.Policy{Tool: authz.AllowAll(), Read: authz.AllowAll(), ToolSource: authz.SourceConfigured, ReadSource: authz.SourceConfigured}
	b := newBridge(mgr, Options{Namespace: "app", Policy: allow, Projections: map[string]func(ui.Model) any{"note": func(m ui.Model) any { return m }}})
	srv := httptest.NewServer(b)
	t.Cleanup(func() {
		b.Close()
		srv.Close()
		mgr.Close()
	})
	before := sharedDefs(t)

	type listed struct {
		mu        sync.Mutex
		tools     map[string]*mcp.Tool
		resources map[string]*mcp.Resource
	}
	var sessions []*session.Session
	var seen []*listed
	var clients []*mcp.ClientSession
	for range 2 {
		se, ok, err := mgr.Start("app", session.Owner{User: "u"}, note{}, 0)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		sessions = append(sessions, se)
		// What is listed, after every middleware of ours (order replaces
		// only the focused widget's tools, derived ones, by marked
		// copies): for the session's own tools and resources, the
		// pointers the SDK was given.
		l := &listed{tools: map[string]*mcp.Tool{}, resources: map[string]*mcp.Resource{}}
		seen = append(seen, l)
		b.sessionServer(se).server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				l.mu.Lock()
				defer l.mu.Unlock()
				switch r := res.(type) {
				case *mcp.ListToolsResult:
					for _, tool := range r.Tools {
						l.tools[tool.Name] = tool
					}
				case *mcp.ListResourcesResult:
					for _, res := range r.Resources {
						l.resources[res.URI] = res
					}
				}
				return res, err
			}
		})
		c := mcp.NewClient(&mcp.Implementation{Name: "shared", Version: "1"}, nil)
		cs := connectAgent(t, c, srv.URL, se)
		t.Cleanup(func() { _ = cs.Close() })
		clients = append(clients, cs)
	}

	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i, cs := range clients {
		// The human focuses the widget: tools/list marks its tools.
		sessions[i].SetAttention(session.Attention{Focus: "text"})
		wg.Go(func() {
			for range 5 {
				if _, err := cs.ListTools(ctx, nil); err != nil {
					errs <- err
				}
				if _, err := cs.ListResources(ctx, nil); err != nil {
					errs <- err
				}
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: URIView}); err != nil {
					errs <- err
				}
				for _, name := range []string{ToolShow, ToolDiscover} {
					if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name}); err != nil || res.IsError {
						errs <- err
					}
				}
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: StateURI("app", "note")}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	st, av := sessionToolDefs(), appViewDefs()
	wantTools := map[string]*mcp.Tool{ToolScreenshot: st.screenshot, ToolWaitFor: st.waitFor, ToolSendKey: st.sendKey, ToolDiscover: st.discover, ToolShow: av.show}
	wantRes := map[string]*mcp.Resource{URIView: av.resource, StateURI("app", "note"): projectionResource("app", "note")}
	for _, r := range sessionResources() {
		wantRes[r.URI] = r
	}
	for i, l := range seen {
		l.mu.Lock()
		for name, want := range wantTools {
			if got := l.tools[name]; got != want {
				t.Errorf("session %d lists %s as %p, not the process's definition %p", i, name, got, want)
			}
		}
		for uri, want := range wantRes {
			if got := l.resources[uri]; got != want {
				t.Errorf("session %d lists %s as %p, not the process's definition %p", i, uri, got, want)
			}
		}
		l.mu.Unlock()
	}
	if after := sharedDefs(t); after != before {
		t.Fatalf("the shared definitions changed:\nbefore %s\nafter  %s", before, after)
	}
}
