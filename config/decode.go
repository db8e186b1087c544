package config

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// enumType is implemented by string types with a fixed set of values; the
// decoder names the values when a wrong one is written, and the schema lists
// them.
type enumType interface {
	EnumValues() []string
}

// validator is implemented by configuration structs that check relations
// between their fields. It returns nil, a *core.FieldError, or several joined
// with errors.Join; a FieldError's path is relative to the struct.
//
// The checker calls Validate once per struct value that is the value of a
// key, never on an embedded struct by itself: only the Validate in the
// outer struct's method set runs. A struct that embeds one with a Validate
// method and declares none gets that method by Go's promotion, so it runs
// once, on the outer value; the paths it returns name promoted keys, which
// are keys of the outer struct, so they resolve against the outer struct's
// positions. A struct that declares its own Validate hides the embedded
// one, as does a shallower embedded struct's: the method that runs is then
// responsible for calling the hidden one. What would run a Validate twice
// or not at all is refused by fieldsOf (see validateProblem).
type validator interface {
	Validate() error
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// pos is a 1-based position in the file.
type pos struct{ line, col int }

// decoder turns a YAML AST into a typed value, collecting every problem
// with its position instead of stopping at the first.
type decoder struct {
	file      string
	lookup    LookupEnv
	env       envOptions
	errs      Errors
	anchors   map[string]ast.Node
	positions map[string]pos // key path → position of its value
	depth     int            // nesting of value calls, bounded against alias cycles
}

// maxDepth bounds nesting; only an alias that refers to its own ancestor
// (a: &a {b: *a}) reaches it.
const maxDepth = 100

// decodeYAML parses data and decodes it onto out, which holds the defaults.
// Keys absent from the file keep their default; a null value also keeps it.
// env says which keys may reference unset variables.
func decodeYAML(file string, data []byte, lookup LookupEnv, env envOptions, out any) (map[string]pos, Errors) {
	d, body, errs := parseDocument(file, data)
	if errs != nil {
		return nil, errs
	}
	d.lookup = lookup
	d.env = env
	if body == nil {
		return d.positions, nil
	}
	d.value(body, reflect.ValueOf(out).Elem(), "")
	return d.positions, d.errs
}

// parseDocument parses data into the body of its one YAML document (nil
// when the file is empty) and a decoder that knows the document's anchors.
func parseDocument(file string, data []byte) (*decoder, ast.Node, Errors) {
	d := &decoder{file: file, anchors: map[string]ast.Node{}, positions: map[string]pos{}}
	// Duplicate keys are found after parsing (duplicateKeys), all at once
	// and named with their mapping.
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, nil, Errors{syntaxError(file, data, err)}
	}
	var body ast.Node
	for i, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			p := posOf(doc)
			return nil, nil, Errors{{File: file, Line: p.line, Column: p.col, Message: fmt.Sprintf("found a second YAML document (document %d); a config file holds one", i+1)}}
		}
		body = doc.Body
	}
	if body == nil {
		return d, nil, nil
	}
	if errs := duplicateKeys(file, body); errs != nil {
		return nil, nil, errs
	}
	for _, n := range ast.Filter(ast.AnchorType, body) {
		a := n.(*ast.AnchorNode)
		d.anchors[a.Name.GetToken().Value] = a.Value
	}
	return d, body, nil
}

func (d *decoder) errorf(n ast.Node, path, format string, args ...any) {
	p := posOf(n)
	d.errs = append(d.errs, &Error{File: d.file, Line: p.line, Column: p.col, Path: path, Message: fmt.Sprintf(format, args...)})
}

// posOf finds the most useful position for a node: for a block mapping the
// goccy token is the first ':' so the first key is used instead.
func posOf(n ast.Node) pos {
	switch v := n.(type) {
	case nil:
		return pos{}
	case *ast.MappingNode:
		if len(v.Values) > 0 && !v.IsFlowStyle {
			return posOf(v.Values[0].Key)
		}
	case *ast.MappingValueNode:
		return posOf(v.Key)
	case *ast.StringNode:
		if p, ok := multiLineStart(v.GetToken()); ok {
			return p
		}
	case *ast.DocumentNode:
		if v.Start != nil {
			return pos{v.Start.Position.Line, v.Start.Position.Column}
		}
		return posOf(v.Body)
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return pos{}
	}
	return pos{tk.Position.Line, tk.Position.Column}
}

