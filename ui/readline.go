package ui

import "unicode"

// The readline keys of the text widgets, as a shell user expects them
// (GNU readline's emacs mode):
//
//	ctrl+a, ctrl+e       start, end of the line
//	ctrl+u, ctrl+k       kill to the start, to the end of the line
//	ctrl+w               kill the previous word, words separated by white space
//	alt+b, alt+f         back to the start, forward to the end of a word
//	alt+backspace        kill back to the start of a word
//	alt+d                kill forward to the end of a word
//
// A word, for alt+b, alt+f, alt+backspace and alt+d, is a run of letters,
// digits and combining marks in any script ("é", "日本" are words; "_",
// "-", "." and spaces separate them), as readline's are; ctrl+w kills back
// over white space and then to the previous white space (unix-word-rubout).
// alt+left/alt+right and ctrl+left/ctrl+right move like alt+b/alt+f.
//
// In a text area, line ends are white space for the word keys, so they
// cross lines; ctrl+a/ctrl+e and ctrl+u/ctrl+k stay within the cursor's
// line (ctrl+k at a line's end does nothing rather than join lines).
//
// A password field takes its whole secret as one word: the word keys go
// to its start or end and kill all of it before or after the cursor, as
// browsers' password fields do, so that where the cursor stops never
// shows where the secret's spaces and punctuation are.

// readlineKey applies one of the keys above to runes with the cursor at
// cur, within the line [start, end). It reports whether key is one of
// them; when it is, it returns the new text (nil: unchanged) and cursor.
func readlineKey(key string, runes []rune, cur, start, end int, secret bool) (handled bool, out []rune, cursor int) {
	back, fwd := wordBack(runes, cur), wordForward(runes, cur)
	spaceBack := spaceWordBack(runes, cur)
	if secret {
		back, fwd, spaceBack = 0, len(runes), 0
	}
	switch key {
	case "ctrl+u":
		return true, kill(runes, start, cur), start
	case "ctrl+k":
		return true, kill(runes, cur, end), cur
	case "ctrl+w":
		return true, kill(runes, spaceBack, cur), spaceBack
	case "alt+backspace", "ctrl+backspace":
		return true, kill(runes, back, cur), back
	case "alt+d", "alt+delete", "ctrl+delete":
		return true, kill(runes, cur, fwd), cur
	case "alt+b", "alt+left", "ctrl+left":
		return true, nil, back
	case "alt+f", "alt+right", "ctrl+right":
		return true, nil, fwd
	}
	return false, nil, cur
}

// kill returns runes without [from, to), or nil when that is empty.
func kill(runes []rune, from, to int) []rune {
	if from >= to {
		return nil
	}
	out := make([]rune, 0, len(runes)-(to-from))
	out = append(out, runes[:from]...)
	return append(out, runes[to:]...)
}

// isWordRune reports whether r is part of a word for the alt keys.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// wordBack returns the start of the word before cur (or the one cur is
// in): non-word runes are skipped, then word runes.
func wordBack(runes []rune, cur int) int {
	i := cur
	for i > 0 && !isWordRune(runes[i-1]) {
		i--
	}
	for i > 0 && isWordRune(runes[i-1]) {
		i--
	}
	return i
}

// wordForward returns the end of the word after cur (or the one cur is
// in).
func wordForward(runes []rune, cur int) int {
	i := cur
	for i < len(runes) && !isWordRune(runes[i]) {
		i++
	}
	for i < len(runes) && isWordRune(runes[i]) {
		i++
	}
	return i
}

// spaceWordBack returns where ctrl+w kills back to: white space before
// cur is skipped, then everything up to the previous white space.
func spaceWordBack(runes []rune, cur int) int {
	i := cur
	for i > 0 && unicode.IsSpace(runes[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(runes[i-1]) {
		i--
	}
	return i
}
