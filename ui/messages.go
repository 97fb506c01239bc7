package ui

// The messages widgets send, by keyboard, mouse or MCP tool call alike.
// Each carries the id of the widget that sent it. An app's Update acts on
// the ones it cares about; the rest can be ignored.

// TextInputChanged reports the new whole text of a TextInput.
type TextInputChanged struct {
	ID   string
	Text string
}

// TextAreaChanged reports the new whole text of a TextArea.
type TextAreaChanged struct {
	ID   string
	Text string
}

// PasswordFieldChanged reports the new whole text of a PasswordField. Its
// String method never reveals the text, so logging it is safe.
type PasswordFieldChanged struct {
	ID   string
	Text string
}

// String masks the text.
func (m PasswordFieldChanged) String() string {
	return "ui.PasswordFieldChanged{ID:" + m.ID + " Text:[redacted]}"
}

// CheckboxToggled reports a Checkbox's new checked state.
type CheckboxToggled struct {
	ID      string
	Checked bool
}

// OptionSelected reports that option Index of a SelectList was chosen.
type OptionSelected struct {
	ID    string
	Index int
}

// TabChanged reports that tab Index of a Tabs widget became active.
type TabChanged struct {
	ID    string
	Index int
}

// MenuSelected reports that the menu item ItemID was chosen.
type MenuSelected struct {
	ID     string
	ItemID string
}

// ModalConfirmed reports that the user confirmed a Modal.
type ModalConfirmed struct{ ID string }

// ModalDismissed reports that the user dismissed a Modal.
type ModalDismissed struct{ ID string }

// RowSelected reports that row Index of a Table was chosen.
type RowSelected struct {
	ID    string
	Index int
}

// Sort directions of [TableSorted].
const (
	SortAsc  = "asc"
	SortDesc = "desc"
)

// TableSorted asks for a Table's rows to be sorted by the column whose key
// is Column, in Direction ([SortAsc] or [SortDesc]).
type TableSorted struct {
	ID        string
	Column    string
	Direction string
}

// TreeExpanded reports that tree node NodeID was expanded.
type TreeExpanded struct {
	ID     string
	NodeID string
}

// TreeCollapsed reports that tree node NodeID was collapsed.
type TreeCollapsed struct {
	ID     string
	NodeID string
}

// TreeSelected reports that tree node NodeID was chosen.
type TreeSelected struct {
	ID     string
	NodeID string
}

// ScrubberSeeked reports a Scrubber's new position.
type ScrubberSeeked struct {
	ID       string
	Position int
}

// ScrubberPlayed reports that a Scrubber started playing.
type ScrubberPlayed struct{ ID string }

// ScrubberPaused reports that a Scrubber paused.
type ScrubberPaused struct{ ID string }

// ScrolledTo reports a Viewport's new first visible row.
type ScrolledTo struct {
	ID  string
	Row int
}

// Describe returns what a message did, in words for an activity line, e.g.
// "typed into" (then the widget's label). It never includes text or values
// from the message.
func Describe(msg any) string {
	switch m := msg.(type) {
	case TextInputChanged, TextAreaChanged, PasswordFieldChanged:
		return "typed into"
	case CheckboxToggled:
		if m.Checked {
			return "checked"
		}
		return "unchecked"
	case OptionSelected:
		return "selected an option in"
	case TabChanged:
		return "switched tabs in"
	case MenuSelected:
		return "chose from"
	case ModalConfirmed:
		return "confirmed"
	case ModalDismissed:
		return "dismissed"
	case RowSelected:
		return "selected a row in"
	case TableSorted:
		return "sorted"
	case TreeExpanded:
		return "expanded a node in"
	case TreeCollapsed:
		return "collapsed a node in"
	case TreeSelected:
		return "selected a node in"
	case ScrubberSeeked:
		return "moved"
	case ScrubberPlayed:
		return "played"
	case ScrubberPaused:
		return "paused"
	case ScrolledTo:
		return "scrolled"
	default:
		return "clicked"
	}
}
