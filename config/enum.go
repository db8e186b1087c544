package config

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
)

// enumMessage says that got is not a value of the enumeration type t,
// whose accepted spellings are values. It leads with the value got was
// likely meant to be; it lists the canonical values and only counts the
// aliases some types also accept (queue modes have ten), which the JSON
// Schema lists.
func enumMessage(t reflect.Type, values []string, got string) string {
	canonical, aliases := splitAliases(t, values)
	list := strings.Join(canonical, ", ")
	if s := suggest(got, values); s != "" {
		if c, ok := aliases[s]; ok {
			s = c
		}
		return fmt.Sprintf("got %q; did you mean %q? (one of %s)", got, s, list)
	}
	msg := fmt.Sprintf("must be one of %s (got %q)", list, got)
	switch n := len(values) - len(canonical); {
	case n == 1:
		msg += "; 1 other spelling of these is accepted too (`switchboard config schema` lists it)"
	case n > 1:
		msg += fmt.Sprintf("; %d other spellings of these are accepted too (`switchboard config schema` lists them)", n)
	}
	return msg
}

// splitAliases separates an enumeration's canonical values from its
// aliases: an alias is a value that t's UnmarshalText stores as another
// value. It maps each alias to that value.
func splitAliases(t reflect.Type, values []string) (canonical []string, aliases map[string]string) {
	aliases = map[string]string{}
	for _, v := range values {
		p := reflect.New(t)
		tu, ok := p.Interface().(encoding.TextUnmarshaler)
		if t.Kind() != reflect.String || !ok || tu.UnmarshalText([]byte(v)) != nil || p.Elem().String() == v {
			canonical = append(canonical, v)
			continue
		}
		aliases[v] = p.Elem().String()
	}
	return canonical, aliases
}
