package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/keyname"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Bounds of what a browser sends.
const (
	viewInputMaxBody = 4 << 10 // bytes of one event
	viewInputMaxText = 1024    // runes of one paste
	viewInputMaxID   = 256     // bytes of a widget id
	viewInputRate    = 40      // events a second, sustained, per browser
	viewInputBurst   = 80
	viewInputTimeout = 5 * time.Second // for the fold of one event
)

// viewEvent is what a driver's page sends: a click on a widget, a key
// pressed in it (a key name as raxol_send_key takes), or text pasted.
type viewEvent struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // "click", "key", "paste"
	Key  string `json:"key,omitempty"`
	Text string `json:"text,omitempty"`
}

// errView* are the refusals of what a browser sends, each with its status.
var (
	errViewNotDriver = errors.New("you watch this session: ask its owner to let you drive")
	errViewBadEvent  = errors.New("malformed event")
	errViewTooFast   = errors.New("too many events: slow down")
)

// viewBodyError is a body that did not arrive whole within the deadline:
// answered 408, not 400.
type viewBodyError struct {
	code int
	err  error
}

func (e viewBodyError) Error() string { return e.err.Error() }
func (e viewBodyError) Unwrap() error { return e.err }

// viewStatus is the status a refusal of what a browser sent is answered
// with: the body's own, else code.
func viewStatus(err error, code int) int {
	var be viewBodyError
	if errors.As(err, &be) {
		return be.code
	}
	return code
}

// readJSON decodes a browser's JSON body into dst, bounded (in size, and
// in time by MCPOptions.BodyTimeout, as an agent's body is) and strict.
func (v *webViews) readJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		return fmt.Errorf("%w: Content-Type must be application/json", errViewBadEvent)
	}
	r.Body = http.MaxBytesReader(w, r.Body, viewInputMaxBody)
	if code, err := mcpbridge.ReadBody(w, r, v.bodyTimeout, 0); err != nil {
		if !errors.Is(err, mcpbridge.ErrBodyTimeout) {
			return fmt.Errorf("%w: %v", errViewBadEvent, err) // too large, or cut short: malformed
		}
		v.metrics.MCPRejected(mcpbridge.BodyRejection(err))
		return viewBodyError{code, err}
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("%w: %v", errViewBadEvent, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: one JSON object per request", errViewBadEvent)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: trailing data", errViewBadEvent)
	}
	return nil
}

// viewError answers a browser's refused event with a JSON error.
func viewError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	_, _ = w.Write(b)
}

// uiEvent is the event a terminal would hand the widget for e.
func (e viewEvent) uiEvent() (ui.Event, error) {
	if e.ID == "" || len(e.ID) > viewInputMaxID || !utf8.ValidString(e.ID) {
		return nil, fmt.Errorf("%w: a widget id is needed", errViewBadEvent)
	}
	switch e.Kind {
	case "click":
		return ui.ClickEvent{}, nil
	case "key":
		k, err := keyname.Parse(e.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errViewBadEvent, err)
		}
		return k, nil
	case "paste":
		if e.Text == "" || !utf8.ValidString(e.Text) || utf8.RuneCountInString(e.Text) > viewInputMaxText {
			return nil, fmt.Errorf("%w: a paste is 1 to %d characters of UTF-8", errViewBadEvent, viewInputMaxText)
		}
		return tea.PasteMsg{Content: e.Text}, nil
	}
	return nil, fmt.Errorf("%w: kind must be click, key or paste", errViewBadEvent)
}

