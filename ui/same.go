package ui

import (
	"reflect"
	"slices"
)

// SameWidget reports whether a and b are the same value: for this
// package's leaf widgets (those the render cache keeps and whose tools the
// MCP bridge keeps, see SelfContained), every field equal. It is
// reflect.DeepEqual without the reflection, which was most of a cached
// frame's cost. Widgets without slices compare with ==;
// the others field by field. TestSameWidgetIsDeepEqual changes every field
// of every one of these widgets in turn, so a field added to a widget and
// not compared here fails it.
func SameWidget(a, b Widget) bool {
	switch x := a.(type) {
	case TextInput:
		y, ok := b.(TextInput)
		return ok && x == y
	case TextArea:
		y, ok := b.(TextArea)
		return ok && x == y
	case PasswordField:
		y, ok := b.(PasswordField)
		return ok && x == y
	case Checkbox:
		y, ok := b.(Checkbox)
		return ok && x == y
	case Scrubber:
		y, ok := b.(Scrubber)
		return ok && x == y
	case Button:
		y, ok := b.(Button)
		if !ok {
			return false
		}
		xm, ym := x.OnClick, y.OnClick
		x.OnClick, y.OnClick = nil, nil
		return x == y && reflect.DeepEqual(xm, ym)
	case SelectList:
		y, ok := b.(SelectList)
		if !ok || !eq(x.Options, y.Options) {
			return false
		}
		return x.ID == y.ID && x.Label == y.Label && x.Selected == y.Selected && x.Height == y.Height &&
			x.Disabled == y.Disabled && x.Exclude == y.Exclude
	case Tabs:
		y, ok := b.(Tabs)
		if !ok || !eq(x.Tabs, y.Tabs) {
			return false
		}
		return x.ID == y.ID && x.Active == y.Active && x.Disabled == y.Disabled && x.Exclude == y.Exclude
	case Menu:
		y, ok := b.(Menu)
		if !ok || !sameMenuItems(x.Items, y.Items) {
			return false
		}
		return x.ID == y.ID && x.Disabled == y.Disabled && x.Exclude == y.Exclude
	case Table:
		y, ok := b.(Table)
		if !ok || !eq(x.Columns, y.Columns) || !eqFunc(x.Rows, y.Rows, eq) {
			return false
		}
		return x.ID == y.ID && x.Selected == y.Selected && x.SortColumn == y.SortColumn &&
			x.SortDirection == y.SortDirection && x.Height == y.Height && x.Disabled == y.Disabled && x.Exclude == y.Exclude
	case Tree:
		y, ok := b.(Tree)
		if !ok || !sameTreeNodes(x.Nodes, y.Nodes) {
			return false
		}
		return x.ID == y.ID && x.Selected == y.Selected && x.Height == y.Height && x.Disabled == y.Disabled && x.Exclude == y.Exclude
	case Viewport:
		y, ok := b.(Viewport)
		if !ok || !eq(x.Lines, y.Lines) {
			return false
		}
		return x.ID == y.ID && x.Title == y.Title && x.Offset == y.Offset && x.Height == y.Height &&
			x.Disabled == y.Disabled && x.Exclude == y.Exclude
	case BarChart:
		y, ok := b.(BarChart)
		if !ok || !eq(x.Bars, y.Bars) {
			return false
		}
		return x.ID == y.ID && x.Title == y.Title && x.Height == y.Height && x.Exclude == y.Exclude
	case LineChart:
		y, ok := b.(LineChart)
		if !ok || !eqFunc(x.Series, y.Series, func(p, q Series) bool {
			return p.Name == q.Name && eq(p.Values, q.Values)
		}) {
			return false
		}
		return x.ID == y.ID && x.Title == y.Title && x.Height == y.Height && x.Exclude == y.Exclude
	case ScatterChart:
		y, ok := b.(ScatterChart)
		if !ok || !eqFunc(x.Series, y.Series, func(p, q ScatterSeries) bool {
			return p.Name == q.Name && eq(p.Points, q.Points)
		}) {
			return false
		}
		return x.ID == y.ID && x.Title == y.Title && x.Height == y.Height && x.Exclude == y.Exclude
	}
	if c, ok := a.(Comparer); ok {
		return c.SameAs(b)
	}
	return reflect.DeepEqual(a, b)
}

func sameMenuItems(a, b []MenuItem) bool {
	return eqFunc(a, b, func(p, q MenuItem) bool {
		if !sameMenuItems(p.Children, q.Children) {
			return false
		}
		return p.ID == q.ID && p.Label == q.Label && p.Disabled == q.Disabled
	})
}

func sameTreeNodes(a, b []TreeNode) bool {
	return eqFunc(a, b, func(p, q TreeNode) bool {
		if !sameTreeNodes(p.Children, q.Children) {
			return false
		}
		return p.ID == q.ID && p.Label == q.Label && p.Expanded == q.Expanded
	})
}

// eq is slices.Equal, except that a nil slice equals only a nil one (as
// with reflect.DeepEqual).
func eq[T comparable](a, b []T) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }

// eqFunc is slices.EqualFunc, except that a nil slice equals only a nil one.
func eqFunc[T any](a, b []T, f func(T, T) bool) bool {
	return (a == nil) == (b == nil) && slices.EqualFunc(a, b, f)
}

// sameLocal reports whether two local states are equal (Data compared
// deeply, the rest as numbers).
func sameLocal(a, b LocalState) bool {
	if a.Cursor != b.Cursor || a.Row != b.Row || a.Col != b.Col || a.Offset != b.Offset {
		return false
	}
	if a.Data == nil || b.Data == nil {
		return a.Data == nil && b.Data == nil
	}
	return reflect.DeepEqual(a.Data, b.Data)
}
