package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/web"
)

// page is the view's page: the session's tree as it is now, read only
// until the live channel says the owner let this browser drive; app.js
// keeps it live.
func (v *webViews) page(w http.ResponseWriter, se *session.Session, g *viewGrant) {
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	role := v.roleOf(g)
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s · raxol-ssh</title>\n", html.EscapeString(se.App))
	b.WriteString("<link rel=\"stylesheet\" href=\"view/app.css\">\n<link rel=\"stylesheet\" href=\"view/colors.css\">\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<header><span>Session %s (%s) · you are %s</span> <span id=\"role\">%s</span> <span id=\"state\" role=\"status\"></span></header>\n",
		html.EscapeString(se.ID), html.EscapeString(se.App), html.EscapeString(g.name), html.EscapeString(roleSentence(role)))
	b.WriteString("<section id=\"prompts\" aria-label=\"Approvals\" hidden></section>\n")
	b.WriteString("<section id=\"browsers\" aria-label=\"Browsers on this session\" hidden></section>\n")
	fmt.Fprintf(&b, "<main id=\"view\" data-role=\"%s\">", role)
	b.Write(v.render(se, role < viewDriver).html)
	b.WriteString("</main>\n<div id=\"announce\" class=\"sr-only\" role=\"status\" aria-live=\"polite\"></div>\n")
	b.WriteString("<script src=\"view/app.js\"></script>\n</body>\n</html>\n")
	_, _ = w.Write([]byte(b.String()))
}

// roleSentence is what the page's header says of a role.
func roleSentence(r viewRole) string {
	switch r {
	case viewObserver:
		return "watching (read only)"
	case viewDriver:
		return "driving: click and type"
	case viewOwner:
		return "the owner: driving, answering approvals"
	}
	return "asking the session's owner to let you in…"
}

// viewRender is one render of a session's view: the HTML, the spans of
// its widgets, and its skeleton (the HTML with each outermost widget's
// element replaced by its id), which says whether patches of widgets can
// turn the render before into this one. One render is shared by every
// browser that sees the same thing (the same snapshot and attention, read
// only or not): a hundred observers cost one render a frame.
type viewRender struct {
	key      viewKey
	html     []byte
	outer    []web.Part // outermost widgets, in order
	skeleton string
	dupes    bool // a widget id shows twice: only whole frames

	seq    uint64 // numbers the session's renders
	before uint64 // the seq of the render this one followed
	patch  []byte // the "patch" event from that one, or nil: send the frame

	frameEvent []byte // the "frame" event: built once for every browser
}

// sseEvent is a server-sent event named event carrying data.
func sseEvent(event, data string) []byte {
	var b strings.Builder
	b.Grow(len(event) + len(data) + 16)
	b.WriteString("event: " + event + "\n")
	for _, l := range strings.Split(data, "\n") {
		b.WriteString("data: " + l + "\n")
	}
	b.WriteString("\n")
	return []byte(b.String())
}

type viewKey struct {
	version  uint64
	att      session.Attention
	readOnly bool
}

// sessionRenders is a session's latest renders, read only and not.
type sessionRenders struct {
	mu     sync.Mutex
	seq    uint64
	latest [2]*viewRender
}

// render is the session's view now, rendered once for every browser that
// sees it.
func (v *webViews) render(se *session.Session, readOnly bool) *viewRender {
	v.mu.Lock()
	sr := v.renders[se.ID]
	if sr == nil {
		sr = &sessionRenders{}
		v.renders[se.ID] = sr
	}
	v.mu.Unlock()
	snap := se.Dispatcher.Snapshot()
	att := se.Attention()
	key := viewKey{version: snap.Version, att: att, readOnly: readOnly}
	i := 0
	if readOnly {
		i = 1
	}
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if r := sr.latest[i]; r != nil && r.key == key {
		return r
	}
	html, parts := web.RenderParts(snap.Tree, mcpbridge.ViewOptions(att, readOnly))
	sr.seq++
	r := &viewRender{key: key, html: html, seq: sr.seq}
	var sk strings.Builder
	at := 0
	seen := map[string]bool{}
	for _, p := range parts {
		if !p.Outer {
			continue
		}
		r.outer = append(r.outer, p)
		r.dupes = r.dupes || seen[p.ID]
		seen[p.ID] = true
		sk.Write(html[at:p.Start])
		sk.WriteString("\x00" + p.ID + "\x00")
		at = p.End
	}
	sk.Write(html[at:])
	r.skeleton = sk.String()
	r.frameEvent = sseEvent("frame", string(html))
	if prev := sr.latest[i]; prev != nil {
		r.before = prev.seq
		if p := r.patchAfter(prev); p != nil {
			r.patch = sseEvent("patch", string(p))
		}
	}
	sr.latest[i] = r
	return r
}

