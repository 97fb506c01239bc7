package mcpbridge

import (
	"bytes"
	"encoding/json"
	"math"
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