// multiLineStart finds where a plain value that runs over several lines
// starts. The parser places some of them (one with a later line starting
// "- ", say) where they end; the value starts after the ":" or "-" before
// it and the blanks that follow.
func multiLineStart(tk *token.Token) (pos, bool) {
	if tk == nil || tk.Type != token.StringType || tk.Prev == nil || tk.Prev.Position == nil {
		return pos{}, false
	}
	if tk.Prev.Type != token.MappingValueType && tk.Prev.Type != token.SequenceEntryType {
		return pos{}, false
	}
	value := strings.TrimLeft(tk.Origin, " \t")
	if value == "" || value[0] == '\n' || value[0] == '\r' || !strings.ContainsAny(strings.TrimRight(value, " \t\r\n"), "\r\n") {
		return pos{}, false
	}
	blanks := len(tk.Origin) - len(value)
	return pos{tk.Prev.Position.Line, tk.Prev.Position.Column + 1 + blanks}, true
}

// follow looks through anchors, aliases and tags to the node that holds the
// value. It returns nil and the alias when an alias names no anchor.
func (d *decoder) follow(n ast.Node) (ast.Node, *ast.AliasNode) {
	for depth := 0; n != nil && depth < 64; depth++ {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			target, ok := d.anchors[v.Value.GetToken().Value]
			if !ok {
				return nil, v
			}
			n = target
		default:
			return n, nil
		}
	}
	return n, nil
}

// resolve is follow that reports a dangling alias.
func (d *decoder) resolve(n ast.Node, path string) ast.Node {
	out, dangling := d.follow(n)
	if dangling != nil {
		name := dangling.Value.GetToken().Value
		d.errorf(dangling, path, "alias *%s refers to no anchor &%s; to write a value that starts with \"*\", put it in quotes", name, name)
	}
	return out
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// value decodes n onto v. v is addressable and already holds the default.
func (d *decoder) value(n ast.Node, v reflect.Value, path string) {
	if d.depth >= maxDepth {
		d.errorf(n, path, "nested too deeply; does an alias refer to its own parent?")
		return
	}
	d.depth++
	defer func() { d.depth-- }()
	raw := n
	n = d.resolve(n, path)
	if n == nil {
		return
	}
	if _, isNull := n.(*ast.NullNode); isNull {
		return
	}
	if path != "" {
		d.positions[path] = posOf(raw)
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.value(raw, v.Elem(), path)
		return
	}
	if reflect.PointerTo(v.Type()).Implements(textUnmarshalerType) {
		d.text(n, v, path)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.structValue(n, v, path)
	case reflect.Map:
		d.mapValue(n, v, path)
	case reflect.Slice:
		d.sliceValue(n, v, path)
	case reflect.String:
		if s, ok := d.scalarText(n, path); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		d.boolValue(n, v, path)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.intValue(n, v, path)
	case reflect.Float32, reflect.Float64:
		d.floatValue(n, v, path)
	case reflect.Interface:
		if g, ok := d.generic(n, path); ok && g != nil {
			v.Set(reflect.ValueOf(g))
		}
	default:
		d.errorf(n, path, "cannot be set from YAML (Go type %s)", v.Type())
	}
}

// mappingEntries returns the key/value pairs of a mapping, merge keys
// ("<<: *base") first so that explicit keys override merged ones.
func (d *decoder) mappingEntries(n ast.Node, path string) ([]*ast.MappingValueNode, bool) {
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		d.errorf(n, path, "expected a mapping of keys to values, got %s", describe(n))
		return nil, false
	}
	var merged, own []*ast.MappingValueNode
	for _, mv := range values {
		if _, isMerge := mv.Key.(*ast.MergeKeyNode); !isMerge {
			own = append(own, mv)
			continue
		}
		src := d.resolve(mv.Value, path)
		var sources []ast.Node
		if seq, ok := src.(*ast.SequenceNode); ok {
			for _, s := range seq.Values {
				sources = append(sources, d.resolve(s, path))
			}
		} else {
			sources = append(sources, src)
		}
		for _, s := range sources {
			if s == nil {
				continue
			}
			entries, ok := d.mappingEntries(s, path)
			if ok {
				merged = append(merged, entries...)
			}
		}
	}
	return append(merged, own...), true
}

func keyString(k ast.MapKeyNode) string {
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return k.String()
}

