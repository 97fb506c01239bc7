package session

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
)

// share is what the session's primary (owner's) terminal shares with the
// rest of the session, and the MCP projection reads: the human's
// attention, the screen it shows, the sinks that reach the human (agents'
// keys, approval requests, join requests) and the prompts put to the
// human and not answered yet. Its state is protected by the session's
// lock (hub.mu); a change anyone can see signals the watchers (Watch).
type share struct {
	h *hub

	// Under h.mu.
	attention     Attention
	screen        string
	screenVersion uint64
	hasScreen     bool
	keys          KeySink
	approvals     ApprovalSink
	joins         JoinSink
	pending       []Pending // prompts waiting for the human, oldest first
	// asked is what each pending approval asks and where an answer given
	// outside the owner's terminal (the owner's browser) goes, by ID.
	asked map[string]askedApproval
}

// askedApproval is an approval request waiting for the human, with the
// channel an outside answer is sent on (buffered; the first answer wins).
type askedApproval struct {
	req    ApprovalRequest
	since  time.Time
	answer chan Approval
}

// Attention is where the human's attention is in a terminal: the focused
// widget and the widget under the mouse. The focus lens follows it.
type Attention struct {
	Focus string
	Hover string
	// Row is the focused widget's highlighted row or item in that terminal
	// (its local state: the arrow keys move it without telling the app),
	// for a view that shows it (the browser's). The lens does not use it.
	Row int
}

// ErrNoTerminal is returned when keys are sent to a session with no
// terminal attached to receive them.
var ErrNoTerminal = errors.New("session: no terminal attached")

// KeySink delivers key presses into a terminal as if typed, on behalf of
// the named agent. It returns an error when a key cannot be delivered.
type KeySink func(agent string, keys []string) error

// SetAttention records the human's attention; watchers are signalled when
// it changed.
func (t *share) SetAttention(a Attention) {
	t.h.mu.Lock()
	changed := t.attention != a
	t.attention = a
	t.h.mu.Unlock()
	if changed {
		t.h.signal()
	}
}

// Attention returns the human's attention.
func (t *share) Attention() Attention {
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	return t.attention
}

// SetScreen records what the owner's terminal shows now (styled text) and
// the model snapshot version it shows.
func (t *share) SetScreen(text string, version uint64) {
	t.h.mu.Lock()
	changed := !t.hasScreen || t.screen != text
	t.screen, t.hasScreen = text, true
	t.screenVersion = max(t.screenVersion, version)
	t.h.mu.Unlock()
	if changed {
		t.h.signal()
	}
}

// Show records what the owner's terminal shows now and the human's
// attention, as SetScreen and SetAttention do, with one signal to the
// watchers if either changed.
func (t *share) Show(text string, version uint64, a Attention) {
	t.h.mu.Lock()
	changed := !t.hasScreen || t.screen != text || t.attention != a
	t.screen, t.hasScreen = text, true
	t.screenVersion = max(t.screenVersion, version)
	t.attention = a
	t.h.mu.Unlock()
	if changed {
		t.h.signal()
	}
}

// Screen returns what the owner's terminal shows now, the snapshot version
// it shows, and whether a terminal has drawn anything.
func (t *share) Screen() (text string, version uint64, ok bool) {
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	return t.screen, t.screenVersion, t.hasScreen
}

// SetKeySink installs where agent key presses go (the owner's terminal);
// nil removes it.
func (t *share) SetKeySink(k KeySink) {
	t.h.mu.Lock()
	t.keys = k
	t.h.mu.Unlock()
}

// SendKeys delivers key presses into the owner's terminal as if typed;
// the agent's name is cleaned (safetext.Clean) and bounded.
func (t *share) SendKeys(agent string, keys []string) error {
	agent = safetext.Clean(agent, maxName)
	t.h.mu.Lock()
	k := t.keys
	t.h.mu.Unlock()
	if k == nil {
		return ErrNoTerminal
	}
	return k(agent, keys)
}

