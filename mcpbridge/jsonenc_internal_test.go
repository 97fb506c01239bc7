package mcpbridge

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// answerValue draws the values tool answers are made of, nested, with
// strings of every kind json.Marshal escapes, and a few it does not know
// (left to it).
func answerValue(depth int) *rapid.Generator[any] {
	str := rapid.OneOf(
		rapid.String(),
		rapid.StringOf(rapid.SampledFrom([]rune("ab<>&\"\\\n\r\t\b\f\x00\x1f\u2028\u2029é\U0001F600"))),
		rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) }), // invalid UTF-8 too
	)
	num := rapid.OneOf(
		rapid.Float64(),
		rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1e-7, 1e-6, 1e21, 1e20, -1e21, 123456789, 0.1, 1e-300, 1e300, 5e-324}),
	)
	return rapid.Custom(func(t *rapid.T) any {
		n := 9
		if depth <= 0 {
			n = 6
		}
		switch rapid.IntRange(0, n).Draw(t, "kind") {
		case 0:
			return nil
		case 1:
			return str.Draw(t, "string")
		case 2:
			return rapid.Bool().Draw(t, "bool")
		case 3:
			return num.Draw(t, "float")
		case 4:
			return rapid.Int().Draw(t, "int")
		case 5:
			return rapid.SliceOf(str).Draw(t, "strings")
		case 6:
			return struct {
				A string `json:"a"`
				B int
			}{str.Draw(t, "a"), 3}
		case 7:
			if rapid.Bool().Draw(t, "nil map") {
				return map[string]any(nil)
			}
			return rapid.MapOf(str, answerValue(depth-1)).Draw(t, "map")
		case 8:
			if rapid.Bool().Draw(t, "nil slice") {
				return []any(nil)
			}
			return rapid.SliceOf(answerValue(depth-1)).Draw(t, "slice")
		default:
			return json.RawMessage(`{"b": 1, "a":"<x>"}`)
		}
	})
}

// marshalJSON is json.Marshal, byte for byte, errors included.
func TestMarshalJSONIsJSONMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := answerValue(3).Draw(t, "v")
		want, werr := json.Marshal(v)
		got, gerr := marshalJSON(v)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("errors differ: json.Marshal %v, marshalJSON %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("marshalJSON\n%s\njson.Marshal\n%s", got, want)
		}
	})
	for _, f := range []float64{math.NaN(), math.Inf(1)} {
		if _, err := marshalJSON(map[string]any{"x": f}); err == nil {
			t.Errorf("%v encoded", f)
		}
	}
}

// decodeFlatObject decodes what json.Unmarshal decodes into a map, the
// same way, or leaves it to it (ok false): never a different map, never
// a map where json.Unmarshal fails.
func TestDecodeFlatObjectIsJSONUnmarshal(t *testing.T) {
	token := rapid.SampledFrom([]string{
		"{", "}", ",", ":", " ", "\n", "\t", `"a"`, `"text"`, `""`, `"x y"`, `"é"`, `"\n"`, `"\u0041"`, "\"\x01\"", "\"\xff\"",
		"0", "-0", "1", "-1", "01", "1.", ".5", "1.5", "-2.25e3", "1e", "1E+2", "1e-2", "+1", "1e400", "123456789012345678901234567890",
		"true", "false", "null", "tru", "nul", "[1]", `{"b":1}`, "x",
	})
	check := func(t *rapid.T, data []byte) {
		got, ok := decodeFlatObject(data)
		var want map[string]any
		err := json.Unmarshal(data, &want)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("%q: decoded %v, json.Unmarshal fails: %v", data, got, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %#v, json.Unmarshal %#v", data, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		for _, s := range rapid.SliceOf(token).Draw(t, "tokens") {
			b.WriteString(s)
		}
		check(t, []byte(b.String()))
	})
	// Well-formed flat objects are decoded here, not left to json.
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.MapOf(rapid.StringMatching(`[ -!#-\[\]-~]{0,8}`), rapid.OneOf(
			rapid.Map(rapid.StringMatching(`[ -!#-\[\]-~]{0,8}`), func(s string) any { return s }),
			rapid.Map(rapid.Float64Range(-1e12, 1e12), func(f float64) any { return f }),
			rapid.Map(rapid.Bool(), func(v bool) any { return v }),
			rapid.Just[any](nil),
		)).Draw(t, "args")
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		check(t, data)
		if _, ok := decodeFlatObject(data); !ok && !bytes.ContainsAny(data, `\`) {
			t.Fatalf("%s left to json.Unmarshal", data)
		}
	})
}