func (d *decoder) structValue(n ast.Node, v reflect.Value, path string) {
	entries, ok := d.mappingEntries(n, path)
	if !ok {
		return
	}
	fields := fieldsOf(v.Type())
	for _, mv := range entries {
		name := keyString(mv.Key)
		if strings.HasPrefix(name, "x-") {
			// Extension keys hold YAML anchors for reuse elsewhere.
			continue
		}
		f, ok := fields.byName[name]
		if !ok {
			msg := fmt.Sprintf("unknown key %q", name)
			if s := suggest(name, fields.names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else if len(fields.names) > 0 {
				msg += "; valid keys here: " + strings.Join(fields.names, ", ")
			}
			d.errorf(mv.Key, joinPath(path, name), "%s", msg)
			continue
		}
		d.value(mv.Value, v.FieldByIndex(f.index), joinPath(path, name))
		d.placeAtKey(mv, joinPath(path, name))
	}
}

// placeAtKey records a mapping or list value at its key's position: a
// problem with the whole value (a missing key inside it, say) is clearest
// there. Scalars keep the position of the value itself.
func (d *decoder) placeAtKey(mv *ast.MappingValueNode, path string) {
	n, _ := d.follow(mv.Value)
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode:
		d.positions[path] = posOf(mv.Key)
	}
}

