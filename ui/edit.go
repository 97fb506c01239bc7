package ui

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// This file holds the editing the three text fields (TextInput,
// PasswordField and TextArea) share: key presses and pastes applied to a
// text with a cursor (readline.go has the readline keys), and the
// type_into, clear and get_value tools that replace the text.

// editText applies a key press or paste to value, the text of an editing
// widget whose cursor is st.Cursor (clamped here). It moves the cursor and
// returns the new value and whether it changed. The value never grows
// beyond maxLen runes, and a paste adds at most [DefaultMaxLen] runes.
// multiline enables Enter, Up and Down, keeps pasted line breaks and makes
// Home/End work on the cursor's line. The readline keys (readline.go) edit
// too; secret makes the whole text one word for them.
func editText(value string, ev Event, st *LocalState, maxLen int, multiline, secret bool) (string, bool) {
	runes := []rune(value)
	cur := clampCursor(st.Cursor, len(runes))
	st.Cursor = cur
	insert := func(text string, limit int) (string, bool) {
		ins := cleanInput(text, min(limit, maxLen-len(runes)), multiline)
		if len(ins) == 0 {
			return value, false
		}
		out := make([]rune, 0, len(runes)+len(ins))
		out = append(out, runes[:cur]...)
		out = append(out, ins...)
		out = append(out, runes[cur:]...)
		st.Cursor = cur + len(ins)
		return string(out), true
	}
	start, end := 0, len(runes)
	if multiline {
		start, end = lineBounds(runes, cur)
	}

	switch ev := ev.(type) {
	case tea.PasteMsg:
		return insert(ev.Content, DefaultMaxLen)
	case tea.KeyPressMsg:
		if ok, out, c := readlineKey(ev.String(), runes, cur, start, end, secret); ok {
			st.Cursor = c
			if out == nil {
				return value, false
			}
			return string(out), true
		}
		switch ev.String() {
		case "backspace":
			if cur == 0 {
				return value, false
			}
			st.Cursor = cur - 1
			return string(runes[:cur-1]) + string(runes[cur:]), true
		case "delete":
			if cur == len(runes) {
				return value, false
			}
			return string(runes[:cur]) + string(runes[cur+1:]), true
		case "left":
			st.Cursor = max(cur-1, 0)
		case "right":
			st.Cursor = min(cur+1, len(runes))
		case "home", "ctrl+a":
			st.Cursor = start
		case "end", "ctrl+e":
			st.Cursor = end
		case "up":
			if multiline && start > 0 {
				ps, pe := lineBounds(runes, start-1)
				st.Cursor = ps + min(cur-start, pe-ps)
			}
		case "down":
			if multiline && end < len(runes) {
				ns, ne := lineBounds(runes, end+1)
				st.Cursor = ns + min(cur-start, ne-ns)
			}
		case "enter":
			if multiline {
				return insert("\n", maxLen)
			}
		default:
			if ev.Text != "" && ev.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
				return insert(ev.Text, maxLen)
			}
		}
	}
	return value, false
}

// cleanInput returns at most limit runes of typed or pasted text, with
// control characters other than tabs and line breaks dropped. Line breaks
// ("\r\n", "\r" or "\n") become "\n" when multiline and a space otherwise.
// It stops reading text once it has limit runes.
func cleanInput(text string, limit int, multiline bool) []rune {
	if limit <= 0 || text == "" {
		return nil
	}
	out := make([]rune, 0, min(limit, len(text)))
	afterCR := false
	for _, r := range text {
		if len(out) >= limit {
			break
		}
		prevCR := afterCR
		afterCR = r == '\r'
		switch {
		case r == '\n' && prevCR:
			continue // the second half of "\r\n"
		case r == '\r' || r == '\n':
			r = ' '
			if multiline {
				r = '\n'
			}
		case r == '\t':
		case unicode.IsControl(r):
			continue
		}
		out = append(out, r)
	}
	return out
}

// lineBounds returns the start and end (exclusive, at the "\n" or the end
// of the text) of the line holding rune index i.
func lineBounds(runes []rune, i int) (start, end int) {
	start, end = i, i
	for start > 0 && runes[start-1] != '\n' {
		start--
	}
	for end < len(runes) && runes[end] != '\n' {
		end++
	}
	return start, end
}

