package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
)

// Attention is where the human's attention is in a terminal: the focused
// widget and the widget under the mouse. The focus lens follows it.
type Attention struct {
	Focus string
	Hover string
}

// maxRecent is how many recently acted-on widgets a session remembers.
const maxRecent = 16

// ErrNoTerminal is returned when keys are sent to a session with no
// terminal attached to receive them.
var ErrNoTerminal = errors.New("session: no terminal attached")

// KeySink delivers key presses into a terminal as if typed, on behalf of
// the named agent. It returns an error when a key cannot be delivered.
type KeySink func(agent string, keys []string) error

// shared is the terminal-side state the MCP projection reads. Its fields
// are protected by Session.mu.
type shared struct {
	attention     Attention
	recent        []string
	screen        string
	screenVersion uint64
	hasScreen     bool
	keys          KeySink
	approvals     ApprovalSink
	joins         JoinSink

	saver func() error // makes the session's record durable (SetSaver)
	// committer makes the model as of a dispatcher version durable where
	// another node restores it from (SetCommitter).
	committer func(ctx context.Context, version uint64) error
	rotating  sync.Mutex // held by RotateToken: one rotation at a time

	pending     []Pending // prompts waiting for the human, oldest first
	activity    []Action
	activitySeq uint64
	control     Control
	watchers    map[int]watcher
	presence    map[int]watcher
	nextWatch   int
}

// SetAttention records the human's attention; watchers are signalled when
// it changed.
func (s *Session) SetAttention(a Attention) {
	s.mu.Lock()
	changed := s.shared.attention != a
	s.shared.attention = a
	s.mu.Unlock()
	if changed {
		s.signal()
	}
}

// Attention returns the human's attention.
func (s *Session) Attention() Attention {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shared.attention
}

// NoteAction records that someone acted on widget id, most recent first.
func (s *Session) NoteAction(id string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	r := slices.DeleteFunc(s.shared.recent, func(x string) bool { return x == id })
	r = slices.Insert(r, 0, id)
	if len(r) > maxRecent {
		r = r[:maxRecent]
	}
	changed := !slices.Equal(r, s.shared.recent)
	s.shared.recent = r
	s.mu.Unlock()
	if changed {
		s.signal()
	}
}

// Recent returns the widgets recently acted on, most recent first.
func (s *Session) Recent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.shared.recent)
}

// SetScreen records what the owner's terminal shows now (styled text) and
// the model snapshot version it shows.
func (s *Session) SetScreen(text string, version uint64) {
	s.mu.Lock()
	changed := !s.shared.hasScreen || s.shared.screen != text
	s.shared.screen, s.shared.hasScreen = text, true
	s.shared.screenVersion = max(s.shared.screenVersion, version)
	s.mu.Unlock()
	if changed {
		s.signal()
	}
}

// Show records what the owner's terminal shows now and the human's
// attention, as SetScreen and SetAttention do, with one signal to the
// watchers if either changed.
func (s *Session) Show(text string, version uint64, a Attention) {
	s.mu.Lock()
	changed := !s.shared.hasScreen || s.shared.screen != text || s.shared.attention != a
	s.shared.screen, s.shared.hasScreen = text, true
	s.shared.screenVersion = max(s.shared.screenVersion, version)
	s.shared.attention = a
	s.mu.Unlock()
	if changed {
		s.signal()
	}
}

// Screen returns what the owner's terminal shows now, the snapshot version
// it shows, and whether a terminal has drawn anything.
func (s *Session) Screen() (text string, version uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shared.screen, s.shared.screenVersion, s.shared.hasScreen
}

// SetKeySink installs where agent key presses go (the owner's terminal);
// nil removes it.
func (s *Session) SetKeySink(k KeySink) {
	s.mu.Lock()
	s.shared.keys = k
	s.mu.Unlock()
}

// SendKeys delivers key presses into the owner's terminal as if typed;
// the agent's name is cleaned (safetext.Clean) and bounded.
func (s *Session) SendKeys(agent string, keys []string) error {
	agent = safetext.Clean(agent, maxName)
	s.mu.Lock()
	k := s.shared.keys
	s.mu.Unlock()
	if k == nil {
		return ErrNoTerminal
	}
	return k(agent, keys)
}

// Watch returns a channel signalled (coalescing, never blocking the
// sender) whenever the attention, the recent actions, the screen or the
// presence change, and a function that stops watching.
func (s *Session) Watch() (<-chan struct{}, func()) { return s.watch(&s.shared.watchers, nil) }

