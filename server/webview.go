package server

import (
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
	"github.com/raxol-ssh/raxol-ssh/web"
)

// The browser view of a session: a page that shows the session's
// component tree as semantic HTML (package web), kept live over
// server-sent events, for a person watching without an SSH client. This
// first increment is watch-only: the owner's attach panel (ctrl+o) shows a
// one-time link; the browser that opens it gets an HttpOnly, SameSite
// cookie scoped to the session's view path in exchange, and the link
// stops working. The page has no input.
//
//	GET /sessions/<id>/view?link=<code>  the link: exchanged for the cookie, then 303 to the page
//	GET /sessions/<id>/view              the page (cookie)
//	GET /sessions/<id>/view/events       the live channel (cookie): "frame", "announce", "end"
//	GET /sessions/<id>/view/app.js, app.css

//go:embed webview/app.js webview/app.css
var viewAssets embed.FS

// Bounds of the browser view.
const (
	viewLinkTTL        = 10 * time.Minute // an unused link
	viewGrantTTL       = 12 * time.Hour   // a browser's access, at most
	viewLinksPerSess   = 8                // unused links a session may have
	viewersPerSession  = 16               // live channels a session may have
	viewFrameInterval  = 50 * time.Millisecond
	viewWriteTimeout   = 10 * time.Second
	viewCookie         = "raxol_view"
	viewCodeBytes      = 24
	viewAnnounceMaxLen = 200
)

// errViewLinks is the error for a session with too many unused links.
var errViewLinks = errors.New("server: too many unused browser links for this session; wait for one to expire")

// webViews is the one owner of browser links, the access they grant and
// the live channels open on each session.
type webViews struct {
	log          *slog.Logger
	metrics      *metrics.Metrics
	sessions     *session.Manager
	allowedHosts []string
	origins      []string
	now          func() time.Time

	mu      sync.Mutex
	links   map[[32]byte]viewAccess // sha256 of a link's code → what it opens, until used
	grants  map[[32]byte]viewAccess // sha256 of a cookie → what it opens
	viewers map[string]int          // live channels per session id
}

type viewAccess struct {
	session string
	expires time.Time
	token   [32]byte // the session's token hash when it was given: a new token (ctrl+r) revokes it
}

func newWebViews(log *slog.Logger, m *metrics.Metrics, sessions *session.Manager, opts MCPOptions) *webViews {
	return &webViews{log: log, metrics: m, sessions: sessions, allowedHosts: opts.AllowedHosts, origins: opts.TrustedOrigins,
		now: time.Now, links: map[[32]byte]viewAccess{}, grants: map[[32]byte]viewAccess{}, viewers: map[string]int{}}
}

