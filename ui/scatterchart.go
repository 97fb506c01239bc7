package ui

import (
	"math"

	tea "charm.land/bubbletea/v2"
)

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
	_ Widget       = ScatterChart{}
	_ ToolProvider = ScatterChart{}
)

// defaultScatterHeight is the number of plot rows of a ScatterChart whose
// Height is 0.
const defaultScatterHeight = 10

// Children returns nil: a chart has no child nodes.
func (ScatterChart) Children() []Node { return nil }

// WidgetID returns the chart's id.
func (s ScatterChart) WidgetID() string { return s.ID }

// Focusable returns false: charts are read-only.
func (ScatterChart) Focusable() bool { return false }

// HandleEvent returns nil: charts are read-only.
func (ScatterChart) HandleEvent(Event, *LocalState) []tea.Msg { return nil }

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
		lines = append(lines, Paint(th.Muted, dwTrunc("(no data)", w)))
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

// ---- MCP tools ----

// Tools returns get_points and get_range.
func (s ScatterChart) Tools() []ToolSpec {
	return []ToolSpec{
		readTool("get_points", "Return every series of this scatter chart with its name and its points as x, y pairs (null for a coordinate that is not a finite number).", nil),
		readTool("get_range", "Return the smallest and largest x and y over the points of this scatter chart whose coordinates are both finite numbers.", nil),
	}
}

// CallTool runs get_points or get_range; a chart sends nothing.
func (s ScatterChart) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return chartRead(action, args, map[string]func() any{
		"get_points": func() any { return map[string]any{"series": s.series()} },
		"get_range":  func() any { return s.rangeData() },
	})
}

// series returns the series as JSON data, non-finite coordinates as
// null.
func (s ScatterChart) series() []any {
	out := make([]any, len(s.Series))
	for i, ser := range s.Series {
		pts := make([]any, len(ser.Points))
		for j, p := range ser.Points {
			pts[j] = map[string]any{"x": jsonFloat(p.X), "y": jsonFloat(p.Y)}
		}
		out[i] = map[string]any{"name": ser.Name, "points": pts}
	}
	return out
}

// rangeData returns Range as JSON data.
func (s ScatterChart) rangeData() map[string]any {
	xmin, xmax, ymin, ymax := s.Range()
	return map[string]any{
		"x": map[string]any{"min": jsonFloat(xmin), "max": jsonFloat(xmax)},
		"y": map[string]any{"min": jsonFloat(ymin), "max": jsonFloat(ymax)},
	}
}

// State returns type, id, title, series (name, points of x and y) and
// range (x and y, each min and max).
func (s ScatterChart) State() any {
	return map[string]any{
		"type":   "scatter_chart",
		"id":     s.ID,
		"title":  s.Title,
		"series": s.series(),
		"range":  s.rangeData(),
	}
}
