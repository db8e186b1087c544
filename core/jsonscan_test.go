package core

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestObjectScan(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   string // key=value pairs joined by ";", escaped keys marked with !
		failed bool
	}{
		{`{}`, "", false},
		{` { } `, "", false},
		{`{"a":1}`, "a=1", false},
		{` {"a" : "x,}" , "b":{"c":[1,{"d":"]"}]},"e":null} `, `a="x,}";b={"c":[1,{"d":"]"}]};e=null`, false},
		{`{"\u0061":1,"b\"":2}`, `!\u0061=1;!b\"=2`, false},
		{`{"a":"\\"}`, `a="\\"`, false},
		{`{`, "", true},
		{`{"a"}`, "", true},
		{`{"a":}`, "", true},
		{`{"a":1,}`, "a=1", true},
		{`{"a":1 "b":2}`, "", true},
		{`{"a":1}x`, "a=1", true},
		{`{"a":"unterminated}`, "", true},
		{`{"a":[1,2}`, "", true},
		{`{1:2}`, "", true},
	} {
		s, ok := newObjectScan([]byte(tc.in))
		if !ok {
			t.Errorf("%s: not an object", tc.in)
			continue
		}
		var got []string
		for {
			k, esc, v, ok := s.next()
			if !ok {
				break
			}
			mark := ""
			if esc {
				mark = "!"
			}
			got = append(got, mark+string(k)+"="+string(v))
		}
		if strings.Join(got, ";") != tc.want || s.failed() != tc.failed {
			t.Errorf("%s: got %q failed=%v, want %q failed=%v", tc.in, strings.Join(got, ";"), s.failed(), tc.want, tc.failed)
		}
	}
	for _, in := range []string{``, `[]`, `"x"`, `null`, ` `} {
		if _, ok := newObjectScan([]byte(in)); ok {
			t.Errorf("%q accepted as an object", in)
		}
	}
}

func TestArrayScan(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   string
		failed bool
	}{
		{`[]`, "", false},
		{` [ ] `, "", false},
		{`[1, "a,]" ,{"b":[2]}, true]`, `1|"a,]"|{"b":[2]}|true`, false},
		{`[1,]`, "1", true},
		{`[1 2]`, "", true},
		{`[1]]`, "1", true},
		{`[`, "", true},
		{`[{]`, "", true},
	} {
		s, ok := newArrayScan([]byte(tc.in))
		if !ok {
			t.Errorf("%s: not an array", tc.in)
			continue
		}
		var got []string
		for {
			e, ok := s.next()
			if !ok {
				break
			}
			got = append(got, string(e))
		}
		if strings.Join(got, "|") != tc.want || s.failed() != tc.failed {
			t.Errorf("%s: got %q failed=%v, want %q failed=%v", tc.in, strings.Join(got, "|"), s.failed(), tc.want, tc.failed)
		}
	}
}

// FuzzObjectScan checks that the walk never panics and, on valid JSON
// objects, yields exactly the members encoding/json sees.
func FuzzObjectScan(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[{"c":"}"}]}`, `{"\u0061":"\\"}`, `{"a":1,}`, `[1,2]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok := newObjectScan(data)
		n := 0
		for {
			_, _, v, ok := s.next()
			if !ok {
				break
			}
			n++
			_ = v
		}
		if as, ok := newArrayScan(data); ok {
			for {
				if _, ok := as.next(); !ok {
					break
				}
			}
		}
		var members []json.RawMessage
		dec := json.NewDecoder(strings.NewReader(string(data)))
		if !ok || !json.Valid(data) {
			return
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return
		}
		for dec.More() {
			if _, err := dec.Token(); err != nil {
				t.Fatal(err)
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			members = append(members, v)
		}
		if s.failed() || n != len(members) {
			t.Errorf("walk saw %d members (failed=%v), encoding/json %d", n, s.failed(), len(members))
		}
	})
}
