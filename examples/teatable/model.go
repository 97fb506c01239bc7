package main

// A departures board on the table component from Bubbles: arrows move,
// Enter books the highlighted trip, and the fares refresh shortly after
// start.

import (
	"fmt"
	"time"

	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

var (
	boardStyle  = lipgloss.NewStyle().BorderStyle(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("63"))
	statusStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("244")).PaddingLeft(1)
)

// refreshEvery is how long after start the fares are refreshed.
const refreshEvery = 2 * time.Second

// refreshedMsg says fresh fares arrived.
type refreshedMsg time.Time

type model struct {
	table  table.Model
	status string
}

func initialModel() model {
	columns := []table.Column{
		{Title: "Gate", Width: 4},
		{Title: "City", Width: 12},
		{Title: "Country", Width: 12},
		{Title: "Departs", Width: 7},
		{Title: "Fare", Width: 6},
	}
	rows := []table.Row{
		{"A1", "Lisbon", "Portugal", "07:10", "€89"},
		{"A4", "Reykjavik", "Iceland", "07:45", "€214"},
		{"B2", "Kyoto", "Japan", "08:20", "€702"},
		{"B7", "Valparaíso", "Chile", "09:05", "€968"},
		{"C3", "Tbilisi", "Georgia", "09:30", "€176"},
		{"C9", "Marrakesh", "Morocco", "10:15", "€132"},
		{"D1", "Hanoi", "Vietnam", "11:00", "€655"},
		{"D6", "Oaxaca", "Mexico", "12:40", "€741"},
		{"E2", "Tromsø", "Norway", "13:25", "€198"},
		{"E5", "Zanzibar", "Tanzania", "14:50", "€583"},
		{"F3", "Ljubljana", "Slovenia", "16:05", "€97"},
		{"F8", "Hobart", "Australia", "18:30", "€1120"},
	}

	t := table.New(
		table.WithColumns(columns),
		table.WithRows(rows),
		table.WithFocused(true),
		table.WithHeight(10),
		table.WithWidth(51),
	)

	s := table.DefaultStyles()
	s.Header = s.Header.Bold(true).
		BorderStyle(lipgloss.NormalBorder()).
		BorderForeground(lipgloss.Color("63")).
		BorderBottom(true)
	s.Selected = s.Selected.Foreground(lipgloss.Color("230")).Background(lipgloss.Color("63"))
	t.SetStyles(s)

	return model{table: t, status: "fares from yesterday"}
}

func (m model) Init() tea.Cmd {
	return tea.Tick(refreshEvery, func(t time.Time) tea.Msg { return refreshedMsg(t) })
}

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case refreshedMsg:
		m.status = "data refreshed"
		return m, nil

	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "ctrl+c":
			return m, tea.Quit
		case "enter":
			row := m.table.SelectedRow()
			if row == nil {
				return m, nil
			}
			return m, tea.Printf("Let's go to %s!", row[1])
		}
	}

	var cmd tea.Cmd
	m.table, cmd = m.table.Update(msg)
	return m, cmd
}

func (m model) View() tea.View {
	return tea.NewView(fmt.Sprintf("%s\n%s\n %s\n",
		boardStyle.Render(m.table.View()),
		statusStyle.Render(m.status),
		m.table.HelpView()))
}
