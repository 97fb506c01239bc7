package mcpbridge_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// isoResp is one raw HTTP answer of the bridge.
type isoResp struct {
	status int
	body   string
	header http.Header
}

// isoAuth is how a raw request authenticates: not at all (none), or with
// an Authorization header of exactly value.
type isoAuth struct {
	none  bool
	value string
}

func isoBearer(tok string) isoAuth { return isoAuth{value: "Bearer " + tok} }

// isoRequest sends one raw request and reads at most 64 KiB of the answer
// within 3s (a wrongly opened event stream would otherwise never end).
func isoRequest(t *testing.T, method, target string, auth isoAuth, body string, hdr map[string]string) isoResp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if !auth.none {
		req.Header.Set("Authorization", auth.value)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)) // a timeout keeps what was read
	return isoResp{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// isoToken returns a random token shaped like a real one (32 random bytes,
// base64url): the right length, the wrong value.
func isoToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// isoStream is a raw SSE stream of one session: its endpoint's sessionid,
// and every line it received after the endpoint event.
type isoStream struct {
	sessionID string
	cancel    context.CancelFunc
	done      chan struct{}

	mu    sync.Mutex
	lines []string
}

// openSSE GETs /sessions/<id>/sse with token and reads the endpoint event
// ("event: endpoint", "data: <path>?sessionid=..."). The stream stays open
// (a live SSE session) until the test ends.
func openSSE(t *testing.T, base string, se *session.Session) *isoStream {
	t.Helper()
	resp, cancel := getSSE(t, http.DefaultClient, base, se)
	s := &isoStream{cancel: cancel, done: make(chan struct{})}
	br := bufio.NewReader(resp.Body)
	found := make(chan string, 1)
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		endpoint := false
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if s.sessionID == "" {
				switch {
				case line == "event: endpoint":
					endpoint = true
				case endpoint && strings.HasPrefix(line, "data:"):
					data := strings.TrimSpace(strings.TrimPrefix(line, "data:"))
					u, err := url.Parse(data)
					if err == nil {
						s.sessionID = u.Query().Get("sessionid")
					}
					found <- data
				}
				continue
			}
			s.mu.Lock()
			s.lines = append(s.lines, line)
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { s.cancel(); <-s.done })
	select {
	case data := <-found:
		if s.sessionID == "" || !strings.HasPrefix(data, "/sessions/"+se.ID+"/sse?") {
			t.Fatalf("endpoint event data %q", data)
		}
	case <-s.done:
		t.Fatal("SSE stream ended before its endpoint event")
	case <-time.After(5 * time.Second):
		t.Fatal("no endpoint event in 5s")
	}
	return s
}

func (s *isoStream) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lines)
}

// isoConnect connects a go-sdk client to se over Streamable HTTP or SSE.
func isoConnect(t *testing.T, base string, se *session.Session, sse bool) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "iso-agent", Version: "1.0"}, nil)
	hc := &http.Client{Transport: testkit.Bearer(nil, se.Token())}
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: base + "/sessions/" + se.ID + "/mcp", HTTPClient: hc}
	if sse {
		tr = &mcp.SSEClientTransport{Endpoint: base + "/sessions/" + se.ID + "/sse", HTTPClient: hc}
	}
	// The SSE transport's stream lives as long as the Connect context.
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// leaksTools reports whether a raw answer carries anything of an MCP
// server: a result, a tool list, a tool name.
func leaksTools(body string) bool {
	for _, s := range []string{`"tools"`, `"result"`, "app.name", "raxol_screenshot", "type_into", "event: message"} {
		if strings.Contains(body, s) {
			return true
		}
	}
	return false
}

