package ui

import (
	"math"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The charts are read-only widgets: never focusable, they ignore every
// event. NaN and infinite values are skipped when scaling and plotting.

// Bar is one bar of a [BarChart].
type Bar struct {
	// Label names the bar.
	Label string
	// Value is the bar's length.
	Value float64
}

// BarChart draws one horizontal bar per value, "label ██████▌ 42", scaled
// so that the range (which always includes 0) fills the width. Negative
// values are drawn left of the zero point in a lighter shade ("▒"); NaN and
// infinite values get no bar and the text "n/a".
type BarChart struct {
	// ID identifies the widget in its tree.
	ID string
	// Title is drawn above the bars when not empty.
	Title string
	// Bars are the bars, top to bottom.
	Bars []Bar
	// Height is the number of bars shown; 0 shows them all. Bars past it
	// are counted in a "… N more" line.
	Height int
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

// Series is one line of a [LineChart]: the values at x = 0, 1, 2, ...
type Series struct {
	// Name is shown in the legend.
	Name string
	// Values are the y values in x order.
	Values []float64
}

// LineChart plots series over a shared index axis, each with its own glyph,
// with the y range labelled on the left and a legend below.
type LineChart struct {
	// ID identifies the widget in its tree.
	ID string
	// Title is drawn above the plot when not empty.
	Title string
	// Series are the lines to plot.
	Series []Series
	// Height is the number of plot rows; 0 (or less) means 8. It is capped
	// at 500.
	Height int
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

// Point is one point of a [ScatterSeries].
type Point struct{ X, Y float64 }

// ScatterSeries is one set of points of a [ScatterChart].
type ScatterSeries struct {
	// Name is shown in the legend.
	Name string
	// Points are the points to plot.
	Points []Point
}

// ScatterChart plots points on a grid, a glyph per series, with the x and y
// ranges labelled and a legend below.
type ScatterChart struct {
	// ID identifies the widget in its tree.
	ID string
	// Title is drawn above the plot when not empty.
	Title string
	// Series are the point sets to plot.
	Series []ScatterSeries
	// Height is the number of plot rows; 0 (or less) means 10. It is
	// capped at 500.
	Height int
	// Exclude hides the widget's tools from MCP.
	Exclude bool
}

var (
	_ Widget = BarChart{}
	_ Widget = LineChart{}
	_ Widget = ScatterChart{}
)

const (
	defaultLineHeight    = 8
	defaultScatterHeight = 10
	maxPlotRows          = 500
)

// chartGlyphs mark the series of line and scatter charts, in order.
var chartGlyphs = []string{"•", "×", "◆", "+", "○", "■", "▲", "*"}

// dwEighths are the partial blocks for 1/8 to 7/8 of a cell.
var dwEighths = []string{"▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// Children returns nil: a chart has no child nodes.
func (BarChart) Children() []Node { return nil }

// WidgetID returns the chart's id.
func (b BarChart) WidgetID() string { return b.ID }

// Focusable returns false: charts are read-only.
func (BarChart) Focusable() bool { return false }

// HandleEvent returns nil: charts are read-only.
func (BarChart) HandleEvent(Event, *LocalState) []tea.Msg { return nil }

// Children returns nil: a chart has no child nodes.
func (LineChart) Children() []Node { return nil }

// WidgetID returns the chart's id.
func (l LineChart) WidgetID() string { return l.ID }

// Focusable returns false: charts are read-only.
func (LineChart) Focusable() bool { return false }

// HandleEvent returns nil: charts are read-only.
func (LineChart) HandleEvent(Event, *LocalState) []tea.Msg { return nil }

// Children returns nil: a chart has no child nodes.
func (ScatterChart) Children() []Node { return nil }

// WidgetID returns the chart's id.
func (s ScatterChart) WidgetID() string { return s.ID }

// Focusable returns false: charts are read-only.
func (ScatterChart) Focusable() bool { return false }

// HandleEvent returns nil: charts are read-only.
func (ScatterChart) HandleEvent(Event, *LocalState) []tea.Msg { return nil }

// Range returns the smallest and largest finite bar values, widened to
// include 0; (0, 0) when there are none.
func (b BarChart) Range() (lo, hi float64) {
	for _, bar := range b.Bars {
		if dwFinite(bar.Value) {
			lo, hi = min(lo, bar.Value), max(hi, bar.Value)
		}
	}
	return lo, hi
}

// Range returns the smallest and largest finite value over all series;
// (0, 0) when there are none.
func (l LineChart) Range() (lo, hi float64) {
	var r dwRange
	for _, s := range l.Series {
		for _, v := range s.Values {
			r.add(v)
		}
	}
	return r.lo, r.hi
}

// Range returns the x and y extents of the points whose coordinates are
// both finite; all zero when there are none.
func (s ScatterChart) Range() (xmin, xmax, ymin, ymax float64) {
	var x, y dwRange
	for _, ser := range s.Series {
		for _, p := range ser.Points {
			if dwFinite(p.X) && dwFinite(p.Y) {
				x.add(p.X)
				y.add(p.Y)
			}
		}
	}
	return x.lo, x.hi, y.lo, y.hi
}

// Render draws the title and one line per bar.
func (b BarChart) Render(rc RenderContext) string {
	th, _, w := dwContext(rc)
	lines := dwTitle(nil, th, b.Title, w)
	bars, more := b.Bars, 0
	if b.Height > 0 && len(bars) > b.Height {
		bars, more = bars[:b.Height], len(bars)-b.Height
	}
	if len(bars) == 0 {
		return dwJoin(append(lines, th.Muted.Render(dwTrunc("(no data)", w))), w)
	}
	lo, hi := b.Range()
	labels, values := make([]string, len(bars)), make([]string, len(bars))
	labW, valW := 0, 0
	for i, bar := range bars {
		labels[i] = dwClean(bar.Label)
		labW = max(labW, lineWidth(labels[i]))
		values[i] = "n/a"
		if dwFinite(bar.Value) {
			values[i] = dwNum(bar.Value)
		}
		valW = max(valW, lineWidth(values[i]))
	}
	labW = min(labW, max(1, w/3))
	bw := w - valW - 1
	if labW > 0 {
		bw -= labW + 1
	}
	bw = max(bw, 0)
	zero := dwFrac(0, lo, hi)
	z := int(math.Round(zero * float64(bw))) // cells left of the zero point
	for i, bar := range bars {
		var sb strings.Builder
		if labW > 0 {
			sb.WriteString(dwFit(labels[i], labW) + " ")
		}
		if bw > 0 {
			sb.WriteString(dwBar(th, bar.Value, zero, lo, hi, bw, z) + " ")
		}
		sb.WriteString(values[i])
		lines = append(lines, sb.String())
	}
	if more > 0 {
		lines = append(lines, th.Muted.Render(dwTrunc("… "+strconv.Itoa(more)+" more", w)))
	}
	return dwJoin(lines, w)
}

// dwBar draws one bar of bw cells whose zero point is z cells from the
// left (zero as a fraction of the range).
func dwBar(th *Theme, v, zero, lo, hi float64, bw, z int) string {
	if !dwFinite(v) {
		return strings.Repeat(" ", bw)
	}
	if v < 0 {
		n := dwClamp(int(math.Round((zero-dwFrac(v, lo, hi))*float64(bw))), 0, z)
		return strings.Repeat(" ", z-n) + th.Accent.Render(strings.Repeat("▒", n)) + strings.Repeat(" ", bw-z)
	}
	e := dwClamp(int(math.Round((dwFrac(v, lo, hi)-zero)*float64(bw)*8)), 0, (bw-z)*8)
	full, part := e/8, e%8
	bar := strings.Repeat("█", full)
	used := z + full
	if part > 0 {
		bar += dwEighths[part-1]
		used++
	}
	if bar != "" {
		bar = th.Accent.Render(bar)
	}
	return strings.Repeat(" ", z) + bar + strings.Repeat(" ", bw-used)
}

// Render draws the title, the plot with its y range labelled, the x index
// range and a legend.
func (l LineChart) Render(rc RenderContext) string {
	th, _, w := dwContext(rc)
	lines := dwTitle(nil, th, l.Title, w)
	lo, hi := l.Range()
	n, hasData := 0, false
	for _, s := range l.Series {
		n = max(n, len(s.Values))
		for _, v := range s.Values {
			hasData = hasData || dwFinite(v)
		}
	}
	if !hasData {
		lines = append(lines, th.Muted.Render(dwTrunc("(no data)", w)))
		return dwJoin(dwLegend(lines, th, len(l.Series), func(i int) string { return l.Series[i].Name }, w), w)
	}
	h := dwPlotHeight(l.Height, defaultLineHeight)
	labels, labW, pw := dwAxis(w, h, lo, hi)
	p := newDWPlot(h, pw)
	col := func(i int) int {
		if n == 1 {
			return pw / 2
		}
		return int(math.Round(float64(i) * float64(pw-1) / float64(n-1)))
	}
	for si, s := range l.Series {
		for i, v := range s.Values {
			if !dwFinite(v) {
				continue
			}
			c := col(i)
			p.set(p.row(v, lo, hi), c, si)
			// Join to the next point with interpolated marks, one per column.
			if i+1 < len(s.Values) && dwFinite(s.Values[i+1]) {
				next, c2 := s.Values[i+1], col(i+1)
				for cc := c + 1; cc < c2; cc++ {
					t := float64(cc-c) / float64(c2-c)
					p.set(p.row(v*(1-t)+next*t, lo, hi), cc, si)
				}
			}
		}
	}
	lines = append(lines, p.lines(th, labels, labW)...)
	last := ""
	if n > 1 {
		last = strconv.Itoa(n - 1)
	}
	lines = dwXLabels(lines, th, "0", last, labW, pw)
	return dwJoin(dwLegend(lines, th, len(l.Series), func(i int) string { return l.Series[i].Name }, w), w)
}

// Render draws the title, the plot with its x and y ranges labelled and a
// legend.
func (s ScatterChart) Render(rc RenderContext) string {
	th, _, w := dwContext(rc)
	lines := dwTitle(nil, th, s.Title, w)
	xmin, xmax, ymin, ymax := s.Range()
	hasData := false
	for _, ser := range s.Series {
		for _, pt := range ser.Points {
			hasData = hasData || (dwFinite(pt.X) && dwFinite(pt.Y))
		}
	}
	name := func(i int) string { return s.Series[i].Name }
	if !hasData {
		lines = append(lines, th.Muted.Render(dwTrunc("(no data)", w)))
		return dwJoin(dwLegend(lines, th, len(s.Series), name, w), w)
	}
	h := dwPlotHeight(s.Height, defaultScatterHeight)
	labels, labW, pw := dwAxis(w, h, ymin, ymax)
	p := newDWPlot(h, pw)
	for si, ser := range s.Series {
		for _, pt := range ser.Points {
			if !dwFinite(pt.X) || !dwFinite(pt.Y) {
				continue
			}
			c := int(math.Round(dwFrac(pt.X, xmin, xmax) * float64(pw-1)))
			p.set(p.row(pt.Y, ymin, ymax), c, si)
		}
	}
	lines = append(lines, p.lines(th, labels, labW)...)
	last := ""
	if xmax != xmin {
		last = dwNum(xmax)
	}
	lines = dwXLabels(lines, th, dwNum(xmin), last, labW, pw)
	return dwJoin(dwLegend(lines, th, len(s.Series), name, w), w)
}

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
		lines = append(lines, th.Title.Render(dwTrunc(title, w)))
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
	lines = append(lines, th.Muted.Render(axis))
	lw, rw := lineWidth(left), lineWidth(right)
	switch {
	case right == "" && lw <= pw:
		lines = append(lines, th.Muted.Render(indent+left))
	case right != "" && lw+1+rw <= pw:
		lines = append(lines, th.Muted.Render(indent+left+strings.Repeat(" ", pw-lw-rw)+right))
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
		b.WriteString(th.Accent.Render(chartGlyphs[i%len(chartGlyphs)]) + " " + label)
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
			b.WriteString(th.Muted.Render(strings.Repeat(" ", labW-lineWidth(label)) + label + axis))
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
				b.WriteString(th.Accent.Render(strings.Repeat(chartGlyphs[s%len(chartGlyphs)], j-c)))
			}
			c = j
		}
		out = append(out, b.String())
	}
	return out
}
