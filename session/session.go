package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Bounds, in runes, on the text from outside a session that it keeps.
// Whatever enters a session from the network (an SSH user name, an
// agent's client name or tool name, what an approval prompt shows) is
// cleaned with safetext.Clean at the parts' entry points (Attach and Join
// in presence.go, Record in activity.go, RequestApproval, RequestJoin and
// SendKeys in share.go), so that terminals and the MCP resources only
// ever read text safe to draw.
const (
	maxName    = 96   // a user or client name ("name version")
	maxField   = 128  // a tool name, widget id or label, an origin, an address
	maxSummary = 256  // an activity entry in words
	maxPrompt  = 512  // what a policy asks
	maxArgs    = 1024 // arguments as shown to the human
)

// Owner is who started a session.
type Owner struct {
	// User is the SSH user name the client gave, as given: with the key
	// it is the owner's identity (Key), so it is not cleaned, and it is
	// never drawn (terminals show the cleaned name given to Attach).
	User string
	// KeyFingerprint is the SHA256 fingerprint of the public key the
	// client proved, or "" when it authenticated otherwise.
	KeyFingerprint string
	// RemoteAddr is the client's network address.
	RemoteAddr string
}

// Key identifies an owner for per-owner caps and ownership: what the
// client proved, never what it may vary freely. With a key that is the
// key's fingerprint alone: one key logging in under many user names is
// one owner. Without a key (a dev server's keyboard-interactive login, or
// an owner made by a program) the user name is all there is, so it is
// the key; such a client can just as well present a fresh key on every
// login there (a dev server without authorized keys takes any key), so
// no identity binds it and its bound is the per-address connection cap.
// The two kinds of key never collide.
func (o Owner) Key() string {
	if o.KeyFingerprint != "" {
		return "key\x00" + o.KeyFingerprint
	}
	return "user\x00" + o.User
}

// Session is one live app: its model is owned by Dispatcher.
type Session struct {
	// Fixed at creation.

	// ID is the session's public handle (URL-safe, 144 random bits).
	ID string
	// App is the app's short name, its MCP tool namespace.
	App string
	// Owner is who started the session.
	Owner Owner
	// Created is when the session started.
	Created time.Time
	// Dispatcher folds every change to the session's model.
	Dispatcher *dispatcher.Dispatcher

	guard     guard.Scope
	ctx       context.Context // done when the session ends; its cause says why
	cancel    context.CancelCauseFunc
	token     atomic.Pointer[token]
	lastInput atomic.Int64 // unix nanoseconds
	rotating  sync.Mutex   // held by RotateToken: one rotation at a time

	// hub is the session's lock (mu), clock (now) and watchers (Watch,
	// WatchPresence), which every part below shares through a pointer.
	hub
	// The parts, each with its own small API promoted to Session; their
	// state is under mu.
	roster   // presence: who is attached (Attach, Join, Attached, ...)
	share    // the primary terminal's share: attention, screen, sinks, pending prompts
	activity // the activity log, recent actions, Control

	// Under mu.
	saver func() error // makes the session's record durable (SetSaver)
	// committer makes the model as of a dispatcher version durable where
	// another node restores it from (SetCommitter).
	committer func(ctx context.Context, version uint64) error
}

// newSession returns a session with its parts wired to its hub, its
// context live and its last input at created; the caller sets its token
// and Dispatcher.
func (m *Manager) newSession(id, app string, owner Owner, created time.Time) *Session {
	s := &Session{ID: id, App: app, Owner: owner, Created: created, guard: m.panics.Session(id)}
	s.hub.now = m.now
	s.roster = roster{h: &s.hub, idleAfter: m.idleAfter}
	s.share = share{h: &s.hub}
	s.activity = activity{h: &s.hub, save: s.saveNow}
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	s.lastInput.Store(created.UnixNano())
	return s
}

// Guard is the scope the session's app code runs in: a panic in a widget,
// a projection or the model is contained to that call, counted and logged
// once per (session, hook, widget).
func (s *Session) Guard() guard.Scope { return s.guard }

// Context is done once the session has ended; context.Cause says why (an
// error matching [ErrEnded], whose message is for the humans: see
// [EndReason]).
func (s *Session) Context() context.Context { return s.ctx }