// TestIsolationOverManySessions: five sessions of the same app (same
// widget ids), two of them with live MCP clients; for every endpoint and
// method, another session's token, no token, a wrong token, an empty
// token, another session's Mcp-Session-Id and another session's SSE
// sessionid reach nothing of the target; an unknown session and a wrong
// token answer byte for byte alike; and the live clients are unharmed.
func TestIsolationOverManySessions(t *testing.T) {
	e := policyEnvMany(t, authz.Policy{Tool: authz.AllowAll(), Read: authz.AllowAll(), ToolSource: authz.SourceConfigured, ReadSource: authz.SourceConfigured})
	base := e.http.URL
	sessions := e.sessions
	a, b := sessions[0], sessions[1]
	targets := sessions[2:]

	csA := isoConnect(t, base, a, false)
	csB := isoConnect(t, base, b, true)
	mcpSessA := csA.ID()
	if mcpSessA == "" {
		t.Fatal("A's Streamable client has no Mcp-Session-Id")
	}
	protoA := csA.InitializeResult().ProtocolVersion
	streamB := openSSE(t, base, b)
	sseSessB := streamB.sessionID

	versions := map[string]uint64{}
	for _, se := range sessions {
		versions[se.ID] = se.Dispatcher.Snapshot().Version
	}

	const (
		listBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		callBody = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"app.name.type_into","arguments":{"text":"pwned"}}}`
	)
	type method struct {
		name, verb, body string
	}
	methods := []method{
		{"GET", http.MethodGet, ""},
		{"POST tools/list", http.MethodPost, listBody},
		{"POST tools/call", http.MethodPost, callBody},
		{"DELETE", http.MethodDelete, ""},
	}
	type target struct {
		auth  isoAuth
		hdr   map[string]string
		query string
		// unauth: the request must get the bridge's 401. Otherwise it
		// carries X's own token and must still reach nothing of X.
		unauth bool
		// skip reports endpoint/method pairs a case does not apply to.
		skip func(sse bool, m method) bool
		// want, if set, are the only statuses accepted.
		want func(sse bool, m method) []int
	}
	cases := func(x *session.Session) map[string]target {
		tok := x.Token()
		near := []byte(tok)
		near[len(near)-1] ^= 1 // one character off
		wrong := isoToken(t)
		if len(wrong) != len(tok) || wrong == tok {
			t.Fatalf("a forged token of %d characters for a token of %d", len(wrong), len(tok))
		}
		notFound := func(sse bool, m method) []int {
			if m.verb == http.MethodPost {
				return []int{http.StatusNotFound, http.StatusBadRequest}
			}
			return nil
		}
		return map[string]target{
			"a: A's token":                        {auth: isoBearer(a.Token()), unauth: true},
			"a: A's token and A's Mcp-Session-Id": {auth: isoBearer(a.Token()), hdr: map[string]string{"Mcp-Session-Id": mcpSessA, "Mcp-Protocol-Version": protoA}, unauth: true},
			"a: B's token and B's sessionid":      {auth: isoBearer(b.Token()), query: "?sessionid=" + sseSessB, unauth: true},
			"b: no Authorization":                 {auth: isoAuth{none: true}, unauth: true},
			"c: wrong token of the right length":  {auth: isoBearer(wrong), unauth: true},
			"c: X's token one character off":      {auth: isoBearer(string(near)), unauth: true},
			"c: X's token under the Basic scheme": {auth: isoAuth{value: "Basic " + tok}, unauth: true},
			"d: Bearer with an empty token":       {auth: isoAuth{value: "Bearer "}, unauth: true},
			"e: X's token and A's Mcp-Session-Id": {
				auth: isoBearer(tok), hdr: map[string]string{"Mcp-Session-Id": mcpSessA, "Mcp-Protocol-Version": protoA},
				skip: func(sse bool, _ method) bool { return sse }, // Streamable only
				want: func(bool, method) []int { return []int{http.StatusNotFound, http.StatusBadRequest} },
			},
			"f: X's token and B's SSE sessionid": {
				auth: isoBearer(tok), query: "?sessionid=" + sseSessB,
				// GET on /sse with X's own token opens a new stream of X,
				// which is X's token's right; the sessionid is ignored.
				skip: func(sse bool, m method) bool { return !sse || m.verb == http.MethodGet },
				want: notFound,
			},
		}
	}

	checked := 0
	for _, x := range targets {
		for name, tc := range cases(x) {
			for _, sse := range []bool{false, true} {
				ep := "mcp"
				if sse {
					ep = "sse"
				}
				for _, m := range methods {
					if tc.skip != nil && tc.skip(sse, m) {
						continue
					}
					what := fmt.Sprintf("%s on X=%s /%s %s", name, x.ID[:6], ep, m.name)
					r := isoRequest(t, m.verb, base+"/sessions/"+x.ID+"/"+ep+tc.query, tc.auth, m.body, tc.hdr)
					checked++
					if r.status >= 200 && r.status < 300 {
						t.Errorf("%s: status %d %q", what, r.status, r.body)
					}
					if tc.unauth && (r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") == "") {
						t.Errorf("%s: status %d (WWW-Authenticate %q), want 401 with a challenge", what, r.status, r.header.Get("WWW-Authenticate"))
					}
					if tc.want != nil {
						if want := tc.want(sse, m); want != nil && !slices.Contains(want, r.status) {
							t.Errorf("%s: status %d %q, want one of %v", what, r.status, r.body, want)
						}
					}
					if leaksTools(r.body) {
						t.Errorf("%s: the answer carries MCP data: %q", what, r.body)
					}
					if got := model(x); got != (form{}) {
						t.Fatalf("%s: X's model changed to %+v", what, got)
					}
				}
			}
		}
	}
	t.Logf("%d foreign requests checked", checked)

	// Nothing attached to the targets, nothing folded into any session,
	// nothing arrived on B's raw stream.
	for _, x := range targets {
		if n := e.bridge.Clients(x.ID); n != 0 {
			t.Errorf("session %s has %d MCP clients, want 0", x.ID, n)
		}
	}
	for i, se := range sessions {
		if got := model(se); got != (form{}) {
			t.Errorf("session %d's model is %+v, want the zero form", i, got)
		}
		if v := se.Dispatcher.Snapshot().Version; v != versions[se.ID] {
			t.Errorf("session %d folded (version %d -> %d)", i, versions[se.ID], v)
		}
	}
	for _, l := range streamB.received() {
		if strings.HasPrefix(l, "event:") || strings.HasPrefix(l, "data:") {
			t.Errorf("B's raw SSE stream received %q from foreign requests", l)
		}
	}

	// An unknown session and a wrong token answer alike: same status, same
	// body, same headers (but Date).
	unknown := isoToken(t)[:len(a.ID)]
	for _, ep := range []string{"mcp", "sse"} {
		for _, m := range methods {
			for _, tok := range []string{a.Token(), isoToken(t)} {
				u := isoRequest(t, m.verb, base+"/sessions/"+unknown+"/"+ep, isoBearer(tok), m.body, nil)
				w := isoRequest(t, m.verb, base+"/sessions/"+targets[0].ID+"/"+ep, isoBearer(isoToken(t)), m.body, nil)
				what := fmt.Sprintf("/%s %s", ep, m.name)
				if u.status != http.StatusUnauthorized || u.status != w.status {
					t.Errorf("%s: unknown session %d, wrong token %d, want both 401", what, u.status, w.status)
				}
				if u.body != w.body {
					t.Errorf("%s: unknown session body %q, wrong token body %q", what, u.body, w.body)
				}
				if u.header.Get("WWW-Authenticate") == "" || u.header.Get("WWW-Authenticate") != w.header.Get("WWW-Authenticate") {
					t.Errorf("%s: WWW-Authenticate %q vs %q", what, u.header.Get("WWW-Authenticate"), w.header.Get("WWW-Authenticate"))
				}
				uh, wh := u.header.Clone(), w.header.Clone()
				uh.Del("Date")
				wh.Del("Date")
				if !maps.EqualFunc(uh, wh, slices.Equal) {
					t.Errorf("%s: headers differ: unknown session %v, wrong token %v", what, uh, wh)
				}
			}
		}
	}

	// Control: the same raw request with A's own token and Mcp-Session-Id
	// on A's path is answered with A's tools, so the checks above would
	// have seen a leak.
	own := isoRequest(t, http.MethodPost, base+"/sessions/"+a.ID+"/mcp", isoBearer(a.Token()), listBody, map[string]string{"Mcp-Session-Id": mcpSessA, "Mcp-Protocol-Version": protoA})
	if own.status != http.StatusOK || !leaksTools(own.body) {
		t.Fatalf("control: A's own tools/list answered %d %q", own.status, own.body)
	}

	// A's and B's clients still work, on their own sessions.
	for name, cs := range map[string]*mcp.ClientSession{"A (streamable)": csA, "B (sse)": csB} {
		if names := listNames(t, cs); !slices.Contains(names, "app.name.get_value") {
			t.Errorf("%s: tools/list after the attack: %v", name, names)
		}
		if out, isErr := call(t, cs, "app.name.get_value", nil); isErr || out["result"].(map[string]any)["value"] != "" {
			t.Errorf("%s: get_value after the attack: %v", name, out)
		}
	}
	if n := e.bridge.Clients(a.ID); n != 1 {
		t.Errorf("A has %d clients, want 1 (a foreign DELETE closed it?)", n)
	}
	for i, se := range sessions {
		if got := model(se); got != (form{}) {
			t.Errorf("session %d's model is %+v at the end", i, got)
		}
	}
}

// manyEnv is a bridge over several sessions of form.
type manyEnv struct {
	bridge   *mcpbridge.Bridge
	http     *httptest.Server
	sessions []*session.Session
}

func policyEnvMany(t *testing.T, p authz.Policy) *manyEnv {
	t.Helper()
	e := &manyEnv{}
	mgr := session.NewManager(&session.Options{OnEnd: func(s *session.Session) { e.bridge.SessionEnded(s.ID) }})
	e.bridge = newTestBridge(t, mgr, mcpbridge.Options{
		Namespace:   "app",
		Projections: map[string]func(ui.Model) any{"form": func(m ui.Model) any { return m }},
		Policy:      p,
	})
	e.http = httptest.NewServer(e.bridge)
	t.Cleanup(func() { e.bridge.Close(); e.http.Close(); mgr.Close() })
	for i := range 5 {
		s, ok, err := mgr.Start("app", session.Owner{User: fmt.Sprintf("u%d", i)}, form{}, 0)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		e.sessions = append(e.sessions, s)
	}
	return e
}

// danger is an app with a destructive button beside an ordinary one.
type danger struct {
	Wiped   bool
	Presses int
}

type wipe struct{}

func (d danger) Init() tea.Cmd { return nil }

func (d danger) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg.(type) {
	case wipe:
		d.Wiped = true
	case press:
		d.Presses++
	}
	return d, nil
}

func (d danger) View() ui.Node {
	return ui.Column{Items: []ui.Node{
		ui.Button{ID: "wipe", Label: "Wipe everything", OnClick: wipe{}, Destructive: true},
		ui.Button{ID: "go", Label: "Go", OnClick: press{}},
	}}
}

// TestSensitiveToolsNeverRunWithoutAnAuthorizer: with no tool authorizer
// (whatever the policy claims about its source), raxol_send_key and a
// destructive derived tool are refused with sensitive_tool_unguarded and
// not listed, while an ordinary tool runs.
func TestSensitiveToolsNeverRunWithoutAnAuthorizer(t *testing.T) {
	for name, p := range map[string]authz.Policy{
		"zero policy":                     {},
		"reads configured, no tool func":  {Read: authz.AllowAll(), ReadSource: authz.SourceConfigured},
		"claims configured, no tool func": {Read: authz.AllowAll(), ToolSource: authz.SourceConfigured, ReadSource: authz.SourceConfigured},
		"reads only, default sources":     {Read: authz.AllowAll()},
	} {
		t.Run(name, func(t *testing.T) {
			mgr := session.NewManager(nil)
			br := mcpbridge.NewUnchecked(mgr, mcpbridge.Options{Namespace: "app", Policy: p, LensMode: lens.ModeAll})
			srv := httptest.NewServer(br)
			t.Cleanup(func() { br.Close(); srv.Close(); mgr.Close() })
			se, _, err := mgr.Start("app", session.Owner{User: "u"}, danger{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			// A human who could approve changes nothing: there is no
			// authorizer to ask.
			se.SetApprovalSink(func(context.Context, session.ApprovalRequest) (session.Approval, error) {
				return session.ApprovedForSession, nil
			})
			cs := isoConnect(t, srv.URL, se, false)

			names := listNames(t, cs)
			for _, n := range []string{mcpbridge.ToolSendKey, "app.wipe.click"} {
				if slices.Contains(names, n) {
					t.Errorf("sensitive tool %s listed without an authorizer: %v", n, names)
				}
			}
			if !slices.Contains(names, "app.go.click") {
				t.Errorf("ordinary tool not listed: %v", names)
			}
			for tool, args := range map[string]map[string]any{
				mcpbridge.ToolSendKey: {"keys": []any{"tab"}},
				"app.wipe.click":      nil,
			} {
				out, isErr := call(t, cs, tool, args)
				detail, _ := out["detail"].(string)
				if !isErr || out["error"] != "authorization_required" || out["decision"] != "deny" || out["tool"] != tool || !strings.Contains(detail, "sensitive_tool_unguarded") {
					t.Errorf("%s without an authorizer: %v (isError %v)", tool, out, isErr)
				}
			}
			if out, _ := call(t, cs, mcpbridge.ToolDiscover, map[string]any{"query": ""}); strings.Contains(fmt.Sprint(out), "app.wipe.click") {
				t.Errorf("discover_tools shows the unguarded destructive tool: %v", out)
			}
			if m := se.Dispatcher.Snapshot().Model.(danger); m.Wiped {
				t.Fatal("the destructive click ran")
			}
			if out, isErr := call(t, cs, "app.go.click", nil); isErr {
				t.Fatalf("ordinary tool refused: %v", out)
			}
			if m := se.Dispatcher.Snapshot().Model.(danger); m.Presses != 1 || m.Wiped {
				t.Fatalf("model after the ordinary click: %+v", m)
			}
		})
	}
}

func TestBearerSchemeIsParsedStrictly(t *testing.T) {
	e := newEnv(t)
	do := func(auth string) int {
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/sessions/"+e.session.ID+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tok := e.session.Token()
	for auth, ok := range map[string]bool{
		"Bearer " + tok: true, "bearer " + tok: true, "BEARER " + tok: true,
		tok: false, "Basic " + tok: false, "Bearer": false, "Bearer  " + tok: false,
	} {
		if code := do(auth); (code == http.StatusOK) != ok {
			t.Errorf("Authorization %q: %d", strings.Replace(auth, tok, "<token>", 1), code)
		}
	}
}

// getSSE opens a raw SSE stream of se (GET /sessions/<id>/sse with its
// token) and fails the test unless it is served; cancel ends it.
func getSSE(t *testing.T, hc *http.Client, base string, se *session.Session) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sessions/"+se.ID+"/sse", nil)
	req.Header.Set("Authorization", "Bearer "+se.Token())
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		resp.Body.Close()
		t.Fatalf("raw SSE GET: %d", resp.StatusCode)
	}
	return resp, cancel
}
