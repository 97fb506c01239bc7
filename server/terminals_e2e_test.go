package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// sgrRe matches Select Graphic Rendition sequences and captures their
// parameters.
var sgrRe = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// sgrParams returns every SGR parameter list in raw output.
func sgrParams(raw []byte) []string {
	var out []string
	for _, m := range sgrRe.FindAllSubmatch(raw, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// colourSGR returns the first SGR parameter list in raw that sets a
// colour (16, 256 or true colour, foreground or background, underline
// colour), or "".
func colourSGR(raw []byte) string {
	for _, p := range sgrParams(raw) {
		fields := strings.FieldsFunc(p, func(r rune) bool { return r == ';' || r == ':' })
		for _, f := range fields {
			n, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || n == 58 || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				return p
			}
		}
	}
	return ""
}

// modeSequences are what a plain terminal must never be sent.
var modeSequences = map[string]string{
	"alternate screen":   "\x1b[?1049h",
	"alternate screen 2": "\x1b[?47h",
	"mouse x10":          "\x1b[?1000h",
	"mouse button":       "\x1b[?1002h",
	"mouse any":          "\x1b[?1003h",
	"mouse sgr":          "\x1b[?1006h",
	"bracketed paste":    "\x1b[?2004h",
	"cursor hide":        "\x1b[?25l",
	"cursor show":        "\x1b[?25h",
	"window title":       "\x1b]",
	"save cursor":        "\x1b7",
}

// TestUndrivableTerminalRefused: a hardcopy terminal, or one whose
// cursor addressing is not ANSI, cannot show a full-screen app: one line
// says so, the exit status is 1, nothing is drawn and no session starts.
func TestUndrivableTerminalRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	for _, term := range []string{"vt52", "glasstty", "tty33"} {
		c := connect(t, srv.SSHAddr(), clientOpts{term: term, keepRaw: true})
		err, stderr := c.WaitExit(t, waitLong)
		var ee *gossh.ExitError
		if !errors.As(err, &ee) || ee.ExitStatus() != 1 {
			t.Fatalf("TERM=%s: exit = %v, want status 1", term, err)
		}
		want := "raxol-ssh: a terminal with ANSI cursor addressing is needed (TERM=" + term + " has none); try TERM=xterm-256color"
		if got := strings.TrimRight(stderr, "\r\n"); got != want {
			t.Errorf("TERM=%s: stderr = %q, want the one line %q", term, stderr, want)
		}
		<-c.stdoutDone
		if raw := c.Raw(); bytes.ContainsRune(raw, 0x1b) {
			t.Errorf("TERM=%s: escape sequences sent: %q", term, truncate(string(raw), 200))
		}
	}
	if n := srv.Sessions().Count(); n != 0 {
		t.Errorf("%d sessions started for undrivable terminals", n)
	}
}

// TestPlainTerminal: a terminal without attributes (TERM=dumb, ansi-mini)
// gets text and cursor moves alone: no modes, no SGR at all; after every
// Tab the focused widget is the one marked with "> ".
func TestPlainTerminal(t *testing.T) {
	t.Parallel()
	for _, term := range []string{"dumb", "ansi-mini"} {
		t.Run(term, func(t *testing.T) { t.Parallel(); testPlainTerminal(t, term) })
	}
}

