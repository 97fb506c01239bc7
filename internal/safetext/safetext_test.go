package safetext_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
)

func TestCleanRemovesHostileSequences(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"clear screen", "a\x1b[2Jb", "ab"},
		{"cursor home and SGR", "\x1b[H\x1b[1;31mred\x1b[0m", "red"},
		{"private mode: alt screen", "x\x1b[?1049hy", "xy"},
		{"OSC 52 clipboard write, BEL", "x\x1b]52;c;cm0gLXJmIH4K\x07y", "xy"},
		{"OSC 0 title, ST", "\x1b]0;pwned\x1b\\ok", "ok"},
		{"OSC 8 hyperlink", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"unterminated OSC takes the rest", "ok\x1b]52;c;AAAA and more", "ok"},
		{"DCS", "\x1bP1$qm\x1b\\z", "z"},
		{"DCS tmux passthrough", "\x1bPtmux;\x1b\x1b]52;c;AAAA\x07\x1b\\z", "z"},
		{"APC kitty graphics", "\x1b_Gf=100;AAAA\x1b\\k", "k"},
		{"SOS and PM", "\x1bXsos\x1b\\\x1b^pm\x1b\\v", "v"},
		{"C1 CSI as a rune", "\u009b2Jq", "q"},
		{"C1 OSC as a rune, C1 ST", "\u009d52;c;AAAA\u009cq", "q"},
		{"C1 DCS and APC", "\u0090x\u009c\u009fy\u009cq", "q"},
		{"8-bit CSI as a raw byte", "\x9b2Jq", "\uFFFD2Jq"},
		{"RIS", "a\x1bcb", "ab"},
		{"charset designation", "a\x1b(0qqq\x1b(Bb", "aqqqb"},
		{"save cursor, index", "a\x1b7\x1bDb", "ab"},
		{"lone ESC at the end", "abc\x1b", "abc"},
		{"ESC ESC", "a\x1b\x1b[2Jb", "ab"},
		{"CSI cut by another sequence", "a\x1b[1;\x1b]0;t\x07b", "ab"},
		{"bare CR overwrites the line", "safe\rEVIL", "safe EVIL"},
		{"newlines and tabs", "line1\nline2\tx\r\ny", "line1 line2 x  y"},
		{"NEL, line and paragraph separators", "a\u0085b\u2028c\u2029d", "a b c d"},
		{"no-break and ideographic space", "a\u00a0b\u3000c", "a b c"},
		{"C0 controls", "a\x00\x01\x07\x08\x7fb", "ab"},
		{"backspaces hiding text", "rm -rf /\x08\x08\x08\x08\x08\x08\x08\x08ls", "rm -rf /ls"},
		{"bidi override", "evil\u202Etxt.exe", "eviltxt.exe"},
		{"bidi embeddings and pop", "\u202Aa\u202Bb\u202Cc\u202Dd", "abcd"},
		{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", "abc"},
		{"marks", "\u200Ea\u200Fb\u061Cc", "abc"},
		{"zero width", "a\u200Bb\u200Cc\u200Dd\u2060e\uFEFFf", "abcdef"},
		{"combining grapheme joiner", "a\u034Fb", "ab"},
		{"soft hyphen", "ad\u00ADmin", "admin"},
		{"Hangul fillers", "\u3164\u115F\u1160\uFFA0x", "x"},
		{"Khmer inherent vowels, Mongolian selectors", "a\u17B4\u17B5\u180B\u180E\u180Fb", "ab"},
		{"variation selectors", "a\uFE00\uFE0F\U000E0100\U000E01EFb", "ab"},
		{"tags", "a\U000E0001\U000E0041\U000E007Fb", "ab"},
		{"unassigned default-ignorables", "a\u2065\uFFF0\uFFF8\U000E0000\U000E0080\U000E0FFFb", "ab"},
		{"shorthand format, musical format", "a\U0001BCA0\U0001D173\U0001D17Ab", "ab"},
		{"private use", "a\uE000\U000F0000\U0010FFFDb", "ab"},
		{"noncharacters", "a\uFDD0\uFFFE\uFFFF\U0001FFFFb", "ab"},
		{"invalid UTF-8", "a\xff\xfeb", "a\uFFFD\uFFFDb"},
		{"truncated UTF-8", "a\xe6\x97", "a\uFFFD\uFFFD"},
		{"UTF-8 encoded surrogate", "a\xed\xa0\x80b", "a\uFFFD\uFFFD\uFFFDb"},
		{"overlong ESC", "a\xc0\x9b[2Jb", "a\uFFFD\uFFFD[2Jb"},
		{"braille blank", "\u2800\u2800x", "  x"},
	} {
		if got := safetext.Clean(tc.in, 0); got != tc.want {
			t.Errorf("%s: Clean(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestCleanKeepsPrintableText(t *testing.T) {
	for _, s := range []string{
		"",
		"alice",
		"claude-code 1.0.3",
		`!"#$%&'()*+,-./:;<=>?@[\]^_{|}~` + "`",
		"résumé naïve Ελληνικά Кириллица",
		"日本語 中文 한국어",
		"emoji 😀🎉👍",
		"e\u0301 combining acute",
		"عربى עברית", // right-to-left letters themselves are text
		"two  spaces",
		"\uFFFD replacement character",
		"…",
	} {
		if got := safetext.Clean(s, 0); got != s {
			t.Errorf("Clean(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestCleanBoundsLength(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	got := safetext.Clean(long, 64)
	if utf8.RuneCountInString(got) != 64 || got != strings.Repeat("x", 63)+"…" {
		t.Fatalf("Clean of 100000 x at 64 = %q (%d runes)", got, utf8.RuneCountInString(got))
	}
	if got := safetext.Clean(strings.Repeat("日", 65), 64); got != strings.Repeat("日", 63)+"…" {
		t.Fatalf("CJK at 64 = %q", got)
	}
	if got := safetext.Clean(strings.Repeat("日", 64), 64); got != strings.Repeat("日", 64) {
		t.Fatalf("exactly 64 runes were cut: %q", got)
	}
	// What is removed does not count.
	if got := safetext.Clean(strings.Repeat("\x1b[2J", 1000)+"name", 4); got != "name" {
		t.Fatalf("sequences counted against the bound: %q", got)
	}
	if got := safetext.Clean("abc", 1); got != "…" {
		t.Fatalf("bound 1 = %q", got)
	}
	// A tower of combining marks is cut to a few per character.
	zalgo := "a" + strings.Repeat("\u0301", 500) + "b"
	if got := safetext.Clean(zalgo, 0); got != "a"+strings.Repeat("\u0301", 8)+"b" {
		t.Fatalf("combining marks kept: %d runes", utf8.RuneCountInString(got))
	}
}

// DefaultIgnorable agrees with Go's Unicode tables on every assigned code
// point: Default_Ignorable_Code_Point is derived as Other_DICP + Cf +
// Variation_Selector - White_Space - FFF9..FFFB - 13430..1343F -
// Prepended_Concatenation_Mark (DerivedCoreProperties.txt).
func TestDefaultIgnorableMatchesTheDerivation(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		derived := unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
			unicode.Is(unicode.Variation_Selector, r) ||
			(unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.White_Space, r) &&
				!(0xFFF9 <= r && r <= 0xFFFB) && !(0x13430 <= r && r <= 0x1343F) &&
				!unicode.Is(unicode.Prepended_Concatenation_Mark, r))
		got := safetext.DefaultIgnorable(r)
		if derived && !got {
			t.Errorf("%U is default-ignorable but not listed", r)
		}
		assigned := !unicode.Is(unicode.Cn, r)
		if got && assigned && !derived {
			t.Errorf("%U (assigned) is listed but not default-ignorable", r)
		}
		if got && safetext.Classify(r) != safetext.Drop {
			t.Errorf("%U is default-ignorable but Classify keeps it", r)
		}
	}
}

// forbidden is what must never come out of Clean.
func forbidden(r rune) bool {
	return r < 0x20 || (r >= 0x7F && r < 0xA0) || safetext.Classify(r) != safetext.Keep ||
		unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp) ||
		(unicode.Is(unicode.Zs, r) && r != ' ')
}

// hostile draws strings made of the pieces attacks are made of, mixed with
// arbitrary bytes and runes.
var hostile = rapid.Custom(func(t *rapid.T) string {
	pieces := rapid.SliceOfN(rapid.OneOf(
		rapid.SampledFrom([]string{"\x1b", "\x1b[", "\x1b]", "\x1bP", "\x1b_", "\x1b\\", "\x07", "\u009b", "\u009c", "\u009d",
			"\x9b", "\r", "\n", "\t", "\u202e", "\u2066", "\u034f", "\U000E0FFF", "\u2065", "\u200b", "[2J", "52;c;", "\xff", "\u0301"}),
		rapid.String(),
		rapid.StringOf(rapid.RuneFrom(nil, &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0, Hi: 0xFFFF, Stride: 1}}, R32: []unicode.Range32{{Lo: 0x10000, Hi: unicode.MaxRune, Stride: 1}}})),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	), 0, 12).Draw(t, "pieces")
	return strings.Join(pieces, "")
})

func TestCleanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := hostile.Draw(t, "s")
		bound := rapid.IntRange(0, 80).Draw(t, "bound")
		c := safetext.Clean(s, bound)
		if !utf8.ValidString(c) {
			t.Fatalf("Clean(%q) = %q is not valid UTF-8", s, c)
		}
		for _, r := range c {
			if forbidden(r) {
				t.Fatalf("Clean(%q) = %q keeps %U", s, c, r)
			}
		}
		if bound > 0 && utf8.RuneCountInString(c) > bound {
			t.Fatalf("Clean(%q, %d) = %q is %d runes", s, bound, c, utf8.RuneCountInString(c))
		}
		if cc := safetext.Clean(c, bound); cc != c {
			t.Fatalf("Clean is not idempotent: %q, then %q", c, cc)
		}
	})
}
