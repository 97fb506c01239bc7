package mcpbridge

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// marshalJSON is json.Marshal(v), byte for byte, for the values tool
// answers are made of (maps with string keys, slices, strings, booleans,
// numbers, nil), without encoding/json's reflection and sorting through
// reflect values: every write call's answer is such a map (its result and
// the widget's state). Anything else within v is encoded by json.Marshal.
func marshalJSON(v any) ([]byte, error) {
	return appendJSON(make([]byte, 0, 256), v)
}

// appendJSON appends v encoded as json.Marshal encodes it.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			break // json.Marshal's error
		}
		return appendJSONFloat(b, x), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		return appendJSONList(b, x, appendJSON)
	case []string:
		return appendJSONList(b, x, func(b []byte, s string) ([]byte, error) { return appendJSONString(b, s), nil })
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

// appendJSONList appends xs as a JSON array (null when nil), each element
// by elem.
func appendJSONList[T any](b []byte, xs []T, elem func([]byte, T) ([]byte, error)) ([]byte, error) {
	if xs == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, e := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = elem(b, e); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendJSONFloat is encoding/json's float64 encoding (ES6 number to
// string: 'f' between 1e-6 and 1e21, else 'e' with the exponent
// unpadded).
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const jsonHex = "0123456789abcdef"

// appendJSONString is encoding/json's string encoding with HTML escaping
// (json.Marshal's): <, > and & as \u003c, \u003e and \u0026, control
// characters escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', jsonHex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// decodeFlatObject decodes a JSON object whose values are all strings
// without escapes or non-ASCII bytes, numbers, booleans or null, as
// json.Unmarshal into a map[string]any decodes it (numbers as float64, a
// repeated key's last value). ok is false for anything else (nested
// values, escapes, non-ASCII text, invalid JSON), which is left to
// json.Unmarshal: tool arguments are mostly such objects, and
// encoding/json's reflection is most of their cost.
func decodeFlatObject(data []byte) (m map[string]any, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	m = make(map[string]any, 4)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return m, skipSpace(data, i+1) == len(data)
	}
	for {
		k, j, ok := plainString(data, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(data, j)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		if i >= len(data) {
			return nil, false
		}
		var v any
		switch c := data[i]; {
		case c == '"':
			s, j, ok := plainString(data, i)
			if !ok {
				return nil, false
			}
			v, i = s, j
		case c == '-' || (c >= '0' && c <= '9'):
			j := numberEnd(data, i)
			if j < 0 {
				return nil, false
			}
			f, err := strconv.ParseFloat(string(data[i:j]), 64)
			if err != nil {
				return nil, false
			}
			v, i = f, j
		case hasLiteral(data, i, "true"):
			v, i = true, i+4
		case hasLiteral(data, i, "false"):
			v, i = false, i+5
		case hasLiteral(data, i, "null"):
			v, i = nil, i+4
		default:
			return nil, false
		}
		m[k] = v
		i = skipSpace(data, i)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return m, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the JSON string at data[i] when it holds printable
// ASCII without escapes, returning it and the index after its quote.
func plainString(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return string(data[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return "", 0, false
		}
	}
	return "", 0, false
}

// numberEnd returns the index after the JSON number at data[i], or -1
// when it is not one (RFC 8259's grammar: no leading zeros, no leading
// '+', digits on both sides of '.', an exponent with digits).
func numberEnd(data []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		return j
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func hasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}