func randomCode() (string, error) {
	b := make([]byte, viewCodeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("server: random code: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// link makes a one-time link's code for session id, valid while its
// token is the one it has now.
func (v *webViews) link(id string) (string, error) {
	se, ok := v.sessions.Get(id)
	if !ok {
		return "", fmt.Errorf("server: browser link: no live session %s", id)
	}
	code, err := randomCode()
	if err != nil {
		return "", err
	}
	now := v.now()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.expireLocked(now)
	n := 0
	for _, a := range v.links {
		if a.session == id {
			n++
		}
	}
	if n >= viewLinksPerSess {
		return "", errViewLinks
	}
	v.links[sha256.Sum256([]byte(code))] = viewAccess{session: id, expires: now.Add(viewLinkTTL), token: se.TokenHash()}
	return code, nil
}

// expireLocked drops what has expired; v.mu is held.
func (v *webViews) expireLocked(now time.Time) {
	for k, a := range v.links {
		if now.After(a.expires) {
			delete(v.links, k)
		}
	}
	for k, a := range v.grants {
		if now.After(a.expires) {
			delete(v.grants, k)
		}
	}
}

// redeem uses up the link code of session se and returns the cookie that
// grants its access from now on.
func (v *webViews) redeem(se *session.Session, code string) (string, bool) {
	id := se.ID
	cookie, err := randomCode()
	if err != nil {
		return "", false
	}
	now := v.now()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.expireLocked(now)
	k := sha256.Sum256([]byte(code))
	a, ok := v.links[k]
	if !ok || a.session != id {
		return "", false
	}
	delete(v.links, k) // one use
	if a.token != se.TokenHash() {
		return "", false // made before the token changed
	}
	v.grants[sha256.Sum256([]byte(cookie))] = viewAccess{session: id, expires: now.Add(viewGrantTTL), token: a.token}
	return cookie, true
}

// granted reports whether r's cookie opens session se: given for it, not
// expired, and the session's token unchanged since.
func (v *webViews) granted(r *http.Request, se *session.Session) bool {
	c, err := r.Cookie(viewCookie)
	if err != nil || c.Value == "" {
		return false
	}
	now := v.now()
	v.mu.Lock()
	defer v.mu.Unlock()
	a, ok := v.grants[sha256.Sum256([]byte(c.Value))]
	return ok && a.session == se.ID && now.Before(a.expires) && a.token == se.TokenHash()
}

// viewLinkFor is what the attach panel of a terminal with role calls to
// make a browser link to session id: the owner's only.
func (s *Server) viewLinkFor(id string, role tui.Role, base string) func() (string, error) {
	if role != tui.RoleOwner || base == "" {
		return nil
	}
	return func() (string, error) {
		code, err := s.views.link(id)
		if err != nil {
			return "", err
		}
		return strings.TrimRight(base, "/") + "/sessions/" + id + "/view?link=" + code, nil
	}
}

// isView reports whether path (under /sessions/<id>/) is the view's.
func isView(rest string) bool { return rest == "view" || strings.HasPrefix(rest, "view/") }

// serve answers a request for /sessions/<id>/view…; rest is the path
// after /sessions/<id>/.
func (v *webViews) serve(w http.ResponseWriter, r *http.Request, id, rest string) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	case !mcpbridge.OriginAllowed(r, v.origins):
		v.metrics.MCPRejected("origin")
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	case !mcpbridge.HostWellFormed(r.Host) || !mcpbridge.HostAllowed(r, v.allowedHosts):
		v.metrics.MCPRejected("host")
		http.Error(w, "this host name is not served", http.StatusForbidden)
		return
	}
	switch rest {
	case "view/app.js", "view/app.css":
		v.asset(w, strings.TrimPrefix(rest, "view/"))
		return
	}
	se, live := v.sessions.Get(id)
	if code := r.URL.Query().Get("link"); rest == "view" && code != "" {
		var cookie string
		ok := false
		if live {
			cookie, ok = v.redeem(se, code)
		}
		if !ok {
			v.refuse(w, http.StatusForbidden, "This link was used already or has expired. Ask the session's owner for a new one (ctrl+o).")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: viewCookie, Value: cookie, Path: "/sessions/" + id + "/view",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(viewGrantTTL / time.Second)})
		v.log.Info("browser view opened", "session", id, "remote", r.RemoteAddr)
		http.Redirect(w, r, "/sessions/"+id+"/view", http.StatusSeeOther)
		return
	}
	if !live || !v.granted(r, se) {
		v.refuse(w, http.StatusForbidden, "You may not watch this session. Ask its owner for a link (ctrl+o).")
		return
	}
	switch rest {
	case "view":
		v.page(w, se)
	case "view/events":
		v.events(w, r, se)
	default:
		http.NotFound(w, r)
	}
}

// csp is the page's Content-Security-Policy: its own script and style,
// its own live channel, nothing inline, nothing from elsewhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (v *webViews) refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>raxol-ssh</title><p>%s</p></html>\n", html.EscapeString(msg))
}