// input takes a driver's event and hands it to its widget the way a
// terminal hands a key or a click (tui.Route: the widget's event path,
// folded by the session's one dispatcher, noted in the activity log as
// this browser's).
func (v *webViews) input(w http.ResponseWriter, r *http.Request, se *session.Session, g *viewGrant) {
	var e viewEvent
	if err := v.readJSON(w, r, &e); err != nil {
		viewError(w, viewStatus(err, http.StatusBadRequest), err)
		return
	}
	if v.roleOf(g) < viewDriver {
		viewError(w, http.StatusForbidden, errViewNotDriver)
		return
	}
	if !g.input.Allow() {
		viewError(w, http.StatusTooManyRequests, errViewTooFast)
		return
	}
	ev, err := e.uiEvent()
	if err != nil {
		viewError(w, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), viewInputTimeout)
	defer cancel()
	origin := dispatcher.Origin{Kind: dispatcher.OriginHuman, Name: g.name}
	acted, err := tui.Route(ctx, se, e.ID, ev, origin, func(id string) (*ui.LocalState, func()) {
		g.localMu.Lock()
		st, ok := g.locals[id]
		if !ok {
			if len(g.locals) >= viewMaxLocals {
				clear(g.locals) // bounded: a widget forgotten starts afresh
			}
			st = &ui.LocalState{}
			g.locals[id] = st
		}
		return st, g.localMu.Unlock
	})
	se.Touch()
	if err != nil {
		viewError(w, http.StatusConflict, fmt.Errorf("the app did not take it: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(map[string]any{"taken": len(acted) > 0})
	_, _ = w.Write(b)
}

// viewMaxLocals bounds the widgets whose local state a browser keeps.
const viewMaxLocals = 256

// viewAnswer is the owner's answer to an approval prompt, from their page.
type viewAnswer struct {
	Prompt string `json:"prompt"`
	Answer string `json:"answer"` // "once", "session", "deny"
}

var viewAnswers = map[string]session.Approval{
	"once":    session.ApprovedOnce,
	"session": session.ApprovedForSession,
	"deny":    session.Refused,
}

// answer takes the owner's answer to an approval prompt from their
// browser, under the terminal's arming rule: an answer that arrives
// before the prompt was shown on this browser for the arming delay does
// not count (409), as keys typed before a terminal's prompt armed are
// swallowed.
func (v *webViews) answer(w http.ResponseWriter, r *http.Request, se *session.Session, g *viewGrant) {
	var a viewAnswer
	if err := v.readJSON(w, r, &a); err != nil {
		viewError(w, viewStatus(err, http.StatusBadRequest), err)
		return
	}
	if v.roleOf(g) != viewOwner {
		viewError(w, http.StatusForbidden, errors.New("only the session's owner answers approvals"))
		return
	}
	ans, ok := viewAnswers[a.Answer]
	if !ok {
		viewError(w, http.StatusBadRequest, fmt.Errorf("%w: answer must be once, session or deny", errViewBadEvent))
		return
	}
	v.mu.Lock()
	shown, seen := g.shown[a.Prompt]
	v.mu.Unlock()
	switch {
	case !seen:
		viewError(w, http.StatusNotFound, errors.New("no such prompt is waiting on this page"))
		return
	case v.now().Before(shown.Add(max(v.arming, 0))):
		viewError(w, http.StatusConflict, errors.New("the prompt is not armed yet: answers count once it has been shown for a moment"))
		return
	}
	if !se.AnswerApproval(a.Prompt, ans) {
		viewError(w, http.StatusNotFound, errors.New("that prompt was answered or withdrawn already"))
		return
	}
	v.log.Info("approval answered in the browser", "session", se.ID, "browser", g.name, "prompt", a.Prompt, "answer", a.Answer)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"answered":true}` + "\n"))
}

// remove takes the owner's removal of a browser from their page: its
// access ends and its channels close at once, as with ctrl+x in the
// terminal's attach panel, for that one browser.
func (v *webViews) remove(w http.ResponseWriter, r *http.Request, se *session.Session, g *viewGrant) {
	var req struct {
		Name string `json:"name"`
	}
	if err := v.readJSON(w, r, &req); err != nil {
		viewError(w, viewStatus(err, http.StatusBadRequest), err)
		return
	}
	if v.roleOf(g) != viewOwner {
		viewError(w, http.StatusForbidden, errors.New("only the session's owner removes browsers"))
		return
	}
	if !v.removeOne(se.ID, req.Name) {
		viewError(w, http.StatusNotFound, errors.New("no such browser is on this session"))
		return
	}
	v.log.Info("browser removed by the owner's browser", "session", se.ID, "by", g.name, "removed", req.Name)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"removed":true}` + "\n"))
}
