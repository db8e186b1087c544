package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the configuration parser: it must never
// panic, every problem must be a positioned Error within the file or a
// position-less one, and a file that parses must parse again to the same
// result when re-read (the parser has no hidden state).
func FuzzParse(f *testing.F) {
	if example, err := os.ReadFile("../config.yaml.example"); err == nil {
		f.Add(string(example))
	}
	f.Add(minimal)
	f.Add("gateway:\n  prot: 1\nsession:\n  dmScope: x\n")
	f.Add("a: &a {b: *a}\n")
	f.Add("x-a: &a\n  api: echo\nmodels:\n  providers:\n    e:\n      <<: [*a, *a]\n")
	f.Add("stateDir: ${A:-${B}}\n")
	f.Add("gateway:\n  port: 99999999999999999999999\n")
	for _, c := range finding9SyntaxCases {
		f.Add(c.src)
	}
	f.Add("gateway:\n  port: 1\n  port: 2\n  port: 3\nmodels:\n  providers:\n    e: {api: echo, api: echo}\n")
	f.Add("channels:\n  telegram:\n    allowFrom:\n      - 123\n    dmPolicy: open\n      - 456\n")
	f.Add("messages:\n  queue:\n    mode: colect\n")
	f.Add("a: [{b: [c, {d: e\n")
	f.Add("a:\r  b: 1\r   c: 2\r")
	f.Fuzz(func(t *testing.T, src string) {
		lookup := env("A", "1")
		cfg, err := Parse("f.yaml", []byte(src), lookup)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error is not a non-empty Errors: %v", err)
			}
			// YAML breaks lines at \n, \r\n and a lone \r.
			lines := strings.Count(strings.ReplaceAll(src, "\r\n", "\n"), "\n") + strings.Count(src, "\r") + 2
			for _, e := range es {
				if e.Message == "" {
					t.Fatalf("a problem without a message: %#v", e)
				}
				if e.Line < 0 || e.Line > lines || e.Column < 0 {
					t.Fatalf("position %d:%d outside a %d-line file: %v", e.Line, e.Column, lines, e)
				}
			}
			return
		}
		again, err := Parse("f.yaml", []byte(src), lookup)
		if err != nil || !reflect.DeepEqual(again.Gateway, cfg.Gateway) || again.StateDir != cfg.StateDir {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}
