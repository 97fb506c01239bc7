package teaapp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// benchProgram is a small program of the kind people bring: a text input
// above a list whose highlight Tab moves (cmd/raxol-load's teaFloorModel).
type benchProgram struct {
	search textinput.Model
	focus  int
}

var benchItems = []string{"Search", "Services", "Restart", "Notes", "Settings", "Help"}

func (m benchProgram) Init() tea.Cmd { return nil }
func (m benchProgram) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "tab" {
		m.focus = (m.focus + 1) % len(benchItems)
	}
	var cmd tea.Cmd
	m.search, cmd = m.search.Update(msg)
	return m, cmd
}
func (m benchProgram) View() tea.View {
	var b strings.Builder
	b.WriteString(m.search.View() + "\n\n")
	for i, it := range benchItems {
		mark := "  "
		if i == m.focus {
			mark = "> "
		}
		fmt.Fprintf(&b, "%s\x1b[1m%s\x1b[0m\n", mark, it)
	}
	return tea.NewView(b.String())
}

// BenchmarkHostedKey is one key a human presses in a hosted program: the
// fold, the program's Update and View, and the host's screen and
// components (what a keystroke costs the session beyond the program).
func BenchmarkHostedKey(b *testing.B) {
	ti := textinput.New()
	ti.Prompt = "search: "
	cfg := &config{host: defaultHostOptions()}
	d := dispatcher.New(newModel(ui.Identity{Headless: true}, benchProgram{search: ti}, cfg), nil)
	defer d.Close()
	o := dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "b"}
	tab := tea.KeyPressMsg{Code: tea.KeyTab}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Call(ctx, o, tab); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareKey is the same key folded into the program directly:
// what a tea.Program's own Update and View cost, the floor of the above.
func BenchmarkBareKey(b *testing.B) {
	ti := textinput.New()
	ti.Prompt = "search: "
	var m tea.Model = benchProgram{search: ti}
	tab := tea.KeyPressMsg{Code: tea.KeyTab}
	b.ReportAllocs()
	for b.Loop() {
		m, _ = m.Update(tab)
		_ = m.View()
	}
}
