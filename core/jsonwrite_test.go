package core

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// encodeNoHTML is encoding/json's output with HTML escaping off, the
// reference the appenders must match byte for byte.
func encodeNoHTML(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

var stringSamples = []string{
	"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>",
	"\x00\x01\x1f\b\f\n\r\t\x7f", "héllo wörld ✓ 🎉", "line\u2028para\u2029end",
	"bad \xff utf8 \xc3", "\xed\xa0\x80 surrogate", "\ufffd",
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range stringSamples {
		if got, want := appendJSONString(nil, s), encodeNoHTML(t, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range stringSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, s), encodeNoHTML(t, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}

func TestAppendJSONFloatMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{
		0, math.Copysign(0, -1), 1, -1, 0.1, 0.0225, 0.00525, 0.00015, 1e-6, 9.99e-7, 1e-7,
		123456789, 1e20, 1e21, 1.5e300, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64,
	} {
		got, err := appendJSONFloat(nil, f)
		if err != nil {
			t.Fatal(err)
		}
		if want := encodeNoHTML(t, f); !bytes.Equal(got, want) {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := appendJSONFloat(nil, f); err == nil {
			t.Errorf("%v encoded without error", f)
		}
	}
}

func TestAppendJSONAnyMatchesEncodingJSON(t *testing.T) {
	type custom struct {
		A int    `json:"a"`
		B string `json:"b,omitempty"`
	}
	for _, v := range []any{
		nil, "s<>", 1.5, true, false, 42, int64(-7),
		map[string]any{"z": 1.0, "a": []any{"x", nil, map[string]any{}}, "m": map[string]any(nil)},
		[]any(nil), []any{}, json.RawMessage(`{"k":[1,2]}`), json.Number("12345678901234567890"),
		custom{A: 1}, []string{"a"}, map[string]int{"b": 2, "a": 1},
	} {
		got, err := appendJSONAny(nil, v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		if want := encodeNoHTML(t, v); !bytes.Equal(got, want) {
			t.Errorf("%#v: got %s, want %s", v, got, want)
		}
	}
	if _, err := appendJSONAny(nil, map[string]any{"x": math.NaN()}); err == nil {
		t.Error("NaN encoded without error")
	}
	if _, err := appendJSONAny(nil, json.RawMessage(`{`)); err == nil {
		t.Error("invalid raw JSON encoded without error")
	}
}
