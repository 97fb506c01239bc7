package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
	"github.com/raxol-ssh/raxol-ssh/web"
)

// The browser view of a session: a page that shows the session's
// component tree as semantic HTML (package web), kept live over
// server-sent events, for a person without an SSH client. The owner's
// attach panel (ctrl+o) shows a one-time link; the browser that opens it
// gets an HttpOnly, SameSite=Strict cookie scoped to the session's view
// path in exchange, and the link stops working. Its live channel then asks
// the owner, as an SSH join does, who answers observer, driver, or "it is
// me" (owner). An observer's page has no input; a driver's clicks and keys
// take the terminal's path (tui.Route); the owner's browser may also
// answer agents' approval prompts, armed as in the terminal.
//
//	GET  /sessions/<id>/view?link=<code>  the link: exchanged for the cookie, then 303 to the page
//	GET  /sessions/<id>/view              the page (cookie)
//	GET  /sessions/<id>/view/events       the live channel (cookie): "role", "frame", "announce", "prompts", "end"
//	POST /sessions/<id>/view/ask          no link: ask the owner to let this browser in (a cookie, then 303 to the page)
//	POST /sessions/<id>/view/input        a driver's click, key or paste (cookie, JSON)
//	POST /sessions/<id>/view/answer       the owner's answer to an approval prompt (cookie, JSON)
//	POST /sessions/<id>/view/remove       the owner removes a browser (cookie, JSON)
//	GET  /sessions/<id>/view/app.js, app.css, colors.css
//
// webview.go holds the access (links, grants, roles, removal);
// webview_channel.go the page and its live channel; webview_input.go what
// a browser sends.

//go:embed webview/app.js webview/app.css
var viewAssets embed.FS

// Bounds of the browser view.
const (
	viewLinkTTL        = 10 * time.Minute // an unused link
	viewGrantTTL       = 12 * time.Hour   // a browser's access, at most
	viewLinksPerSess   = 8                // unused links a session may have
	viewFrameInterval  = 50 * time.Millisecond
	viewWriteTimeout   = 10 * time.Second
	viewCookie         = "raxol_view"
	viewCodeBytes      = 24
	viewAnnounceMaxLen = 200
)

// errViewLinks is the error for a session with too many unused links.
var errViewLinks = errors.New("server: too many unused browser links for this session; wait for one to expire")

// webViews is the one owner of browser links, the access they grant (and
// its role) and the live channels open on each session.
type webViews struct {
	log          *slog.Logger
	metrics      *metrics.Metrics
	sessions     *session.Manager
	allowedHosts []string
	origins      []string
	bodyTimeout  time.Duration  // a posted body arrives within it (MCPOptions.BodyTimeout) or is answered 408
	joinTimeout  time.Duration  // how long the owner is asked
	arming       time.Duration  // how long a prompt ignores answers (negative: none)
	viewers      *slots[string] // live channels per session id: Limits.MaxBrowsersPerSession
	joins        *rateWindow    // asks without a link, with the SSH joins, per client address
	clientIP     func(*http.Request) string
	now          func() time.Time

	mu      sync.Mutex
	links   map[[32]byte]viewAccess    // sha256 of a link's code → what it opens, until used
	grants  map[[32]byte]*viewGrant    // sha256 of a cookie → the access it gives
	renders map[string]*sessionRenders // session id → its latest renders, while a browser watches
}

type viewAccess struct {
	session string
	expires time.Time
	token   [32]byte // the session's token hash when it was given: a new token (ctrl+r) revokes it
}

// viewRole is what a browser may do in a session.
type viewRole int

const (
	viewAsking   viewRole = iota // the owner has not answered yet
	viewObserver                 // watches
	viewDriver                   // clicks and types
	viewOwner                    // drives and answers the owner's prompts
)

func (r viewRole) String() string {
	switch r {
	case viewObserver:
		return "observer"
	case viewDriver:
		return "driver"
	case viewOwner:
		return "owner"
	}
	return "asking"
}

// viewGrant is one browser's access to a session, from its cookie. Its
// fields after viewAccess are under webViews.mu.
type viewGrant struct {
	viewAccess
	name    string        // "browser-xxxx": presence, origins, the activity log
	role    viewRole      // viewAsking until the owner answers
	decided chan struct{} // closed once the owner answered (or the ask ended)
	asking  bool          // a channel is asking the owner now
	gone    chan struct{} // closed when the owner removed it
	removed bool
	input   *rate.Limiter             // a driver's events
	shown   map[string]time.Time      // approval prompt id → when first sent to this browser (arming)
	locals  map[string]*ui.LocalState // this browser's local state of widgets, as a terminal's
	localMu sync.Mutex                // guards locals (used on the dispatcher goroutine)
}