func testPlainTerminal(t *testing.T, term string) {
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{term: term, keepRaw: true})
	waitDemo(t, c)
	se := onlySession(t, srv)

	order := ui.FocusOrder(se.Dispatcher.Snapshot().Tree)
	if len(order) < 3 {
		t.Fatalf("focus order %v: want at least 3 widgets", order)
	}
	for i := range len(order) + 1 {
		if i > 0 {
			c.Key(keyTab)
		}
		want := order[i%len(order)]
		testkit.Eventually(t, waitShort, func() bool { return se.Attention().Focus == want },
			"focus after %d tabs = %q, want %q", i, se.Attention().Focus, want)
		w, ok := ui.Find(se.Dispatcher.Snapshot().Tree, want)
		if !ok {
			t.Fatalf("no widget %q", want)
		}
		text := firstText(w)
		c.WaitFor(t, func(s string) bool { return markedText(s) == text }, waitShort)
	}

	// The terminal's own cursor shows what reverse video would: the text
	// cursor of the focused field, the highlighted row of a table.
	c.Key(keyTab)
	c.Type("abc")
	c.Key(keyLeft)
	screen := c.WaitFor(t, "> Search: abc", waitShort)
	testkit.Eventually(t, waitShort, func() bool {
		x, y := c.cursor()
		lines := strings.Split(c.Screen(), "\n")
		return y < len(lines) && strings.HasPrefix(lines[y][x:], "c")
	}, "cursor not on the search field's text cursor (%v):\n%s", fmt.Sprint(c.cursor()), screen)
	for i := slices.Index(order, demo.IDSearch) + 1; i <= slices.Index(order, demo.IDTable); i++ {
		c.Key(keyTab)
		testkit.Eventually(t, waitShort, func() bool { return se.Attention().Focus == order[i] },
			"focus = %q, want %q", se.Attention().Focus, order[i])
	}
	c.Key(keyDown)
	testkit.Eventually(t, waitShort, func() bool {
		_, y := c.cursor()
		lines := strings.Split(c.Screen(), "\n")
		return y < len(lines) && strings.Contains(lines[y], "auth ")
	}, "cursor not on the table's highlighted row:\n%s", c.Screen())

	raw := c.Raw()
	for name, seq := range modeSequences {
		if bytes.Contains(raw, []byte(seq)) {
			t.Errorf("%s (%q) sent to a plain terminal", name, seq)
		}
	}
	if p := sgrParams(raw); len(p) > 0 {
		t.Errorf("SGR sent to a plain terminal: %q", p[:min(len(p), 10)])
	}
	if bytes.Contains(raw, []byte("\x1b]8;")) {
		t.Error("hyperlink sent to a plain terminal")
	}
}

// cursor returns the emulator's cursor position.
func (c *client) cursor() (x, y int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.em.CursorPosition()
	return p.X, p.Y
}

// firstText is the start of a widget's own first line of text, as the
// marker must be followed by it.
func firstText(w ui.Widget) string {
	line, _, _ := strings.Cut(ansi.Strip(ui.RenderNode(w, 30, ui.RenderOptions{})), "\n")
	r := []rune(strings.TrimSpace(line))
	return string(r[:min(len(r), 8)])
}

// markedText returns the text after the one focus marker on screen (its
// first 8 runes, leading blanks skipped), or "" unless there is exactly
// one marker.
func markedText(screen string) string {
	if strings.Count(screen, ui.FocusMarker) != 1 {
		return ""
	}
	_, after, _ := strings.Cut(screen, ui.FocusMarker)
	after, _, _ = strings.Cut(after, "\n")
	r := []rune(strings.TrimSpace(after))
	return string(r[:min(len(r), 8)])
}

// TestMonochromeAndLinuxColours: vt100 gets attributes (bold, reverse) but
// no colour, and its focus is marked in the text too; the linux console
// gets 16 colours at most, even when the client claims true colour.
func TestMonochromeAndLinuxColours(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	vt := connect(t, srv.SSHAddr(), clientOpts{term: "vt100", keepRaw: true, env: map[string]string{"COLORTERM": "truecolor"}})
	linux := connect(t, srv.SSHAddr(), clientOpts{term: "linux", keepRaw: true, env: map[string]string{"COLORTERM": "truecolor"}})
	waitDemo(t, vt)
	waitDemo(t, linux)
	vt.WaitFor(t, func(s string) bool { return strings.Count(s, ui.FocusMarker) == 1 }, waitShort)
	// Some frames more: focus moves, the table's rows.
	for _, c := range []*client{vt, linux} {
		c.Key(keyTab)
		c.Key(keyTab)
		time.Sleep(100 * time.Millisecond) // a frame between the keys
		c.Key(keyDown)
	}
	time.Sleep(300 * time.Millisecond) // the last frames drawn: a negative check on their bytes follows

	raw := vt.Raw()
	if p := colourSGR(raw); p != "" {
		t.Errorf("vt100 sent colour SGR %q", p)
	}
	var bold, reverse bool
	for _, p := range sgrParams(raw) {
		for _, f := range strings.Split(p, ";") {
			bold = bold || f == "1"
			reverse = reverse || f == "7"
		}
	}
	if !bold || !reverse {
		t.Errorf("vt100 got no bold (%v) or reverse (%v): %q", bold, reverse, sgrParams(raw))
	}

	raw = linux.Raw()
	for _, bad := range []string{"38;5;", "48;5;", "38;2;", "48;2;", "38:5:", "38:2:"} {
		if bytes.Contains(raw, []byte(bad)) {
			t.Errorf("linux got 256 or true colour (%q)", bad)
		}
	}
	if colourSGR(raw) == "" {
		t.Errorf("linux got no colour at all: %q", sgrParams(raw))
	}
	if strings.Contains(linux.Screen(), ui.FocusMarker) {
		t.Errorf("linux has colours, yet focus is marked in the text")
	}
}
