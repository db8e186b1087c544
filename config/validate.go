package config

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// decodeAndCheck decodes data onto out, a pointer to a configuration struct
// that holds the defaults, and checks the result: Parse for any struct.
// It returns every problem, in file order.
func decodeAndCheck(name string, data []byte, lookup LookupEnv, out any) Errors {
	return decodeAndCheckWith(name, data, lookup, envOptions{}, nil, out)
}

// decodeAndCheckWith is decodeAndCheck with env saying which keys may
// reference unset variables, and more, when not nil, reporting further
// problems by key path once out is decoded.
func decodeAndCheckWith(name string, data []byte, lookup LookupEnv, env envOptions, more func(report func(path, msg string)), out any) Errors {
	positions, errs := decodeYAML(name, data, lookup, env, out)
	if positions != nil {
		c := &checker{file: name, positions: positions}
		c.walk(reflectValue(out), "")
		if more != nil {
			more(c.at)
		}
		errs = append(errs, c.errs...)
	}
	if len(errs) > 0 {
		return errs.sorted()
	}
	return nil
}

// checker walks a decoded configuration and reports range violations
// (`min`/`max` struct tags) and the problems found by each struct's Validate
// method, placing each at the position the key had in the file.
type checker struct {
	file      string
	positions map[string]pos
	errs      Errors
}

// at reports msg for path, located at the closest position the file gives:
// the key itself, else its nearest parent that was written in the file.
func (c *checker) at(path, msg string) {
	e := &Error{File: c.file, Path: path, Message: msg}
	for p := path; ; {
		if at, ok := c.positions[p]; ok {
			e.Line, e.Column = at.line, at.col
			break
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	c.errs = append(c.errs, e)
}

// walk checks v, found at path, and everything beneath it. A struct's
// promoted fields are checked as its own keys, and the embedded struct that
// holds them is not walked as a value, so its Validate runs only as the
// outer value's (see validator).
func (c *checker) walk(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			c.walk(v.Elem(), path)
		}
		return
	case reflect.Struct:
		for _, f := range fieldsOf(v.Type()).list {
			fv := v.FieldByIndex(f.index)
			p := joinPath(path, f.name)
			c.bounds(fv, f.sf, p)
			c.walk(fv, p)
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			c.walk(v.MapIndex(k), joinPath(path, k.String()))
		}
	case reflect.Slice:
		for i := range v.Len() {
			c.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	}
	if val, ok := v.Interface().(validator); ok {
		c.validation(val.Validate(), path)
	}
}

// validation reports each FieldError joined into err under path.
func (c *checker) validation(err error, path string) {
	if err == nil {
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			c.validation(e, path)
		}
		return
	}
	var fe *core.FieldError
	if errors.As(err, &fe) {
		p := path
		if fe.Path != "" {
			sep := "."
			if strings.HasPrefix(fe.Path, "[") || p == "" {
				sep = ""
			}
			p += sep + fe.Path
		}
		c.at(p, fe.Message)
		return
	}
	c.at(path, err.Error())
}

// bounds checks the `min` and `max` tags of a numeric field.
func (c *checker) bounds(v reflect.Value, sf reflect.StructField, path string) {
	var n float64
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n = float64(v.Int())
	case reflect.Float32, reflect.Float64:
		n = v.Float()
	default:
		return
	}
	if s, ok := sf.Tag.Lookup("min"); ok {
		if lo, err := strconv.ParseFloat(s, 64); err == nil && n < lo {
			c.at(path, fmt.Sprintf("must be at least %s (got %v)", s, n))
		}
	}
	if s, ok := sf.Tag.Lookup("max"); ok {
		if hi, err := strconv.ParseFloat(s, 64); err == nil && n > hi {
			c.at(path, fmt.Sprintf("must be at most %s (got %v)", s, n))
		}
	}
}

func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }
