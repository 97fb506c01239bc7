package main

// A sign-up form of three text inputs from Bubbles. Tab and Shift+Tab (or
// the arrows) move between the fields, Enter moves on, and Enter on the
// last field signs up.

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

var (
	headerStyle  = lipgloss.NewStyle().Bold(true)
	focusedStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("86"))
	blurredStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("241"))
	helpStyle    = blurredStyle
)

const (
	nameField = iota
	emailField
	passwordField
)

type model struct {
	inputs  []textinput.Model
	focused int
	signups int
}

func initialModel() model {
	m := model{inputs: make([]textinput.Model, 3)}

	for i := range m.inputs {
		t := textinput.New()
		t.CharLimit = 48
		t.SetWidth(32)

		s := t.Styles()
		s.Focused.Prompt = focusedStyle
		s.Focused.Text = focusedStyle
		s.Blurred.Prompt = blurredStyle
		t.SetStyles(s)

		switch i {
		case nameField:
			t.Prompt = "Name      "
			t.Placeholder = "Ada Lovelace"
			t.Focus()
		case emailField:
			t.Prompt = "Email     "
			t.Placeholder = "ada@example.com"
			t.CharLimit = 96
		case passwordField:
			t.Prompt = "Password  "
			t.Placeholder = "at least 8 characters"
			t.EchoMode = textinput.EchoPassword
			t.EchoCharacter = '*'
		}
		m.inputs[i] = t
	}
	return m
}

func (m model) Init() tea.Cmd {
	return textinput.Blink
}

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if msg, ok := msg.(tea.KeyPressMsg); ok {
		switch key := msg.String(); key {
		case "ctrl+c", "esc":
			return m, tea.Quit

		case "enter":
			if m.focused == passwordField {
				return m.signUp()
			}
			return m, m.focus(m.focused + 1)

		case "tab", "down":
			return m, m.focus(m.focused + 1)

		case "shift+tab", "up":
			return m, m.focus(m.focused - 1)
		}
	}

	// Only the focused input acts on keys; all of them take the other
	// messages (the cursor's blink).
	cmds := make([]tea.Cmd, len(m.inputs))
	for i := range m.inputs {
		m.inputs[i], cmds[i] = m.inputs[i].Update(msg)
	}
	return m, tea.Batch(cmds...)
}

// focus moves the focus to input i, wrapping around at either end.
func (m *model) focus(i int) tea.Cmd {
	m.focused = (i + len(m.inputs)) % len(m.inputs)
	var cmd tea.Cmd
	for j := range m.inputs {
		if j == m.focused {
			cmd = m.inputs[j].Focus()
			continue
		}
		m.inputs[j].Blur()
	}
	return cmd
}

// signUp prints who signed up above the form. The password stays where
// it is typed.
func (m model) signUp() (tea.Model, tea.Cmd) {
	name := strings.TrimSpace(m.inputs[nameField].Value())
	email := strings.TrimSpace(m.inputs[emailField].Value())
	if name == "" || email == "" {
		return m, tea.Println("Both a name and an email, please.")
	}
	m.signups++
	return m, tea.Println(fmt.Sprintf("Signed up %s <%s>.", name, email))
}

func (m model) View() tea.View {
	var b strings.Builder
	b.WriteString(headerStyle.Render("Create your account"))
	b.WriteString("\n\n")
	for i := range m.inputs {
		b.WriteString(m.inputs[i].View())
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if m.signups > 0 {
		fmt.Fprintf(&b, "%d signed up so far.\n", m.signups)
	}
	b.WriteString(helpStyle.Render("tab/shift+tab move • enter on the password signs up • esc quits"))
	return tea.NewView(b.String())
}
