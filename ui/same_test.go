package ui

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// cachedKinds is one value of every widget the render cache keeps.
var cachedKinds = []Widget{Button{}, TextInput{}, TextArea{}, PasswordField{}, Checkbox{}, SelectList{}, Tabs{},
	Menu{}, Table{}, Tree{}, Scrubber{}, Viewport{}, BarChart{}, LineChart{}, ScatterChart{}}

type msgA struct{ N int }

// fill sets v to a value drawn from small domains (so that equal values
// are common); slices are nil now and then, and nest at most two deep.
func fill(rt *rapid.T, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "s"))
	case reflect.Int:
		v.SetInt(int64(rapid.IntRange(-1, 2).Draw(rt, "i")))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(rt, "b"))
	case reflect.Float64:
		v.SetFloat(rapid.SampledFrom([]float64{0, 1.5, -2}).Draw(rt, "f"))
	case reflect.Interface:
		if m := rapid.SampledFrom([]any{nil, "m", msgA{1}, msgA{2}}).Draw(rt, "any"); m != nil {
			v.Set(reflect.ValueOf(m))
		}
	case reflect.Slice:
		if rapid.IntRange(0, 4).Draw(rt, "nil") == 0 {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		n := 0
		if depth < 2 {
			n = rapid.IntRange(0, 2).Draw(rt, "len")
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(rt, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(rt, v.Field(i), depth)
		}
	default:
		panic(fmt.Sprintf("fill: %s", v.Type()))
	}
}

// clone is a deep copy of v.
func clone(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			return out
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			s.Index(i).Set(clone(v.Index(i)))
		}
		out.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			out.Field(i).Set(clone(v.Field(i)))
		}
	default:
		out.Set(v)
	}
	return out
}

// leaves are v's settable parts: every field, and every slice itself (so
// that its length can change).
func leaves(v reflect.Value, path string, out map[string]reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			leaves(v.Field(i), path+"."+v.Type().Field(i).Name, out)
		}
	case reflect.Slice:
		out[path] = v
		for i := range v.Len() {
			leaves(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	default:
		out[path] = v
	}
}

// change makes v different from what it was.
func change(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Int:
		v.SetInt(v.Int() + 1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Interface:
		if v.IsNil() {
			v.Set(reflect.ValueOf(msgA{9}))
		} else {
			v.Set(reflect.Zero(v.Type()))
		}
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
	}
}

// TestSameWidgetIsDeepEqual: for any two values of a cached widget,
// SameWidget agrees with reflect.DeepEqual.
func TestSameWidgetIsDeepEqual(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := reflect.TypeOf(rapid.SampledFrom(cachedKinds).Draw(rt, "kind"))
		a := reflect.New(typ).Elem()
		fill(rt, a, 0)
		var b reflect.Value
		switch rapid.IntRange(0, 2).Draw(rt, "how") {
		case 0: // drawn on its own
			b = reflect.New(typ).Elem()
			fill(rt, b, 0)
		case 1: // a copy
			b = clone(a)
		case 2: // a copy with one part changed
			b = clone(a)
			parts := map[string]reflect.Value{}
			leaves(b, typ.Name(), parts)
			keys := make([]string, 0, len(parts))
			for k := range parts {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			change(parts[rapid.SampledFrom(keys).Draw(rt, "part")])
		}
		aw, bw := a.Interface().(Widget), b.Interface().(Widget)
		if got, want := SameWidget(aw, bw), reflect.DeepEqual(aw, bw); got != want {
			rt.Fatalf("SameWidget = %v, reflect.DeepEqual = %v:\n%#v\n%#v", got, want, aw, bw)
		}
	})
}

// fillOne sets v to a value whose slices hold one element (two levels
// deep), so that every nested field exists.
func fillOne(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Slice:
		if depth < 2 {
			s := reflect.MakeSlice(v.Type(), 1, 1)
			fillOne(s.Index(0), depth+1)
			v.Set(s)
		} else {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillOne(v.Field(i), depth)
		}
	default:
		change(v)
	}
}

// TestSameWidgetSeesEveryField: changing any one field of any cached
// widget (nested ones included) makes it a different widget.
func TestSameWidgetSeesEveryField(t *testing.T) {
	for _, k := range cachedKinds {
		typ := reflect.TypeOf(k)
		base := reflect.New(typ).Elem()
		fillOne(base, 0)
		parts := map[string]reflect.Value{}
		leaves(clone(base), typ.Name(), parts)
		for path := range parts {
			b := clone(base)
			m := map[string]reflect.Value{}
			leaves(b, typ.Name(), m)
			change(m[path])
			if SameWidget(base.Interface().(Widget), b.Interface().(Widget)) {
				t.Errorf("%s changed, and SameWidget still says the same", path)
			}
		}
	}
}

func TestSameLocal(t *testing.T) {
	a := LocalState{Cursor: 1, Row: 2, Col: 3, Offset: 4, Data: []int{1}}
	if !sameLocal(a, LocalState{Cursor: 1, Row: 2, Col: 3, Offset: 4, Data: []int{1}}) {
		t.Error("equal states differ")
	}
	for _, b := range []LocalState{{Cursor: 9, Row: 2, Col: 3, Offset: 4, Data: []int{1}}, {Cursor: 1, Row: 9, Col: 3, Offset: 4, Data: []int{1}},
		{Cursor: 1, Row: 2, Col: 9, Offset: 4, Data: []int{1}}, {Cursor: 1, Row: 2, Col: 3, Offset: 9, Data: []int{1}},
		{Cursor: 1, Row: 2, Col: 3, Offset: 4, Data: []int{2}}, {Cursor: 1, Row: 2, Col: 3, Offset: 4}} {
		if sameLocal(a, b) {
			t.Errorf("%+v and %+v are the same", a, b)
		}
	}
}
