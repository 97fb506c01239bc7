package tui

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/vt"
)

// sgrRe matches SGR sequences, capturing their parameters.
var sgrRe = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

func TestUndrivable(t *testing.T) {
	for term, refused := range map[string]bool{
		"dumb": false, "DUMB": false, "unknown": true, "vt52": true, "VT52": true, "tty33": true, "glasstty": true,
		"xterm-256color": false, "vt100": false, "linux": false, "ansi-mini": false, "": false, "screen": false,
	} {
		why := Undrivable(term)
		if (why != "") != refused {
			t.Errorf("Undrivable(%q) = %q, want refused %v", term, why, refused)
		}
		if refused && (!strings.Contains(why, "TERM="+term) || strings.Contains(why, "\n")) {
			t.Errorf("Undrivable(%q) = %q: want one line naming the type", term, why)
		}
	}
}

func TestProfile(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want colorprofile.Profile
	}{
		{[]string{"TERM=xterm-256color"}, colorprofile.ANSI256},
		{[]string{"TERM=xterm-256color", "COLORTERM=truecolor"}, colorprofile.TrueColor},
		{[]string{"TERM=xterm-256color", "NO_COLOR=1"}, colorprofile.ASCII},
		{[]string{"TERM=vt100"}, colorprofile.ASCII},
		{[]string{"TERM=vt100", "COLORTERM=truecolor"}, colorprofile.ASCII},
		{[]string{"TERM=vt220", "CLICOLOR_FORCE=1"}, colorprofile.ASCII},
		{[]string{"TERM=xterm-mono"}, colorprofile.ASCII},
		{[]string{"TERM=linux"}, colorprofile.ANSI},
		{[]string{"TERM=linux", "COLORTERM=truecolor"}, colorprofile.ANSI},
		{[]string{"TERM=ansi-mini", "COLORTERM=truecolor"}, colorprofile.NoTTY},
		{[]string{"TERM="}, colorprofile.NoTTY},
		{[]string{"TERM=dumb", "CLICOLOR_FORCE=1"}, colorprofile.NoTTY},
		{[]string{"TERM=vt100", "TERM=xterm-256color"}, colorprofile.ANSI256}, // the last wins
	} {
		if got := Profile(tc.env); got != tc.want {
			t.Errorf("Profile(%q) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

func TestLimitProfile(t *testing.T) {
	xterm := []string{"TERM=xterm-256color"}
	for _, tc := range []struct {
		msg     colorprofile.Profile
		env     []string
		initial colorprofile.Profile
		want    colorprofile.Profile
	}{
		{colorprofile.TrueColor, xterm, colorprofile.ANSI256, colorprofile.TrueColor}, // the terminal said RGB
		{colorprofile.TrueColor, xterm, colorprofile.ASCII, colorprofile.ASCII},       // NO_COLOR stays
		{colorprofile.ANSI, []string{"TERM="}, colorprofile.NoTTY, colorprofile.NoTTY},
		{colorprofile.TrueColor, []string{"TERM=vt100"}, colorprofile.ASCII, colorprofile.ASCII},
		{colorprofile.TrueColor, []string{"TERM=linux"}, colorprofile.ANSI, colorprofile.ANSI},
		{colorprofile.ANSI256, nil, colorprofile.Unknown, colorprofile.ANSI256}, // no TERM: no limit
	} {
		if got := limitProfile(tc.msg, tc.env, tc.initial); got != tc.want {
			t.Errorf("limitProfile(%v, %q, %v) = %v, want %v", tc.msg, tc.env, tc.initial, got, tc.want)
		}
	}
}

// A plain terminal's screen gets text and cursor moves: no modes, no
// attributes, no title, and nothing to undo when it closes.
func TestPlainScreenSendsNoModes(t *testing.T) {
	var out bytes.Buffer
	s := newScreen(&out, []string{"TERM=ansi-mini"}, colorprofile.NoTTY, 40, 5)
	if err := s.start("title"); err != nil {
		t.Fatal(err)
	}
	styled := lipgloss.NewStyle().Bold(true).Reverse(true).Foreground(lipgloss.Red).Render("hello") + "\nworld"
	if err := s.draw(styled); err != nil {
		t.Fatal(err)
	}
	s.release()
	if err := s.draw(styled + "!"); err != nil { // rebuilt after a release
		t.Fatal(err)
	}
	em := vt.NewEmulator(40, 5)
	_, _ = em.Write(out.Bytes())
	if got := em.String(); !strings.Contains(got, "hello\nworld!") {
		t.Errorf("screen = %q", got)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	raw := out.String()
	if sgr := sgrRe.FindAllString(raw, -1); len(sgr) > 0 {
		t.Errorf("SGR sent to a plain terminal: %q", sgr)
	}
	for _, bad := range []string{"\x1b[?", "\x1b]", "\x1b7", "\x1b8"} {
		if strings.Contains(raw, bad) {
			t.Errorf("%q sent to a plain terminal: %q", bad, raw)
		}
	}
}

// A monochrome terminal keeps its modes and attributes but loses colours.
func TestMonochromeScreen(t *testing.T) {
	var out bytes.Buffer
	s := newScreen(&out, []string{"TERM=vt100"}, colorprofile.ASCII, 40, 5)
	_ = s.start("")
	_ = s.draw(lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Red).Render("hi"))
	raw := out.String()
	if !strings.Contains(raw, "\x1b[?1049h") || !strings.Contains(raw, "\x1b[1m") {
		t.Errorf("want the alternate screen and bold: %q", raw)
	}
	for _, m := range sgrRe.FindAllStringSubmatch(raw, -1) {
		for _, p := range strings.Split(m[1], ";") {
			if p == "31" || p == "91" || strings.HasPrefix(p, "38") {
				t.Errorf("colour sent: %q", m[0])
			}
		}
	}
}
