package ui

import (
	"math"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

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

var (
	_ Widget       = BarChart{}
	_ ToolProvider = BarChart{}
)

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

// Render draws the title and one line per bar.
func (b BarChart) Render(rc RenderContext) string {
	th, _, w := dwContext(rc)
	lines := dwTitle(nil, th, b.Title, w)
	bars, more := b.Bars, 0
	if b.Height > 0 && len(bars) > b.Height {
		bars, more = bars[:b.Height], len(bars)-b.Height
	}
	if len(bars) == 0 {
		return dwJoin(append(lines, Paint(th.Muted, dwTrunc("(no data)", w))), w)
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
		lines = append(lines, Paint(th.Muted, dwTrunc("… "+strconv.Itoa(more)+" more", w)))
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
		return strings.Repeat(" ", z-n) + Paint(th.Accent, strings.Repeat("▒", n)) + strings.Repeat(" ", bw-z)
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
		bar = Paint(th.Accent, bar)
	}
	return strings.Repeat(" ", z) + bar + strings.Repeat(" ", bw-used)
}

// ---- MCP tools ----

// Tools returns get_data and get_range.
func (b BarChart) Tools() []ToolSpec {
	return []ToolSpec{
		readTool("get_data", "Return every bar of this bar chart in order, each with its label and value (null for a value that is not a finite number).", nil),
		readTool("get_range", "Return the smallest and largest finite bar values of this bar chart, widened to include 0.", nil),
	}
}

// CallTool runs get_data or get_range; a chart sends nothing.
func (b BarChart) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return chartRead(action, args, map[string]func() any{
		"get_data":  func() any { return map[string]any{"bars": b.bars()} },
		"get_range": func() any { return b.rangeData() },
	})
}

// bars returns the bars as JSON data, non-finite values as null.
func (b BarChart) bars() []any {
	out := make([]any, len(b.Bars))
	for i, bar := range b.Bars {
		out[i] = map[string]any{"label": bar.Label, "value": jsonFloat(bar.Value)}
	}
	return out
}

// rangeData returns Range as JSON data.
func (b BarChart) rangeData() map[string]any {
	lo, hi := b.Range()
	return map[string]any{"min": jsonFloat(lo), "max": jsonFloat(hi)}
}

// State returns type, id, title, bars (label, value) and range (min, max).
func (b BarChart) State() any {
	return map[string]any{
		"type":  "bar_chart",
		"id":    b.ID,
		"title": b.Title,
		"bars":  b.bars(),
		"range": b.rangeData(),
	}
}
