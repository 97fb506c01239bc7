package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// faulty is an app-defined widget that panics in the named method.
type faulty struct {
	ID, In string
	Modal  bool
}

func (f faulty) Children() []Node {
	if f.In == "Children" {
		panic("children")
	}
	return nil
}
func (f faulty) WidgetID() string {
	if f.In == "WidgetID" {
		panic("id")
	}
	return f.ID
}
func (faulty) Focusable() bool { return true }
func (f faulty) Render(RenderContext) string {
	if f.In == "Render" {
		panic("render")
	}
	return "fine"
}
func (faulty) HandleEvent(Event, *LocalState) []tea.Msg { return nil }

func TestAPanickingWidgetRendersAsAPlaceholder(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		modal    bool
	}{
		{"Render", "⚠ widget bad failed", false},
		{"layout Children", "⚠ widget failed", false},
		{"WidgetID", "⚠ widget failed", false},
		{"Render", "⚠ widget bad failed", true},
	} {
		var reported []string
		root := Column{Items: []Node{Text{Text: "above"}, faulty{ID: "bad", In: tc.in, Modal: tc.modal}, Text{Text: "below"}}}
		var f Frame
		if tc.in == "layout Children" {
			root.Items[1] = badLayout{}
		}
		if tc.modal {
			root.Items[1] = Overlay(faultyOverlay{faulty{ID: "bad", In: tc.in, Modal: true}})
		}
		f = Render(root, RenderOptions{Width: 40, Height: 10, OnPanic: func(id string, _ any, stack []byte) {
			reported = append(reported, id)
			if !strings.Contains(string(stack), "render_panic_test.go") {
				t.Errorf("%s: stack does not show the panic site", tc.in)
			}
		}})
		screen := ansi.Strip(f.Content)
		if !strings.Contains(screen, tc.want) || !strings.Contains(screen, "above") || !strings.Contains(screen, "below") {
			t.Errorf("%s (modal %v): screen\n%s\nwant %q and the rest drawn", tc.in, tc.modal, screen, tc.want)
		}
		if len(reported) != 1 {
			t.Errorf("%s: reported %v, want one panic", tc.in, reported)
		}
	}
}

// faultyOverlay is a faulty widget that is drawn over the screen.
type faultyOverlay struct{ faulty }

func (f faultyOverlay) Shown() bool { return f.Modal }

var _ Overlay = faultyOverlay{}

// badLayout is an app-defined layout node whose Children panics.
type badLayout struct{}

func (badLayout) Children() []Node { panic("children") }
