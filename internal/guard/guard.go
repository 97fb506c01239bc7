// Package guard contains panics of app code (widgets, models, commands,
// projections, the app factory) to the call that raised them: the caller
// gets an error, and the panic is counted and logged with its stack once
// per site, so a widget that panics in every frame does not flood the log.
package guard

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/raxol-ssh/raxol-ssh/metrics"
)

// maxSites bounds the sites remembered; beyond it panics are still
// counted, and logged at most once per hook.
const maxSites = 4096

// Site is where app code panicked: a session (or "" before one exists),
// a hook (one of metrics.AppHooks) and a widget id (or "").
type Site struct {
	Session, Hook, Widget string
}

// Reporter counts contained panics and logs each site's first one. A nil
// *Reporter contains panics and reports nothing.
type Reporter struct {
	log     *slog.Logger
	metrics *metrics.Metrics

	mu   sync.Mutex
	seen map[Site]bool
}

// New returns a Reporter logging to log (nil: slog.Default()) and
// counting in m (may be nil).
func New(log *slog.Logger, m *metrics.Metrics) *Reporter {
	if log == nil {
		log = slog.Default()
	}
	return &Reporter{log: log, metrics: m, seen: map[Site]bool{}}
}

// Report counts a panic at s and logs it, with stack, if s has not been
// logged before.
func (r *Reporter) Report(s Site, value any, stack []byte) {
	if r == nil {
		return
	}
	// Counted after it is logged, so that whoever sees the count (a
	// scrape, a test) finds the log line too.
	defer r.metrics.AppPanic(s.Hook)
	key := s
	r.mu.Lock()
	if len(r.seen) >= maxSites && !r.seen[s] {
		key = Site{Hook: s.Hook} // one more line per hook at most
	}
	first := !r.seen[key]
	r.seen[key] = true
	r.mu.Unlock()
	if first {
		r.log.Error("app code panicked; contained (logged once per session, hook and widget)",
			"session", s.Session, "hook", s.Hook, "widget", s.Widget,
			"panic_type", fmt.Sprintf("%T", value), "stack", string(stack))
		// The value may quote app data (a message, a password); like the
		// dispatcher's, it stays out of errors.
		r.log.Debug("app code panic value", "session", s.Session, "hook", s.Hook, "widget", s.Widget, "panic", fmt.Sprint(value))
	}
}

// Forget drops the sites of a session that ended.
func (r *Reporter) Forget(session string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	for s := range r.seen {
		if s.Session == session {
			delete(r.seen, s)
		}
	}
	r.mu.Unlock()
}

// Session returns the scope of one session's app code.
func (r *Reporter) Session(id string) Scope { return Scope{r: r, session: id} }

// Scope runs one session's app code. The zero Scope contains panics and
// reports nothing.
type Scope struct {
	r       *Reporter
	session string
}

// Reporter returns the scope's reporter (may be nil).
func (s Scope) Reporter() *Reporter { return s.r }

// Report reports a panic recovered elsewhere, in this session.
func (s Scope) Report(hook, widget string, value any, stack []byte) {
	s.r.Report(Site{Session: s.session, Hook: hook, Widget: widget}, value, stack)
}

// Do runs f. A panic in it is reported and returned as a *Panic.
func (s Scope) Do(hook, widget string, f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.Report(hook, widget, v, debug.Stack())
			err = &Panic{Hook: hook, Widget: widget, Value: v}
		}
	}()
	f()
	return nil
}

// Call runs f in s and returns its result, or the zero value and a *Panic.
func Call[T any](s Scope, hook, widget string, f func() T) (v T, err error) {
	err = s.Do(hook, widget, func() { v = f() })
	return v, err
}

// Panic is the error of a contained panic.
type Panic struct {
	Hook, Widget string
	Value        any
}

func (p *Panic) Error() string {
	if p.Widget != "" {
		return fmt.Sprintf("app code panicked in %s of widget %q", p.Hook, p.Widget)
	}
	return fmt.Sprintf("app code panicked in %s", p.Hook)
}
