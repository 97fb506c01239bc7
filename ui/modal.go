package ui

import (
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Modal is a dialog drawn over the screen while Visible, trapping focus in
// itself and its Body (see [Overlay] and [FocusOrder]).
//
// Keys: Enter sends [ModalConfirmed], Esc sends [ModalDismissed]. A click
// on the confirm or dismiss button sends the same messages. A hidden modal
// ignores everything.
type Modal struct {
	// ID identifies the widget in its tree.
	ID string
	// Title is drawn in the top border.
	Title string
	// Body is the dialog's content, or nil.
	Body Node
	// Visible reports whether the modal is shown.
	Visible bool
	// ConfirmLabel is the confirm button's text; "" means "Confirm".
	ConfirmLabel string
	// DismissLabel is the dismiss button's text; "" means "Cancel".
	DismissLabel string
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget       = Modal{}
	_ Overlay      = Modal{}
	_ ToolProvider = Modal{}
)

// modalLayout is where a Modal's last render put its buttons, kept in
// LocalState.Data for mapping clicks (the body's height is only known once
// drawn).
type modalLayout struct{ confirm, dismiss Rect }

// Children returns the body, if any.
func (m Modal) Children() []Node {
	if m.Body == nil {
		return nil
	}
	return []Node{m.Body}
}

// WidgetID returns the modal's id.
func (m Modal) WidgetID() string { return m.ID }

// Focusable reports whether the modal is visible.
func (m Modal) Focusable() bool { return m.Visible }

// Shown reports whether the modal is visible.
func (m Modal) Shown() bool { return m.Visible }

// labels returns the button texts, defaults filled in.
func (m Modal) labels() (confirm, dismiss string) {
	confirm, dismiss = dwClean(m.ConfirmLabel), dwClean(m.DismissLabel)
	if confirm == "" {
		confirm = "Confirm"
	}
	if dismiss == "" {
		dismiss = "Cancel"
	}
	return "[ " + confirm + " ]", "[ " + dismiss + " ]"
}

// HandleEvent confirms or dismisses the modal; see [Modal].
func (m Modal) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	if !m.Visible {
		return nil
	}
	switch ev := ev.(type) {
	case tea.KeyPressMsg:
		switch ev.String() {
		case "enter":
			return []tea.Msg{ModalConfirmed{ID: m.ID}}
		case "esc":
			return []tea.Msg{ModalDismissed{ID: m.ID}}
		}
	case ClickEvent:
		if st == nil {
			return nil
		}
		l, ok := st.Data.(modalLayout)
		switch {
		case !ok:
		case l.confirm.Contains(ev.X, ev.Y):
			return []tea.Msg{ModalConfirmed{ID: m.ID}}
		case l.dismiss.Contains(ev.X, ev.Y):
			return []tea.Msg{ModalDismissed{ID: m.ID}}
		}
	}
	return nil
}

// Render draws a double-bordered box with the title in the top border, the
// body, a blank line, the two buttons and a key hint. Below 6 columns the
// border is left out. A hidden modal draws nothing.
func (m Modal) Render(rc RenderContext) string {
	if !m.Visible {
		return ""
	}
	th, st, w := dwContext(rc)
	framed := w >= 6
	iw, x0 := w, 0 // inner width and the column where content starts
	if framed {
		iw, x0 = w-4, 2
	}

	var content []string
	title := dwClean(m.Title)
	if !framed && title != "" {
		content = append(content, Paint(th.Title, dwTrunc(title, iw)))
	}
	if m.Body != nil {
		child := rc.Child
		if child == nil {
			child = func(n Node, width int) string {
				return RenderNode(n, width, RenderOptions{Theme: th})
			}
		}
		if body := child(m.Body, iw); body != "" {
			content = append(content, strings.Split(body, "\n")...)
			content = append(content, "")
		}
	}

	confirm, dismiss := m.labels()
	confirmStyle, dismissStyle := th.Title, th.Normal
	if rc.Focused {
		confirmStyle = th.Highlight.Bold(true)
	}
	cw, dw := lineWidth(confirm), lineWidth(dismiss)
	y0 := len(content)
	if framed {
		y0++ // the top border
	}
	var l modalLayout
	if cw+2+dw <= iw {
		content = append(content, Paint(confirmStyle, confirm)+"  "+Paint(dismissStyle, dismiss))
		l.confirm = Rect{X: x0, Y: y0, W: cw, H: 1}
		l.dismiss = Rect{X: x0 + cw + 2, Y: y0, W: dw, H: 1}
	} else {
		content = append(content,
			Paint(confirmStyle, dwTrunc(confirm, iw)),
			Paint(dismissStyle, dwTrunc(dismiss, iw)))
		l.confirm = Rect{X: x0, Y: y0, W: min(cw, iw), H: 1}
		l.dismiss = Rect{X: x0, Y: y0 + 1, W: min(dw, iw), H: 1}
	}
	st.Data = l
	content = append(content, Paint(th.Muted, dwTrunc("enter: confirm · esc: cancel", iw)))

	if !framed {
		return dwJoin(content, w)
	}
	border := th.Border
	if rc.Focused {
		border = th.FocusBorder.Bold(true)
	}
	lines := make([]string, 0, len(content)+2)
	if t := dwTrunc(title, iw-2); t != "" {
		fill := iw - 1 - lineWidth(t) // "╔═ " title " " fill "╗" is w = iw+4 cells
		lines = append(lines, Paint(border, "╔═ ")+Paint(th.Title, t)+Paint(border, " "+strings.Repeat("═", max(0, fill))+"╗"))
	} else {
		lines = append(lines, Paint(border, "╔"+strings.Repeat("═", iw+2)+"╗"))
	}
	side := Paint(border, "║")
	for _, c := range content {
		lines = append(lines, side+" "+dwFit(c, iw)+" "+side)
	}
	lines = append(lines, Paint(border, "╚"+strings.Repeat("═", iw+2)+"╝"))
	return dwJoin(lines, w)
}

// ---- MCP tools ----

// Tools returns confirm and dismiss; none while the modal is hidden.
func (m Modal) Tools() []ToolSpec {
	if !m.Visible {
		return nil
	}
	return []ToolSpec{
		tool("confirm", "Confirm this dialog, as pressing its confirm button or Enter would.", nil),
		tool("dismiss", "Close this dialog without confirming, as pressing its cancel button or Esc would.", nil),
	}
}

// CallTool runs confirm ([ModalConfirmed]) or dismiss ([ModalDismissed]),
// the messages Enter and Esc send.
func (m Modal) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	var msg tea.Msg
	switch action {
	case "confirm":
		msg = ModalConfirmed{ID: m.ID}
	case "dismiss":
		msg = ModalDismissed{ID: m.ID}
	default:
		return nil, nil, errUnknownAction(action)
	}
	if !m.Visible {
		return nil, nil, errors.New("this modal is not visible")
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	return okResult(), []tea.Msg{msg}, nil
}

// State returns type, id, title, visible, confirm_label and dismiss_label
// (defaults filled in). The body's widgets report their own state.
func (m Modal) State() any {
	confirm, dismiss := m.ConfirmLabel, m.DismissLabel
	if confirm == "" {
		confirm = "Confirm"
	}
	if dismiss == "" {
		dismiss = "Cancel"
	}
	return map[string]any{
		"type":          "modal",
		"id":            m.ID,
		"title":         m.Title,
		"visible":       m.Visible,
		"confirm_label": confirm,
		"dismiss_label": dismiss,
	}
}
