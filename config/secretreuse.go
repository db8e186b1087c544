package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// secretField is one configured secret and where it is.
type secretField struct {
	path, value string
}

// secretReuse reports a secret used by two surfaces (the gateway, a model
// provider, a chat platform): a leak of one would then open the other, and
// a platform that sees its token also holds the gateway's key. One
// provider's key repeated across providers is allowed. Matrix row 11.
func (c Config) secretReuse() error {
	var found []secretField
	collectSecrets(reflect.ValueOf(c), "", false, &found)
	surface := func(path string) string {
		parts := strings.SplitN(path, ".", 3)
		if parts[0] == "channels" && len(parts) > 1 {
			return parts[0] + "." + parts[1]
		}
		return parts[0]
	}
	byValue := map[string][]string{}
	for _, f := range found {
		if f.value != "" && f.value != Redacted { // a redacted file repeats the placeholder
			byValue[f.value] = append(byValue[f.value], f.path)
		}
	}
	var errs []string
	for _, paths := range byValue {
		sort.Strings(paths)
		for _, p := range paths[1:] {
			if surface(p) != surface(paths[0]) {
				errs = append(errs, fmt.Sprintf("%s and %s hold the same secret; give each its own (a leak of one would open the other)", paths[0], p))
				break
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return core.FieldErrorf("", strings.Join(errs, "; "))
}

// collectSecrets appends the string values at or beneath fields tagged
// `config:"secret"`, with their key paths.
func collectSecrets(v reflect.Value, path string, secret bool, out *[]secretField) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			collectSecrets(v.Elem(), path, secret, out)
		}
	case reflect.String:
		if secret {
			*out = append(*out, secretField{path: path, value: v.String()})
		}
	case reflect.Struct:
		// The keys the decoder knows, promoted ones included, so a secret
		// in an embedded struct is named by the path the file uses.
		for _, f := range fieldsOf(v.Type()).list {
			collectSecrets(v.FieldByIndex(f.index), joinPath(path, f.name), secret || f.sf.Tag.Get("config") == "secret", out)
		}
	case reflect.Map:
		keys := v.MapKeys()
		for _, k := range keys {
			collectSecrets(v.MapIndex(k), fmt.Sprintf("%s.%v", path, k), secret, out)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			collectSecrets(v.Index(i), fmt.Sprintf("%s[%d]", path, i), secret, out)
		}
	}
}
