package session

import (
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
)

// Action is one entry of a session's activity log: something a human or
// an agent did, and how it ended.
type Action struct {
	At time.Time `json:"at"`
	// Origin is who did it: "human:<terminal>", "agent:<client>".
	Origin string `json:"origin"`
	// Agent is set for agents' actions.
	Agent bool `json:"agent"`
	// Widget is the widget id acted on ("" for none) and Label its label.
	Widget string `json:"widget,omitempty"`
	Label  string `json:"label,omitempty"`
	// Action is what was done, e.g. "type_into", "click", "keys".
	Action string `json:"action"`
	// Summary is the action in words, e.g. "typed into Search". It never
	// holds app text from arguments.
	Summary string `json:"summary"`
	// Outcome is "ok" or why not: "update_failed", "authorization_required",
	// "paused", ...
	Outcome string `json:"outcome"`
	// Count is how many times in a row this same action happened (keys
	// typed into one input, a timer ticking), when more than once.
	Count int `json:"count,omitempty"`

	seq uint64 // grows with every record or repeat
}

// coalesceWithin is how close a repeat of the same action must follow to
// be counted on the same entry.
const coalesceWithin = 5 * time.Second

// MaxActivity is how many actions a session remembers.
const MaxActivity = 300

// Record appends an action to the activity log (the oldest fall off) and
// signals watchers. The same action by the same origin on the same widget
// repeated within a few seconds (typing, one key at a time) is counted on
// the previous entry instead. Its text fields are cleaned
// (safetext.Clean) and bounded: an agent's name and the tool it named
// reach the log as they came.
func (s *Session) Record(a Action) {
	a = cleanAction(a)
	if a.At.IsZero() {
		a.At = s.now()
	}
	s.mu.Lock()
	s.shared.activitySeq++
	a.seq = s.shared.activitySeq
	log := s.shared.activity
	if n := len(log); n > 0 && sameAction(log[n-1], a) && a.At.Sub(log[n-1].At) < coalesceWithin {
		log[n-1].Count = max(log[n-1].Count, 1) + 1
		log[n-1].At, log[n-1].seq = a.At, a.seq
	} else {
		s.shared.activity = append(log, a)
		if len(s.shared.activity) > MaxActivity {
			s.shared.activity = slices.Delete(s.shared.activity, 0, len(s.shared.activity)-MaxActivity)
		}
	}
	s.mu.Unlock()
	s.signalPresence() // terminals show agents' actions as they happen
}

// cleanAction cleans and bounds the text fields of an action.
func cleanAction(a Action) Action {
	a.Origin = safetext.Clean(a.Origin, maxField)
	a.Widget = safetext.Clean(a.Widget, maxField)
	a.Label = safetext.Clean(a.Label, maxField)
	a.Action = safetext.Clean(a.Action, maxField)
	a.Summary = safetext.Clean(a.Summary, maxSummary)
	a.Outcome = safetext.Clean(a.Outcome, maxField)
	a.Count = max(a.Count, 0)
	return a
}

func sameAction(a, b Action) bool {
	return a.Origin == b.Origin && a.Widget == b.Widget && a.Action == b.Action && a.Summary == b.Summary && a.Outcome == b.Outcome
}

// recordCommand logs what a command or timer folded; a ticking timer is
// counted on one entry (see Record), so it cannot flood the log.
func (s *Session) recordCommand(origin dispatcher.Origin, msgs []tea.Msg) {
	summary := "applied"
	for i, m := range msgs {
		if i > 0 {
			summary += ","
		}
		summary += fmt.Sprintf(" %T", m)
	}
	kind := "command"
	if origin.Kind == dispatcher.OriginTimer {
		kind = "timer"
	}
	s.Record(Action{Origin: origin.String(), Action: kind, Summary: summary, Outcome: "ok"})
}

// Activity returns the activity log, oldest first.
func (s *Session) Activity() []Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.shared.activity)
}

// LastAgentAction returns the latest action of an agent and its sequence
// number (which grows with every recorded action).
func (s *Session) LastAgentAction() (Action, uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.shared.activity) - 1; i >= 0; i-- {
		if a := s.shared.activity[i]; a.Agent {
			return a, a.seq, true
		}
	}
	return Action{}, 0, false
}

// Control is what the human lets agents do.
type Control struct {
	// Paused: agents may read but not act.
	Paused bool `json:"paused"`
	// FocusOnly: agents may act only on the widget the human has focused.
	FocusOnly bool `json:"focus_only"`
}

// SetControl changes what agents may do and signals watchers. The change
// is in force at once; with a saver installed (Session.SetSaver) it is
// saved before SetControl returns, so that a crash after the human was
// shown it cannot undo it (a pause, above all). When saving fails the
// change is in force all the same and the error wraps ErrNotSaved.
func (s *Session) SetControl(c Control) error {
	s.mu.Lock()
	changed := s.shared.control != c
	s.shared.control = c
	s.mu.Unlock()
	if !changed {
		return nil
	}
	s.signalPresence() // watchers, and terminals' status bars
	return s.saveNow()
}

// Control returns what agents may do.
func (s *Session) Control() Control {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shared.control
}