// dropRenders forgets session id's renders once no browser watches it.
func (v *webViews) dropRenders(id string) {
	if v.viewers.held(id) > 0 {
		return
	}
	v.mu.Lock()
	delete(v.renders, id)
	v.mu.Unlock()
}

// viewPatch is one widget's new element.
type viewPatch struct {
	ID   string `json:"id"`
	HTML string `json:"html"`
}

// patchFrom is the "patch" event of the widgets to replace to turn prev
// (what a browser was sent last) into r, or nil when only the whole frame
// will do: prev is not the render r followed, or patchAfter found none.
func (r *viewRender) patchFrom(prev *viewRender) []byte {
	if prev == nil || r.before != prev.seq {
		return nil
	}
	return r.patch
}

// patchAfter is the JSON of the widgets to replace to turn prev into r,
// or nil when the layout changed (or a widget id shows twice) or the
// patches would be as large as the frame.
func (r *viewRender) patchAfter(prev *viewRender) []byte {
	if r.dupes || prev.dupes || r.skeleton != prev.skeleton || len(r.outer) != len(prev.outer) {
		return nil
	}
	var ps []viewPatch
	size := 0
	for i, p := range r.outer {
		now, was := r.html[p.Start:p.End], prev.html[prev.outer[i].Start:prev.outer[i].End]
		if string(now) != string(was) {
			ps = append(ps, viewPatch{ID: p.ID, HTML: string(now)})
			size += len(now)
		}
	}
	if len(ps) == 0 || size >= len(r.html) {
		return nil
	}
	// Not HTML-escaped: a patch is JSON in an event, never in a page, and
	// \u003c for every "<" of the elements made it nearly the frame's size.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(ps) // strings only
	return bytes.TrimRight(b.Bytes(), "\n")
}

// viewPrompt is an approval prompt as the owner's page shows it.
type viewPrompt struct {
	ID       string `json:"id"`
	Agent    string `json:"agent"`
	Tool     string `json:"tool"`
	Widget   string `json:"widget,omitempty"`
	Args     string `json:"args,omitempty"`
	Prompt   string `json:"prompt,omitempty"`
	ArmedMS  int64  `json:"armed_in_ms"` // answers count from this many ms after it is shown
	Deadline string `json:"deadline,omitempty"`
}

// prompts is the approval prompts waiting for the human, as JSON for the
// owner's page, noting when each was first shown to g (its arming starts
// then), and which prompts they are (what says the list changed: the
// time left to arm changes every frame).
func (v *webViews) prompts(se *session.Session, g *viewGrant) (list, which string) {
	asked := se.Approvals()
	now := v.now()
	out := make([]viewPrompt, 0, len(asked))
	ids := make([]string, 0, len(asked))
	v.mu.Lock()
	live := make(map[string]bool, len(asked))
	for _, a := range asked {
		live[a.ID] = true
		if _, ok := g.shown[a.ID]; !ok {
			g.shown[a.ID] = now
		}
		armed := g.shown[a.ID].Add(max(v.arming, 0)).Sub(now)
		p := viewPrompt{ID: a.ID, Agent: a.Agent, Tool: a.Tool, Widget: a.Widget, Args: a.Args, Prompt: a.Prompt, ArmedMS: max(armed.Milliseconds(), 0)}
		if !a.Deadline.IsZero() {
			p.Deadline = a.Deadline.UTC().Format(time.RFC3339)
		}
		out = append(out, p)
		ids = append(ids, a.ID)
	}
	for id := range g.shown {
		if !live[id] {
			delete(g.shown, id)
		}
	}
	v.mu.Unlock()
	b, _ := json.Marshal(out) // strings and ints only
	return string(b), strings.Join(ids, "\x00")
}

