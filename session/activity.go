package session

import (
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
)

// activity is a session's record of what was done in it and what agents
// may do: the activity log (what humans and agents did, and how it
// ended), the widgets recently acted on, and the human's Control over
// agents. Its state is protected by the session's lock (hub.mu). A new
// log entry or a change of control signals the presence watchers and the
// watchers (terminals show them), a new recent action the watchers.
type activity struct {
	h *hub
	// save makes the session's record durable (Session.saveNow): a change
	// of control is saved before SetControl returns. Fixed at creation.
	save func() error

	// Under h.mu.
	log     []Action
	seq     uint64 // grows with every record or repeat (ActivitySeq)
	recent  []string
	control Control
}

// maxRecent is how many recently acted-on widgets a session remembers.
const maxRecent = 16

// NoteAction records that someone acted on widget id, most recent first.
func (l *activity) NoteAction(id string) {
	if id == "" {
		return
	}
	l.h.mu.Lock()
	r := slices.DeleteFunc(l.recent, func(x string) bool { return x == id })
	r = slices.Insert(r, 0, id)
	if len(r) > maxRecent {
		r = r[:maxRecent]
	}
	changed := !slices.Equal(r, l.recent)
	l.recent = r
	l.h.mu.Unlock()
	if changed {
		l.h.signal()
	}
}

// Recent returns the widgets recently acted on, most recent first.
func (l *activity) Recent() []string {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	return slices.Clone(l.recent)
}

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
func (l *activity) Record(a Action) {
	a = cleanAction(a)
	if a.At.IsZero() {
		a.At = l.h.now()
	}
	l.h.mu.Lock()
	l.seq++
	a.seq = l.seq
	log := l.log
	if n := len(log); n > 0 && sameAction(log[n-1], a) && a.At.Sub(log[n-1].At) < coalesceWithin {
		log[n-1].Count = max(log[n-1].Count, 1) + 1
		log[n-1].At, log[n-1].seq = a.At, a.seq
	} else {
		l.log = append(log, a)
		if len(l.log) > MaxActivity {
			l.log = slices.Delete(l.log, 0, len(l.log)-MaxActivity)
		}
	}
	l.h.mu.Unlock()
	l.h.signalPresence() // terminals show agents' actions as they happen
}

// restore puts back a saved log and control (Manager.Restore), before the
// session is published: the entries are cleaned again and kept as they
// were (no coalescing), the most recent MaxActivity of them.
func (l *activity) restore(acts []Action, c Control) {
	if len(acts) > MaxActivity {
		acts = acts[len(acts)-MaxActivity:]
	}
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	l.control = c
	for _, a := range acts {
		a = cleanAction(a)
		l.seq++
		a.seq = l.seq
		l.log = append(l.log, a)
	}
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
func (l *activity) recordCommand(origin dispatcher.Origin, msgs []tea.Msg) {
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
	l.Record(Action{Origin: origin.String(), Action: kind, Summary: summary, Outcome: "ok"})
}

// Activity returns the activity log, oldest first.
func (l *activity) Activity() []Action {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	return slices.Clone(l.log)
}

// ActivitySeq grows with every change to the activity log: a saver
// compares it to tell whether the log changed since it last saved.
func (l *activity) ActivitySeq() uint64 {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	return l.seq
}

// LastAgentAction returns the latest action of an agent and its sequence
// number (which grows with every recorded action).
func (l *activity) LastAgentAction() (Action, uint64, bool) {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	for i := len(l.log) - 1; i >= 0; i-- {
		if a := l.log[i]; a.Agent {
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
func (l *activity) SetControl(c Control) error {
	l.h.mu.Lock()
	changed := l.control != c
	l.control = c
	l.h.mu.Unlock()
	if !changed {
		return nil
	}
	l.h.signalPresence() // watchers, and terminals' status bars
	return l.save()
}

// Control returns what agents may do.
func (l *activity) Control() Control {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	return l.control
}
