package main

// A small menu built on the list component from Bubbles: arrows move, Enter
// orders, q leaves.

import (
	"fmt"
	"io"

	"charm.land/bubbles/v2/list"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

var (
	titleStyle    = lipgloss.NewStyle().MarginLeft(2).Bold(true)
	itemStyle     = lipgloss.NewStyle().PaddingLeft(4)
	selectedStyle = lipgloss.NewStyle().PaddingLeft(2).Foreground(lipgloss.Color("212"))
	goodbyeStyle  = lipgloss.NewStyle().Margin(1, 0, 1, 4)
)

// brew is one tea on the menu. Filtering is off, so FilterValue has
// nothing to match: the delegate draws the name.
type brew string

func (b brew) FilterValue() string { return "" }

// menuDelegate draws one brew per line, the selected one behind "> ".
type menuDelegate struct{}

func (menuDelegate) Height() int                             { return 1 }
func (menuDelegate) Spacing() int                            { return 0 }
func (menuDelegate) Update(_ tea.Msg, _ *list.Model) tea.Cmd { return nil }

func (menuDelegate) Render(w io.Writer, m list.Model, index int, it list.Item) {
	b, ok := it.(brew)
	if !ok {
		return
	}
	if index == m.Index() {
		fmt.Fprint(w, selectedStyle.Render("> "+string(b)))
		return
	}
	fmt.Fprint(w, itemStyle.Render(string(b)))
}

type model struct {
	list     list.Model
	choice   string
	quitting bool
}

func initialModel() model {
	brews := []list.Item{
		brew("Sencha"),
		brew("Earl Grey"),
		brew("Oolong"),
		brew("Rooibos"),
		brew("Masala Chai"),
		brew("Genmaicha"),
		brew("Darjeeling"),
		brew("Peppermint"),
	}

	l := list.New(brews, menuDelegate{}, 32, 14)
	l.Title = "Which tea would you like?"
	l.Styles.Title = titleStyle
	l.SetShowStatusBar(false)
	l.SetFilteringEnabled(false)
	return model{list: l}
}

func (m model) Init() tea.Cmd { return nil }

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.list.SetWidth(msg.Width)
		return m, nil

	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "ctrl+c":
			m.quitting = true
			return m, tea.Quit
		case "enter":
			if b, ok := m.list.SelectedItem().(brew); ok {
				m.choice = string(b)
			}
			return m, tea.Quit
		}
	}

	var cmd tea.Cmd
	m.list, cmd = m.list.Update(msg)
	return m, cmd
}

func (m model) View() tea.View {
	switch {
	case m.choice != "":
		return tea.NewView(goodbyeStyle.Render(fmt.Sprintf("Okay, %s? Sounds good to me.", m.choice)))
	case m.quitting:
		return tea.NewView(goodbyeStyle.Render("No tea today? Another time, then."))
	}
	return tea.NewView("\n" + m.list.View())
}