// events is the live channel. A browser not yet let in asks the owner
// first (and ends if refused); then it gets its "role", a "frame" whenever
// the view changed (at most every viewFrameInterval), an "announce" for
// each action an agent took, the owner's "prompts", and "end" when the
// session ends or this browser's access does (a new token, the owner's
// removal, its time).
func (v *webViews) events(w http.ResponseWriter, r *http.Request, se *session.Session, g *viewGrant) {
	release, ok := v.viewers.tryTake(se.ID)
	if !ok {
		http.Error(w, fmt.Sprintf("too many browsers are on this session (limit %d)", v.viewers.max), http.StatusTooManyRequests)
		return
	}
	defer v.dropRenders(se.ID)
	defer release()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	sendBytes := func(ev []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(viewWriteTimeout))
		if _, err := w.Write(ev); err != nil {
			return err
		}
		return rc.Flush()
	}
	send := func(event, data string) error { return sendBytes(sseEvent(event, data)) }
	ctx := r.Context()

	role := v.roleOf(g)
	if role == viewAsking {
		if err := send("state", "Asking the session's owner to let you in…"); err != nil {
			return
		}
		if role = v.admit(ctx, g, se, r.RemoteAddr); role == viewAsking {
			if ctx.Err() == nil {
				_ = send("end", "The session's owner did not let you in.")
			}
			return
		}
	}
	roleJSON, _ := json.Marshal(map[string]string{"role": role.String(), "name": g.name, "says": roleSentence(role)})
	if err := send("role", string(roleJSON)); err != nil {
		return
	}

	// The browser is in the session's presence while its channel is open,
	// as an SSH joiner's terminal is.
	_, detach := se.Attach(session.KindBrowser, g.name+" ("+role.String()+")")
	defer detach()

	changed := make(chan struct{}, 1)
	wake := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	sub := se.Dispatcher.SubscribeFunc(wake)
	defer sub.Close()
	_, stop := se.WatchFunc(wake) // the activity, the human's focus, the prompts, the token
	defer stop()

	var last *viewRender
	lastPrompts, lastBrowsers := "", ""
	seq := se.ActivitySeq()
	_, said := announcement(se.Activity())
	frame := func() error {
		if now := v.render(se, role < viewDriver); now != last {
			var err error
			if p := now.patchFrom(last); p != nil {
				err = sendBytes(p)
			} else if last == nil || string(now.html) != string(last.html) {
				err = sendBytes(now.frameEvent)
			}
			last = now
			if err != nil {
				return err
			}
		}
		if role == viewOwner {
			if p, which := v.prompts(se, g); which != lastPrompts {
				lastPrompts = which
				if err := send("prompts", p); err != nil {
					return err
				}
			}
			if b := v.browserList(se.ID, g); b != lastBrowsers {
				lastBrowsers = b
				return send("browsers", b)
			}
		}
		return nil
	}
	if err := frame(); err != nil {
		return
	}
	// Idle, the channel waits on the session alone: a change wakes it
	// (a new token too, which revokes the access), and what changed is
	// sent at most every viewFrameInterval. The slow tick only notices an
	// access that expired by time.
	ended := func() bool {
		if v.valid(g, se) {
			return false
		}
		_ = send("end", "Your access to this session ended.")
		return true
	}
	// flush sends what changed; false: the channel is done.
	flush := func() bool {
		if ended() { // by a new token: nothing more is sent
			return false
		}
		if err := frame(); err != nil {
			return false
		}
		if s := se.ActivitySeq(); s != seq {
			seq = s
			if text, key := announcement(se.Activity()); key != said {
				said = key
				if text != "" {
					if err := send("announce", text); err != nil {
						return false
					}
				}
			}
		}
		return true
	}
	// A change after a quiet spell is sent at once; what follows within
	// viewFrameInterval waits for the interval's end, together.
	lastSent := time.Now()
	var due <-chan time.Time // armed while a change waits for its frame
	expiry := time.NewTicker(time.Minute)
	defer expiry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.gone:
			_ = send("end", "The session's owner removed you.")
			return
		case <-se.Context().Done():
			_ = frame()
			_ = send("end", "The session ended: "+session.EndReason(se))
			return
		case <-expiry.C:
			if ended() {
				return
			}
		case <-changed:
			if due != nil {
				continue // sent with the frame already due
			}
			if wait := viewFrameInterval - time.Since(lastSent); wait > 0 {
				due = time.After(wait)
				continue
			}
			lastSent = time.Now()
			if !flush() {
				return
			}
		case <-due:
			due = nil
			lastSent = time.Now()
			if !flush() {
				return
			}
		}
	}
}

// announcement is the sentence the live region says for the newest entry
// of the activity log when an agent did it ("" otherwise), and the entry's
// key, to say each entry once.
func announcement(log []session.Action) (text string, key string) {
	if len(log) == 0 {
		return "", ""
	}
	a := log[len(log)-1]
	key = fmt.Sprintf("%d|%s|%d", a.At.UnixNano(), a.Summary, a.Count)
	if !a.Agent {
		return "", key
	}
	text = "agent " + strings.TrimPrefix(a.Origin, "agent:") + " " + a.Summary
	if len(text) > viewAnnounceMaxLen {
		text = text[:viewAnnounceMaxLen]
	}
	return text, key
}
