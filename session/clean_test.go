package session

import (
	"context"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// unsafeRune is what text drawn on a terminal must never hold, written
// from the Unicode categories rather than from the cleaning code.
func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7F && r < 0xA0) ||
		unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp,
			unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) ||
		(unicode.Is(unicode.Zs, r) && r != ' ') ||
		r == 0x2065 || (0xFFF0 <= r && r <= 0xFFF8) || (0xE0000 <= r && r <= 0xE0FFF)
}

// checkSafe fails unless s is valid UTF-8 of at most bound runes with no
// unsafe rune.
func checkSafe(t interface {
	Helper()
	Fatalf(string, ...any)
}, what, s string, bound int) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%s = %q is not valid UTF-8", what, s)
	}
	if n := utf8.RuneCountInString(s); n > bound {
		t.Fatalf("%s is %d runes, more than %d", what, n, bound)
	}
	for _, r := range s {
		if unsafeRune(r) {
			t.Fatalf("%s = %q holds %U", what, s, r)
		}
	}
}

const osc52 = "\x1b]52;c;cm0gLXJmIH4K\x07"

// A session with sinks that keep what they were asked.
func cleanSession(t testing.TB) (*Session, *ApprovalRequest, *JoinRequest, *string) {
	t.Helper()
	m := NewManager(nil)
	t.Cleanup(m.Close)
	s, _, err := m.Start("t", Owner{User: "u"}, app{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var asked ApprovalRequest
	var join JoinRequest
	var keysFrom string
	s.SetApprovalSink(func(_ context.Context, req ApprovalRequest) (Approval, error) { asked = req; return Refused, nil })
	s.SetJoinSink(func(_ context.Context, req JoinRequest) (JoinAnswer, error) { join = req; return JoinRefused, nil })
	s.SetKeySink(func(agent string, _ []string) error { keysFrom = agent; return nil })
	return s, &asked, &join, &keysFrom
}

func TestOutsideTextIsCleanedWhereItEntersTheSession(t *testing.T) {
	s, asked, join, keysFrom := cleanSession(t)
	hostile := osc52 + "ev\u202eil\x1b[2J\r\n\u034f\U000E0FFF\u2066bot\x9b"
	const want = "evil  bot\uFFFD"

	s.Attach(KindAgent, hostile)
	if got := s.Agents()[0].Name; got != want {
		t.Errorf("attached as %q, want %q", got, want)
	}
	s.Record(Action{Origin: "agent:" + hostile, Agent: true, Widget: hostile, Label: hostile, Action: hostile, Summary: "clicked " + hostile, Outcome: hostile})
	a := s.Activity()[0]
	for _, f := range []struct{ name, got, want string }{
		{"origin", a.Origin, "agent:" + want}, {"widget", a.Widget, want}, {"label", a.Label, want},
		{"action", a.Action, want}, {"summary", a.Summary, "clicked " + want}, {"outcome", a.Outcome, want},
	} {
		if f.got != f.want {
			t.Errorf("recorded %s %q, want %q", f.name, f.got, f.want)
		}
	}
	if _, err := s.RequestApproval(context.Background(), ApprovalRequest{ID: "r1", Agent: hostile, Tool: hostile, Widget: hostile, Args: `{"text":"` + hostile + `"}`, Prompt: hostile}); err != nil {
		t.Fatal(err)
	}
	if asked.ID != "r1" || asked.Agent != want || asked.Tool != want || asked.Widget != want || asked.Prompt != want || asked.Args != `{"text":"`+want+`"}` {
		t.Errorf("the approval prompt was asked %+v", *asked)
	}
	if _, err := s.RequestJoin(context.Background(), JoinRequest{ID: "j1", User: hostile, KeyFingerprint: "SHA256:" + hostile, RemoteAddr: hostile}); err != nil {
		t.Fatal(err)
	}
	if join.ID != "j1" || join.User != want || join.KeyFingerprint != "SHA256:"+want || join.RemoteAddr != want {
		t.Errorf("the join prompt was asked %+v", *join)
	}
	if err := s.SendKeys(hostile, []string{"tab"}); err != nil || *keysFrom != want {
		t.Errorf("keys delivered from %q (%v), want %q", *keysFrom, err, want)
	}

	// Bounded, cut with an ellipsis.
	s.Attach(KindTerminal, strings.Repeat("n", 10_000))
	if got := s.Attached()[1].Name; utf8.RuneCountInString(got) != maxName || !strings.HasSuffix(got, "…") {
		t.Errorf("a 10000-rune name attached as %d runes: %q", utf8.RuneCountInString(got), got)
	}
	// Printable Unicode is kept.
	s.Attach(KindTerminal, "Zoë 日本 😀")
	if got := s.Attached()[2].Name; got != "Zoë 日本 😀" {
		t.Errorf("printable name attached as %q", got)
	}
}

// anyText is arbitrary bytes, or runes, or both mixed with the pieces of
// escape sequences.
var anyText = rapid.OneOf(
	rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	rapid.String(),
	rapid.Map(rapid.SliceOf(rapid.OneOf(
		rapid.SampledFrom([]string{"\x1b", "\x1b[", "\x1b]", "\x1bP", "\x1b_", "\x07", "\x9b", "\u009b", "\r", "\n", "\u202e", "\u034f", "\U000E0FFF", "\u2065"}),
		rapid.String(),
	)), func(p []string) string { return strings.Join(p, "") }),
)

// Whatever enters through the entry points, what comes out of Attached,
// Activity and the prompts' sinks is safe to draw and bounded.
func TestEntryPointsNeverPassUnsafeText(t *testing.T) {
	s, asked, join, keysFrom := cleanSession(t)
	rapid.Check(t, func(rt *rapid.T) {
		name := anyText.Draw(rt, "name")
		tool := anyText.Draw(rt, "tool")
		args := anyText.Draw(rt, "args")
		_, detach := s.Attach(KindAgent, name)
		defer detach()
		s.Record(Action{Origin: "agent:" + name, Agent: true, Widget: tool, Label: tool, Action: tool, Summary: "used " + tool, Outcome: tool})
		_, _ = s.RequestApproval(context.Background(), ApprovalRequest{Agent: name, Tool: tool, Widget: tool, Args: args, Prompt: args})
		_, _ = s.RequestJoin(context.Background(), JoinRequest{User: name, KeyFingerprint: tool, RemoteAddr: args})
		_ = s.SendKeys(name, nil)

		for _, at := range s.Attached() {
			checkSafe(rt, "attachment name", at.Name, maxName)
		}
		act := s.Activity()
		a := act[len(act)-1]
		for _, f := range []struct {
			what, s string
			bound   int
		}{
			{"origin", a.Origin, maxField}, {"widget", a.Widget, maxField}, {"label", a.Label, maxField},
			{"action", a.Action, maxField}, {"summary", a.Summary, maxSummary}, {"outcome", a.Outcome, maxField},
			{"approval agent", asked.Agent, maxName}, {"approval tool", asked.Tool, maxField}, {"approval widget", asked.Widget, maxField},
			{"approval args", asked.Args, maxArgs}, {"approval prompt", asked.Prompt, maxPrompt},
			{"join user", join.User, maxName}, {"join key", join.KeyFingerprint, maxField}, {"join address", join.RemoteAddr, maxField},
			{"keys' agent", *keysFrom, maxName},
		} {
			checkSafe(rt, f.what, f.s, f.bound)
		}
	})
}