func newWebViews(log *slog.Logger, m *metrics.Metrics, sessions *session.Manager, opts Options) *webViews {
	return &webViews{log: log, metrics: m, sessions: sessions, allowedHosts: opts.MCP.AllowedHosts, origins: opts.MCP.TrustedOrigins, bodyTimeout: opts.MCP.BodyTimeout,
		joinTimeout: opts.SSH.JoinTimeout, arming: opts.SSH.PromptArming, viewers: newSlots[string](opts.Limits.MaxBrowsersPerSession),
		now: time.Now, links: map[[32]byte]viewAccess{}, grants: map[[32]byte]*viewGrant{}, renders: map[string]*sessionRenders{}}
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

// expireLocked drops what has expired, was removed, or belongs to a
// session that ended; v.mu is held.
func (v *webViews) expireLocked(now time.Time) {
	gone := func(id string) bool { _, live := v.sessions.Get(id); return !live }
	for k, a := range v.links {
		if now.After(a.expires) || gone(a.session) {
			delete(v.links, k)
		}
	}
	for k, g := range v.grants {
		if now.After(g.expires) || g.removed || gone(g.session) {
			delete(v.grants, k)
		}
	}
}

// grantLocked makes a new browser access to session se (the owner not asked
// yet) and returns its cookie's value; v.mu is held.
func (v *webViews) grantLocked(se *session.Session, now time.Time) (string, error) {
	cookie, err := randomCode()
	if err != nil {
		return "", err
	}
	k := sha256.Sum256([]byte(cookie))
	// Until the owner answers, the access lasts as long as an unused link.
	v.grants[k] = &viewGrant{viewAccess: viewAccess{session: se.ID, expires: now.Add(viewLinkTTL), token: se.TokenHash()},
		name: "browser-" + hex.EncodeToString(k[:2]), decided: make(chan struct{}), gone: make(chan struct{}),
		input: rate.NewLimiter(viewInputRate, viewInputBurst), shown: map[string]time.Time{}, locals: map[string]*ui.LocalState{}}
	return cookie, nil
}

// viewAsksPerSession bounds the browsers that asked without a link and
// were not answered yet, per session.
const viewAsksPerSession = 4

// ask lets a browser without a link ask the owner of session se to let
// it in, as `ssh … join <id>` does: a cookie whose live channel asks. The
// asks share the SSH joins' rate limit per client address, and a session
// has at most viewAsksPerSession unanswered ones.
func (v *webViews) ask(w http.ResponseWriter, r *http.Request, se *session.Session, live bool) {
	if !live {
		v.refuse(w, http.StatusNotFound, "There is no such session.")
		return
	}
	if !v.joins.allow("addr\x00"+v.clientIP(r), v.now()) {
		v.refuse(w, http.StatusTooManyRequests, tooManyJoins)
		return
	}
	now := v.now()
	v.mu.Lock()
	v.expireLocked(now)
	waiting := 0
	for _, g := range v.grants {
		if g.session == se.ID && g.role == viewAsking && !g.removed {
			waiting++
		}
	}
	if waiting >= viewAsksPerSession {
		v.mu.Unlock()
		v.refuse(w, http.StatusTooManyRequests, "Too many browsers are waiting for this session's owner. Try again later.")
		return
	}
	cookie, err := v.grantLocked(se, now)
	v.mu.Unlock()
	if err != nil {
		http.Error(w, "could not make a cookie", http.StatusInternalServerError)
		return
	}
	v.setCookie(w, r, se.ID, cookie)
	v.log.Info("browser asks to join", "session", se.ID, "remote", v.clientIP(r))
	http.Redirect(w, r, "/sessions/"+se.ID+"/view", http.StatusSeeOther)
}

// setCookie gives the browser its access to session id's view.
func (v *webViews) setCookie(w http.ResponseWriter, r *http.Request, id, cookie string) {
	http.SetCookie(w, &http.Cookie{Name: viewCookie, Value: cookie, Path: "/sessions/" + id + "/view",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(viewGrantTTL / time.Second)})
}

// refuseAsk is the page for a browser without access: of a live session,
// a button to ask its owner (a form: the page has no script).
func (v *webViews) refuseAsk(w http.ResponseWriter, id string, live bool) {
	if !live {
		v.refuse(w, http.StatusForbidden, "You may not watch this session. Ask its owner for a link (ctrl+o).")
		return
	}
	w.Header().Set("Content-Security-Policy", strings.Replace(csp, "form-action 'none'", "form-action 'self'", 1))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>raxol-ssh</title>"+
		"<p>You may not watch this session yet. Its owner can give you a link (ctrl+o), or you can ask them now.</p>"+
		"<form method=\"post\" action=\"/sessions/%s/view/ask\"><button type=\"submit\">Ask the owner to let me in</button></form></html>\n", html.EscapeString(id))
}

