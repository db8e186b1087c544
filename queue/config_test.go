package queue

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if c.Mode != ModeCollect || c.DebounceMs == nil || *c.DebounceMs != 1000 || c.Cap != 20 || c.Drop != DropSummarize || c.Ack {
		t.Errorf("DefaultConfig = %+v", c)
	}
	// The config loader decodes onto the defaults, so each call must own
	// its pointer.
	*c.DebounceMs = 5
	if again := DefaultConfig(); *again.DebounceMs != 1000 {
		t.Error("DefaultConfig shares its DebounceMs pointer between calls")
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate() = %v", err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("Config{}.Validate() = %v", err)
	}
}

func TestConfigJSON(t *testing.T) {
	c := DefaultConfig()
	err := json.Unmarshal([]byte(`{"mode":"queue","byChannel":{"slack":"follow-ups"},"debounceMs":0,"debounceMsByChannel":{"whatsapp":5000},"cap":5,"drop":"summary","ack":true}`), &c)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ModeSteer || c.ByChannel["slack"] != ModeFollowup || *c.DebounceMs != 0 ||
		c.DebounceMsByChannel["whatsapp"] != 5000 || c.Cap != 5 || c.Drop != DropSummarize || !c.Ack {
		t.Errorf("decoded %+v", c)
	}
	if got := Resolve(Override{}, Override{}, c, "whatsapp"); got.Debounce.Milliseconds() != 5000 || got.Mode != ModeSteer {
		t.Errorf("Resolve on decoded config = %+v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want []string // "path: message" fragments, in order
	}{
		{"negative debounce", Config{DebounceMs: pointerTo(-1)},
			[]string{"debounceMs: must be at least 0 (got -1)"}},
		{"negative channel debounce", Config{DebounceMsByChannel: map[string]int{"slack": -2}},
			[]string{"debounceMsByChannel.slack: must be at least 0 (got -2)"}},
		{"upper-case channel", Config{ByChannel: map[string]Mode{"Telegram": ModeSteer}},
			[]string{`byChannel.Telegram: write the channel name in lower case: "telegram"`}},
		{"empty channel name", Config{DebounceMsByChannel: map[string]int{" ": 5}},
			[]string{"debounceMsByChannel. : a channel name is required"}},
		{"unset channel mode", Config{ByChannel: map[string]Mode{"slack": ""}},
			[]string{"byChannel.slack: must be one of steer, followup, collect, steer-backlog, interrupt"}},
		{"several, sorted", Config{DebounceMs: pointerTo(-3), ByChannel: map[string]Mode{"b": "x", "a": ModeCollect}},
			[]string{"debounceMs:", "byChannel.b: must be one of"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil {
				t.Fatal("Validate() = nil")
			}
			joined, ok := err.(interface{ Unwrap() []error })
			if !ok {
				t.Fatalf("Validate() = %T, want errors.Join", err)
			}
			errs := joined.Unwrap()
			if len(errs) != len(tc.want) {
				t.Fatalf("Validate() = %v, want %d errors", err, len(tc.want))
			}
			for i, e := range errs {
				var fe *core.FieldError
				if !errors.As(e, &fe) {
					t.Errorf("error %d is %T, want *core.FieldError", i, e)
				}
				if !strings.HasPrefix(e.Error(), tc.want[i]) {
					t.Errorf("error %d = %q, want prefix %q", i, e, tc.want[i])
				}
			}
		})
	}
}

// TestConfigDocumented checks what the configuration documentation and JSON
// Schema are generated from: every field has a doc comment, and the
// bounded fields carry their min tag.
func TestConfigDocumented(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "config.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Config" {
			return true
		}
		found = true
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			name := field.Names[0].Name
			doc := strings.TrimSpace(field.Doc.Text())
			if !strings.HasPrefix(doc, name+" ") || !strings.HasSuffix(doc, ".") {
				t.Errorf("field %s: doc comment %q should be a sentence starting with its name", name, doc)
			}
		}
		return false
	})
	if !found {
		t.Fatal("no Config type in config.go")
	}
	typ := reflect.TypeFor[Config]()
	for field, want := range map[string]string{"DebounceMs": "0", "Cap": "1"} {
		sf, _ := typ.FieldByName(field)
		if got := sf.Tag.Get("min"); got != want {
			t.Errorf("%s min tag = %q, want %q", field, got, want)
		}
	}
	for i := range typ.NumField() {
		sf := typ.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "" || !strings.HasSuffix(tag, ",omitempty") {
			t.Errorf("%s json tag = %q", sf.Name, tag)
		}
	}
}