// ApprovalRequest asks the human whether an agent may run a tool.
type ApprovalRequest struct {
	// ID identifies the request while it is pending.
	ID string
	// Agent is the client name the agent gave.
	Agent string
	// Tool is the tool's name and Widget the label (or id) of the widget
	// it acts on, "" for session tools.
	Tool   string
	Widget string
	// Args is the arguments as shown to the human, with secrets masked.
	Args string
	// Prompt is what the policy asks.
	Prompt string
	// Deadline is when an unanswered request is denied (zero: none).
	Deadline time.Time
}

// Approval is the human's answer.
type Approval int

// Answers to an approval request.
const (
	Refused Approval = iota
	ApprovedOnce
	ApprovedForSession
)

// ApprovalSink shows a request to the human and waits for the answer, or
// for ctx to end (then it withdraws the prompt and returns Refused with
// ctx's error).
type ApprovalSink func(ctx context.Context, req ApprovalRequest) (Approval, error)

// SetApprovalSink installs where approval requests go (the owner's
// terminal); nil removes it.
func (t *share) SetApprovalSink(f ApprovalSink) {
	t.h.mu.Lock()
	t.approvals = f
	t.h.mu.Unlock()
}

// CanApprove reports whether a human who can answer approval requests is
// attached.
func (t *share) CanApprove() bool {
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	return t.approvals != nil
}

// RequestApproval asks the human. Without a terminal to ask it returns
// Refused and ErrNoTerminal. What the prompt shows is cleaned
// (safetext.Clean) and bounded first: the agent chose all of it.
func (t *share) RequestApproval(ctx context.Context, req ApprovalRequest) (Approval, error) {
	req.Agent = safetext.Clean(req.Agent, maxName)
	req.Tool = safetext.Clean(req.Tool, maxField)
	req.Widget = safetext.Clean(req.Widget, maxField)
	req.Args = safetext.Clean(req.Args, maxArgs)
	req.Prompt = safetext.Clean(req.Prompt, maxPrompt)
	t.h.mu.Lock()
	f := t.approvals
	t.h.mu.Unlock()
	if f == nil {
		return Refused, ErrNoTerminal
	}
	done, ok := t.addPending(Pending{Kind: PendingApproval, ID: req.ID, Tool: req.Tool, Agent: req.Agent})
	if !ok {
		return Refused, nil // as the terminal refuses one over what it holds
	}
	defer done()
	// The owner may answer in the terminal (f) or elsewhere (AnswerApproval:
	// the owner's browser). The first answer wins; the other prompt is
	// withdrawn as when the caller stops waiting (its ctx ends).
	outside := make(chan Approval, 1)
	t.h.mu.Lock()
	if t.asked == nil {
		t.asked = map[string]askedApproval{}
	}
	t.asked[req.ID] = askedApproval{req: req, since: t.h.now(), answer: outside}
	t.h.mu.Unlock()
	defer func() {
		t.h.mu.Lock()
		delete(t.asked, req.ID)
		t.h.mu.Unlock()
	}()
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	type answered struct {
		a   Approval
		err error
	}
	res := make(chan answered, 1)
	go func() { // owned here: waited for below before returning
		a, err := f(inner, req)
		res <- answered{a, err}
	}()
	select {
	case r := <-res:
		return r.a, r.err
	case a := <-outside:
		cancel() // the terminal's prompt is withdrawn
		<-res
		return a, nil
	}
}

// AskedApproval is an approval request waiting for the human, as a view
// other than the owner's terminal shows it, and since when it waits.
type AskedApproval struct {
	ApprovalRequest
	Since time.Time
}

// Approvals returns the approval requests waiting for the human, oldest
// first.
func (t *share) Approvals() []AskedApproval {
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	out := make([]AskedApproval, 0, len(t.asked))
	for _, a := range t.asked {
		out = append(out, AskedApproval{ApprovalRequest: a.req, Since: a.since})
	}
	slices.SortFunc(out, func(a, b AskedApproval) int { return a.Since.Compare(b.Since) })
	return out
}

// AnswerApproval answers the pending approval request id from outside the
// owner's terminal (the owner's browser): the terminal's prompt is
// withdrawn. It reports false when no such request waits (answered
// already, withdrawn, or never asked). The caller decides who may answer
// and enforces the arming delay.
func (t *share) AnswerApproval(id string, a Approval) bool {
	t.h.mu.Lock()
	q, ok := t.asked[id]
	if ok {
		delete(t.asked, id) // one answer
	}
	t.h.mu.Unlock()
	if !ok {
		return false
	}
	q.answer <- a // buffered, and only this answer is sent on it
	return true
}

