package session

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// quitsOnKey quits on any key.
type quitsOnKey struct{}

func (quitsOnKey) Init() tea.Cmd { return nil }
func (q quitsOnKey) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	if _, ok := msg.(tea.KeyPressMsg); ok {
		return q, tea.Quit
	}
	return q, nil
}
func (quitsOnKey) View() ui.Node { return ui.Text{Text: "q"} }

// An app that quits because of an agent's action ends the session only
// when the owner says so; because of the human's, at once.
func TestAgentCausedQuitAsksTheOwner(t *testing.T) {
	for _, c := range []struct {
		name   string
		origin dispatcher.Origin
		answer Approval
		ends   bool
		asked  bool
		noSink bool // no human attached who can answer
	}{
		{"agent, refused", dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "claude"}, Refused, false, true, false},
		{"agent, approved", dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "claude"}, ApprovedOnce, true, true, false},
		{"human", dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: "t"}, Refused, true, false, false},
		{"agent, nobody to ask", dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "claude"}, Refused, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewManager(nil)
			t.Cleanup(m.Close)
			s, _, err := m.Start("t", Owner{User: "u"}, quitsOnKey{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			asked := make(chan ApprovalRequest, 1)
			if !c.noSink {
				s.SetApprovalSink(func(_ context.Context, req ApprovalRequest) (Approval, error) {
					asked <- req
					return c.answer, nil
				})
			}
			start := time.Now()
			if err := s.Dispatcher.Call(context.Background(), c.origin, tea.KeyPressMsg{Code: 'q', Text: "q"}); err != nil {
				t.Fatal(err)
			}
			if c.asked {
				select {
				case req := <-asked:
					if req.Tool != "quit" || req.Agent != "claude" {
						t.Fatalf("asked %+v", req)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the owner was not asked")
				}
			}
			select {
			case <-s.Context().Done():
				if !c.ends {
					t.Fatal("the session ended though the owner refused")
				}
				if c.noSink && time.Since(start) < agentQuitGrace {
					t.Fatalf("ended %s after the agent's call: its answer may not have gone out", time.Since(start))
				}
			case <-time.After(agentQuitGrace + time.Second): // long enough for an end already decided to land
				if c.ends {
					t.Fatal("the session did not end")
				}
			}
			if !c.asked {
				select {
				case <-asked:
					t.Fatal("the owner was asked about the human's own quit")
				default:
				}
			}
		})
	}
}
