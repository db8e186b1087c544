package tools_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core/tools"
)

func TestNormalizeArgs(t *testing.T) {
	const fileSchema = `{"type":"object","properties":{"file_path":{},"maxBytes":{},"url":{}}}`
	const editSchema = `{"type":"object","properties":{"path":{},"oldText":{},"newText":{}}}`
	const claudeSchema = `{"type":"object","properties":{"file_path":{},"old_string":{},"new_string":{}}}`
	tests := []struct {
		name   string
		schema string
		args   map[string]any
		want   map[string]any
	}{
		{"schema spelling kept", fileSchema,
			map[string]any{"file_path": "/a", "maxBytes": 10.0},
			map[string]any{"file_path": "/a", "maxBytes": 10.0}},
		{"camelCase to snake_case", fileSchema,
			map[string]any{"filePath": "/a"},
			map[string]any{"file_path": "/a"}},
		{"snake_case to camelCase", fileSchema,
			map[string]any{"max_bytes": 10.0},
			map[string]any{"maxBytes": 10.0}},
		{"PascalCase", fileSchema,
			map[string]any{"FilePath": "/a", "MaxBytes": 1.0},
			map[string]any{"file_path": "/a", "maxBytes": 1.0}},
		{"kebab-case", fileSchema,
			map[string]any{"file-path": "/a"},
			map[string]any{"file_path": "/a"}},
		{"acronym", fileSchema,
			map[string]any{"URL": "http://x"},
			map[string]any{"url": "http://x"}},
		{"both spellings: schema wins", fileSchema,
			map[string]any{"filePath": "/variant", "file_path": "/schema"},
			map[string]any{"file_path": "/schema"}},
		{"unknown keys kept", fileSchema,
			map[string]any{"extra": true, "someThing": 1.0},
			map[string]any{"extra": true, "someThing": 1.0}},
		{"nested keys untouched", fileSchema,
			map[string]any{"filePath": map[string]any{"innerKey": 1.0}},
			map[string]any{"file_path": map[string]any{"innerKey": 1.0}}},
		{"Claude Code names to OpenClaw names", editSchema,
			map[string]any{"file_path": "/a", "old_string": "x", "new_string": "y"},
			map[string]any{"path": "/a", "oldText": "x", "newText": "y"}},
		{"OpenClaw names to Claude Code names", claudeSchema,
			map[string]any{"path": "/a", "oldText": "x", "new_text": "y"},
			map[string]any{"file_path": "/a", "old_string": "x", "new_string": "y"}},
		{"camelCase alias", editSchema,
			map[string]any{"filePath": "/a"},
			map[string]any{"path": "/a"}},
		{"alias loses to schema spelling", editSchema,
			map[string]any{"path": "/schema", "file_path": "/alias"},
			map[string]any{"path": "/schema"}},
		{"case variant beats alias", claudeSchema,
			map[string]any{"path": "/alias", "filePath": "/variant"},
			map[string]any{"file_path": "/variant"}},
		{"two variants resolve by key order", fileSchema,
			map[string]any{"filePath": "/1", "FilePath": "/2"},
			map[string]any{"file_path": "/2"}},
		{"nil args", fileSchema, nil, map[string]any{}},
		{"schema without properties", `{"type":"object"}`,
			map[string]any{"filePath": "/a"},
			map[string]any{"filePath": "/a"}},
		{"invalid schema renames nothing", `[]`,
			map[string]any{"filePath": "/a"},
			map[string]any{"filePath": "/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := maps.Clone(tt.args)
			got := tools.NormalizeArgs(tt.args, json.RawMessage(tt.schema))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NormalizeArgs = %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.args, before) {
				t.Errorf("input changed: %v, was %v", tt.args, before)
			}
			if got == nil {
				t.Fatal("result is nil")
			}
			got["__probe"] = 1
			if _, leaked := tt.args["__probe"]; leaked {
				t.Error("result shares the input map")
			}
		})
	}
}

func TestRequiredMissing(t *testing.T) {
	const schema = `{"type":"object","properties":{"a":{},"b":{},"c":{}},"required":["a","b","c"]}`
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"all present", map[string]any{"a": "x", "b": 0.0, "c": false}, nil},
		{"absent", map[string]any{"b": 1.0, "c": 1.0}, []string{"a"}},
		{"null and empty string", map[string]any{"a": nil, "b": "", "c": " "}, []string{"a", "b"}},
		{"empty containers count as present", map[string]any{"a": []any{}, "b": map[string]any{}, "c": 0.0}, nil},
		{"nil args", nil, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.RequiredMissing(tt.args, json.RawMessage(schema)); !slices.Equal(got, tt.want) {
				t.Errorf("RequiredMissing = %v, want %v", got, tt.want)
			}
		})
	}
	if got := tools.RequiredMissing(nil, json.RawMessage(`{"type":"object"}`)); got != nil {
		t.Errorf("no required list: %v", got)
	}
	if got := tools.RequiredMissing(nil, json.RawMessage(`nope`)); got != nil {
		t.Errorf("invalid schema: %v", got)
	}
}