// WatchFunc is Watch, and notify (when not nil) is called after the
// channel is signalled, as WatchPresenceFunc's is.
func (s *Session) WatchFunc(notify func()) (<-chan struct{}, func()) {
	return s.watch(&s.shared.watchers, notify)
}

// WatchPresence is like Watch, for what terminals show besides the model:
// presence, recorded actions and agent control.
func (s *Session) WatchPresence() (<-chan struct{}, func()) {
	return s.watch(&s.shared.presence, nil)
}

// WatchPresenceFunc is WatchPresence, and notify (when not nil) is called
// after the channel is signalled, by the goroutine that changed the
// presence, with the session's lock held: it must not block or call into
// the session.
func (s *Session) WatchPresenceFunc(notify func()) (<-chan struct{}, func()) {
	return s.watch(&s.shared.presence, notify)
}

// watcher is one Watch or WatchPresence.
type watcher struct {
	ch     chan struct{}
	notify func()
}

func (s *Session) watch(set *map[int]watcher, notify func()) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if *set == nil {
		*set = make(map[int]watcher)
	}
	id := s.shared.nextWatch
	s.shared.nextWatch++
	(*set)[id] = watcher{ch: ch, notify: notify}
	s.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.mu.Lock()
			delete(*set, id)
			s.mu.Unlock()
		})
	}
}

func (s *Session) signal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	notifyLocked(s.shared.watchers)
}

func (s *Session) signalPresence() {
	s.mu.Lock()
	defer s.mu.Unlock()
	notifyLocked(s.shared.presence)
	notifyLocked(s.shared.watchers)
}

// notifyLocked signals every channel of set without blocking; s.mu is held.
func notifyLocked(set map[int]watcher) {
	for _, w := range set {
		select {
		case w.ch <- struct{}{}:
		default:
		}
		if w.notify != nil {
			w.notify()
		}
	}
}

// ErrNotSaved wraps the error of a change that is in force but that the
// session's saver could not make durable (see [Session.SetSaver]): after a
// crash the session may come back without it, or not at all.
var ErrNotSaved = errors.New("session: the change is in force but was not saved")

// SetSaver installs save, which writes the session's record where it
// survives a crash of the process (the server's snapshot store) and
// returns once it is there; nil removes it. A change to what the record
// holds about who may act in the session and how (the token, Control) is
// saved with it before it is reported done: RotateToken and SetControl
// return only after save.
// save is called without the session's locks held.
func (s *Session) SetSaver(save func() error) {
	s.mu.Lock()
	s.shared.saver = save
	s.mu.Unlock()
}

// SetCommitter installs commit, which makes the session's model (and
// activity) as of the dispatcher's snapshot version (or a later one)
// durable where the session would be restored from, and returns once it
// is there; nil removes it. An agent's change is answered only after
// Commit: the server installs one in a cluster, where a session can be
// adopted by another node from its last saved record.
func (s *Session) SetCommitter(commit func(ctx context.Context, version uint64) error) {
	s.mu.Lock()
	s.shared.committer = commit
	s.mu.Unlock()
}

