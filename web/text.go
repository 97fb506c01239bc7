package web

import (
	"hash/fnv"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Bounds on single pieces of text.
const (
	maxTextRunes  = 16384   // one text (a TextArea's value at most)
	maxDrawnRunes = 1 << 18 // what a widget or a hosted screen draws
	maxIDBytes    = 128     // a widget id kept whole in attributes
)

// clean makes app text safe to show: escape sequences stripped, invalid
// UTF-8 replaced, control characters (but newline and tab), C1 controls and
// bidirectional overrides dropped, and at most maxTextRunes runes kept. It
// does not escape HTML: esc does.
func clean(s string) string { return cleanN(s, maxTextRunes) }

// cleanN is clean keeping at most limit runes.
func cleanN(s string, limit int) string {
	if s == "" {
		return ""
	}
	if strings.ContainsRune(s, 0x1b) || strings.ContainsRune(s, 0x9b) {
		s = ansi.Strip(s)
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	n := 0
	for _, r := range s {
		if dropped(r) {
			continue
		}
		if n == limit {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// dropped reports whether clean leaves r out.
func dropped(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true // bidirectional controls: text must read as it is
	case r == 0xfeff, r == 0xfffe, r == 0xffff:
		return true
	}
	return false
}

// oneLine is clean with line breaks and tabs turned into spaces: labels,
// headers and options.
func oneLine(s string) string {
	s = clean(s)
	if strings.ContainsAny(s, "\n\t\r") {
		s = strings.NewReplacer("\n", " ", "\t", " ", "\r", " ").Replace(s)
	}
	return s
}

// esc is html.EscapeString: <, >, &, ' and " as character references,
// which makes text safe both between tags and in a quoted attribute value.
func esc(s string) string { return html.EscapeString(s) }

// domID is the id attribute of the widget id: "raxol-" then the id with
// every byte outside [A-Za-z0-9-] written as "_" and two hex digits, so
// that distinct ids give distinct attributes. An id longer than
// maxIDBytes keeps its first bytes and a hash of the whole.
func domID(id string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.WriteString("raxol-")
	src := id
	if len(src) > maxIDBytes {
		src = src[:maxIDBytes/2]
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	if len(id) > maxIDBytes {
		h := fnv.New64a()
		h.Write([]byte(id))
		b.WriteString("~" + strconv.FormatUint(h.Sum64(), 16))
	}
	return b.String()
}

// dataID is the data-id attribute of the widget id: the id itself, cleaned,
// so that the browser names the widget by the id the app gave it. An id
// too long to keep whole is cut.
func dataID(id string) string {
	if len(id) > maxIDBytes*2 {
		id = id[:maxIDBytes*2]
		for !utf8.ValidString(id) && len(id) > 0 {
			id = id[:len(id)-1]
		}
	}
	return oneLine(id)
}
