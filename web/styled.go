package web

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// A drawing (a hosted program's screen, an app-defined widget's cells) is
// written as styled text: runs of cells in <span>s whose classes say their
// colours and attributes, as the terminal shows them. Colours are classes,
// never style attributes (the page's CSP allows no inline style): "f<n>"
// and "b<n>" for the 256 colours of the xterm palette (a 24-bit colour
// takes the nearest of them), "rx-bold", "rx-faint", "rx-italic",
// "rx-under", "rx-strike", and "rx-rev" (reverse video: the palette's
// foreground and background swapped by the classes chosen). [ColorCSS] is
// the stylesheet of those classes.

// cellStyle is the SGR state of a run of cells.
type cellStyle struct {
	fg, bg                                  int // palette index, -1: the default
	bold, faint, italic, under, strike, rev bool
}

var plainStyle = cellStyle{fg: -1, bg: -1}

func (s cellStyle) classes() string {
	fg, bg := s.fg, s.bg
	if s.rev {
		fg, bg = bg, fg
		if fg < 0 {
			fg = 256 // the default background, as a colour
		}
		if bg < 0 {
			bg = 257 // the default foreground
		}
	}
	var c []string
	if fg >= 0 {
		c = append(c, "f"+strconv.Itoa(fg))
	}
	if bg >= 0 {
		c = append(c, "b"+strconv.Itoa(bg))
	}
	for _, a := range []struct {
		on   bool
		name string
	}{{s.bold, "rx-bold"}, {s.faint, "rx-faint"}, {s.italic, "rx-italic"}, {s.under, "rx-under"}, {s.strike, "rx-strike"}} {
		if a.on {
			c = append(c, a.name)
		}
	}
	return strings.Join(c, " ")
}

// sgr applies the parameters of one SGR sequence to s.
func (s *cellStyle) sgr(p ansi.Params) {
	if len(p) == 0 {
		*s = plainStyle
		return
	}
	for i := 0; i < len(p); i++ {
		n := p[i].Param(0)
		switch {
		case n == 0:
			*s = plainStyle
		case n == 1:
			s.bold = true
		case n == 2:
			s.faint = true
		case n == 3:
			s.italic = true
		case n == 4:
			s.under = true
		case n == 7:
			s.rev = true
		case n == 9:
			s.strike = true
		case n == 22:
			s.bold, s.faint = false, false
		case n == 23:
			s.italic = false
		case n == 24:
			s.under = false
		case n == 27:
			s.rev = false
		case n == 29:
			s.strike = false
		case n >= 30 && n <= 37:
			s.fg = n - 30
		case n >= 90 && n <= 97:
			s.fg = n - 90 + 8
		case n == 39:
			s.fg = -1
		case n >= 40 && n <= 47:
			s.bg = n - 40
		case n >= 100 && n <= 107:
			s.bg = n - 100 + 8
		case n == 49:
			s.bg = -1
		case n == 38 || n == 48:
			c, used := extendedColor(p[i+1:])
			i += used
			if c >= 0 {
				if n == 38 {
					s.fg = c
				} else {
					s.bg = c
				}
			}
		}
	}
}

// extendedColor reads "5;n" or "2;r;g;b" after 38 or 48: the palette
// index (-1 if malformed) and how many parameters it used.
func extendedColor(p ansi.Params) (int, int) {
	if len(p) == 0 {
		return -1, 0
	}
	switch p[0].Param(0) {
	case 5:
		if len(p) < 2 {
			return -1, len(p)
		}
		n := p[1].Param(0)
		if n < 0 || n > 255 {
			return -1, 2
		}
		return n, 2
	case 2:
		if len(p) < 4 {
			return -1, len(p)
		}
		return nearest256(p[1].Param(0), p[2].Param(0), p[3].Param(0)), 4
	}
	return -1, 1
}