func (d *decoder) mapValue(n ast.Node, v reflect.Value, path string) {
	if v.Type().Key().Kind() != reflect.String {
		d.errorf(n, path, "cannot be set from YAML (map key type %s)", v.Type().Key())
		return
	}
	entries, ok := d.mappingEntries(n, path)
	if !ok {
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, mv := range entries {
		name := keyString(mv.Key)
		key := reflect.ValueOf(name).Convert(v.Type().Key())
		elem := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(key); old.IsValid() {
			elem.Set(old)
		}
		d.value(mv.Value, elem, joinPath(path, name))
		d.placeAtKey(mv, joinPath(path, name))
		v.SetMapIndex(key, elem)
	}
}

func (d *decoder) sliceValue(n ast.Node, v reflect.Value, path string) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.errorf(n, path, "expected a list, got %s", describe(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(seq.Values), len(seq.Values))
	for i, e := range seq.Values {
		d.value(e, out.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(out)
}

// scalarText returns a scalar's text with environment references expanded.
// Numbers and booleans give their source text, so `allowFrom: [12345]`
// fills a list of strings.
func (d *decoder) scalarText(n ast.Node, path string) (string, bool) {
	s, _, ok := d.scalarTextRef(n, path)
	return s, ok
}

func (d *decoder) scalarTextRef(n ast.Node, path string) (text string, fromEnv, ok bool) {
	var raw string
	switch v := n.(type) {
	case *ast.StringNode:
		raw = v.Value
	case *ast.LiteralNode:
		raw = v.Value.Value
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return n.GetToken().Value, false, true
	default:
		d.errorf(n, path, "expected a single value, got %s", describe(n))
		return "", false, false
	}
	out, referenced, err := expandEnv(raw, d.lookup)
	if d.env.deferred != nil && d.env.deferred(path) && referenced {
		v := envValue{names: envNames(raw)}
		if err != nil {
			// An unset variable is the caller's to judge (see
			// envOptions); a malformed reference is reported here.
			if lenient, _, lerr := expandEnv(raw, unsetAsEmpty(d.lookup)); lerr == nil {
				v.err, out, err = err, lenient, nil
			} else {
				v.malformed = true
			}
		}
		d.env.seen[path] = v
	}
	if err != nil {
		d.errorf(n, path, "%s", err.Error())
		return "", referenced, false
	}
	return out, referenced, true
}

func (d *decoder) text(n ast.Node, v reflect.Value, path string) {
	s, ok := d.scalarText(n, path)
	if !ok {
		return
	}
	tu := v.Addr().Interface().(encoding.TextUnmarshaler)
	if err := tu.UnmarshalText([]byte(s)); err != nil {
		if e, isEnum := v.Interface().(enumType); isEnum {
			d.errorf(n, path, "%s", enumMessage(v.Type(), e.EnumValues(), s))
			return
		}
		d.errorf(n, path, "%s", err.Error())
	}
}

func (d *decoder) boolValue(n ast.Node, v reflect.Value, path string) {
	if b, ok := n.(*ast.BoolNode); ok {
		v.SetBool(b.Value)
		return
	}
	if s, fromEnv, ok := d.scalarTextRef(n, path); ok {
		if b, err := strconv.ParseBool(s); err == nil && fromEnv {
			v.SetBool(b)
			return
		}
		d.errorf(n, path, "expected true or false, got %q", s)
	}
}

func (d *decoder) intValue(n ast.Node, v reflect.Value, path string) {
	var i int64
	switch x := n.(type) {
	case *ast.IntegerNode:
		switch iv := x.Value.(type) {
		case int64:
			i = iv
		case uint64:
			if iv > math.MaxInt64 {
				d.errorf(n, path, "%d is too large", iv)
				return
			}
			i = int64(iv)
		}
	default:
		s, fromEnv, ok := d.scalarTextRef(n, path)
		if !ok {
			return
		}
		parsed, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || !fromEnv {
			d.errorf(n, path, "expected a whole number, got %q", s)
			return
		}
		i = parsed
	}
	if v.OverflowInt(i) {
		d.errorf(n, path, "%d is out of range", i)
		return
	}
	v.SetInt(i)
}

func (d *decoder) floatValue(n ast.Node, v reflect.Value, path string) {
	switch x := n.(type) {
	case *ast.FloatNode:
		v.SetFloat(x.Value)
		return
	case *ast.IntegerNode:
		switch iv := x.Value.(type) {
		case int64:
			v.SetFloat(float64(iv))
		case uint64:
			v.SetFloat(float64(iv))
		}
		return
	}
	s, fromEnv, ok := d.scalarTextRef(n, path)
	if !ok {
		return
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !fromEnv {
		d.errorf(n, path, "expected a number, got %q", s)
		return
	}
	v.SetFloat(f)
}

// generic converts a node to plain Go values (map[string]any, []any, string,
// int64, float64, bool) for keys typed `any`.
func (d *decoder) generic(n ast.Node, path string) (any, bool) {
	if d.depth >= maxDepth {
		d.errorf(n, path, "nested too deeply; does an alias refer to its own parent?")
		return nil, false
	}
	d.depth++
	defer func() { d.depth-- }()
	n = d.resolve(n, path)
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return nil, true
	case *ast.MappingNode, *ast.MappingValueNode:
		entries, ok := d.mappingEntries(v, path)
		if !ok {
			return nil, false
		}
		m := make(map[string]any, len(entries))
		for _, mv := range entries {
			k := keyString(mv.Key)
			if g, ok := d.generic(mv.Value, joinPath(path, k)); ok {
				m[k] = g
			}
		}
		return m, true
	case *ast.SequenceNode:
		out := make([]any, 0, len(v.Values))
		for i, e := range v.Values {
			if g, ok := d.generic(e, fmt.Sprintf("%s[%d]", path, i)); ok {
				out = append(out, g)
			}
		}
		return out, true
	case *ast.StringNode, *ast.LiteralNode:
		return d.scalarText(v, path)
	case ast.ScalarNode:
		return v.GetValue(), true
	}
	d.errorf(n, path, "unsupported YAML value %s", describe(n))
	return nil, false
}

func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return fmt.Sprintf("the string %q", n.GetToken().Value)
	case *ast.NullNode:
		return "null"
	}
	if tk := n.GetToken(); tk != nil {
		return fmt.Sprintf("%q", tk.Value)
	}
	return n.Type().String()
}

// field is one configuration key of a struct: one of its own fields, or a
// field promoted from a struct it embeds.
type field struct {
	name string
	// index leads from the struct to the field (reflect.Value.FieldByIndex);
	// a promoted field's index passes through each embedded struct.
	index []int
	// sf is the field as declared in owner, with its own tags.
	sf reflect.StructField
	// owner is the struct type that declares the field: the outer struct,
	// or the embedded one a promoted field comes from. fieldDocs keys a
	// field's doc comment by it.
	owner reflect.Type
}

type structFields struct {
	byName map[string]field
	list   []field  // in declaration order, promoted fields where their struct is embedded
	names  []string // sorted, for suggestions and messages
}

// fieldCache holds fieldsOf's answer per struct type; it never changes, and
// the decoder asks for it at every mapping.
var fieldCache sync.Map // reflect.Type → structFields

// fieldsOf lists the keys of a configuration struct by encoding/json's
// rules, so the file, the JSON the gateway serves (RedactedJSON) and the
// JSON Schema name every key alike:
//
//   - each exported field is a key named by its json tag, else by its Go
//     name; a field tagged `json:"-"` is not configuration;
//   - a struct embedded without a json name (`bridges.Common`, tagged or
//     not with options such as ",omitempty") is no key of its own: its keys
//     are promoted into the outer struct, recursively. The embedded type may
//     be unexported as long as the fields are exported;
//   - where several fields have one key, the shallowest wins (an outer
//     field shadows a promoted one); at equal depth a tagged field wins,
//     and otherwise the key is ambiguous and, as in encoding/json, none of
//     them is configuration;
//   - an embedded field with a json name is an ordinary key.
//
// Embedding a pointer to a struct is refused with a panic naming the field:
// a nil embedded pointer has no fields to decode into or read, and a
// Validate method promoted through it panics when called. Embed by value.
// fieldsOf also panics when the checker could not call an embedded type's
// Validate method exactly once (see validateProblem).
// Both are mistakes in the Go types, not in a file; Schema walks every
// struct type of Config, so its tests find them before a release does.
func fieldsOf(t reflect.Type) structFields {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(structFields)
	}
	fs := collectFields(t)
	if msg := validateProblem(t, t); msg != "" {
		panic(msg)
	}
	fieldCache.Store(t, fs)
	return fs
}

