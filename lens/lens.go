package lens

import (
	"errors"
	"fmt"
	"slices"
)

// Mode selects how the lens orders widget tools.
type Mode string

const (
	// ModeFocused puts the focused widget's tools first, then the hovered
	// widget's, the recently used widgets', the focused widget's tree
	// neighbours', and the rest in tree order. It is the default.
	ModeFocused Mode = "focused"
	// ModeHover is ModeFocused with the hovered widget ahead of the focused
	// one, for sessions where the mouse leads.
	ModeHover Mode = "hover"
	// ModeAll keeps the input (derivation) order. It still shadows widgets
	// behind a modal and still cuts to MaxTools.
	ModeAll Mode = "all"
)

// DefaultMaxTools is the number of tools advertised when Input.MaxTools is
// zero or negative.
const DefaultMaxTools = 15

// ErrUnknownMode is returned, wrapped, by [ParseMode] for a string that
// names no [Mode].
var ErrUnknownMode = errors.New("lens: unknown mode")

// ParseMode returns the Mode named by s. The empty string is [ModeFocused].
// Any other string that is not exactly "focused", "hover" or "all" yields an
// error wrapping [ErrUnknownMode] that names the valid modes.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeFocused, nil
	case ModeFocused, ModeHover, ModeAll:
		return m, nil
	}
	return "", fmt.Errorf("%w %q: valid modes are %q, %q and %q", ErrUnknownMode, s, ModeFocused, ModeHover, ModeAll)
}

// Tool is one derived or session tool as the lens sees it.
type Tool struct {
	Name     string // full tool name, e.g. "demo.search.type_into"
	WidgetID string // the widget the tool acts on; "" for a session tool
}

// Input is everything the lens looks at besides the tools. Widgets are
// identified by id.
type Input struct {
	// Mode is the ordering. Zero (and any value ParseMode rejects) means
	// ModeFocused.
	Mode Mode
	// MaxTools is the most tools Select returns, session tools included.
	// Zero or negative means DefaultMaxTools.
	MaxTools int
	// Tree is every widget id in tree (pre-)order, whether or not the widget
	// has tools. It gives the neighbour distances and the order of the
	// widgets attention does not reach. If an id appears twice, its first
	// position counts. Nil is fine: every widget is then unknown to the tree
	// and kept in input order.
	Tree []string
	// Focused is the human's focused widget; "" for none.
	Focused string
	// Hover is the widget under the mouse; "" for none.
	Hover string
	// Recent lists the widgets recently acted on by anyone, most recent
	// first. Duplicates, "" and ids without tools are ignored.
	Recent []string
	// Modal is nil when no modal is open. Otherwise it holds the id of the
	// open modal and of every widget inside it, and the tools of all other
	// widgets are shadowed. A non-nil empty slice shadows every widget tool.
	Modal []string
}

// Select returns the tools to advertise, in order.
//
// tools are in derivation order: tree order, each widget's tools in its own
// order; session tools (WidgetID "") may be anywhere among them. When two
// tools share a name, only the first is considered. The result holds the
// session tools first, in input order, then the widget tools in the order
// the mode gives (see the package documentation), cut to in.MaxTools in
// total; the cut may split a widget's tools. It is a new, non-nil slice the
// caller may keep; neither tools nor in is modified.
func Select(tools []Tool, in Input) []Tool {
	limit := in.MaxTools
	if limit <= 0 {
		limit = DefaultMaxTools
	}

	var modal map[string]struct{}
	if in.Modal != nil {
		modal = make(map[string]struct{}, len(in.Modal))
		for _, id := range in.Modal {
			modal[id] = struct{}{}
		}
	}

	// One pass: drop repeated names (first wins), split session tools from
	// widget tools, and drop shadowed widget tools. Both lists keep input
	// order.
	seen := make(map[string]struct{}, len(tools))
	var session []Tool
	widget := make([]Tool, 0, len(tools))
	for _, t := range tools {
		if _, dup := seen[t.Name]; dup {
			continue
		}
		seen[t.Name] = struct{}{}
		if t.WidgetID == "" {
			session = append(session, t)
			continue
		}
		if modal != nil {
			if _, ok := modal[t.WidgetID]; !ok {
				continue
			}
		}
		widget = append(widget, t)
	}

	out := make([]Tool, 0, min(limit, len(session)+len(widget)))
	out = append(out, session[:min(len(session), limit)]...)
	room := limit - len(out)
	if room == 0 || len(widget) == 0 {
		return out
	}
	if in.Mode == ModeAll {
		return append(out, widget[:min(len(widget), room)]...)
	}

	// Group the widget tools by widget, each group in input order, with a
	// counting sort: group i (widgets numbered by first appearance) is
	// grouped[offset[i]:offset[i+1]].
	group := make(map[string]int)
	var appearance []string
	for _, t := range widget {
		if _, ok := group[t.WidgetID]; !ok {
			group[t.WidgetID] = len(appearance)
			appearance = append(appearance, t.WidgetID)
		}
	}
	offset := make([]int, len(appearance)+1)
	for _, t := range widget {
		offset[group[t.WidgetID]+1]++
	}
	for i := range appearance {
		offset[i+1] += offset[i]
	}
	grouped := make([]Tool, len(widget))
	next := slices.Clone(offset[:len(appearance)])
	for _, t := range widget {
		i := group[t.WidgetID]
		grouped[next[i]] = t
		next[i]++
	}

	// place appends id's tools once, up to the limit. Ids without (visible)
	// tools, including "", are skipped. It reports whether out is full.
	placed := make([]bool, len(appearance))
	place := func(id string) bool {
		i, ok := group[id]
		if !ok || placed[i] {
			return false
		}
		placed[i] = true
		g := grouped[offset[i]:offset[i+1]]
		out = append(out, g[:min(len(g), limit-len(out))]...)
		return len(out) == limit
	}

	first, second := in.Focused, in.Hover
	if in.Mode == ModeHover {
		first, second = in.Hover, in.Focused
	}
	if place(first) || place(second) {
		return out
	}
	for _, id := range in.Recent {
		if place(id) {
			return out
		}
	}

	// Neighbours of the focused widget, by distance in Tree positions:
	// d after, then d before, for d = 1, 2, ...
	if in.Focused != "" {
		if p := slices.Index(in.Tree, in.Focused); p >= 0 {
			for d := 1; p+d < len(in.Tree) || p-d >= 0; d++ {
				if p+d < len(in.Tree) && place(in.Tree[p+d]) {
					return out
				}
				if p-d >= 0 && place(in.Tree[p-d]) {
					return out
				}
			}
		}
	}

	for _, id := range in.Tree {
		if place(id) {
			return out
		}
	}
	// Widgets the tree does not list, in input order.
	for _, id := range appearance {
		if place(id) {
			return out
		}
	}
	return out
}

// Names returns the names of tools, in order. It returns a non-nil slice.
func Names(tools []Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

// SameSet reports whether a and b hold the same names, ignoring order and
// repetition. A session uses it to decide whether the advertised tools
// changed, and so whether notifications/tools/list_changed must go out.
func SameSet(a, b []string) bool {
	as := make(map[string]struct{}, len(a))
	for _, s := range a {
		as[s] = struct{}{}
	}
	bs := make(map[string]struct{}, len(b))
	for _, s := range b {
		if _, ok := as[s]; !ok {
			return false
		}
		bs[s] = struct{}{}
	}
	return len(as) == len(bs)
}
