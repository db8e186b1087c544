package protocol

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// referenceObject is parseObject written with encoding/json's tokenizer:
// slow but obviously right, for differential fuzzing of the fast scanner.
func referenceObject(t *testing.T, raw []byte) []member {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		key := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(members, func(m member) bool { return m.key == key }); i >= 0 {
			members[i].raw = value
		} else {
			members = append(members, member{key: key, raw: value})
		}
	}
	slices.SortStableFunc(members, func(a, b member) int {
		ai, aok := arrayIndex(a.key)
		bi, bok := arrayIndex(b.key)
		switch {
		case aok && bok:
			return cmpUint(ai, bi)
		case aok:
			return -1
		case bok:
			return 1
		}
		return 0
	})
	return members
}

func FuzzParseObject(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "a":"x\"y" } `, `{"\u0061":true,"a":null,"2":0,"10":0,"01":0}`,
		`{"k":"\\","l":-1.5e+3,"m":{"n":[[],{}]},"é":"\ud83d\ude00"}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"a":18}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, err := parseDocument(data)
		if err != nil || kindOf(raw) != kindObject {
			return
		}
		got, err := parseObject(raw)
		if err != nil {
			t.Fatalf("parseObject(%s): %v", raw, err)
		}
		want := referenceObject(t, raw)
		if len(got) != len(want) {
			t.Fatalf("got %d members, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i].key != want[i].key || !bytes.Equal(got[i].raw, want[i].raw) {
				t.Fatalf("member %d: got %q=%s, want %q=%s", i, got[i].key, got[i].raw, want[i].key, want[i].raw)
			}
		}
	})
}

func TestArrayIndex(t *testing.T) {
	tests := []struct {
		key string
		n   uint64
		ok  bool
	}{
		{"0", 0, true}, {"10", 10, true}, {"4294967294", 4294967294, true},
		{"4294967295", 0, false}, {"01", 0, false}, {"", 0, false}, {"-1", 0, false}, {"1.0", 0, false},
	}
	for _, tt := range tests {
		n, ok := arrayIndex(tt.key)
		if n != tt.n || ok != tt.ok {
			t.Errorf("arrayIndex(%q) = %d, %v", tt.key, n, ok)
		}
	}
}