// collectFields is fieldsOf without the cache: a breadth-first walk through
// the embedded structs, then encoding/json's choice of the dominant field
// for each key.
func collectFields(t reflect.Type) structFields {
	type level struct {
		typ   reflect.Type
		index []int
	}
	type candidate struct {
		field
		depth  int
		tagged bool
	}
	var found []candidate
	next := []level{{typ: t}}
	for depth := 0; len(next) > 0; depth++ {
		current := next
		next = nil
		for _, l := range current {
			for i := range l.typ.NumField() {
				sf := l.typ.Field(i)
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				index := append(append(make([]int, 0, len(l.index)+1), l.index...), i)
				if sf.Anonymous && name == "" {
					switch {
					case sf.Type.Kind() == reflect.Struct:
						next = append(next, level{typ: sf.Type, index: index})
						continue
					case sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.Struct:
						panic(fmt.Sprintf("config: %s embeds %s; embed %s by value (a nil embedded pointer has no keys to decode into), or give the field a json name", l.typ, sf.Type, sf.Type.Elem()))
					}
				}
				// An unexported field cannot be set, nor an unexported
				// embedded type that is not promoted (a string type, say).
				if !sf.IsExported() {
					continue
				}
				c := candidate{field: field{name: name, index: index, sf: sf, owner: l.typ}, depth: depth, tagged: name != ""}
				if c.name == "" {
					c.name = sf.Name
				}
				found = append(found, c)
			}
		}
	}
	// Keep the dominant field of each key: the shallowest, then the tagged
	// one; a tie leaves the key out.
	sort.SliceStable(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if a.depth != b.depth {
			return a.depth < b.depth
		}
		return a.tagged && !b.tagged
	})
	fs := structFields{byName: map[string]field{}}
	for i := 0; i < len(found); {
		j := i + 1
		for j < len(found) && found[j].name == found[i].name {
			j++
		}
		first := found[i]
		if j == i+1 || found[i+1].depth != first.depth || found[i+1].tagged != first.tagged {
			fs.list = append(fs.list, first.field)
		}
		i = j
	}
	sort.Slice(fs.list, func(i, j int) bool { return slices.Compare(fs.list[i].index, fs.list[j].index) < 0 })
	for _, f := range fs.list {
		fs.byName[f.name] = f
		fs.names = append(fs.names, f.name)
	}
	sort.Strings(fs.names)
	return fs
}

// validatorType is the interface of structs with a Validate method.
var validatorType = reflect.TypeFor[validator]()

// validateProblem explains why the checker could not run exactly once the
// Validate method of each type embedded in t, or returns "". t is outer or
// a struct whose keys are promoted into outer. Go promotes an embedded
// type's Validate to outer, which the checker calls (see validator), so:
//
//   - an embedded type that is a key of its own (named by a json tag, or
//     not a struct) would have its Validate called twice: as the key's
//     value and, promoted, as outer's. Whether outer declares its own
//     Validate instead is not visible to reflection, so this is refused
//     either way; a named field does the same without the promotion.
//   - a Validate promoted from a struct whose keys are promoted is lost
//     when outer has none at all: two embedded structs at one depth both
//     have one, or a field named Validate shadows it.
func validateProblem(outer, t reflect.Type) string {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if !sf.Anonymous || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name != "" || sf.Type.Kind() != reflect.Struct {
			if sf.IsExported() && sf.Type.Implements(validatorType) {
				return fmt.Sprintf("config: %s embeds %s, a key with a Validate method that Go also promotes to %s, so it would run twice; make it a named field", outer, sf.Type, outer)
			}
			continue
		}
		if sf.Type.Implements(validatorType) && !outer.Implements(validatorType) {
			return fmt.Sprintf("config: %s embeds %s, whose Validate method %s does not get (two embedded structs have one, or a field is named Validate); declare Validate on %s and call each embedded one from it", outer, sf.Type, outer, outer)
		}
		if msg := validateProblem(outer, sf.Type); msg != "" {
			return msg
		}
	}
	return ""
}
