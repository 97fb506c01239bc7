// Command checklist serves a checklist over SSH: everyone in a session
// (its owner, humans who join it, agents over MCP) ticks off the same
// items. See docs/EMBEDDING.md. Run it, then: ssh -p 2222 localhost
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Name is the app's name and the namespace of its tools, which widget ids
// name: checklist.<id>.<action>. An item's checkbox has the item's id.
const (
	Name        = "checklist"
	IDNew       = "new_item"
	IDAdd       = "add"
	IDClearDone = "clear_done"
)

// Messages of the buttons.
type addClicked struct{}
type clearClicked struct{}

// Item is one line of the checklist.
type Item struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Done bool   `json:"done"`
}

// Model is the checklist. Update returns a changed copy and never changes
// a slice an earlier copy holds.
type Model struct {
	user  string
	items []Item
	draft string // the text of the new item's field
	next  int    // the number of the next item's id
	help  bool
}

// New returns a session's checklist, greeting whoever started it. ui.Text
// draws its text as given: drop what a terminal would act on from the name.
func New(id ui.Identity) ui.Model {
	m := Model{user: strings.Join(strings.FieldsFunc(id.User, func(r rune) bool { return !unicode.IsPrint(r) }), "")}
	return m.add("Read docs/EMBEDDING.md").add("Attach an agent (ctrl+o)")
}

// add appends an item, unless text is blank, and empties the field.
func (m Model) add(text string) Model {
	if text = strings.TrimSpace(text); text != "" {
		m.next++
		m.items = append(slices.Clip(m.items), Item{ID: fmt.Sprintf("item_%d", m.next), Text: text})
	}
	m.draft = ""
	return m
}

func (m Model) Init() tea.Cmd { return nil }

func (m Model) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ui.TextInputChanged:
		if msg.ID == IDNew {
			m.draft = msg.Text
		}
	case ui.CheckboxToggled:
		m.items = slices.Clone(m.items)
		if i := slices.IndexFunc(m.items, func(it Item) bool { return it.ID == msg.ID }); i >= 0 {
			m.items[i].Done = msg.Checked
		}
	case clearClicked:
		m.items = slices.DeleteFunc(slices.Clone(m.items), func(it Item) bool { return it.Done })
	case addClicked:
		m = m.add(m.draft)
	case tea.KeyPressMsg:
		// Keys no widget takes come here: shortcuts of the whole app.
		switch msg.String() {
		case "?":
			m.help = !m.help
		case "enter": // the text field takes no Enter
			m = m.add(m.draft)
		}
	}
	return m, nil
}

func (m Model) View() ui.Node {
	rows := []ui.Node{ui.Text{Text: "checklist for " + m.user, Bold: true}}
	done := 0
	for _, it := range m.items {
		rows = append(rows, ui.Checkbox{ID: it.ID, Label: it.Text, Checked: it.Done})
		if it.Done {
			done++
		}
	}
	rows = append(rows,
		ui.TextInput{ID: IDNew, Label: "New item", Value: m.draft, Placeholder: "type, then Enter", MaxLen: 200},
		ui.Row{Items: []ui.Node{
			ui.Button{ID: IDAdd, Label: "Add", OnClick: addClicked{}, Disabled: strings.TrimSpace(m.draft) == ""},
			ui.Button{ID: IDClearDone, Label: fmt.Sprintf("Clear done (%d)", done), OnClick: clearClicked{}, Disabled: done == 0},
		}},
		ui.Text{Text: fmt.Sprintf("%d of %d done · ? help", done, len(m.items)), Faint: true})
	if m.help {
		rows = append(rows, ui.Text{Text: "tab moves · space ticks · enter in the field adds · ? hides this help"})
	}
	return ui.Column{Items: rows}
}

// App is the checklist as a server serves it; agents read its items as
// checklist://state/items. Its tool policy is the demo's: its own tools,
// the screenshot and discover_tools; pressing keys in a human's terminal
// is asked of that human. Every read is allowed.
func App() server.App {
	tools, err := authz.Rules([]authz.Rule{
		{Match: "raxol_send_key", Decision: authz.KindAsk, Prompt: "Press keys in your terminal?"},
		{Match: Name + ".**", Decision: authz.KindAllow},
		{Match: "raxol_screenshot", Decision: authz.KindAllow},
		{Match: "raxol_show", Decision: authz.KindAllow}, // the live view as an MCP App: read only
		{Match: "raxol_wait_for", Decision: authz.KindAllow},
		{Match: "discover_tools", Decision: authz.KindAllow},
	})
	if err != nil {
		panic(err) // the rules above are valid
	}
	items := func(m ui.Model) any { return append([]Item{}, m.(Model).items...) }
	return server.App{Name: Name, New: New, Projections: map[string]func(ui.Model) any{"items": items},
		ToolPolicy: tools, ReadPolicy: authz.AllowAll()}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Zero Options: SSH on 127.0.0.1:2222, MCP on 127.0.0.1:8080.
	if err := server.ListenAndServe(ctx, App(), server.Options{}); err != nil {
		log.Fatal(err)
	}
}
