package config

import (
	"fmt"
	"slices"
	"strings"
)

// LookupEnv finds an environment variable, like os.LookupEnv. Tests pass
// their own so they never depend on the machine's environment.
type LookupEnv func(name string) (string, bool)

// expandEnv replaces ${NAME} and ${NAME:-default} in s. "$${" is a literal
// "${". As in the shell, the default also applies when NAME is set but empty.
// It reports whether s referenced any variable, so numeric and boolean keys
// can accept text that came from the environment.
func expandEnv(s string, lookup LookupEnv) (out string, referenced bool, err error) {
	if !strings.Contains(s, "${") {
		return s, false, nil
	}
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", true, fmt.Errorf("unterminated %q: write ${NAME} or ${NAME:-default}", s[i:])
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validEnvName(name) {
			return "", true, fmt.Errorf("invalid environment reference ${%s}: a name is letters, digits and _ and does not start with a digit", ref)
		}
		referenced = true
		val, ok := lookup(name)
		switch {
		case ok && val != "":
			b.WriteString(val)
		case hasDef:
			b.WriteString(def)
		case ok:
			// Set but empty, no default: an empty value is what was asked for.
		default:
			missing = append(missing, name)
		}
		i += end + 1
	}
	if len(missing) == 1 {
		return "", true, fmt.Errorf("environment variable %s is not set; export it or write ${%s:-default}", missing[0], missing[0])
	}
	if len(missing) > 1 {
		return "", true, fmt.Errorf("environment variables %s are not set; export them or give defaults with ${NAME:-default}", strings.Join(missing, ", "))
	}
	return b.String(), referenced, nil
}

func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// envOptions let a caller judge unset variables at some keys itself,
// instead of the decoder refusing them: a model provider's apiKey matters
// only to a process that calls that model (see Use).
type envOptions struct {
	// deferred reports a key path whose unset variables read as empty
	// rather than failing; nil defers none.
	deferred func(path string) bool
	// seen receives what each deferred key that references the
	// environment referenced; it must not be nil when deferred is not.
	seen map[string]envValue
}

// envValue is what a value written at a deferred key took from the
// environment.
type envValue struct {
	// names are the variables it references, in the order written.
	names []string
	// err is the error the value would have failed with (a variable unset
	// and no default); nil if none.
	err error
	// malformed reports a reference the decoder refused as written: that
	// problem is reported already, and the key has no value to check.
	malformed bool
}

// envNames lists the variables s references, in order, each once.
func envNames(s string) []string {
	var names []string
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return names
			}
			name, _, _ := strings.Cut(s[i+2:i+end], ":-")
			if validEnvName(name) && !slices.Contains(names, name) {
				names = append(names, name)
			}
			i += end + 1
		default:
			i++
		}
	}
	return names
}

// unsetAsEmpty is lookup with every unset variable set to "".
func unsetAsEmpty(lookup LookupEnv) LookupEnv {
	return func(name string) (string, bool) {
		v, _ := lookup(name)
		return v, true
	}
}
