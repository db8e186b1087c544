package config

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboardhq/switchboard/config/internal/docgen"
)

func compileSchema(t *testing.T) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	raw, err := Schema()
	if err != nil {
		t.Fatalf("Schema: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("config.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	// Compile checks the document against the draft 2020-12 meta-schema.
	sch, err := c.Compile("config.schema.json")
	if err != nil {
		t.Fatalf("schema is not a valid JSON Schema: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return sch, m
}

func TestSchemaIsValidAndAcceptsTheExample(t *testing.T) {
	sch, m := compileSchema(t)
	if m["$schema"] != SchemaURI {
		t.Errorf("$schema = %v", m["$schema"])
	}
	data, err := os.ReadFile("../config.yaml.example")
	if err != nil {
		t.Fatal(err)
	}
	var example any
	if err := yaml.Unmarshal(data, &example); err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(jsonRoundTrip(t, example)); err != nil {
		t.Errorf("config.yaml.example does not satisfy the schema: %v", err)
	}
	bad := map[string]any{"gateway": map[string]any{"prot": 1}}
	if err := sch.Validate(bad); err == nil {
		t.Errorf("schema accepted an unknown key")
	}
	bad = map[string]any{"session": map[string]any{"dmScope": "per-person"}}
	if err := sch.Validate(bad); err == nil {
		t.Errorf("schema accepted a wrong enum value")
	}
}

func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSchemaCarriesDocsDefaultsAndEnums(t *testing.T) {
	_, m := compileSchema(t)
	port := dig(t, m, "gateway", "port")
	if port["default"] != float64(18789) || port["maximum"] != float64(65535) || port["type"] != "integer" {
		t.Errorf("gateway.port schema = %v", port)
	}
	if d, _ := port["description"].(string); !strings.Contains(d, "TCP port") {
		t.Errorf("gateway.port description = %q, want its doc comment", d)
	}
	scope := dig(t, m, "session", "dmScope")
	if !reflect.DeepEqual(scope["enum"], []any{"main", "per-peer", "per-channel-peer", "per-account-channel-peer"}) || scope["default"] != "main" {
		t.Errorf("session.dmScope schema = %v", scope)
	}
	key := dig(t, m, "models", "providers", "*", "apiKey")
	if key["writeOnly"] != true {
		t.Errorf("apiKey must be marked writeOnly (secret): %v", key)
	}
}

// dig walks properties (and "*" for map values) to a key's schema.
func dig(t *testing.T, s map[string]any, path ...string) map[string]any {
	t.Helper()
	for _, p := range path {
		var next any
		if p == "*" {
			next = s["additionalProperties"]
		} else if props, ok := s["properties"].(map[string]any); ok {
			next = props[p]
		}
		n, ok := next.(map[string]any)
		if !ok {
			t.Fatalf("schema has no %v", path)
		}
		s = n
	}
	return s
}

// TestEveryFieldIsDocumented regenerates the doc table from the source and
// compares it with the committed docs_gen.go; docgen also fails when any
// configuration struct or field lacks a doc comment.
func TestEveryFieldIsDocumentedAndDocsAreCurrent(t *testing.T) {
	want, err := docgen.Generate(reflect.TypeFor[Config](), "..", ModulePath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("docs_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("config/docs_gen.go is stale: run `go generate ./config` (or `make generate`)")
	}
}

// TestExampleDocumentsEveryKey checks that config.yaml.example shows every
// key of the schema, so the example is the complete, commented reference.
func TestExampleDocumentsEveryKey(t *testing.T) {
	_, m := compileSchema(t)
	data, err := os.ReadFile("../config.yaml.example")
	if err != nil {
		t.Fatal(err)
	}
	var example any
	if err := yaml.Unmarshal(data, &example); err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{}
	schemaPaths(m, "", all)
	covered := map[string]bool{}
	examplePaths(m, example, "", covered)
	var missing []string
	for p := range all {
		if !covered[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("config.yaml.example does not show these keys:\n  %s", strings.Join(missing, "\n  "))
	}
}

func schemaPaths(s map[string]any, prefix string, out map[string]bool) {
	if props, ok := s["properties"].(map[string]any); ok {
		for k, v := range props {
			p := join(prefix, k)
			out[p] = true
			schemaPaths(v.(map[string]any), p, out)
		}
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		schemaPaths(ap, join(prefix, "*"), out)
	}
	if items, ok := s["items"].(map[string]any); ok {
		schemaPaths(items, prefix+"[]", out)
	}
}

func examplePaths(s map[string]any, v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		ap, _ := s["additionalProperties"].(map[string]any)
		for k, child := range x {
			if sub, ok := props[k].(map[string]any); ok {
				p := join(prefix, k)
				out[p] = true
				examplePaths(sub, child, p, out)
			} else if ap != nil {
				examplePaths(ap, child, join(prefix, "*"), out)
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for _, e := range x {
				examplePaths(items, e, prefix+"[]", out)
			}
		}
	}
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}