// Token returns the session's current MCP bearer token.
// It is "" for a session restored from a snapshot until the token is
// rotated: a snapshot keeps only the token's hash (TokenHash), which still
// lets the agents that had it in.
func (s *Session) Token() string { return s.token.Load().plain }

// TokenHash is the SHA-256 of the current bearer token: what a snapshot
// saves, and what names the token in grants (it changes on rotation).
func (s *Session) TokenHash() [sha256.Size]byte { return s.token.Load().hash }

// CheckToken reports, in constant time, whether tok is the session's
// current bearer token.
func (s *Session) CheckToken(tok string) bool {
	h := sha256.Sum256([]byte(tok))
	cur := s.token.Load().hash
	return subtle.ConstantTimeCompare(h[:], cur[:]) == 1
}

// token is a bearer token: the token itself ("" when only its hash is
// known, after a restore) and its SHA-256.
type token struct {
	plain string
	hash  [sha256.Size]byte
}

func newToken(plain string) *token {
	return &token{plain: plain, hash: sha256.Sum256([]byte(plain))}
}

// Touch records input now; idle time is measured from the last Touch.
func (s *Session) Touch() { s.lastInput.Store(s.now().UnixNano()) }

// LastInput returns the time of the last input (the start time if none).
func (s *Session) LastInput() time.Time { return time.Unix(0, s.lastInput.Load()) }

// Manager is the registry of live sessions. It is safe for concurrent use.
type Manager struct {
	now       func() time.Time
	idleAfter time.Duration
	dispOpts  *dispatcher.Options
	onEnd     func(*Session)
	count     func(delta int)
	onClose   func(s *Session, terminalID, reason string)
	panics    *guard.Reporter
	mu        sync.Mutex // protects the following
	sessions  map[string]*Session
	closed    bool
	byOwner   map[string]int
}

// Options configures a [Manager]. The zero value is usable.
type Options struct {
	// Dispatcher is passed to every session's dispatcher; nil uses the
	// dispatcher defaults.
	Dispatcher *dispatcher.Options
	// OnEnd, if set, runs after a session has ended and left the registry.
	OnEnd func(*Session)
	// Count, if set, is called with +1 as a session joins the registry
	// (Start, StartFunc, Restore) and with -1 as it leaves (EndCause),
	// under the registry's lock: a gauge it moves equals [Manager.Count]
	// at every instant, whatever path made the session. It must be quick
	// and must not call the Manager.
	Count func(delta int)
	// Panics counts and logs the contained panics of every session's app
	// code (Session.Guard, the dispatcher's recovers); nil logs them to
	// slog.Default and counts nothing.
	Panics *guard.Reporter
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnCloseTerminal, if set, is called when a command of the app
	// returns ui.CloseTerminalMsg while folding input from the terminal
	// whose attachment id is terminalID (dispatcher.Origin.ID). It must
	// not block.
	OnCloseTerminal func(s *Session, terminalID, reason string)
	// AgentIdleAfter is how long an attached agent may go without acting
	// before presence shows it idle (Attachment.Idle); default
	// [DefaultAgentIdleAfter].
	AgentIdleAfter time.Duration
}

// NewManager returns an empty registry.
func NewManager(opts *Options) *Manager {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Panics == nil {
		o.Panics = guard.New(nil, nil)
	}
	if o.AgentIdleAfter <= 0 {
		o.AgentIdleAfter = DefaultAgentIdleAfter
	}
	return &Manager{
		panics:    o.Panics,
		now:       o.Now,
		idleAfter: o.AgentIdleAfter,
		dispOpts:  o.Dispatcher,
		onEnd:     o.OnEnd,
		count:     o.Count,
		onClose:   o.OnCloseTerminal,
		sessions:  make(map[string]*Session),
		byOwner:   make(map[string]int),
	}
}

// Start creates a session of app for owner around model and registers it.
// maxPerOwner > 0 refuses a session beyond that many live ones of the same
// owner ([Owner.Key]: one key under any user name is one owner); ok is
// then false and no session is created. Every session counts until it
// ends, one waiting for its owner to resume it included.
func (m *Manager) Start(app string, owner Owner, model ui.Model, maxPerOwner int) (s *Session, ok bool, err error) {
	return m.StartFunc(app, owner, func(string) (ui.Model, error) { return model, nil }, maxPerOwner)
}

