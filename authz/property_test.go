package authz

import (
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// drawPattern draws a valid glob over a small alphabet: dot-separated
// segments, each either "**" or a run of 'a', 'b', '?' and single '*'.
func drawPattern(t *rapid.T) string {
	segs := rapid.SliceOfN(rapid.OneOf(
		rapid.Just("**"),
		rapid.StringMatching(`[ab?]{0,2}(\*[ab?]{1,2}){0,2}\*?`),
	), 1, 4).Draw(t, "segments")
	p := strings.Join(segs, ".")
	if p == "" {
		p = "*"
	}
	return p
}

// globRegexp is the reference semantics of a glob, as a regular expression.
func globRegexp(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^`)
	for i := 0; i < len(p); i++ {
		switch {
		case strings.HasPrefix(p[i:], "**"):
			b.WriteString(`.*`)
			i++
		case p[i] == '*':
			b.WriteString(`[^.]*`)
		case p[i] == '?':
			b.WriteString(`[^.]`)
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

// The glob matcher agrees with the regular-expression definition on every
// valid pattern and name.
func TestGlobMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawPattern(t)
		f, err := Allowlist([]string{p})
		if err != nil {
			t.Fatalf("valid pattern %q rejected: %v", p, err)
		}
		re := globRegexp(p)
		names := rapid.SliceOfN(rapid.StringMatching(`[ab.]{0,8}`), 1, 20).Draw(t, "names")
		for _, name := range names {
			got := f(name, nil, Context{}).Kind == KindAllow
			if want := re.MatchString(name); got != want {
				t.Fatalf("pattern %q, name %q: matched %v, want %v", p, name, got, want)
			}
		}
	})
}

// No pattern, however many wildcards, makes matching slow: a 30-wildcard
// pattern against a long name that almost matches finishes at once.
func TestGlobNoBacktracking(t *testing.T) {
	f, err := Allowlist([]string{strings.Repeat("*a", 30) + "b"})
	if err != nil {
		t.Fatal(err)
	}
	if f(strings.Repeat("a", 5000), nil, Context{}).Kind != KindDeny {
		t.Error("matched")
	}
}
