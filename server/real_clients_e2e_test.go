package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// Agents as real clients behave, against a session a human started over a
// real SSH PTY: a Streamable client with no standalone GET stream (mcp-go's
// default), an SSE client that never answers pings (mcp-go over SSE), and
// one-shot CLIs that exit without DELETE. What the human sees of them is
// read from the status bar on the human's screen.

// statusBar is the last line on c's screen with text.
func statusBar(c *client) string {
	lines := c.Lines()
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return lines[i]
		}
	}
	return ""
}

// dropDelete fails every DELETE, as a CLI that exits without ending its
// client session.
type dropDelete struct{ base http.RoundTripper }

func (d dropDelete) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete {
		return nil, errors.New("the CLI exited")
	}
	return d.base.RoundTrip(r)
}

// quietAgent connects a go-sdk Streamable client named name that opens no
// standalone GET stream, over rt (the session's bearer token when nil).
func quietAgent(t *testing.T, srv *testServer, se *session.Session, name string, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	if rt == nil {
		rt = testkit.Bearer(nil, se.Token())
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: "http://" + srv.HTTPAddr() + "/sessions/" + se.ID + "/mcp", HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// getValue calls the demo's read of the search field.
func getValue(cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitShort)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo.search.get_value"})
	if err == nil && res.IsError {
		err = fmt.Errorf("tool error: %v", res.Content)
	}
	return err
}

// dialDeafSSE is an SSE client on the session, named name, that never
// answers the server's requests (pings), as mcp-go's does.
func dialDeafSSE(t *testing.T, srv *testServer, se *session.Session, name string) *testkit.SSEClient {
	t.Helper()
	c := testkit.DialSSE(t, http.DefaultClient, "http://"+srv.HTTPAddr(), "/sessions/"+se.ID+"/sse", se.Token(), false, waitShort)
	c.Initialize(t, name)
	return c
}

// TestQuietAgentsKeepTheirSessionOverSSH: an agent that thinks between
// calls with no GET stream, and one over SSE that never answers pings,
// complete their next call on the same client session after many
// keepalive rounds (ninety seconds is four and a half of the default's;
// this is thirty of a short one), and the human's status bar shows both
// all along.
func TestQuietAgentsKeepTheirSessionOverSSH(t *testing.T) {
	t.Parallel()
	const keepAlive = 100 * time.Millisecond
	opts := server.Options{}
	opts.MCP.SetKeepAlive(keepAlive)
	srv := startServer(t, opts)
	human := connect(t, srv.SSHAddr(), clientOpts{w: 200, h: 24})
	se, _ := srv.Sessions().Get(waitDemo(t, human))

	quiet := quietAgent(t, srv, se, "no-get-stream", nil)
	id := quiet.ID()
	if err := getValue(quiet); err != nil {
		t.Fatal(err)
	}
	deaf := dialDeafSSE(t, srv, se, "deaf-sse")
	if err := deaf.CallTool("demo.search.get_value"); err != nil {
		t.Fatal(err)
	}
	both := func(string) bool {
		bar := statusBar(human)
		return strings.Contains(bar, "agents (2): ") && strings.Contains(bar, "no-get-stream 1 · ") && strings.Contains(bar, "deaf-sse 1 · ")
	}
	human.WaitFor(t, both, waitLong)

	time.Sleep(30 * keepAlive) // the agents think, quiet for 30 keepalive rounds: the scenario itself
	if err := getValue(quiet); err != nil {
		t.Fatalf("the Streamable client without a GET stream, after thinking: %v", err)
	}
	if quiet.ID() != id {
		t.Fatalf("its client session changed: %q -> %q", id, quiet.ID())
	}
	if err := deaf.CallTool("demo.search.get_value"); err != nil {
		t.Fatalf("the SSE client that never answers pings, after thinking: %v", err)
	}
	if n := deaf.Pings.Load(); n < 10 {
		t.Fatalf("the SSE client was pinged %d times in 30 keepalive intervals", n)
	}
	if !both("") {
		t.Fatalf("status bar after the agents thought: %q", statusBar(human))
	}
}

// TestOneShotAgentsAndDeleteOverSSH: twelve one-shot clients in a row
// (each initializes, calls, and exits without DELETE) all succeed, and
// the human's status bar then lists the eight still attached, the
// latest; the rest made room. A DELETE with no bearer token but the live
// Mcp-Session-Id of one of them ends it, and it leaves the status bar; a
// DELETE with a wrong id, or with the id of another session's client,
// ends nothing on either screen.
func TestOneShotAgentsAndDeleteOverSSH(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	human := connect(t, srv.SSHAddr(), clientOpts{w: 400, h: 24})
	se, _ := srv.Sessions().Get(waitDemo(t, human))
	otherHuman := connect(t, srv.SSHAddr(), clientOpts{w: 200, h: 24})
	other, _ := srv.Sessions().Get(waitDemo(t, otherHuman))
	if other.ID == se.ID {
		t.Fatal("the two humans share a session")
	}

	name := func(i int) string { return fmt.Sprintf("oneshot-%02d", i) }
	var ids []string
	for i := range 12 {
		cs := quietAgent(t, srv, se, name(i), dropDelete{testkit.Bearer(nil, se.Token())})
		if err := getValue(cs); err != nil {
			t.Fatalf("%s: %v", name(i), err)
		}
		ids = append(ids, cs.ID())
		_ = cs.Close() // its DELETE never arrives
	}
	// Only who is still there: the eight latest.
	listed := regexp.MustCompile(`oneshot-\d\d`)
	only := func(want ...int) func(string) bool {
		return func(string) bool {
			got := listed.FindAllString(statusBar(human), -1)
			if len(got) != len(want) || !strings.Contains(statusBar(human), fmt.Sprintf("agents (%d): ", len(want))) {
				return false
			}
			for i, w := range want {
				if got[i] != name(w) {
					return false
				}
			}
			return true
		}
	}
	human.WaitFor(t, only(4, 5, 6, 7, 8, 9, 10, 11), waitLong)

	bob := quietAgent(t, srv, other, "bob", nil)
	if err := getValue(bob); err != nil {
		t.Fatal(err)
	}
	otherHuman.WaitFor(t, "agent: bob 1 · ", waitLong)

	del := func(path *session.Session, token, sid string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodDelete, "http://"+srv.HTTPAddr()+"/sessions/"+path.ID+"/mcp", nil)
		req.Header.Set("Mcp-Session-Id", sid)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		what       string
		token, sid string
		want       int
	}{
		{"a wrong id, no token", "", ids[11] + "x", http.StatusUnauthorized},
		{"a wrong id, the session's token", se.Token(), "nope", http.StatusNotFound},
		{"a reclaimed client's id, no token", "", ids[0], http.StatusUnauthorized},
		{"another session's client id, no token", "", bob.ID(), http.StatusUnauthorized},
		{"another session's client id, this session's token", se.Token(), bob.ID(), http.StatusNotFound},
		{"another session's client id and token", other.Token(), bob.ID(), http.StatusUnauthorized},
	} {
		if code := del(se, tc.token, tc.sid); code != tc.want {
			t.Errorf("DELETE with %s: %d, want %d", tc.what, code, tc.want)
		}
	}
	time.Sleep(300 * time.Millisecond) // a change would be drawn by now
	if !only(4, 5, 6, 7, 8, 9, 10, 11)("") {
		t.Fatalf("status bar after DELETEs that end nothing: %q", statusBar(human))
	}
	if !strings.Contains(statusBar(otherHuman), "agent: bob 1 · ") {
		t.Fatalf("the other session's status bar after foreign DELETEs: %q", statusBar(otherHuman))
	}
	if err := getValue(bob); err != nil {
		t.Fatalf("the other session's client after foreign DELETEs: %v", err)
	}

	// The live id of oneshot-11, without the token: it ends and leaves.
	if code := del(se, "", ids[11]); code != http.StatusNoContent {
		t.Fatalf("DELETE with a live id and no token: %d, want 204", code)
	}
	human.WaitFor(t, only(4, 5, 6, 7, 8, 9, 10), waitShort)
	if code := del(se, "", ids[11]); code == http.StatusNoContent {
		t.Fatal("a second DELETE of the same id succeeded")
	}
}
