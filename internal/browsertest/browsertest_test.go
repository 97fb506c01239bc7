package browsertest_test

import (
	"bytes"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/raxol-ssh/raxol-ssh/internal/browsertest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// The kit against a page of known structure: the accessibility tree names
// the button and the labelled input with their roles, and the screenshot
// is a PNG of the size asked for.
func TestKitReadsAPage(t *testing.T) {
	testkit.EndToEnd(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><meta name="viewport" content="width=device-width, initial-scale=1"><title>kit</title><main>
<button>Search</button><label for="q">Query</label><input id="q" value="abc">
<table><tr><th>Name</th></tr><tr aria-selected="true"><td>one</td></tr></table></main></html>`))
	}))
	defer srv.Close()
	ctx := browsertest.New(t)
	browsertest.Run(t, ctx, "open", chromedp.Navigate(srv.URL), chromedp.WaitVisible("button"))
	var saw []string
	found := map[string]bool{}
	for _, n := range browsertest.AXTree(t, ctx) {
		saw = append(saw, n.String())
		found[n.Role+"|"+n.Name] = true
	}
	for _, want := range []string{"button|Search", "textbox|Query"} {
		if !found[want] {
			t.Errorf("no %s in the accessibility tree:\n%s", want, strings.Join(saw, "\n"))
		}
	}
	_, b := browsertest.Screenshot(t, ctx, "browsertest-kit", 390, 844, true)
	img, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Width != 390 {
		t.Errorf("screenshot is %dx%d, want 390 wide", img.Width, img.Height)
	}
}
