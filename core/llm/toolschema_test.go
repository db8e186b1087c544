package llm

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The schema caches give what converting afresh gives, keyed by content:
// a caller that reuses its bytes for another schema gets that schema's
// conversion; a bad schema fails every time; the cache stays bounded.
func TestToolSchemaCache(t *testing.T) {
	params := json.RawMessage(`{"properties":{"a":{"type":"string"}}}`)
	first, err := anthropicToolOf(ToolSpec{Name: "t", Parameters: params})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"a":{"type":"string"}},"type":"object"}`
	if string(first.InputSchema) != want {
		t.Fatalf("input_schema %s, want %s", first.InputSchema, want)
	}
	o1, err := openaiToolOf(ToolSpec{Name: "t", Parameters: params})
	if err != nil || string(o1.Function.Parameters) != string(params) {
		t.Fatalf("openai parameters %s, %v", o1.Function.Parameters, err)
	}
	// The caller rewrites its buffer with another schema of the same length.
	copy(params, `{"properties":{"b":{"type":"number"}}}`)
	second, _ := anthropicToolOf(ToolSpec{Name: "t", Parameters: params})
	o2, _ := openaiToolOf(ToolSpec{Name: "t", Parameters: params})
	if string(second.InputSchema) != `{"properties":{"b":{"type":"number"}},"type":"object"}` || string(o2.Function.Parameters) != string(params) {
		t.Fatalf("after reuse: %s / %s", second.InputSchema, o2.Function.Parameters)
	}
	if string(o1.Function.Parameters) == string(params) {
		t.Fatal("the first result shares the caller's bytes")
	}
	for range 2 {
		if _, err := anthropicToolOf(ToolSpec{Name: "bad", Parameters: json.RawMessage(`[1]`)}); err == nil {
			t.Fatal("anthropic: an array schema passed")
		}
		if _, err := openaiToolOf(ToolSpec{Name: "bad", Parameters: json.RawMessage(`"x"`)}); err == nil {
			t.Fatal("openai: a string schema passed")
		}
	}
	for i := range maxCachedSchemas + 10 {
		if _, err := openaiToolOf(ToolSpec{Name: "t", Parameters: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	openaiSchemas.mu.Lock()
	n := len(openaiSchemas.m)
	openaiSchemas.mu.Unlock()
	if n > maxCachedSchemas {
		t.Fatalf("%d schemas cached, at most %d", n, maxCachedSchemas)
	}
}