// Commit runs the committer, if any, for the dispatcher's current
// snapshot: what every change folded so far did is durable when it
// returns nil. The error wraps ErrNotSaved: the changes are in force
// here, but the session may come back elsewhere without them.
func (s *Session) Commit(ctx context.Context) error {
	s.mu.Lock()
	commit := s.shared.committer
	s.mu.Unlock()
	if commit == nil {
		return nil
	}
	if err := commit(ctx, s.Dispatcher.Snapshot().Version); err != nil {
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	return nil
}

// Durable runs the saver, if any, and returns once the session's record
// holds its current token and control (the saver may skip a write when it
// does already): the owner's terminal calls it before it shows the token,
// so that an agent is never given a token a crash would forget along with
// the session. The error wraps ErrNotSaved.
func (s *Session) Durable() error { return s.saveNow() }

// saveNow runs the saver, if any; the error wraps ErrNotSaved.
func (s *Session) saveNow() error {
	s.mu.Lock()
	save := s.shared.saver
	s.mu.Unlock()
	if save == nil {
		return nil
	}
	if err := save(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	return nil
}

// RotateToken replaces the session's bearer token and returns the new one.
// The old token stops working at once; watchers are signalled so that the
// MCP side can disconnect clients that used it. With a saver installed
// (SetSaver) the new token is saved before RotateToken returns, so that a
// crash after the human was shown it cannot bring the old one back; until
// then Token reports "" (the new token is shown to nobody before it is
// durable). When saving fails the new token is in force all the same and
// returned with an error wrapping ErrNotSaved. Rotations run one at a
// time.
func (s *Session) RotateToken() (string, error) {
	tok, err := randomString(32)
	if err != nil {
		return "", fmt.Errorf("session token: %w", err)
	}
	s.shared.rotating.Lock()
	defer s.shared.rotating.Unlock()
	nt := newToken(tok)
	s.token.Store(&token{hash: nt.hash}) // in force, not shown yet
	s.signal()
	err = s.saveNow()
	s.token.Store(nt)
	return tok, err
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
func (s *Session) SetApprovalSink(f ApprovalSink) {
	s.mu.Lock()
	s.shared.approvals = f
	s.mu.Unlock()
}

// CanApprove reports whether a human who can answer approval requests is
// attached.
func (s *Session) CanApprove() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shared.approvals != nil
}

// RequestApproval asks the human. Without a terminal to ask it returns
// Refused and ErrNoTerminal. What the prompt shows is cleaned
// (safetext.Clean) and bounded first: the agent chose all of it.
func (s *Session) RequestApproval(ctx context.Context, req ApprovalRequest) (Approval, error) {
	req.Agent = safetext.Clean(req.Agent, maxName)
	req.Tool = safetext.Clean(req.Tool, maxField)
	req.Widget = safetext.Clean(req.Widget, maxField)
	req.Args = safetext.Clean(req.Args, maxArgs)
	req.Prompt = safetext.Clean(req.Prompt, maxPrompt)
	s.mu.Lock()
	f := s.shared.approvals
	s.mu.Unlock()
	if f == nil {
		return Refused, ErrNoTerminal
	}
	done, ok := s.addPending(Pending{Kind: PendingApproval, ID: req.ID, Tool: req.Tool, Agent: req.Agent})
	if !ok {
		return Refused, nil // as the terminal refuses one over what it holds
	}
	defer done()
	return f(ctx, req)
}

// JoinRequest asks the owner whether someone may join their session.
type JoinRequest struct {
	ID             string
	User           string
	KeyFingerprint string
	RemoteAddr     string
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
)

// JoinSink shows a join request to the owner and waits for the answer or
// for ctx to end (then it withdraws the prompt and returns JoinRefused
// with ctx's error).
type JoinSink func(ctx context.Context, req JoinRequest) (JoinAnswer, error)

// SetJoinSink installs where join requests go (the owner's terminal); nil
// removes it.
func (s *Session) SetJoinSink(f JoinSink) {
	s.mu.Lock()
	s.shared.joins = f
	s.mu.Unlock()
}

// RequestJoin asks the owner. Without an owner terminal it returns
// JoinRefused and ErrNoTerminal. What the prompt shows is cleaned
// (safetext.Clean) and bounded first: the stranger chose their user name.
func (s *Session) RequestJoin(ctx context.Context, req JoinRequest) (JoinAnswer, error) {
	req.User = safetext.Clean(req.User, maxName)
	req.KeyFingerprint = safetext.Clean(req.KeyFingerprint, maxField)
	req.RemoteAddr = safetext.Clean(req.RemoteAddr, maxField)
	s.mu.Lock()
	f := s.shared.joins
	s.mu.Unlock()
	if f == nil {
		return JoinRefused, ErrNoTerminal
	}
	done, ok := s.addPending(Pending{Kind: PendingJoin, ID: req.ID, User: req.User})
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
func (s *Session) addPending(p Pending) (done func(), ok bool) {
	p.Since = s.now()
	s.mu.Lock()
	if len(s.shared.pending) >= maxPending {
		s.mu.Unlock()
		return func() {}, false
	}
	s.shared.pending = append(s.shared.pending, p)
	s.mu.Unlock()
	s.signal()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.shared.pending = slices.DeleteFunc(s.shared.pending, func(q Pending) bool { return q.Kind == p.Kind && q.ID == p.ID })
			s.mu.Unlock()
			s.signal()
		})
	}, true
}

// Pending returns the prompts waiting for the human, oldest first.
func (s *Session) Pending() []Pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.shared.pending)
}
