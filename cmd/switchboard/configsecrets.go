package main

import (
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// What a configuration write over the gateway must prove about secrets.
//
// A client allowed to write the configuration never reads a secret back
// (config.get redacts them), but it could still obtain one by pointing the
// URL the secret is sent to at a server of its own: a bot token goes with
// every Bot API call to apiUrl, a model key with every request to baseUrl.
// Such a URL is tagged secretURL, naming the keys of the secrets beside it
// in the same struct that are sent there:
//
//	APIURL string `json:"apiUrl,omitempty" secretURL:"botToken"`
//
// A write that leaves a secret going to a URL other than the platform's own
// endpoint (the URL set), where it did not go before (the URL or the secret
// changed), must carry that secret in the request itself, written out: the
// placeholder config.Redacted would keep the current secret, and a ${VAR}
// reference would send the environment's, neither of which the client has
// shown it knows. TestEveryURLBesideASecretIsTagged keeps the tags complete.

// secretURLTag is the struct tag naming the secrets sent to a URL field.
const secretURLTag = "secretURL"

// secretURL is one URL of a configuration that secrets are sent to.
type secretURL struct {
	keys    []string // its key path: channels, <name>, apiUrl
	url     string   // its value, ${VAR} expanded; empty means the default endpoint
	secrets []secretValue
}

// secretValue is one secret sent to a secretURL.
type secretValue struct {
	keys  []string
	value string // ${VAR} expanded
}

func dotted(keys []string) string { return strings.Join(keys, ".") }

// secretURLs lists the URLs of cfg that secrets are sent to, in key order;
// none for a nil cfg.
func secretURLs(cfg *config.Config) []secretURL {
	if cfg == nil {
		return nil
	}
	var out []secretURL
	collectSecretURLs(reflect.ValueOf(cfg).Elem(), nil, &out)
	return out
}

// collectSecretURLs walks v, the value at keys, as the decoder maps keys to
// fields: a json tag's name, or the field's own; an untagged embedded
// struct's keys sit beside the outer struct's.
func collectSecretURLs(v reflect.Value, keys []string, out *[]secretURL) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			collectSecretURLs(v.Elem(), keys, out)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		names := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			names = append(names, k.String())
		}
		sort.Strings(names)
		for _, name := range names {
			collectSecretURLs(v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key())), append(slices.Clip(keys), name), out)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := jsonKey(f)
			if !ok {
				continue
			}
			if name == "" {
				collectSecretURLs(v.Field(i), keys, out)
				continue
			}
			fieldKeys := append(slices.Clip(keys), name)
			list, tagged := f.Tag.Lookup(secretURLTag)
			if !tagged || f.Type.Kind() != reflect.String {
				collectSecretURLs(v.Field(i), fieldKeys, out)
				continue
			}
			u := secretURL{keys: fieldKeys, url: v.Field(i).String()}
			for _, secret := range strings.Split(list, ",") {
				if sf, ok := fieldByKey(t, secret); ok {
					u.secrets = append(u.secrets, secretValue{keys: append(slices.Clip(keys), secret), value: v.FieldByIndex(sf.Index).String()})
				}
			}
			*out = append(*out, u)
		}
	}
}

// jsonKey is the key a struct field is decoded from, as package config
// reads it: the json tag's name, else the field's own; "" with ok for an
// embedded struct whose keys sit beside the outer struct's; not ok for a
// field no key reaches.
func jsonKey(f reflect.StructField) (string, bool) {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch {
	case name == "-":
		return "", false
	case name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
		return "", true
	case !f.IsExported():
		return "", false
	case name == "":
		return f.Name, true
	}
	return name, true
}

// fieldByKey finds the field of struct type t decoded from key, among its
// own fields.
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if name, ok := jsonKey(t.Field(i)); ok && name == key {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// checkSecretURLs refuses a write from old to new (either may be nil: no
// valid file) that sends a secret to a URL it did not go to before, unless
// request, the client's text (a whole file for config.set, a merge patch
// for config.patch), writes that secret out.
func checkSecretURLs(old, new *config.Config, request []byte) error {
	before := map[string]secretURL{}
	for _, u := range secretURLs(old) {
		before[dotted(u.keys)] = u
	}
	var doc any
	parsed := false
	var issues []configIssue
	for _, u := range secretURLs(new) {
		if u.url == "" {
			continue // the platform's own endpoint
		}
		prev := before[dotted(u.keys)]
		prevValues := map[string]string{}
		for _, s := range prev.secrets {
			prevValues[dotted(s.keys)] = s.value
		}
		why := "is sent to " + dotted(u.keys) + ", which this request changes"
		if prev.url == u.url {
			why = "changes while it is sent to " + dotted(u.keys) + ", not the default endpoint"
		}
		changed := prev.url != u.url
		for _, s := range u.secrets {
			changed = changed || prevValues[dotted(s.keys)] != s.value
		}
		if !changed {
			continue
		}
		if !parsed {
			// Read again only when needed: it parsed once already, as
			// part of the new file.
			_ = yaml.Unmarshal(request, &doc)
			parsed = true
		}
		for _, s := range u.secrets {
			if s.value == "" || writtenOut(doc, s.keys, s.value) {
				continue
			}
			issues = append(issues, configIssue{
				Path: dotted(s.keys),
				Message: fmt.Sprintf("%s: write the secret's value in this request (not %q, not a ${VAR} reference), "+
					"so that it cannot go somewhere new unseen; or edit the configuration file on the gateway's machine", why, config.Redacted),
			})
		}
	}
	if len(issues) == 0 {
		return nil
	}
	return protocol.InvalidRequest("a secret must be entered again: "+joinIssues(issues),
		map[string]any{"code": "CONFIG_SECRET_REQUIRED", "issues": issues})
}

// writtenOut reports whether doc, a request decoded from YAML or JSON,
// holds want at keys as a plain value: not the placeholder of a redacted
// secret, and with no ${VAR} reference (nor an escaped "$${").
func writtenOut(doc any, keys []string, want string) bool {
	v := doc
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case nil, map[string]any, []any:
		return false
	default:
		s = fmt.Sprint(x)
	}
	return s == want && strings.TrimSpace(s) != config.Redacted && !strings.Contains(s, "${")
}

// noEnvironment finds no variable: with it, config.SecretValues returns
// only the secrets written in the text itself.
func noEnvironment(string) (string, bool) { return "", false }

// holdsInlineSecret reports whether the configuration text data has a
// secret written in it, rather than only referenced from the environment
// (${VAR}); a ${VAR:-default} counts, its default being written in it.
func holdsInlineSecret(data []byte) bool {
	return len(config.SecretValues(data, noEnvironment)) > 0
}

// privateMode is the mode a file holding an inline secret is written with:
// mode without any permission for the group and others.
func privateMode(mode fs.FileMode) fs.FileMode { return mode &^ 0o077 }
