package ui

import (
	"image/color"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"charm.land/lipgloss/v2"
)

// Paint returns st.Render(s), for one line of text: the same bytes, made
// without lipgloss's general machinery (sizes, padding, borders, wrapping)
// for the plain styles themes hold (colors and attributes only). A style
// with anything else, or text with a newline or a tab, takes
// st.Render(s) itself. Terminals draw a frame after every change, and
// Render was the largest part of drawing one.
func Paint(st lipgloss.Style, s string) string {
	if strings.ContainsAny(s, "\n\r\t") {
		return st.Render(s)
	}
	p, ok := seen(&st)
	if !ok {
		p = painterFor(st)
		remember(&st, p)
	}
	if p == nil {
		return st.Render(s)
	}
	if s == "" {
		return p.empty
	}
	return p.prefix + s + p.suffix
}

// The painter of a style is found by the style's bytes first: lipgloss
// offers no identity for a Style, and reading every property through its
// getters (each copies the whole struct) cost more than the Render it
// saves. Two styles with the same bytes have the same fields, so the same
// output (byte-equal string fields point at the same text); a style whose
// bytes are new takes the getters once. Each entry keeps its style, so
// nothing its bytes point at can be freed and reused while the entry
// lives.
var byBytes struct {
	sync.RWMutex
	m map[string]paintEntry
}

type paintEntry struct {
	st lipgloss.Style // keeps what the key's pointers point at alive
	p  *painter
}

func styleBytes(st *lipgloss.Style) string {
	return unsafe.String((*byte)(unsafe.Pointer(st)), unsafe.Sizeof(*st))
}

func seen(st *lipgloss.Style) (*painter, bool) {
	byBytes.RLock()
	e, ok := byBytes.m[styleBytes(st)]
	byBytes.RUnlock()
	return e.p, ok
}

func remember(st *lipgloss.Style, p *painter) {
	byBytes.Lock()
	defer byBytes.Unlock()
	if len(byBytes.m) >= maxPainters {
		return
	}
	if byBytes.m == nil {
		byBytes.m = make(map[string]paintEntry)
	}
	byBytes.m[strings.Clone(styleBytes(st))] = paintEntry{st: *st, p: p}
}

// painter is what a plain style adds around text.
type painter struct {
	prefix, suffix, empty string
}

// styleKey is every property of a plain style that changes its output.
type styleKey struct {
	bold, faint, italic, blink, reverse, strike, underline bool
	colorSpaces, underlineSpaces, strikeSpaces             bool
	underlineStyle                                         lipgloss.Underline
	fg, bg, underlineColor                                 color.Color
}

// maxPainters bounds the cache: an app that makes styles of ever new
// colors gets the slow path beyond it, not a growing map.
const maxPainters = 1024

var painters struct {
	sync.Mutex
	m map[styleKey]*painter // nil value: a style Paint leaves to Render
}

// painterFor returns st's painter, or nil when st is not plain.
func painterFor(st lipgloss.Style) *painter {
	// The cheap getters, not the frame-size ones (which work out the
	// border several times over).
	if st.GetWidth() != 0 || st.GetHeight() != 0 || st.GetMaxWidth() != 0 || st.GetMaxHeight() != 0 ||
		st.GetPaddingTop() != 0 || st.GetPaddingRight() != 0 || st.GetPaddingBottom() != 0 || st.GetPaddingLeft() != 0 ||
		st.GetMarginTop() != 0 || st.GetMarginRight() != 0 || st.GetMarginBottom() != 0 || st.GetMarginLeft() != 0 ||
		st.GetBorderTop() || st.GetBorderRight() || st.GetBorderBottom() || st.GetBorderLeft() ||
		st.GetBorderStyle() != (lipgloss.Border{}) || st.GetTransform() != nil {
		return nil
	}
	if link, _ := st.GetHyperlink(); link != "" {
		return nil
	}
	k := styleKey{
		bold: st.GetBold(), faint: st.GetFaint(), italic: st.GetItalic(), blink: st.GetBlink(),
		reverse: st.GetReverse(), strike: st.GetStrikethrough(), underline: st.GetUnderline(),
		colorSpaces: st.GetColorWhitespace(), underlineSpaces: st.GetUnderlineSpaces(), strikeSpaces: st.GetStrikethroughSpaces(),
		underlineStyle: st.GetUnderlineStyle(),
		fg:             st.GetForeground(), bg: st.GetBackground(), underlineColor: st.GetUnderlineColor(),
	}
	for _, c := range []color.Color{k.fg, k.bg, k.underlineColor} {
		if c != nil && !reflect.TypeOf(c).Comparable() {
			return nil
		}
	}
	painters.Lock()
	defer painters.Unlock()
	if p, ok := painters.m[k]; ok {
		return p
	}
	if len(painters.m) >= maxPainters {
		return nil
	}
	if painters.m == nil {
		painters.m = make(map[styleKey]*painter)
	}
	p := newPainter(st)
	painters.m[k] = p
	return p
}

// newPainter learns what st puts around text, and checks it on other
// text; nil when its output is not text between a fixed prefix and
// suffix.
func newPainter(st lipgloss.Style) *painter {
	out := st.Render("X")
	i := strings.Index(out, "X")
	if i < 0 {
		return nil
	}
	p := &painter{prefix: out[:i], suffix: out[i+1:], empty: st.Render("")}
	for _, probe := range []string{"ab  c", " x ", "日本 é", "\x1b[1mq\x1b[m"} {
		if st.Render(probe) != p.prefix+probe+p.suffix {
			return nil
		}
	}
	return p
}
