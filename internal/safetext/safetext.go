package safetext

import (
	"unicode"
	"unicode/utf8"
)

// Class is what becomes of a rune in text drawn on a terminal.
type Class uint8

const (
	// Keep is a printable rune, kept as it is.
	Keep Class = iota
	// Space is whitespace other than U+0020 (tab, newline, carriage
	// return, no-break and other spaces, line and paragraph separators):
	// Clean turns it into a plain space.
	Space
	// Drop is a rune never drawn: a control, a format character (bidi
	// overrides, isolates and marks, zero-width characters), a
	// default-ignorable code point, private use, a surrogate or a
	// noncharacter.
	Drop
)

// Classify says what becomes of r in text drawn on a terminal.
func Classify(r rune) Class {
	switch {
	case r >= ' ' && r < 0x7F: // printable ASCII, the common case
		return Keep
	case r < 0 || r > unicode.MaxRune:
		return Drop
	case r < 0x20 || (r >= 0x7F && r < 0xA0): // C0, DEL, C1
		switch r {
		case '\t', '\n', '\v', '\f', '\r', 0x85:
			return Space
		}
		return Drop
	case DefaultIgnorable(r):
		return Drop
	case unicode.In(r, unicode.Cf, unicode.Co, unicode.Cs), noncharacter(r):
		return Drop
	case unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp), r == 0x2800: // U+2800 braille blank looks like a space
		return Space
	}
	return Keep
}

// DefaultIgnorable reports whether r has the Unicode property
// Default_Ignorable_Code_Point, assigned or reserved (DerivedCoreProperties
// of Unicode 15.0 to 17.0; the reserved ranges make the list stable as
// code points get assigned).
func DefaultIgnorable(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r == 0x00AD, r == 0x034F, r == 0x061C,
		0x115F <= r && r <= 0x1160,
		0x17B4 <= r && r <= 0x17B5,
		0x180B <= r && r <= 0x180F,
		0x200B <= r && r <= 0x200F,
		0x202A <= r && r <= 0x202E,
		0x2060 <= r && r <= 0x206F,
		r == 0x3164,
		0xFE00 <= r && r <= 0xFE0F,
		r == 0xFEFF, r == 0xFFA0,
		0xFFF0 <= r && r <= 0xFFF8,
		0x1BCA0 <= r && r <= 0x1BCA3,
		0x1D173 <= r && r <= 0x1D17A,
		0xE0000 <= r && r <= 0xE0FFF:
		return true
	}
	return false
}

// noncharacter reports the 66 code points Unicode reserves for internal
// use: U+FDD0..U+FDEF and the last two of every plane.
func noncharacter(r rune) bool {
	return (0xFDD0 <= r && r <= 0xFDEF) || r&0xFFFE == 0xFFFE
}

// maxMarks is how many combining marks in a row one base character keeps:
// enough for any script, not enough to stack a tower over the line.
const maxMarks = 8

// Clean returns s as one line of text safe to draw on a terminal, at most
// maxRunes runes long (maxRunes <= 0: no bound). Escape sequences are
// removed whole, with their parameters; an unterminated string sequence
// (OSC, DCS, APC...) takes the rest of s with it, as it would on a
// terminal. Whitespace becomes a plain space and what [Classify] drops is
// dropped. Invalid UTF-8 becomes U+FFFD. Text beyond the bound is cut and
// ends in "…".
func Clean(s string, maxRunes int) string {
	if (maxRunes <= 0 || len(s) <= maxRunes) && printableASCII(s) {
		return s // nothing to remove, nothing to cut
	}
	out := make([]rune, 0, min(len(s), max(maxRunes, 0)+1))
	full := func() bool { return maxRunes > 0 && len(out) > maxRunes }
	marks := 0
	for i := 0; i < len(s) && !full(); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			out = append(out, utf8.RuneError) // a bad byte, shown as such
			i += max(n, 1)
			marks = 0
			continue
		}
		if r == 0x1B || (r >= 0x80 && r < 0xA0 && r != 0x85) { // NEL is a newline: a space
			i = skipEscape(s, i)
			continue
		}
		i += n
		switch Classify(r) {
		case Drop:
			continue
		case Space:
			r = ' '
		}
		if unicode.In(r, unicode.Mn, unicode.Me) {
			if marks++; marks > maxMarks {
				continue
			}
		} else {
			marks = 0
		}
		out = append(out, r)
	}
	if full() {
		out = append(out[:maxRunes-1], '…')
	}
	return string(out)
}

// printableASCII reports whether s is all printable ASCII (space to '~').
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] >= 0x7F {
			return false
		}
	}
	return true
}

// skipEscape returns the index just past the escape sequence, or the lone
// control, that starts at s[i] (ESC or a C1 control).
func skipEscape(s string, i int) int {
	r, n := utf8.DecodeRuneInString(s[i:])
	i += n
	switch r {
	case 0x9B: // CSI
		return skipCSI(s, i)
	case 0x90, 0x98, 0x9D, 0x9E, 0x9F: // DCS, SOS, OSC, PM, APC
		return skipString(s, i)
	case 0x1B:
	default:
		return i // another C1 control: dropped alone
	}
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(s, i+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, i+1)
	case c >= 0x20 && c <= 0x2F: // intermediates, then a final: ESC ( B
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2F {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7E {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7E: // ESC c, ESC 7, ESC N...
		return i + 1
	}
	return i // a lone ESC
}

// skipCSI skips a control sequence's parameters, intermediates and final
// byte starting at s[i]. Anything else ends it early, as on a terminal.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x20 && c <= 0x3F:
			i++
		case c >= 0x40 && c <= 0x7E:
			return i + 1
		default:
			return i
		}
	}
	return i
}

// skipString skips a control string (OSC, DCS, SOS, PM, APC) up to and
// including its terminator: BEL, ST (ESC \ or U+009C), or the end of s.
// Another ESC ends it too and starts what follows.
func skipString(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case 0x07, 0x9C:
			return i + n
		case 0x1B:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i
		}
		i += n
	}
	return i
}