// redeem uses up the link code of session se and returns the cookie that
// grants its access from now on.
func (v *webViews) redeem(se *session.Session, code string) (string, bool) {
	id := se.ID
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
	cookie, err := v.grantLocked(se, now)
	return cookie, err == nil
}

// grantOf is the access r's cookie gives to session se: given for it, not
// expired, not removed, and the session's token unchanged since; nil if
// none.
func (v *webViews) grantOf(r *http.Request, se *session.Session) *viewGrant {
	c, err := r.Cookie(viewCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	now := v.now()
	v.mu.Lock()
	defer v.mu.Unlock()
	g, ok := v.grants[sha256.Sum256([]byte(c.Value))]
	if !ok || g.session != se.ID || !g.opensLocked(se, now) {
		return nil
	}
	return g
}

// opensLocked reports whether g still opens se at now: not removed (by
// the owner, or refused), not expired, and the session's token unchanged
// since it was given (a new token ends it); webViews.mu is held.
func (g *viewGrant) opensLocked(se *session.Session, now time.Time) bool {
	return !g.removed && now.Before(g.expires) && g.token == se.TokenHash()
}

// valid reports whether g still opens se.
func (v *webViews) valid(g *viewGrant, se *session.Session) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return g.opensLocked(se, v.now())
}

// roleOf is g's role now.
func (v *webViews) roleOf(g *viewGrant) viewRole {
	v.mu.Lock()
	defer v.mu.Unlock()
	return g.role
}

// admit asks the owner of se to let the browser of g in, unless they
// answered already or another of its channels is asking (then it waits for
// that answer). It returns the role (viewAsking: refused, or the ask ended
// unanswered; the grant is then removed).
func (v *webViews) admit(ctx context.Context, g *viewGrant, se *session.Session, remote string) viewRole {
	v.mu.Lock()
	if g.role != viewAsking || g.asking {
		decided := g.decided
		v.mu.Unlock()
		select {
		case <-decided:
		case <-ctx.Done():
			return viewAsking
		}
		v.mu.Lock()
		again := g.role == viewAsking && !g.removed // the one asking left unanswered
		v.mu.Unlock()
		if again {
			return v.admit(ctx, g, se, remote)
		}
		return v.roleOf(g)
	}
	g.asking = true
	v.mu.Unlock()

	ask, cancel := context.WithTimeout(ctx, v.joinTimeout)
	defer cancel()
	ans, err := se.RequestJoin(ask, session.JoinRequest{ID: randomID(), User: g.name, RemoteAddr: remote, Browser: true,
		Deadline: v.now().Add(v.joinTimeout)})
	role := viewAsking
	switch ans {
	case session.JoinAsObserver:
		role = viewObserver
	case session.JoinAsDriver:
		role = viewDriver
	case session.JoinAsOwner:
		role = viewOwner
	}
	v.log.Info("browser join answered", "session", se.ID, "browser", g.name, "remote", remote, "role", role.String(), "err", err)
	v.mu.Lock()
	defer v.mu.Unlock()
	g.asking = false
	if role == viewAsking && ctx.Err() != nil && !errors.Is(err, session.ErrNoTerminal) {
		// The browser left while asking: it may ask again, and another
		// of its channels waiting for this answer asks now.
		close(g.decided)
		g.decided = make(chan struct{})
		return viewAsking
	}
	g.role = role
	if role != viewAsking {
		g.expires = v.now().Add(viewGrantTTL)
	}
	close(g.decided)
	if role == viewAsking {
		g.removed = true // refused: the cookie opens nothing more
	}
	return role
}

