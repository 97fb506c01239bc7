package session

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
)

// Attachment kinds.
const (
	KindTerminal = "terminal"
	KindAgent    = "agent"
	KindBrowser  = "browser" // a browser watching the session's view page
)

// Attachment is one terminal or agent connected to a session.
type Attachment struct {
	// ID is unique within the session.
	ID string
	// Kind is [KindTerminal], [KindAgent] or [KindBrowser].
	Kind string
	// Name is a display name: the SSH user, or the agent's client name.
	Name string
	// Since is when it attached.
	Since time.Time
	// LastActive is when it last acted: its last [Presence.Touch] (an
	// agent's last MCP request), else Since.
	LastActive time.Time
	// Idle is set, in what [Session.Attached] returns, for an agent that
	// has not acted for the manager's AgentIdleAfter: it is still
	// attached, but not at work.
	Idle bool
}

// DefaultAgentIdleAfter is how long an agent may go without acting before
// presence shows it as idle, unless Options.AgentIdleAfter says otherwise.
const DefaultAgentIdleAfter = 2 * time.Minute

// roster is a session's presence: who is attached (terminals and agents,
// in order of arrival), when each last acted, and who is told when
// someone comes or goes. Its state is protected by the session's lock
// (hub.mu); a change runs the OnPresenceChange hooks, then signals the
// presence watchers and the watchers.
type roster struct {
	h         *hub
	idleAfter time.Duration // an agent quiet this long is shown idle; fixed at creation

	// Under h.mu.
	attached []Attachment
	nextAtt  int
	onChange []func()
}

// Attach records a terminal or agent joining the session and returns a
// function that detaches it (safe to call more than once). The name is
// cleaned (safetext.Clean) and bounded. [Session.Join] does the same and
// also lets the attachment tell when it acts.
func (r *roster) Attach(kind, name string) (id string, detach func()) {
	p := r.Join(kind, name)
	return p.ID(), p.Detach
}

// Presence is one attachment's handle, from [Session.Join]: it records
// when the attachment acts and detaches it. Safe for concurrent use.
type Presence struct {
	r    *roster
	id   string
	once sync.Once
	// idle tells watchers when an agent becomes idle (nil for terminals);
	// re-armed by Touch, stopped by Detach.
	idle *time.Timer
}

// Join records a terminal or agent joining the session, as [Session.Attach].
func (r *roster) Join(kind, name string) *Presence {
	name = safetext.Clean(name, maxName)
	h := r.h
	h.mu.Lock()
	r.nextAtt++
	id := fmt.Sprintf("%s-%d", kind, r.nextAtt)
	now := h.now()
	r.attached = append(r.attached, Attachment{ID: id, Kind: kind, Name: name, Since: now, LastActive: now})
	hooks := slices.Clone(r.onChange)
	h.mu.Unlock()
	run(hooks)
	h.signalPresence()
	p := &Presence{r: r, id: id}
	if kind == KindAgent {
		p.idle = time.AfterFunc(r.idleAfter, h.signalPresence)
	}
	return p
}

// ID is the attachment's id, unique within the session.
func (p *Presence) ID() string { return p.id }

// Touch records that the attachment acted now (Attachment.LastActive).
// Watchers and status bars are told when that changes what they show (a
// new second, or the end of its idleness), not on every touch; and, for
// an agent, when AgentIdleAfter has passed without one (it is idle now).
func (p *Presence) Touch() {
	r, h := p.r, p.r.h
	h.mu.Lock()
	now := h.now()
	changed := false
	for i := range r.attached {
		if a := &r.attached[i]; a.ID == p.id {
			changed = now.Unix() != a.LastActive.Unix() || now.Sub(a.LastActive) >= r.idleAfter
			a.LastActive = now
			break
		}
	}
	h.mu.Unlock()
	if p.idle != nil {
		p.idle.Reset(r.idleAfter)
	}
	if changed {
		h.signalPresence()
	}
}

// Detach removes the attachment at once; safe to call more than once.
func (p *Presence) Detach() {
	p.once.Do(func() {
		if p.idle != nil {
			p.idle.Stop()
		}
		r, h := p.r, p.r.h
		h.mu.Lock()
		r.attached = slices.DeleteFunc(r.attached, func(a Attachment) bool { return a.ID == p.id })
		hooks := slices.Clone(r.onChange)
		h.mu.Unlock()
		run(hooks)
		h.signalPresence()
	})
}

// Attached returns who is attached, in order of arrival, agents that have
// not acted for a while marked Idle.
func (r *roster) Attached() []Attachment {
	h := r.h
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(r.attached)
	now := h.now()
	for i := range out {
		out[i].Idle = out[i].Kind == KindAgent && now.Sub(out[i].LastActive) >= r.idleAfter
	}
	return out
}

// Agents returns the attached agents.
func (r *roster) Agents() []Attachment {
	var out []Attachment
	for _, a := range r.Attached() {
		if a.Kind == KindAgent {
			out = append(out, a)
		}
	}
	return out
}

// OnPresenceChange registers f to run (on the attaching goroutine, without
// locks held) whenever someone attaches or detaches. f must not block.
func (r *roster) OnPresenceChange(f func()) {
	r.h.mu.Lock()
	r.onChange = append(r.onChange, f)
	r.h.mu.Unlock()
}

func run(fs []func()) {
	for _, f := range fs {
		f()
	}
}
