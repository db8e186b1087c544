package config

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// SchemaURI is the JSON Schema dialect of Schema's output.
const SchemaURI = "https://json-schema.org/draft/2020-12/schema"

// Schema returns the JSON Schema of the configuration file (after ${VAR}
// expansion), with each key's doc comment as its description and each
// default from Default(). Editors use it for completion; the gateway serves
// it as config.schema.
func Schema() ([]byte, error) {
	root := schemaOf(reflect.TypeFor[Config](), reflect.ValueOf(Default()), fieldDocs)
	root["$schema"] = SchemaURI
	root["title"] = "Switchboard configuration"
	if doc := fieldDocs[typeKey(reflect.TypeFor[Config]())]; doc != "" {
		root["description"] = doc
	}
	return json.MarshalIndent(root, "", "  ")
}

func typeKey(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

// schemaOf builds the schema of t. def holds the default value of this
// position when there is one (invalid otherwise); docs holds the doc
// comments, keyed as fieldDocs is. Keys promoted from an embedded struct
// are properties of the outer object, as they are keys of the outer
// mapping in the file.
func schemaOf(t reflect.Type, def reflect.Value, docs map[string]string) map[string]any {
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool {
		// An optional switch: null (or leaving it out) means unset, which
		// inherits (agents.list overrides) or takes the default.
		return map[string]any{"type": []any{"boolean", "null"}}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		if def.IsValid() {
			def = reflect.Indirect(def)
		}
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		s := map[string]any{"type": "string"}
		if e, ok := reflect.Zero(t).Interface().(enumType); ok {
			s["enum"] = e.EnumValues()
		}
		return s
	}
	switch t.Kind() {
	case reflect.Struct:
		props := map[string]any{}
		for _, f := range fieldsOf(t).list {
			var fdef reflect.Value
			if def.IsValid() {
				fdef = def.FieldByIndex(f.index)
			}
			fs := schemaOf(f.sf.Type, fdef, docs)
			// A promoted field's words are those of the embedded type
			// that declares it, whichever struct embeds it.
			if doc := docs[typeKey(f.owner)+"."+f.sf.Name]; doc != "" {
				fs["description"] = doc
			}
			if fdef.IsValid() && !fdef.IsZero() && isLeaf(f.sf.Type) {
				fs["default"] = fdef.Interface()
			}
			if f.sf.Tag.Get("config") == "secret" {
				fs["writeOnly"] = true
			}
			bound(fs, f.sf, "min", "minimum")
			bound(fs, f.sf, "max", "maximum")
			props[f.name] = fs
		}
		return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), reflect.Value{}, docs)}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), reflect.Value{}, docs)}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	}
	return map[string]any{}
}

// isLeaf reports whether a default of type t is worth stating in the schema
// (scalars and lists of scalars; objects state their own fields' defaults).
func isLeaf(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Interface:
		return reflect.PointerTo(t).Implements(textUnmarshalerType)
	case reflect.Slice:
		return isLeaf(t.Elem())
	}
	return true
}

func bound(s map[string]any, sf reflect.StructField, tag, keyword string) {
	v, ok := sf.Tag.Lookup(tag)
	if !ok {
		return
	}
	if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
		s[keyword] = n
	}
}