// textLines holds the rune index where each line of a text starts.
type textLines struct {
	starts []int
	total  int
}

// splitLines indexes the lines of runes (at least one line).
func splitLines(runes []rune) textLines {
	l := textLines{starts: []int{0}, total: len(runes)}
	for i, r := range runes {
		if r == '\n' {
			l.starts = append(l.starts, i+1)
		}
	}
	return l
}

// lineOf returns the index of the line holding rune index i.
func (l textLines) lineOf(i int) int {
	n := 0
	for n+1 < len(l.starts) && l.starts[n+1] <= i {
		n++
	}
	return n
}

// line returns the runes of line n, without its "\n".
func (l textLines) line(runes []rune, n int) []rune {
	end := l.total
	if n+1 < len(l.starts) {
		end = l.starts[n+1] - 1
	}
	return runes[l.starts[n]:end]
}

// clampCursor clamps a cursor to [0, n].
func clampCursor(c, n int) int { return min(max(c, 0), n) }

// lenLimit returns limit, or def when limit is not positive.
func lenLimit(limit, def int) int {
	if limit <= 0 {
		return def
	}
	return limit
}

// checkText validates the text of a type_into call for a field that takes
// at most maxLen runes and returns it as the field would hold it. A text
// area takes line breaks, normalised to "\n" as a paste's are; the
// one-line fields refuse them. Other control characters than tab are
// refused (typing could not insert them). Errors never quote the text, so
// a password cannot leak through them.
func checkText(text string, maxLen int, multiline bool) (string, error) {
	if !utf8.ValidString(text) {
		return "", errors.New(`argument "text" is not valid UTF-8`)
	}
	if multiline {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	} else if strings.ContainsAny(text, "\r\n") {
		return "", errors.New(`argument "text" contains a line break, but this is a single-line field`)
	}
	for _, r := range text {
		if bidiControl(r) {
			// Drawn, it would reorder what follows it on the row (the
			// widgets beside the field included) on a terminal that
			// implements bidi: the human would read other text than the
			// app shows.
			return "", fmt.Errorf(`argument "text" contains a bidirectional control character (U+%04X): right-to-left text needs none`, r)
		}
		if unicode.IsControl(r) && r != '\t' && r != '\n' {
			if multiline {
				return "", errors.New(`argument "text" contains a control character: only tabs and line breaks are allowed`)
			}
			return "", errors.New(`argument "text" contains a control character: only tabs are allowed`)
		}
	}
	if utf8.RuneCountInString(text) > maxLen {
		return "", fmt.Errorf(`argument "text" is too long: this field takes at most %d characters`, maxLen)
	}
	return text, nil
}

// bidiControl reports the bidirectional embeddings, overrides and
// isolates (U+202A..U+202E, U+2066..U+2069): the characters of "Trojan
// Source" text, which show one order of characters while holding another.
// The implicit marks (LRM, RLM, ALM) stay: they only nudge neutral
// characters.
func bidiControl(r rune) bool {
	return (0x202A <= r && r <= 0x202E) || (0x2066 <= r && r <= 0x2069)
}

// textFieldCall is the shared CallTool of the three text fields. changed
// builds the field's message; getValue is false for a PasswordField.
func textFieldCall(kind, action string, args map[string]any, disabled bool, maxLen int, multiline, getValue bool,
	value string, changed func(string) tea.Msg) (any, []tea.Msg, error) {
	switch action {
	case "type_into", "clear":
	case "get_value":
		if !getValue {
			return nil, nil, errUnknownAction(action)
		}
	default:
		return nil, nil, errUnknownAction(action)
	}
	if disabled {
		return nil, nil, fmt.Errorf("this %s is disabled", kind)
	}
	switch action {
	case "type_into":
		if err := checkArgs(args, argText); err != nil {
			return nil, nil, err
		}
		text, _, err := stringArg(args, argText, true)
		if err != nil {
			return nil, nil, err
		}
		if text, err = checkText(text, maxLen, multiline); err != nil {
			return nil, nil, err
		}
		return okResult(), []tea.Msg{changed(text)}, nil
	case "clear":
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return okResult(), []tea.Msg{changed("")}, nil
	default: // get_value
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return map[string]any{"value": value}, nil, nil
	}
}