// JoinRequest asks the owner whether someone may join their session.
type JoinRequest struct {
	ID             string
	User           string
	KeyFingerprint string
	RemoteAddr     string
	// Browser marks a request from a web browser (a one-time link the
	// owner made): the owner may also answer JoinAsOwner, for their own.
	Browser bool
	// Deadline is when an unanswered request is refused (zero: none).
	Deadline time.Time
}

// JoinAnswer is the owner's answer to a join request.
type JoinAnswer int

// Answers to a join request.
const (
	JoinRefused JoinAnswer = iota
	JoinAsObserver
	JoinAsDriver
	// JoinAsOwner is a browser request answered "it is me": the browser
	// drives and may answer the owner's prompts. Only for Browser requests.
	JoinAsOwner
)

// JoinSink shows a join request to the owner and waits for the answer or
// for ctx to end (then it withdraws the prompt and returns JoinRefused
// with ctx's error).
type JoinSink func(ctx context.Context, req JoinRequest) (JoinAnswer, error)

// SetJoinSink installs where join requests go (the owner's terminal); nil
// removes it.
func (t *share) SetJoinSink(f JoinSink) {
	t.h.mu.Lock()
	t.joins = f
	t.h.mu.Unlock()
}

// RequestJoin asks the owner. Without an owner terminal it returns
// JoinRefused and ErrNoTerminal. What the prompt shows is cleaned
// (safetext.Clean) and bounded first: the stranger chose their user name.
func (t *share) RequestJoin(ctx context.Context, req JoinRequest) (JoinAnswer, error) {
	req.User = safetext.Clean(req.User, maxName)
	req.KeyFingerprint = safetext.Clean(req.KeyFingerprint, maxField)
	req.RemoteAddr = safetext.Clean(req.RemoteAddr, maxField)
	t.h.mu.Lock()
	f := t.joins
	t.h.mu.Unlock()
	if f == nil {
		return JoinRefused, ErrNoTerminal
	}
	done, ok := t.addPending(Pending{Kind: PendingJoin, ID: req.ID, User: req.User})
	if !ok {
		return JoinRefused, nil // as the terminal refuses one over what it holds
	}
	defer done()
	return f(ctx, req)
}

// Kinds of pending prompts.
const (
	PendingApproval = "approval" // an agent's call waits for the human's approval
	PendingJoin     = "join"     // someone asks to join the session
)

// Pending is a prompt put to the human and not answered yet.
type Pending struct {
	Kind string `json:"kind"` // PendingApproval or PendingJoin
	ID   string `json:"id"`
	// Tool and Agent are the tool an agent asked to run and the agent's
	// client name (approvals).
	Tool  string `json:"tool,omitempty"`
	Agent string `json:"agent,omitempty"`
	// User is the SSH user name of who asks to join (joins).
	User  string    `json:"user,omitempty"`
	Since time.Time `json:"since"`
}

// maxPending bounds the prompts pending at once in a session, approvals
// and joins together: as many as the owner's terminal holds (tui's
// maxPendingApprovals). The pending list is their one count: a prompt
// takes its place there before it is put to the human, and one more is
// refused at once, never listed nor shown; so what the list says is
// pending (what agents read) is what the human has to answer, even when
// many arrive at once.
const maxPending = 16

// addPending lists p as pending until the returned func is called
// (idempotent), and signals watchers both times; ok is false, and nothing
// listed, when maxPending prompts are pending already.
func (t *share) addPending(p Pending) (done func(), ok bool) {
	h := t.h
	p.Since = h.now()
	h.mu.Lock()
	if len(t.pending) >= maxPending {
		h.mu.Unlock()
		return func() {}, false
	}
	t.pending = append(t.pending, p)
	h.mu.Unlock()
	h.signal()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			t.pending = slices.DeleteFunc(t.pending, func(q Pending) bool { return q.Kind == p.Kind && q.ID == p.ID })
			h.mu.Unlock()
			h.signal()
		})
	}, true
}

// Pending returns the prompts waiting for the human, oldest first.
func (t *share) Pending() []Pending {
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	return slices.Clone(t.pending)
}
