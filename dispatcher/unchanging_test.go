package dispatcher_test

import (
	"context"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// sameRoot is a root that says it draws what the last one drew while its
// generation is the same.
type sameRoot struct{ gen int }

func (sameRoot) Children() []ui.Node { return nil }
func (r sameRoot) Unchanged(prev ui.Node) bool {
	p, ok := prev.(sameRoot)
	return ok && p.gen == r.gen
}

// quietModel changes its generation on "show" only; "hide" changes the
// model but nothing it draws.
type quietModel struct{ gen, hidden int }

func (quietModel) Init() tea.Cmd { return nil }
func (m quietModel) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg {
	case "show":
		m.gen++
	case "hide":
		m.hidden++
	}
	return m, nil
}
func (m quietModel) View() ui.Node { return sameRoot{m.gen} }

func TestUnchangedTreePublishesNothing(t *testing.T) {
	d := dispatcher.New(quietModel{}, nil)
	defer d.Close()
	o := dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "t"}
	ctx := context.Background()
	if err := d.Call(ctx, o, "show"); err != nil {
		t.Fatal(err)
	}
	v := d.Snapshot().Version
	if err := d.Call(ctx, o, "hide"); err != nil {
		t.Fatal(err)
	}
	if got := d.Snapshot().Version; got != v {
		t.Fatalf("a fold that changed nothing visible published version %d after %d", got, v)
	}
	// The model advanced all the same: the next snapshot carries it.
	if err := d.Call(ctx, o, "show"); err != nil {
		t.Fatal(err)
	}
	s := d.Snapshot()
	if s.Version != v+1 || s.Model.(quietModel).hidden != 1 {
		t.Fatalf("snapshot %d with model %+v, want %d with the hidden change", s.Version, s.Model, v+1)
	}
}
