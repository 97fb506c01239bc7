package teaapp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/internal/testserve"
	"github.com/raxol-ssh/raxol-ssh/teaapp"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// A hosted Bubble Tea program in the browser: its screen's cells as
// styled text (the colours as classes of spans, no escape sequence left)
// with its known components beside it, kept live; a driver's key goes to
// the program as a terminal's key does.
func TestBrowserViewOfAHostedProgram(t *testing.T) {
	srv := serve(t, teaapp.New("dinner", func(ui.Identity) tea.Model { return newPicker() }))
	human := testkit.RunSized(t, srv.SSHAddr(), "alice", testkit.NewKey(t), "", 100, 30)
	human.WaitFor("What do you want for dinner?")
	se := testserve.OnlySession(t, srv)

	human.Type("\x0f") // ctrl+o: the attach panel, with the browser link
	human.WaitFor("Open in a browser")
	link := regexp.MustCompile(`http://\S+/sessions/\S+/view\?link=[A-Za-z0-9_-]+`).FindString(human.Screen())
	if link == "" {
		t.Fatalf("no link on the owner's panel:\n%s", human.Screen())
	}
	human.Type("\x0f")
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: waitLong}
	if r, err := browser.Get(link); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("the link: %v", err)
	}
	base := "http://" + srv.HTTPAddr() + "/sessions/" + se.ID + "/view"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
	stream, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("the live channel: %v", err)
	}
	defer stream.Body.Close()
	frames := make(chan string, 64)
	go func() {
		defer close(frames)
		sc := bufio.NewScanner(stream.Body)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		var name string
		var data []string
		for sc.Scan() {
			switch l := sc.Text(); {
			case l == "":
				if name == "frame" || name == "patch" || name == "role" {
					frames <- name + "\n" + strings.Join(data, "\n")
				}
				name, data = "", nil
			case strings.HasPrefix(l, "event: "):
				name = strings.TrimPrefix(l, "event: ")
			case strings.HasPrefix(l, "data: "):
				data = append(data, strings.TrimPrefix(l, "data: "))
			}
		}
	}()
	human.WaitFor("A browser asks to join your session")
	testkit.Eventually(t, waitLong, func() bool { return !strings.Contains(human.Screen(), tui.ArmingNote) }, "the prompt to arm")
	human.Type("r")
	next := func(want ...string) string {
		t.Helper()
		for f := range frames {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(f, w)
			}
			if ok {
				return f
			}
		}
		t.Fatalf("the channel ended before a frame with %q", want)
		return ""
	}
	next("role", `"role":"driver"`)
	f := next("frame", "What do you want for dinner?")
	for _, want := range []string{`class="raxol-hosted"`, `<pre>`, `<span class="`, "Ramen"} {
		if !strings.Contains(f, want) {
			t.Errorf("the hosted view lacks %s:\n%s", want, f)
		}
	}
	if strings.ContainsRune(f, 0x1b) {
		t.Errorf("an escape sequence reached the page")
	}

	// A driver's down arrow goes to the program, as the human's would.
	id := regexp.MustCompile(`class="raxol-hosted" data-id="([^"]+)"`).FindStringSubmatch(f)
	if id == nil {
		t.Fatalf("no data-id on the hosted view")
	}
	body, _ := json.Marshal(map[string]string{"id": id[1], "kind": "key", "key": "down"})
	post, _ := http.NewRequest(http.MethodPost, base+"/input", bytes.NewReader(body))
	post.Header.Set("Content-Type", "application/json")
	post.Header.Set("Origin", "http://"+srv.HTTPAddr())
	resp, err := browser.Do(post)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the key: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	human.WaitFor("> Tomato Soup")
	next("Tomato Soup")
}
