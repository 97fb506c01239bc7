package demo_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/vt"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// update rewrites the golden files (testdata/golden/*.txt) and the MCP
// transcript (testdata/mcp.txtar) from what the tests see:
//
//	go test ./demo/ -update
//
// then review the change with git diff.
var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt and testdata/*.txtar")

// screenSizes are the terminal sizes the golden screens are drawn at.
var screenSizes = [][2]int{{80, 24}, {120, 40}}

// TestGoldenScreens: each tab of the console, as the human sees it in a
// terminal of 80x24 and 120x40, is what testdata/golden holds. The screen
// is drawn the way an SSH session draws it (a tui.Model writing to a
// terminal), read back from a terminal emulator as text.
func TestGoldenScreens(t *testing.T) {
	for tab, name := range []string{"overview", "metrics", "logs", "config"} {
		for _, sz := range screenSizes {
			file := fmt.Sprintf("%s-%dx%d.txt", name, sz[0], sz[1])
			t.Run(file, func(t *testing.T) {
				got := humanScreen(t, fold(demo.New(), ui.TabChanged{ID: demo.IDTabs, Index: tab}), sz[0], sz[1])
				golden(t, filepath.Join("testdata", "golden", file), got)
			})
		}
	}
}

func fold(m ui.Model, msgs ...any) ui.Model {
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m
}

// humanScreen is what a terminal of w x h shows of a session of m, as its
// owner's SSH terminal draws it: a tui.Model, the owner's, writing to a
// terminal emulator, read back as text. Nothing on it depends on the
// clock (no agent is attached, so no age is shown); the session id is
// masked.
func humanScreen(t *testing.T, m ui.Model, w, h int) string {
	t.Helper()
	mgr := session.NewManager(nil)
	t.Cleanup(mgr.Close)
	s, ok, err := mgr.Start(demo.Name, session.Owner{User: "human"}, m, 0)
	if err != nil || !ok {
		t.Fatalf("start session: %v %v", ok, err)
	}
	em := vt.NewEmulator(w, h)
	term := tui.New(s, tui.Options{Terminal: "human", Primary: true, Output: em, Width: w, Height: h,
		Environ: []string{"TERM=xterm-256color"}, ColorProfile: colorprofile.ANSI256, IdleRelease: -1})
	t.Cleanup(term.Close)
	term.Init()
	// The session id is random; the status bar shows it. Masked with as
	// many characters, so that the layout is the one a real id gets.
	id := s.ID
	mask := "<session-id" + strings.Repeat("-", max(0, len(id)-12)) + ">"
	text := em.String()
	if !strings.Contains(text, id) {
		t.Fatalf("the status bar does not show the session id %q any more: update the mask\n%s", id, text)
	}
	return screenText(strings.ReplaceAll(text, id, mask))
}

// screenText is an emulator's text with trailing spaces cut, one "\n"
// after every line.
func screenText(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// golden compares got with the file, or rewrites the file with -update.
func golden(t testing.TB, file, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	checkGolden(t, file, got)
}

// checkGolden fails the test, with a line diff, if got is not the file's
// content.
func checkGolden(t testing.TB, file, got string) {
	t.Helper()
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./demo/ -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what the test sees (go test ./demo/ -update rewrites it):\n%s", file, lineDiff(string(want), got))
	}
}

// lineDiff is a line diff of want and got: common lines indented by two
// spaces, lines only in want marked "-", lines only in got "+", each with
// its line number in its own text, and "…" for runs of common lines
// more than 2 away from a change.
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte // ' ', '-', '+'
		n    int  // line number in want ('-', ' ') or got ('+')
		text string
	}
	var ops []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, line{' ', i + 1, a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, line{'-', i + 1, a[i]})
			i++
		default:
			ops = append(ops, line{'+', j + 1, b[j]})
			j++
		}
	}
	near := func(k int) bool {
		for d := -2; d <= 2; d++ {
			if k+d >= 0 && k+d < len(ops) && ops[k+d].op != ' ' {
				return true
			}
		}
		return false
	}
	var sb strings.Builder
	sb.WriteString("--- want (golden file)\n+++ got (test)\n")
	skipped := false
	for k, l := range ops {
		if l.op == ' ' && !near(k) {
			if !skipped {
				sb.WriteString("  …\n")
			}
			skipped = true
			continue
		}
		skipped = false
		fmt.Fprintf(&sb, "%c %3d |%s|\n", l.op, l.n, l.text)
	}
	return sb.String()
}

// failures records what a test reports instead of failing.
type failures struct {
	testing.TB
	msgs []string
}

func (f *failures) Helper() {}
func (f *failures) Errorf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}
func (f *failures) Fatalf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

// TestGoldenMismatchPrintsAReadableDiff: when a screen differs from its
// golden file, the failure names the file and how to rewrite it, and
// shows the changed lines (numbered, "-" for the file, "+" for the
// screen) with a little context, not two whole screens.
func TestGoldenMismatchPrintsAReadableDiff(t *testing.T) {
	file := filepath.Join("testdata", "golden", "overview-80x24.txt")
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Replace(string(want), "billing        us-east   degraded  77.3", "billing        us-east   ok        12.3", 1)
	got = strings.Replace(got, "Ready. Tab moves focus; Enter activates.\n", "Ready. Tab moves focus; Enter activates.\nan extra line\n", 1)
	if got == string(want) {
		t.Fatal("the golden file does not have the lines this test changes")
	}
	f := &failures{TB: t}
	checkGolden(f, file, got)
	if len(f.msgs) != 1 {
		t.Fatalf("golden reported %d failures, want 1: %q", len(f.msgs), f.msgs)
	}
	msg := f.msgs[0]
	t.Logf("the failure reads:\n%s", msg)
	for _, w := range []string{
		file, "go test ./demo/ -update",
		"--- want (golden file)\n+++ got (test)\n",
		"    7 |│  auth ",
		"-   8 |│  billing        us-east   degraded  77.3    1024     310                     │|\n" +
			"+   8 |│  billing        us-east   ok        12.3    1024     310                     │|\n",
		"    9 |│  search ", // context
		"   15 |Ready. Tab moves focus; Enter activates.|\n+  16 |an extra line|\n",
		"  …\n",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("the failure lacks %q", w)
		}
	}
	if strings.Contains(msg, "notifications") || strings.Contains(msg, "agents: none") {
		t.Error("the failure shows lines far from any change")
	}
	// The same screen is no failure.
	f = &failures{TB: t}
	checkGolden(f, file, string(want))
	if len(f.msgs) != 0 {
		t.Fatalf("an unchanged screen failed: %q", f.msgs)
	}
}
