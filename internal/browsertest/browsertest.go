package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/chromedp"
)

// ErrNoBrowser is the error for a machine without Chromium.
var ErrNoBrowser = errors.New("browsertest: no chromium: install it with `apt-get install -y chromium` (or set RAXOL_CHROMIUM)")

// Path is the Chromium binary the tests start.
func Path() (string, error) {
	if p := os.Getenv("RAXOL_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	return "", ErrNoBrowser
}

// New starts a headless Chromium with a profile of its own (so its
// cookies are its own) and returns a context for its first tab. The
// browser is closed when the test ends.
func New(t testing.TB) context.Context {
	t.Helper()
	path, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(func(string, ...any) {}))
	// The first action starts the browser and ties it to ctx (a deadline
	// on it would end the browser too).
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}

// Run runs actions in the tab of ctx with a deadline, failing the test
// with what on error.
//
// A live page replaces elements as patches arrive: a node found by its
// selector can be gone by the time it is clicked ("Could not find node
// with given id"). Such a run is tried again, up to three times, with the
// selector looked up afresh; an action found stale has done nothing
// (chromedp resolves the node before it clicks or types).
func Run(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := chromedp.Do(c, actions...)
		if err == nil {
			return
		}
		if attempt < 3 && staleNode(err) {
			t.Logf("browser: %s: %v; the page replaced the element, trying again", what, err)
			continue
		}
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// staleNode reports whether err is the DevTools protocol's answer for a
// node the page has since removed.
func staleNode(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Could not find node with given id") || strings.Contains(msg, "No node with given id found")
}

// Eval evaluates a JavaScript expression in the tab and returns its
// value, failing the test on error.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("browser: evaluate %s: %v", expr, err)
	}
	return v
}

// AXNode is one node of the page's accessibility tree as a screen reader
// gets it: its role, its accessible name, its value and its states.
type AXNode struct {
	Role     string
	Name     string
	Value    string
	Selected bool
	Focused  bool
	Disabled bool
	Checked  string // "true", "false", "mixed" or ""
}

func (n AXNode) String() string {
	s := n.Role + " " + fmt.Sprintf("%q", n.Name)
	if n.Value != "" {
		s += fmt.Sprintf(" value=%q", n.Value)
	}
	if n.Selected {
		s += " selected"
	}
	if n.Disabled {
		s += " disabled"
	}
	return s
}

// AXTree is the page's full accessibility tree (Chromium's, through CDP
// Accessibility.getFullAXTree), without the nodes Chromium ignores.
func AXTree(t testing.TB, ctx context.Context) []AXNode {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := chromedp.Call(c, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		t.Fatalf("browser: accessibility tree: %v", err)
	}
	var out []AXNode
	for _, n := range res.Nodes {
		if n.Ignored {
			continue
		}
		a := AXNode{Role: axString(n.Role), Name: axString(n.Name), Value: axString(n.Value)}
		for _, p := range n.Properties {
			v := axString(p.Value)
			switch p.Name {
			case accessibility.PropertyNameSelected:
				a.Selected = v == "true"
			case accessibility.PropertyNameFocused:
				a.Focused = v == "true"
			case accessibility.PropertyNameDisabled:
				a.Disabled = v == "true"
			case accessibility.PropertyNameChecked:
				a.Checked = v
			}
		}
		out = append(out, a)
	}
	return out
}

func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var str string
	if err := json.Unmarshal(v.Value, &str); err == nil { // a JSON string: its escapes undone
		return str
	}
	return string(v.Value) // a number or a boolean, as JSON writes it
}

// ArtefactDir is where tests keep what they made for people to look at
// (screenshots): $RAXOL_TEST_ARTEFACTS, or artefacts/ at the module's
// root. They are artefacts, never compared against golden files.
func ArtefactDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("RAXOL_TEST_ARTEFACTS")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, "artefacts")
				break
			}
			if filepath.Dir(d) == d {
				dir = filepath.Join(os.TempDir(), "raxol-artefacts")
				break
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Screenshot sets the tab's viewport to width x height (a phone's when
// mobile), takes a screenshot of the whole page and writes it as
// ArtefactDir/name.png; it returns the file's path and the PNG.
func Screenshot(t testing.TB, ctx context.Context, name string, width, height int64, mobile bool) (string, []byte) {
	t.Helper()
	opts := []chromedp.EmulateViewportOption{}
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	Run(t, ctx, "viewport for "+name, chromedp.EmulateViewport(width, height, opts...),
		chromedp.Sleep(100*time.Millisecond)) // one layout after the resize
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("browser: screenshot %s: %v", name, err)
	}
	path := filepath.Join(ArtefactDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
	return path, png
}