// StartFunc is [Manager.Start] with the model made by newModel, given the
// new session's id, once the owner's slot is reserved. An error of
// newModel is returned as it is, and no session starts.
//
// The owner's slot is checked and taken under one lock before any work,
// so concurrent starts of one owner are counted one by one against
// maxPerOwner. The session, once registered, gives it back when it ends
// (EndCause); every other way out gives it back at once: an error, Close
// meanwhile, a panic of newModel or of the app's Init.
func (m *Manager) StartFunc(app string, owner Owner, newModel func(id string) (ui.Model, error), maxPerOwner int) (s *Session, ok bool, err error) {
	id, err := randomString(18)
	if err != nil {
		return nil, false, fmt.Errorf("session id: %w", err)
	}
	tok, err := randomString(32)
	if err != nil {
		return nil, false, fmt.Errorf("session token: %w", err)
	}
	key := owner.Key()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, false, ErrClosed
	}
	if maxPerOwner > 0 && m.byOwner[key] >= maxPerOwner {
		m.mu.Unlock()
		return nil, false, nil
	}
	m.byOwner[key]++ // reserve the owner's slot
	now := m.now()
	m.mu.Unlock()
	registered := false
	defer func() {
		if !registered {
			m.mu.Lock()
			m.releaseLocked(key)
			m.mu.Unlock()
		}
	}()

	model, err := newModel(id)
	if err == nil && model == nil {
		err = errors.New("session: nil model")
	}
	if err != nil {
		return nil, false, err
	}

	s = m.newSession(id, app, owner, now)
	s.token.Store(newToken(tok))
	// The dispatcher runs the app's Init; do it outside the lock, and only
	// then publish the session, so nobody sees one without a dispatcher.
	s.Dispatcher = dispatcher.New(model, s.dispatcherOptions(m.dispOpts, m.quit))

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		s.Dispatcher.Close()
		s.cancel(ErrClosed)
		return nil, false, ErrClosed
	}
	m.registerLocked(s)
	registered = true // the slot is the session's now: EndCause gives it back
	m.mu.Unlock()
	return s, true, nil
}

// registerLocked publishes s in the registry and counts it; its owner's
// slot is already taken.
func (m *Manager) registerLocked(s *Session) {
	m.sessions[s.ID] = s
	if m.count != nil {
		m.count(1)
	}
}

func (m *Manager) releaseLocked(ownerKey string) {
	if m.byOwner[ownerKey]--; m.byOwner[ownerKey] <= 0 {
		delete(m.byOwner, ownerKey)
	}
}

// Get returns the live session with the given id.
func (m *Manager) Get(id string) (*Session, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	return s, ok
}

// End ends the session with the cause [ErrEnded]; see [Manager.EndCause].
func (m *Manager) End(id string) { m.EndCause(id, ErrEnded) }

// EndCause removes the session, closes its dispatcher, cancels its context
// with cause (what its humans are told; nil means ErrEnded) and runs
// OnEnd. Ending an unknown or already ended session does nothing.
func (m *Manager) EndCause(id string, cause error) {
	if cause == nil {
		cause = ErrEnded
	}
	m.mu.Lock()
	s, ok := m.sessions[id]
	if ok {
		delete(m.sessions, id)
		m.releaseLocked(s.Owner.Key())
		if m.count != nil {
			m.count(-1)
		}
	}
	m.mu.Unlock()
	if !ok {
		return
	}
	s.cancel(cause)
	if s.Dispatcher != nil {
		s.Dispatcher.Close()
	}
	if m.onEnd != nil {
		m.onEnd(s)
	}
	m.panics.Forget(id)
}

// List returns the live sessions, oldest first.
func (m *Manager) List() []*Session {
	m.mu.Lock()
	out := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		out = append(out, s)
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b *Session) int { return a.Created.Compare(b.Created) })
	return out
}

// Count returns the number of live sessions.
func (m *Manager) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// Close ends every session and refuses new ones.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	ids := make([]string, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	for _, id := range ids {
		m.End(id)
	}
}

