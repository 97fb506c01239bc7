package main

import (
	"bufio"
	"context"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/tui"
)

// viewLinkRe is the one-time browser link the attach panel shows its owner.
var viewLinkRe = regexp.MustCompile(`http://\S+/sessions/\S+/view\?link=[A-Za-z0-9_-]+`)

// viewRole opens a browser's live channel with jar's cookie at base and
// returns the status and, when 200, the first "role" event's data; the
// channel is closed before it returns.
func viewRole(t *testing.T, jar http.CookieJar, base string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
	resp, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil {
		t.Fatalf("the live channel: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, ""
	}
	sc := bufio.NewScanner(resp.Body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			event = name
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && event == "role" {
			return resp.StatusCode, data
		}
	}
	return resp.StatusCode, ""
}

// TestDurableBrowserRemovalSurvivesKill: the owner lets a browser in as
// an observer, removes it (ctrl+x in the attach panel), and the process
// is killed with SIGKILL as soon as the panel no longer lists it. After a
// restart the session is there, its token opens it, and the removed
// browser's cookie opens nothing: a removal of a participant is never
// undone by a crash (issue 24: revocations, removals of a participant and
// withdrawn grants durable before the human is told).
func TestDurableBrowserRemovalSurvivesKill(t *testing.T) {
	t.Parallel()
	n, args, owner, _ := durableNode(t)
	url, id, token := attachPanel(t, owner)
	link := viewLinkRe.FindString(owner.Screen())
	if link == "" {
		t.Fatalf("no browser link in the attach panel:\n%s", owner.Screen())
	}
	owner.Type("\x0f") // ctrl+o: the panel closes, the prompt shows
	base := "http://" + args[slices.Index(args, "--http-addr")+1] + "/sessions/" + id + "/view"
	jar, _ := cookiejar.New(nil)
	if r, err := (&http.Client{Jar: jar, Timeout: 20 * time.Second}).Get(link); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("the browser link: %v %v", err, r)
	}
	// The browser's channel asks the owner, who lets it watch.
	roles := make(chan string, 1)
	go func() { _, role := viewRole(t, jar, base); roles <- role }()
	const prompt = "A browser asks to join your session"
	testkit.Eventually(t, 20*time.Second, func() bool {
		s := owner.Screen()
		return strings.Contains(s, prompt) && !strings.Contains(s, tui.ArmingNote)
	}, "the owner is never asked about the browser:\n%s", owner.Screen())
	owner.Type("o")
	if role := <-roles; !strings.Contains(role, `"role":"observer"`) {
		t.Fatalf("the browser's role: %q", role)
	}
	if code, role := viewRole(t, jar, base); code != http.StatusOK || !strings.Contains(role, "observer") {
		t.Fatalf("the admitted browser's cookie: %d %q", code, role)
	}

	owner.Type("\x0f") // ctrl+o
	owner.WaitFor("Browsers: ")
	owner.Type("\x18") // ctrl+x removes them
	testkit.Eventually(t, 10*time.Second, func() bool { return !strings.Contains(owner.Screen(), "Browsers: ") },
		"the attach panel still lists the browser:\n%s", owner.Screen())
	n.kill(t)
	owner.Close()

	n2 := startBinary(t, args...)
	if !strings.Contains(n2.out.String(), "session restored") {
		t.Fatalf("no session restored:\n%s", n2.out)
	}
	wantToken(t, url, token, true, "the session's token")
	if code, role := viewRole(t, jar, base); code == http.StatusOK {
		t.Fatalf("the removed browser's cookie opens the restored session's view: %q", role)
	}
}