// nearest256 is the xterm palette entry nearest r, g, b: the 6x6x6 cube or
// the grey ramp.
func nearest256(r, g, b int) int {
	clamp := func(v int) int { return min(max(v, 0), 255) }
	r, g, b = clamp(r), clamp(g), clamp(b)
	cube := func(v int) int {
		if v < 48 {
			return 0
		}
		if v < 115 {
			return 1
		}
		return (v - 35) / 40
	}
	ci := 16 + 36*cube(r) + 6*cube(g) + cube(b)
	cr, cg, cb := paletteRGB(ci)
	grey := min((r+g+b)/3, 238)
	gi := 232 + max(0, (grey-8)/10)
	gr, gg, gb := paletteRGB(gi)
	d := func(x, y, z int) int { return (x-r)*(x-r) + (y-g)*(y-g) + (z-b)*(z-b) }
	if d(gr, gg, gb) < d(cr, cg, cb) {
		return gi
	}
	return ci
}

// paletteRGB is xterm's colour n (0–255).
func paletteRGB(n int) (int, int, int) {
	base := [16][3]int{{0, 0, 0}, {205, 0, 0}, {0, 205, 0}, {205, 205, 0}, {0, 0, 238}, {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
		{127, 127, 127}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255}}
	switch {
	case n < 16:
		return base[n][0], base[n][1], base[n][2]
	case n < 232:
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return level(n / 36), level(n / 6 % 6), level(n % 6)
	}
	v := 8 + 10*(n-232)
	return v, v, v
}

// drawnStyled writes a drawing with its styles as spans, bounded to limit
// runes (the rest cut with "…"); every other escape sequence and control
// character is dropped, and the text escaped.
func (r *renderer) drawnStyled(s string, limit int) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	p := ansi.NewParser()
	var state byte
	style, open := plainStyle, plainStyle
	var run strings.Builder
	n := 0
	flush := func() {
		if run.Len() == 0 {
			return
		}
		if c := open.classes(); c != "" {
			r.b.WriteString(`<span class="` + c + `">` + esc(run.String()) + `</span>`)
		} else {
			r.b.WriteString(esc(run.String()))
		}
		run.Reset()
	}
	for len(s) > 0 {
		seq, _, used, next := ansi.DecodeSequence(s, state, p)
		state = next
		s = s[used:]
		if used == 0 {
			break
		}
		if ansi.HasCsiPrefix(seq) {
			if ansi.Cmd(p.Command()).Final() == 'm' && ansi.Cmd(p.Command()).Prefix() == 0 {
				style.sgr(p.Params())
			}
			continue
		}
		if strings.ContainsRune(seq, 0x1b) || strings.ContainsRune(seq, 0x9b) {
			continue // other sequences: dropped
		}
		for _, c := range seq {
			if c != '\n' && dropped(c) {
				continue
			}
			if n == limit {
				flush()
				r.b.WriteString("…")
				return
			}
			if style != open {
				flush()
				open = style
			}
			run.WriteRune(c)
			n++
		}
	}
	flush()
}

var colorCSS = sync.OnceValue(func() string {
	var b strings.Builder
	b.WriteString("/* The 256 colours of the xterm palette as the classes web.Render gives drawn cells. */\n")
	b.WriteString(".rx-bold{font-weight:bold}.rx-faint{opacity:.65}.rx-italic{font-style:italic}.rx-under{text-decoration:underline}.rx-strike{text-decoration:line-through}\n")
	for i := range 256 {
		r, g, bl := paletteRGB(i)
		fmt.Fprintf(&b, ".f%d{color:#%02x%02x%02x}.b%d{background:#%02x%02x%02x}\n", i, r, g, bl, i, r, g, bl)
	}
	// Reverse video of the default colours: the page's own.
	b.WriteString(".f256{color:#fafafa}.b257{background:#1b1b1b}\n")
	return b.String()
})

// ColorCSS is the stylesheet of the classes drawn cells get: a page that
// shows a hosted program's screen links it.
func ColorCSS() string { return colorCSS() }
