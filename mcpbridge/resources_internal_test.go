package mcpbridge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

type note struct{ Text string }

func (n note) Init() tea.Cmd { return nil }
func (n note) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if m, ok := msg.(ui.TextInputChanged); ok {
		n.Text = m.Text
	}
	return n, nil
}
func (n note) View() ui.Node { return ui.TextInput{ID: "text", Label: "Text", Value: n.Text} }

// TestSubscriptionsBelongToClients: a client's subscriptions are counted
// once however often it subscribes, and end with the client, so a
// resource nobody follows any more is no longer diffed on every change.
func TestSubscriptionsBelongToClients(t *testing.T) {
	mgr := session.NewManager(nil)
	b := newBridge(mgr, Options{Namespace: "app"})
	srv := httptest.NewServer(b)
	se, ok, err := mgr.Start("app", session.Owner{User: "u"}, note{}, 0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	t.Cleanup(func() {
		b.Close()
		srv.Close()
		mgr.Close()
	})
	subscribed := func(uri string) int {
		c := b.sessionServer(se)
		c.res.mu.Lock()
		defer c.res.mu.Unlock()
		return len(c.res.subs[uri])
	}
	connect := func() *mcp.ClientSession {
		return connectAgent(t, mcp.NewClient(&mcp.Implementation{Name: "sub", Version: "1"}, nil), srv.URL, se)
	}
	const uri = "raxol://session/tree"
	ctx := context.Background()
	a, c := connect(), connect()
	defer c.Close()
	for range 3 {
		if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if n := subscribed(uri); n != 2 {
		t.Fatalf("%d subscribers after one client subscribed three times and another once, want 2", n)
	}
	// Unsubscribing once ends that client's subscription.
	if err := c.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if n := subscribed(uri); n != 1 {
		t.Fatalf("%d subscribers after one unsubscribed, want 1", n)
	}
	// A client that leaves without unsubscribing takes its subscriptions.
	_ = a.Close()
	testkit.Eventually(t, 5*time.Second, func() bool { return subscribed(uri) == 0 }, "a closed client's subscription is still diffed")
	b.sessionServer(se).res.mu.Lock()
	_, kept := b.sessionServer(se).res.last[uri]
	b.sessionServer(se).res.mu.Unlock()
	if kept {
		t.Fatal("the last content of a resource nobody follows is kept")
	}
}

// jsonValue generates JSON values: objects, arrays and scalars, a few
// levels deep, with keys that need escaping in JSON Pointers.
func jsonValue(depth int) *rapid.Generator[any] {
	scalar := rapid.OneOf(
		rapid.Just[any](nil),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Map(rapid.IntRange(-5, 5), func(i int) any { return float64(i) }),
		rapid.Map(rapid.SampledFrom([]string{"", "a", "b", "bill", "ünï", "x/y", "t~1"}), func(s string) any { return s }),
	)
	if depth == 0 {
		return scalar
	}
	// No empty key: its pointers ("//-") are right, but the patch library
	// that checks them mishandles them.
	key := rapid.SampledFrom([]string{"a", "b", "c", "a/b", "m~n"})
	return rapid.OneOf(
		scalar,
		rapid.Map(rapid.SliceOfN(jsonValue(depth-1), 0, 5), func(s []any) any { return s }),
		rapid.Map(rapid.MapOfN(key, jsonValue(depth-1), 0, 4), func(m map[string]any) any { return m }),
	)
}

// jsonDocument generates what a resource holds: an object or an array.
func jsonDocument() *rapid.Generator[any] {
	key := rapid.SampledFrom([]string{"a", "b", "c", "a/b", "m~n"})
	return rapid.OneOf(
		rapid.Map(rapid.SliceOfN(jsonValue(2), 0, 6), func(s []any) any { return s }),
		rapid.Map(rapid.MapOfN(key, jsonValue(2), 0, 5), func(m map[string]any) any { return m }),
	)
}

// TestPatchesTakeTheOldContentToTheNew: for any two documents, the patch
// a subscriber gets, applied to the content it had, gives the new content.
func TestPatchesTakeTheOldContentToTheNew(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, _ := json.Marshal(jsonDocument().Draw(t, "old"))
		b, _ := json.Marshal(jsonDocument().Draw(t, "new"))
		p, err := diff(a, b, "application/json")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(p)
		patch, err := jsonpatch.DecodePatch(raw)
		if err != nil {
			t.Fatalf("patch %s: %v", raw, err)
		}
		got, err := patch.ApplyWithOptions(a, &jsonpatch.ApplyOptions{AllowMissingPathOnRemove: false, EnsurePathExistsOnAdd: false})
		if err != nil {
			t.Fatalf("apply %s to %s: %v", raw, a, err)
		}
		var gotV, wantV any
		if err := json.Unmarshal(got, &gotV); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(b, &wantV)
		if !reflect.DeepEqual(gotV, wantV) {
			t.Fatalf("%s applied to %s gives %s, want %s", raw, a, got, b)
		}
	})
}

// connectAgent connects c to se's MCP endpoint on the server at base over
// Streamable HTTP, with the session's token.
func connectAgent(t *testing.T, c *mcp.Client, base string, se *session.Session) *mcp.ClientSession {
	t.Helper()
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   base + "/sessions/" + se.ID + "/mcp",
		HTTPClient: &http.Client{Transport: testkit.Bearer(nil, se.Token())},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
