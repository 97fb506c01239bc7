package mcpbridge_test

import (
	"encoding/json"
	"strings"
	"testing"

	"charm.land/bubbles/v2/list"
	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/teaapp"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Paths of issue 24's first class that TestNoAnswerCarriesWhatTheReadPolicyHides
// does not take: the session tools it leaves out (raxol_screenshot,
// raxol_wait_for, raxol_show) and the MCP App's resource under a policy
// that allows only tools/list, and the error a hosted program's
// component answers when the fold did not make the change (not_applied),
// whose text is the component's state as much as a tool_error's is.

// noteList is an unmodified Bubble Tea program whose list holds the
// secret in two items' labels.
type noteList struct{ list list.Model }

type noteItem string

func (i noteItem) FilterValue() string { return string(i) }
func (i noteItem) Title() string       { return string(i) }
func (i noteItem) Description() string { return "" }

func newNoteList() tea.Model {
	items := []list.Item{noteItem("plain"), noteItem(secret + "-first"), noteItem(secret + "-second")}
	l := list.New(items, list.NewDefaultDelegate(), 60, 20)
	l.Title = "Notes"
	return noteList{list: l}
}

func (m noteList) Init() tea.Cmd { return nil }

func (m noteList) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	m.list, cmd = m.list.Update(msg)
	return m, cmd
}

func (m noteList) View() tea.View { return tea.NewView(m.list.View()) }

// TestNotAppliedErrorsFollowTheTreeRead: a hosted program's list asked to
// select by a label that matches several items answers not_applied with
// the items' labels, its state; a client that may not read the tree gets
// the error without that text, one that may gets it whole.
func TestNotAppliedErrorsFollowTheTreeRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reads []string
		see   bool
	}{
		{"tools/list only", []string{"tools/list"}, false},
		{"every read", authz.ReadMethods(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := teaapp.New("notes", func(ui.Identity) tea.Model { return newNoteList() })
			srv, _, se := realServer(t, app, server.MCPOptions{AllowedTools: []string{"**"}, AllowedReads: tc.reads}, secret)
			for _, sse := range []bool{false, true} {
				a := connectAgent(t, srv, se, sse)
				text, out, isErr := a.call("notes.list.select", map[string]any{"label": "private-note"})
				if !isErr || out["error"] != mcpbridge.ErrKindNotApplied {
					t.Fatalf("sse=%v: select by an ambiguous label = %s, want not_applied", sse, text)
				}
				if strings.Contains(text, secret) != tc.see {
					t.Fatalf("sse=%v: the not_applied error carries the items' labels: %v, want %v: %s", sse, !tc.see, tc.see, text)
				}
				if !tc.see && !strings.Contains(text, "withheld") {
					t.Fatalf("sse=%v: the error does not say its reason was withheld: %s", sse, text)
				}
			}
		})
	}
}

// TestSessionToolsAndTheAppViewUnderToolsListOnly: under a read policy
// that allows only tools/list, raxol_screenshot, raxol_wait_for and
// raxol_show answer nothing of the screen or the tree (the note is on
// both), and the MCP App's resource (a page that holds no session state)
// is refused like every resource; with every read allowed the tools
// carry the note.
func TestSessionToolsAndTheAppViewUnderToolsListOnly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reads []string
		see   bool
	}{
		{"tools/list only", []string{"tools/list"}, false},
		{"every read", authz.ReadMethods(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _, se := realServer(t, noteServerApp(), server.MCPOptions{AllowedTools: []string{"**"}, AllowedReads: tc.reads}, secret)
			for _, sse := range []bool{false, true} {
				a := connectAgent(t, srv, se, sse)
				for _, c := range []struct {
					tool string
					args map[string]any
				}{
					{mcpbridge.ToolScreenshot, nil},
					// A text on the screen: the answer says whether it matched.
					{mcpbridge.ToolWaitFor, map[string]any{"text": secret, "timeout_ms": 100}},
					{mcpbridge.ToolShow, nil},
				} {
					res, err := a.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
					if err != nil {
						t.Fatalf("sse=%v %s: %v", sse, c.tool, err)
					}
					b, _ := json.Marshal(res)
					text := string(b)
					if strings.Contains(text, secret) != tc.see {
						t.Errorf("sse=%v %s: carries the note %v, want %v: %s", sse, c.tool, !tc.see, tc.see, text)
					}
					if !tc.see && strings.Contains(text, `"matched":true`) {
						t.Errorf("sse=%v %s: says what the screen holds: %s", sse, c.tool, text)
					}
				}
				_, err := a.read(mcpbridge.URIView)
				if tc.see != (err == nil) || (err != nil && !isReadDenied(err)) {
					t.Errorf("sse=%v: read %s: %v", sse, mcpbridge.URIView, err)
				}
			}
		})
	}
}
