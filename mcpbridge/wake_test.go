package mcpbridge

import (
	"context"
	"net/http/httptest"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// fields is an app whose tree grows: a text input per field.
type fields struct{ N int }

type addField struct{}

func (f fields) Init() tea.Cmd { return nil }
func (f fields) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if _, ok := msg.(addField); ok {
		f.N++
	}
	return f, nil
}
func (f fields) View() ui.Node {
	var items []ui.Node
	for i := range f.N {
		items = append(items, ui.TextInput{ID: "f" + strconv.Itoa(i), Label: "Field"})
	}
	return ui.Column{Items: items}
}

// watcherGoroutines counts the goroutines of sessions' watchers: those
// taking a turn (resync), and the one a session held for its lifetime
// before (watch).
func watcherGoroutines(t *testing.T) int {
	t.Helper()
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	return strings.Count(b.String(), "mcpbridge.(*sessionServer).resync(") + strings.Count(b.String(), "mcpbridge.(*sessionServer).watch(")
}

// TestQuietSessionHoldsNoWatcher: a session with an agent attached holds
// no goroutine of its watcher while nothing changes, and every change is
// still re-projected: a snapshot that adds a widget reaches the agent as
// tools/list_changed and a new tool, and a rotated token disconnects it.
func TestQuietSessionHoldsNoWatcher(t *testing.T) {
	mgr := session.NewManager(nil)
	b := newBridge(mgr, Options{Namespace: "app"})
	srv := httptest.NewServer(b)
	t.Cleanup(func() {
		b.Close()
		srv.Close()
		mgr.Close()
	})
	se, ok, err := mgr.Start("app", session.Owner{User: "u"}, fields{N: 1}, 0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	var listChanged atomic.Int32
	c := mcp.NewClient(&mcp.Implementation{Name: "quiet", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged.Add(1) },
	})
	cs := connectAgent(t, c, srv.URL, se)
	t.Cleanup(func() { _ = cs.Close() })
	quiet := func(when string) {
		t.Helper()
		testkit.Eventually(t, 5*time.Second, func() bool { return watcherGoroutines(t) == 0 }, "a goroutine of the watcher still runs %s", when)
	}
	quiet("once the agent attached")

	// A snapshot with a new widget: its tools are registered and listed.
	if err := se.Dispatcher.Send(dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "t"}, addField{}); err != nil {
		t.Fatal(err)
	}
	has := func(name string) bool {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.Name == name {
				return true
			}
		}
		return false
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return has("app.f1.type_into") }, "the new widget's tool is not listed")
	testkit.Eventually(t, 5*time.Second, func() bool { return listChanged.Load() > 0 }, "no tools/list_changed for the new widget")
	quiet("after the change")

	// The human rotates the token: the agent that used the old one is
	// disconnected.
	if _, err := se.RotateToken(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return b.Clients(se.ID) == 0 }, "the agent is still attached after the token was rotated")
	quiet("after the rotation")
}