func (v *webViews) asset(w http.ResponseWriter, name string) {
	b, err := viewAssets.ReadFile("webview/" + name)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if strings.HasSuffix(name, ".js") {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	_, _ = w.Write(b)
}

// page is the view's page: the session's tree as it is now; app.js keeps
// it live.
func (v *webViews) page(w http.ResponseWriter, se *session.Session) {
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s · raxol-ssh</title>\n", html.EscapeString(se.App))
	b.WriteString("<link rel=\"stylesheet\" href=\"view/app.css\">\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<header><span>Watching session %s (%s) · read only</span> <span id=\"state\" role=\"status\"></span></header>\n",
		html.EscapeString(se.ID), html.EscapeString(se.App))
	b.WriteString("<main id=\"view\">")
	b.Write(viewHTML(se))
	b.WriteString("</main>\n<div id=\"announce\" class=\"sr-only\" role=\"status\" aria-live=\"polite\"></div>\n")
	b.WriteString("<script src=\"view/app.js\"></script>\n</body>\n</html>\n")
	_, _ = w.Write([]byte(b.String()))
}

// viewHTML is the session's tree as HTML, the human's focus and the row
// their terminal highlights in the focused widget marked.
func viewHTML(se *session.Session) []byte {
	snap := se.Dispatcher.Snapshot()
	att := se.Attention()
	return web.Render(snap.Tree, web.Options{Focus: att.Focus, Local: func(id string) *ui.LocalState {
		if id != "" && id == att.Focus {
			return &ui.LocalState{Row: att.Row}
		}
		return nil
	}})
}

// events is the live channel: a "frame" whenever the view changed (at most
// every viewFrameInterval), an "announce" for each action an agent took,
// and "end" when the session ends or this browser's access does.
func (v *webViews) events(w http.ResponseWriter, r *http.Request, se *session.Session) {
	v.mu.Lock()
	if v.viewers[se.ID] >= viewersPerSession {
		v.mu.Unlock()
		http.Error(w, fmt.Sprintf("too many browsers watch this session (limit %d)", viewersPerSession), http.StatusTooManyRequests)
		return
	}
	v.viewers[se.ID]++
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		if v.viewers[se.ID]--; v.viewers[se.ID] <= 0 {
			delete(v.viewers, se.ID)
		}
		v.mu.Unlock()
	}()

	// The watcher is in the session's presence while its channel is open,
	// as an SSH joiner's terminal is.
	_, detach := se.Attach(session.KindBrowser, "browser (watching)")
	defer detach()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	send := func(event, data string) error {
		_ = rc.SetWriteDeadline(time.Now().Add(viewWriteTimeout))
		var b strings.Builder
		b.WriteString("event: " + event + "\n")
		for _, l := range strings.Split(data, "\n") {
			b.WriteString("data: " + l + "\n")
		}
		b.WriteString("\n")
		if _, err := w.Write([]byte(b.String())); err != nil {
			return err
		}
		return rc.Flush()
	}

	changed := make(chan struct{}, 1)
	wake := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	sub := se.Dispatcher.SubscribeFunc(wake)
	defer sub.Close()
	_, stop := se.WatchFunc(wake) // the activity and the human's focus
	defer stop()

	ctx := r.Context()
	last := ""
	seq := se.ActivitySeq()
	_, said := announcement(se.Activity())
	frame := func() error {
		now := string(viewHTML(se))
		if now == last {
			return nil
		}
		last = now
		return send("frame", now)
	}
	if err := frame(); err != nil {
		return
	}
	// Idle, the channel waits on the session alone: a change wakes it
	// (a new token too, which revokes the access), and what changed is
	// sent at most every viewFrameInterval. The slow tick only notices an
	// access that expired by time.
	revoked := func() bool {
		if v.granted(r, se) {
			return false
		}
		_ = send("end", "Your access to this session ended.")
		return true
	}
	var due <-chan time.Time // armed while a change waits for its frame
	expiry := time.NewTicker(time.Minute)
	defer expiry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-se.Context().Done():
			_ = frame()
			_ = send("end", "The session ended: "+session.EndReason(se))
			return
		case <-expiry.C:
			if revoked() {
				return
			}
		case <-changed:
			if due == nil {
				due = time.After(viewFrameInterval)
			}
		case <-due:
			due = nil
			if revoked() { // by a new token: nothing more is sent
				return
			}
			if err := frame(); err != nil {
				return
			}
			if s := se.ActivitySeq(); s != seq {
				seq = s
				if text, key := announcement(se.Activity()); key != said {
					said = key
					if text != "" {
						if err := send("announce", text); err != nil {
							return
						}
					}
				}
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