// quit carries out what an app's command asked for (dispatcher OnQuit):
// tea.Quit and ui.EndSessionMsg end the session with their reason,
// ui.CloseTerminalMsg closes the terminal whose input led to it. It runs
// on the command's goroutine, which the dispatcher's Close waits for, so
// the session ends on a goroutine of its own.
// appEnded is what a session's humans are told when the app ended it
// without a reason of its own.
const appEnded = "the app ended the session"

func (m *Manager) quit(s *Session, o dispatcher.Origin, msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.QuitMsg:
		if o.Led() == dispatcher.OriginAgent {
			if s.CanApprove() {
				// The app quits because of what an agent did: the owner
				// decides whether the session ends.
				go m.askToQuit(s, o)
				return
			}
			// Nobody to ask: it ends once the agent's call that caused it
			// has had its answer.
			time.AfterFunc(agentQuitGrace, func() { m.EndCause(s.ID, Ended(appEnded)) })
			return
		}
		go m.EndCause(s.ID, Ended(appEnded))
	case ui.EndSessionMsg:
		reason := safetext.Clean(msg.Reason, maxSummary)
		if reason == "" {
			reason = appEnded
		}
		if o.Led() == dispatcher.OriginAgent {
			// An agent's call led to it (the app ended the session, or
			// its Update panicked and cannot be rolled back): the call
			// is answered (update_failed, say) before the session's
			// endpoint closes.
			time.AfterFunc(agentQuitGrace, func() { m.EndCause(s.ID, Ended(reason)) })
			return
		}
		go m.EndCause(s.ID, Ended(reason))
	case ui.CloseTerminalMsg:
		if o.Led() == dispatcher.OriginHuman && o.ID != "" && m.onClose != nil {
			m.onClose(s, o.ID, safetext.Clean(msg.Reason, maxSummary))
		}
	}
}

// agentQuitGrace is how long a session whose app quit because of an
// agent's call, with no human to ask, goes on: the call is answered
// before the session's endpoint closes.
const agentQuitGrace = 500 * time.Millisecond

// quitAsk bounds how long an agent-caused quit waits for the owner.
const quitAsk = 2 * time.Minute

// askToQuit asks the owner whether the app may end the session after an
// agent's action made it quit; refused (or unanswered), it goes on.
func (m *Manager) askToQuit(s *Session, o dispatcher.Origin) {
	ctx, cancel := context.WithTimeout(s.Context(), quitAsk)
	defer cancel()
	a, err := s.RequestApproval(ctx, ApprovalRequest{
		// A command's origin is named for the fold that ran it.
		Agent:    strings.TrimPrefix(o.Name, string(dispatcher.OriginAgent)+":"),
		Tool:     "quit",
		Prompt:   "the app wants to quit after this agent's action; end the session?",
		Deadline: time.Now().Add(quitAsk),
	})
	if err == nil && a != Refused {
		m.EndCause(s.ID, Ended(appEnded))
		return
	}
	s.Record(Action{At: time.Now(), Origin: o.String(), Agent: true, Action: "quit",
		Summary: "the app wanted to quit after an agent's action; the owner kept the session", Outcome: "refused"})
}

func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// dispatcherOptions adds the session's own hooks to the manager's
// dispatcher options: what commands and timers fold goes in the activity
// log, as what humans and agents do is recorded where they act.
func (s *Session) dispatcherOptions(base *dispatcher.Options, quit func(*Session, dispatcher.Origin, tea.Msg)) *dispatcher.Options {
	var o dispatcher.Options
	if base != nil {
		o = *base
	}
	o.Hooks.OnQuit = func(origin dispatcher.Origin, msg tea.Msg) { quit(s, origin, msg) }
	onPanic := o.Hooks.OnPanic
	o.Hooks.OnPanic = func(hook string, value any, stack []byte) {
		if onPanic != nil {
			onPanic(hook, value, stack)
		}
		s.guard.Report(hook, "", value, stack)
	}
	next := o.Hooks.OnApplied
	o.Hooks.OnApplied = func(origin dispatcher.Origin, msgs []tea.Msg) {
		if next != nil {
			next(origin, msgs)
		}
		if origin.Kind == dispatcher.OriginCommand || origin.Kind == dispatcher.OriginTimer {
			s.recordCommand(origin, msgs)
		}
	}
	return &o
}
