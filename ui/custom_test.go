package ui

import (
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Rating is an app-defined widget: stars from 0 to 5.
type Rating struct {
	ID    string
	Stars int
}

type RatingChanged struct {
	ID    string
	Stars int
}

func (Rating) Children() []Node   { return nil }
func (r Rating) WidgetID() string { return r.ID }
func (Rating) Focusable() bool    { return true }

func (r Rating) Render(rc RenderContext) string {
	s := strings.Repeat("★", r.Stars) + strings.Repeat("☆", 5-r.Stars)
	if rc.Focused {
		return rc.Theme.Focused.Render(s)
	}
	return s
}

func (r Rating) HandleEvent(ev Event, st *LocalState) []tea.Msg {
	switch ev := ev.(type) {
	case tea.KeyPressMsg:
		if ev.String() == "right" && r.Stars < 5 {
			return []tea.Msg{RatingChanged{r.ID, r.Stars + 1}}
		}
	case ClickEvent:
		return []tea.Msg{RatingChanged{r.ID, ev.X + 1}}
	}
	return nil
}

func TestAppDefinedWidgetsWorkLikeBuiltIns(t *testing.T) {
	tree := Column{Items: []Node{
		Button{ID: "b", Label: "ok"},
		Box{Title: "rate", Child: Rating{ID: "r", Stars: 2}},
	}}
	if got := FocusOrder(tree); !reflect.DeepEqual(got, []string{"b", "r"}) {
		t.Fatalf("focus order %v", got)
	}
	f := Render(tree, RenderOptions{Width: 20, Height: 6, Focus: "r"})
	if !strings.Contains(f.Content, "★★☆☆☆") {
		t.Fatalf("custom widget not drawn:\n%s", f.Content)
	}
	id, rel, ok := f.HitTest(1+3, 2) // inside the box: border column, then the 4th star
	if !ok || id != "r" {
		t.Fatalf("hit test found %q %v", id, ok)
	}
	w, _ := Find(tree, id)
	if got := w.HandleEvent(rel, &LocalState{}); !reflect.DeepEqual(got, []tea.Msg{RatingChanged{"r", 4}}) {
		t.Fatalf("click gave %v", got)
	}
	if got := w.HandleEvent(tea.KeyPressMsg{Code: tea.KeyRight}, &LocalState{}); !reflect.DeepEqual(got, []tea.Msg{RatingChanged{"r", 3}}) {
		t.Fatalf("right gave %v", got)
	}
}
