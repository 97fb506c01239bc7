package ui

import (
	"math"
	"strconv"

	tea "charm.land/bubbletea/v2"
)

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

var (
	_ Widget       = LineChart{}
	_ ToolProvider = LineChart{}
)

// defaultLineHeight is the number of plot rows of a LineChart whose Height
// is 0.
const defaultLineHeight = 8

// Children returns nil: a chart has no child nodes.
func (LineChart) Children() []Node { return nil }

// WidgetID returns the chart's id.
func (l LineChart) WidgetID() string { return l.ID }

// Focusable returns false: charts are read-only.
func (LineChart) Focusable() bool { return false }

// HandleEvent returns nil: charts are read-only.
func (LineChart) HandleEvent(Event, *LocalState) []tea.Msg { return nil }

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
		lines = append(lines, Paint(th.Muted, dwTrunc("(no data)", w)))
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

// ---- MCP tools ----

// Tools returns get_series, get_range and get_point_at.
func (l LineChart) Tools() []ToolSpec {
	return []ToolSpec{
		readTool("get_series", "Return every series of this line chart with its name and its values in x order, x starting at 0 (null for a value that is not a finite number).", nil),
		readTool("get_range", "Return the smallest and largest finite values over all series of this line chart.", nil),
		readTool("get_point_at", "Return the value of every series of this line chart at the given zero-based x index; series too short to have it are left out.",
			map[string]any{argIndex: indexProp("Zero-based x index of the point.")}, argIndex),
	}
}

// CallTool runs get_series, get_range or get_point_at; a chart sends
// nothing.
func (l LineChart) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action == "get_point_at" {
		if err := checkArgs(args, argIndex); err != nil {
			return nil, nil, err
		}
		n := 0
		for _, s := range l.Series {
			n = max(n, len(s.Values))
		}
		i, err := checkIndex(args, argIndex, n, "the longest series of this chart", "value")
		if err != nil {
			return nil, nil, err
		}
		points := []any{}
		for _, s := range l.Series {
			if i < len(s.Values) {
				points = append(points, map[string]any{"name": s.Name, "index": i, "value": jsonFloat(s.Values[i])})
			}
		}
		return map[string]any{"points": points}, nil, nil
	}
	return chartRead(action, args, map[string]func() any{
		"get_series": func() any { return map[string]any{"series": l.series()} },
		"get_range":  func() any { return l.rangeData() },
	})
}

// series returns the series as JSON data, non-finite values as null.
func (l LineChart) series() []any {
	out := make([]any, len(l.Series))
	for i, s := range l.Series {
		out[i] = map[string]any{"name": s.Name, "values": jsonFloats(s.Values)}
	}
	return out
}

// jsonFloats maps a slice through jsonFloat; never nil.
func jsonFloats(vs []float64) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = jsonFloat(v)
	}
	return out
}

// rangeData returns Range as JSON data.
func (l LineChart) rangeData() map[string]any {
	lo, hi := l.Range()
	return map[string]any{"min": jsonFloat(lo), "max": jsonFloat(hi)}
}

// State returns type, id, title, series (name, values) and range (min,
// max).
func (l LineChart) State() any {
	return map[string]any{
		"type":   "line_chart",
		"id":     l.ID,
		"title":  l.Title,
		"series": l.series(),
		"range":  l.rangeData(),
	}
}