// removeAll ends every browser's access to session id (the owner's
// ctrl+x): their channels end at once. It returns how many were removed.
func (v *webViews) removeAll(id string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for k, g := range v.grants {
		if g.session == id && v.removeLocked(k, g) {
			n++
		}
	}
	for k, a := range v.links {
		if a.session == id {
			delete(v.links, k)
		}
	}
	return n
}

// removeOne ends the access of the browser named name on session id (the
// owner's page): its channels end at once. It reports whether there was
// one.
func (v *webViews) removeOne(id, name string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, g := range v.grants {
		if g.session == id && g.name == name && !g.removed {
			return v.removeLocked(k, g)
		}
	}
	return false
}

// removeLocked ends the access of grant g (key k): its channels end at
// once. It reports whether it was open (a refused grant was removed
// already); v.mu is held.
func (v *webViews) removeLocked(k [32]byte, g *viewGrant) bool {
	delete(v.grants, k)
	if g.removed {
		return false
	}
	g.removed = true
	close(g.gone)
	return true
}

// viewBrowser is a browser on the session as the owner's page lists it.
type viewBrowser struct {
	Name string `json:"name"`
	Role string `json:"role"`
	You  bool   `json:"you,omitempty"`
}

// browserList is the browsers with access to session id, as JSON for the
// owner's page (the one of g marked).
func (v *webViews) browserList(id string, g *viewGrant) string {
	v.mu.Lock()
	out := []viewBrowser{}
	for _, o := range v.grants {
		if o.session == id && !o.removed {
			out = append(out, viewBrowser{Name: o.name, Role: o.role.String(), You: o == g})
		}
	}
	v.mu.Unlock()
	slices.SortFunc(out, func(a, b viewBrowser) int { return strings.Compare(a.Name, b.Name) })
	b, _ := json.Marshal(out) // strings only
	return string(b)
}

// browsers is the browsers with access to session id, for the owner's
// attach panel: name and role.
func (v *webViews) browsers(id string) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for _, g := range v.grants {
		if g.session == id && !g.removed {
			out = append(out, g.name+" ("+g.role.String()+")")
		}
	}
	slices.Sort(out)
	return out
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

// browsersFor and removeBrowsersFor are what the attach panel of a
// terminal with role calls to list the browsers on session id and to end
// their access: the owner's only.
func (s *Server) browsersFor(id string, role tui.Role) func() []string {
	if role != tui.RoleOwner {
		return nil
	}
	return func() []string { return s.views.browsers(id) }
}

func (s *Server) removeBrowsersFor(id string, role tui.Role) func() int {
	if role != tui.RoleOwner {
		return nil
	}
	return func() int { return s.views.removeAll(id) }
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
	post := rest == "view/input" || rest == "view/answer" || rest == "view/ask" || rest == "view/remove"
	switch {
	case post && r.Method != http.MethodPost, !post && r.Method != http.MethodGet && r.Method != http.MethodHead:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	case !mcpbridge.HostWellFormed(r.Host):
		v.metrics.MCPRejected("host")
		http.Error(w, "malformed Host header", http.StatusBadRequest)
		return
	case !mcpbridge.OriginAllowed(r, v.origins), post && r.Header.Get("Origin") == "":
		v.metrics.MCPRejected("origin")
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	case !mcpbridge.HostAllowed(r, v.allowedHosts):
		v.metrics.MCPRejected("host")
		http.Error(w, "this host name is not served", http.StatusForbidden)
		return
	}
	switch rest {
	case "view/app.js", "view/app.css":
		v.asset(w, strings.TrimPrefix(rest, "view/"))
		return
	case "view/colors.css": // the classes of a drawn screen's colours
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = w.Write([]byte(web.ColorCSS()))
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
		v.setCookie(w, r, id, cookie)
		v.log.Info("browser view opened", "session", id, "remote", r.RemoteAddr)
		http.Redirect(w, r, "/sessions/"+id+"/view", http.StatusSeeOther)
		return
	}
	if rest == "view/ask" {
		v.ask(w, r, se, live)
		return
	}
	var g *viewGrant
	if live {
		g = v.grantOf(r, se)
	}
	if g == nil {
		v.refuseAsk(w, id, live)
		return
	}
	switch rest {
	case "view":
		v.page(w, se, g)
	case "view/events":
		v.events(w, r, se, g)
	case "view/input":
		v.input(w, r, se, g)
	case "view/answer":
		v.answer(w, r, se, g)
	case "view/remove":
		v.remove(w, r, se, g)
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
