package ui

import (
	"math"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The charts (BarChart, LineChart and ScatterChart, each in its own file)
// are read-only widgets: never focusable, they ignore every event. NaN and
// infinite values are skipped when scaling and plotting. This file holds
// what they share.

// maxPlotRows caps the plot rows of a LineChart or ScatterChart.
const maxPlotRows = 500

// chartGlyphs mark the series of line and scatter charts, in order.
var chartGlyphs = []string{"•", "×", "◆", "+", "○", "■", "▲", "*"}

// dwRange accumulates the extent of finite values.
type dwRange struct {
	lo, hi float64
	seen   bool
}

// add widens the range to v unless v is NaN or infinite.
func (r *dwRange) add(v float64) {
	switch {
	case !dwFinite(v):
	case !r.seen:
		r.lo, r.hi, r.seen = v, v, true
	default:
		r.lo, r.hi = min(r.lo, v), max(r.hi, v)
	}
}

// dwFinite reports whether v is neither NaN nor infinite.
func dwFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// dwFrac maps v to [0, 1] over [lo, hi], without overflowing for ranges
// as wide as the float64 limits; an empty range maps everything to 0.5.
func dwFrac(v, lo, hi float64) float64 {
	if !(hi > lo) {
		return 0.5
	}
	f := (v/2 - lo/2) / (hi/2 - lo/2)
	if math.IsNaN(f) {
		return 0.5
	}
	return min(1, max(0, f))
}

// dwNum formats a value for labels: integers in full, others with two
// decimals, very large or small magnitudes in exponent form.
func dwNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		return "0"
	}
	if a := math.Abs(v); a >= 1e9 || a < 1e-3 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// dwTitle appends a chart's title line, if it has a title.
func dwTitle(lines []string, th *Theme, title string, w int) []string {
	if title = dwClean(title); title != "" {
		lines = append(lines, Paint(th.Title, dwTrunc(title, w)))
	}
	return lines
}

// dwPlotHeight returns the number of plot rows for a Height field.
func dwPlotHeight(h, def int) int {
	if h <= 0 {
		return def
	}
	return min(h, maxPlotRows)
}

// dwAxis splits width w between the y-axis labels (labW cells plus one
// for the axis line) and the plot (pw cells), and returns the labels by
// plot row: hi on the top row and lo on the bottom one, or, for a flat
// range, the one value on the middle row where it is plotted. When the
// labels would leave the plot under 4 cells they are left out.
func dwAxis(w, h int, lo, hi float64) (labels map[int]string, labW, pw int) {
	if lo == hi {
		labels = map[int]string{int(math.Round(0.5 * float64(h-1))): dwNum(hi)}
	} else {
		labels = map[int]string{h - 1: dwNum(lo)}
		labels[0] = dwNum(hi) // after lo, so that it wins when h is 1
	}
	for _, l := range labels {
		labW = max(labW, lineWidth(l))
	}
	if pw = w - labW - 1; pw < 4 {
		return nil, 0, w
	}
	return labels, labW, pw
}

// dwXLabels appends the bottom axis line and, if they fit, the labels of
// the x range under its two ends (right may be empty, for a one-point
// range).
func dwXLabels(lines []string, th *Theme, left, right string, labW, pw int) []string {
	indent := ""
	axis := strings.Repeat("─", pw)
	if labW > 0 {
		indent = strings.Repeat(" ", labW+1)
		axis = strings.Repeat(" ", labW) + "└" + axis
	}
	lines = append(lines, Paint(th.Muted, axis))
	lw, rw := lineWidth(left), lineWidth(right)
	switch {
	case right == "" && lw <= pw:
		lines = append(lines, Paint(th.Muted, indent+left))
	case right != "" && lw+1+rw <= pw:
		lines = append(lines, Paint(th.Muted, indent+left+strings.Repeat(" ", pw-lw-rw)+right))
	}
	return lines
}

// dwLegend appends a legend line, "• name  × name", for n series; unnamed
// series are numbered.
func dwLegend(lines []string, th *Theme, n int, name func(int) string, w int) []string {
	if n == 0 {
		return lines
	}
	var b strings.Builder
	for i := range n {
		if b.Len() > 0 {
			b.WriteString("  ")
		}
		label := dwClean(name(i))
		if label == "" {
			label = "#" + strconv.Itoa(i+1)
		}
		b.WriteString(Paint(th.Accent, chartGlyphs[i%len(chartGlyphs)]) + " " + label)
		if lineWidth(b.String()) > w {
			break // the rest would be cut anyway
		}
	}
	return append(lines, dwTrunc(b.String(), w))
}

// dwPlot is a grid of plot cells, each empty (-1) or holding the index of
// the series drawn there.
type dwPlot struct {
	h, w  int
	cells []int
}

// newDWPlot returns an empty h×w plot.
func newDWPlot(h, w int) *dwPlot {
	p := &dwPlot{h: h, w: w, cells: make([]int, h*w)}
	for i := range p.cells {
		p.cells[i] = -1
	}
	return p
}

// row returns the plot row of y value v over [lo, hi], 0 at the top.
func (p *dwPlot) row(v, lo, hi float64) int {
	return int(math.Round((1 - dwFrac(v, lo, hi)) * float64(p.h-1)))
}

// set marks cell (row, col) for series s; cells outside the plot are
// ignored.
func (p *dwPlot) set(row, col, s int) {
	if row >= 0 && row < p.h && col >= 0 && col < p.w {
		p.cells[row*p.w+col] = s
	}
}

// lines draws the plot rows, with the y labels (right aligned in labW
// cells) and the axis line when labW > 0; the axis ticks ("┤") mark the
// labelled rows.
func (p *dwPlot) lines(th *Theme, labels map[int]string, labW int) []string {
	out := make([]string, 0, p.h)
	for r := range p.h {
		var b strings.Builder
		if labW > 0 {
			label, ok := labels[r]
			axis := "│"
			if ok {
				axis = "┤"
			}
			b.WriteString(Paint(th.Muted, strings.Repeat(" ", labW-lineWidth(label))+label+axis))
		}
		cells := p.cells[r*p.w : (r+1)*p.w]
		for c := 0; c < len(cells); {
			s, j := cells[c], c
			for j < len(cells) && cells[j] == s {
				j++
			}
			if s < 0 {
				b.WriteString(strings.Repeat(" ", j-c))
			} else {
				b.WriteString(Paint(th.Accent, strings.Repeat(chartGlyphs[s%len(chartGlyphs)], j-c)))
			}
			c = j
		}
		out = append(out, b.String())
	}
	return out
}

// chartRead is the shared CallTool of the read-only charts: it checks the
// action is known and takes no arguments, then answers with read.
func chartRead(action string, args map[string]any, actions map[string]func() any) (any, []tea.Msg, error) {
	read, ok := actions[action]
	if !ok {
		return nil, nil, errUnknownAction(action)
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	return read(), nil, nil
}

// jsonFloat returns v, or nil (JSON null) when v is NaN or infinite, which
// encoding/json cannot encode.
func jsonFloat(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}
