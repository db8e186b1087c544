package tools_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/toolstest"
)

func TestRegisterValidation(t *testing.T) {
	long := "a" + strings.Repeat("b", 63)
	tests := []struct {
		name    string
		spec    tools.Spec
		wantErr string // "" means success
	}{
		{"minimal", tools.Spec{Name: "read", Description: "d"}, ""},
		{"64 chars", tools.Spec{Name: long, Description: "d"}, ""},
		{"digits and underscore", tools.Spec{Name: "web_fetch2", Description: "d"}, ""},
		{"full schema", tools.Spec{Name: "exec", Description: "d",
			Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}, ""},
		{"empty name", tools.Spec{Name: "", Description: "d"}, `register "": invalid tool spec: name must match`},
		{"upper case", tools.Spec{Name: "Read", Description: "d"}, `register "Read": invalid tool spec: name must match`},
		{"leading digit", tools.Spec{Name: "1read", Description: "d"}, "name must match"},
		{"hyphen", tools.Spec{Name: "web-fetch", Description: "d"}, "name must match"},
		{"65 chars", tools.Spec{Name: long + "c", Description: "d"}, "at most 64 characters"},
		{"empty description", tools.Spec{Name: "read"}, `register "read": invalid tool spec: description is empty`},
		{"blank description", tools.Spec{Name: "read", Description: " \n"}, "description is empty"},
		{"negative timeout", tools.Spec{Name: "read", Description: "d", Timeout: -time.Second}, "timeout -1s is negative"},
		{"schema not JSON", tools.Spec{Name: "read", Description: "d", Parameters: json.RawMessage(`{`)}, "parameters: not a JSON object"},
		{"schema an array", tools.Spec{Name: "read", Description: "d", Parameters: json.RawMessage(`[]`)}, "parameters: not a JSON object"},
		{"schema without type", tools.Spec{Name: "read", Description: "d", Parameters: json.RawMessage(`{"properties":{}}`)}, `parameters: "type" must be "object", got nothing`},
		{"schema of an array", tools.Spec{Name: "read", Description: "d", Parameters: json.RawMessage(`{"type":"array"}`)}, `"type" must be "object", got "array"`},
		{"properties not an object", tools.Spec{Name: "read", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":[]}`)}, `"properties" must be an object, got []`},
		{"required not strings", tools.Spec{Name: "read", Description: "d", Parameters: json.RawMessage(`{"type":"object","required":"path"}`)}, `"required" must be an array of strings`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tools.NewRegistry().Register(&toolstest.Func{Def: tt.spec})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Register: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Register error = %v, want it to contain %q", err, tt.wantErr)
			}
			if !errors.Is(err, tools.ErrInvalidSpec) {
				t.Errorf("error %v does not wrap ErrInvalidSpec", err)
			}
		})
	}
}

func TestRegisterDuplicateAndNil(t *testing.T) {
	r := tools.NewRegistry()
	if err := r.Register(toolstest.Text("read", "x")); err != nil {
		t.Fatal(err)
	}
	err := r.Register(toolstest.Text("read", "y"))
	if !errors.Is(err, tools.ErrDuplicateTool) || !strings.Contains(err.Error(), `register "read"`) {
		t.Errorf("duplicate: err = %v", err)
	}
	if err := r.Register(nil); !errors.Is(err, tools.ErrInvalidSpec) {
		t.Errorf("nil tool: err = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustRegister of a duplicate did not panic")
		}
	}()
	r.MustRegister(toolstest.Text("read", "z"))
}

func TestRegistryLookups(t *testing.T) {
	var zero tools.Registry // the zero value works too
	zero.MustRegister(toolstest.Text("solo", "s"))
	if _, _, ok := zero.Get("solo"); !ok {
		t.Error("zero Registry: Get after Register failed")
	}

	r := tools.NewRegistry()
	r.MustRegister(toolstest.Text("write", "w"), toolstest.Text("exec", "e"), toolstest.Text("read", "r"))
	if got, want := r.Names(), []string{"exec", "read", "write"}; !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	var specNames []string
	for _, s := range r.Specs() {
		specNames = append(specNames, s.Name)
	}
	if want := []string{"exec", "read", "write"}; !slices.Equal(specNames, want) {
		t.Errorf("Specs names = %v, want %v", specNames, want)
	}
	tool, spec, ok := r.Get("read")
	if !ok || tool == nil || spec.Name != "read" {
		t.Fatalf("Get(read) = %v, %+v, %v", tool, spec, ok)
	}
	if got := string(spec.Parameters); got != `{"type":"object","properties":{}}` {
		t.Errorf("default Parameters = %s", got)
	}
	if _, _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found something")
	}
	if r.Len() != 3 {
		t.Errorf("Len = %d", r.Len())
	}

	without := r.Without("exec", "unknown")
	if got, want := without.Names(), []string{"read", "write"}; !slices.Equal(got, want) {
		t.Errorf("Without names = %v, want %v", got, want)
	}
	only := r.Only("exec", "unknown")
	if got, want := only.Names(), []string{"exec"}; !slices.Equal(got, want) {
		t.Errorf("Only names = %v, want %v", got, want)
	}
	// Views are snapshots: registering in one does not affect the other.
	only.MustRegister(toolstest.Text("extra", "x"))
	if _, _, ok := r.Get("extra"); ok {
		t.Error("registering in a view changed the parent")
	}
	r.MustRegister(toolstest.Text("later", "l"))
	if _, _, ok := without.Get("later"); ok {
		t.Error("a view saw a later registration in the parent")
	}

	var nilReg *tools.Registry
	if nilReg.Names() != nil || nilReg.Specs() != nil || nilReg.Len() != 0 {
		t.Error("nil registry is not empty")
	}
	if _, _, ok := nilReg.Get("read"); ok {
		t.Error("nil registry found a tool")
	}
}

func TestRegisterCopiesParameters(t *testing.T) {
	params := []byte(`{"type":"object","properties":{"a":{}}}`)
	r := tools.NewRegistry()
	r.MustRegister(&toolstest.Func{Def: tools.Spec{Name: "t", Description: "d", Parameters: params}})
	params[0] = 'X'
	_, spec, _ := r.Get("t")
	if spec.Parameters[0] != '{' {
		t.Error("Registry kept the caller's Parameters slice")
	}
}
