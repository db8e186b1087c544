package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// EmbedShared stands for the struct every platform section will embed: keys
// each platform has, among them an enumeration, a bound, a secret and an
// object, and a Validate method.
type EmbedShared struct {
	// DMPolicy is an enumeration.
	DMPolicy bridges.DMPolicy `json:"dmPolicy,omitempty"`
	// AllowFrom is a list.
	AllowFrom []string `json:"allowFrom,omitempty"`
	// TextChunkLimit is bounded.
	TextChunkLimit int `json:"textChunkLimit,omitempty" min:"0" max:"4096"`
	// Token is a secret.
	Token string `json:"token,omitempty" config:"secret"`
	// Nested is an object under a promoted key.
	Nested EmbedNested `json:"nested"`

	calls *int // counts Validate calls; not configuration
}

// Validate refuses an open policy without "*" in allowFrom, and a nested
// depth of 13, so its paths, relative to this struct, can be checked.
func (s EmbedShared) Validate() error {
	if s.calls != nil {
		*s.calls++
	}
	var errs []error
	if s.DMPolicy == bridges.DMOpen && !slices.Contains(s.AllowFrom, "*") {
		errs = append(errs, core.FieldErrorf("dmPolicy", `"open" needs "*" in allowFrom`))
	}
	if s.Nested.Depth == 13 {
		errs = append(errs, core.FieldErrorf("nested.depth", "13 is unlucky"))
	}
	return errors.Join(errs...)
}

// EmbedNested is the value of a promoted key that is an object.
type EmbedNested struct {
	// Depth is any number.
	Depth int `json:"depth,omitempty"`
}

// EmbedPlain is embedded under a json name, so it is an ordinary key.
type EmbedPlain struct {
	// Label is a string.
	Label string `json:"label,omitempty"`
}

// embedChat embeds the shared keys beside its own, as a platform will.
type embedChat struct {
	EmbedShared
	Enabled bool `json:"enabled,omitempty"`
}

// embedShadow declares a key the embedded struct also has: its own wins.
type embedShadow struct {
	EmbedShared
	DMPolicy int `json:"dmPolicy,omitempty" max:"3"`
}

// embedMiddle is an unexported type with exported fields, itself embedding.
type embedMiddle struct {
	EmbedShared
	Mode string `json:"mode,omitempty"`
}

// embedDeep reaches the shared keys two embeddings down.
type embedDeep struct {
	embedMiddle
	Extra string `json:"extra,omitempty"`
}

// embedNamed embeds a struct under a json name.
type embedNamed struct {
	EmbedPlain `json:"plain"`
	Other      string `json:"other,omitempty"`
}

// embedOwn declares its own Validate, which calls the embedded one.
type embedOwn struct {
	EmbedShared
	Name string `json:"name,omitempty"`
}

// Validate requires a name, then checks the shared keys.
func (o embedOwn) Validate() error {
	if o.Name == "" {
		return errors.Join(core.FieldErrorf("name", "required"), o.EmbedShared.Validate())
	}
	return o.EmbedShared.Validate()
}

// embedFile is the root of the test files.
type embedFile struct {
	Chat   embedChat   `json:"chat"`
	Shadow embedShadow `json:"shadow"`
	Deep   embedDeep   `json:"deep"`
	Named  embedNamed  `json:"named"`
	Own    embedOwn    `json:"own"`
}

// embedCalls counts the Validate calls of each section's EmbedShared.
type embedCalls struct{ chat, shadow, deep, own int }

// newEmbedFile returns the defaults, counting Validate calls into calls.
func newEmbedFile(calls *embedCalls) *embedFile {
	f := &embedFile{}
	f.Chat.calls = &calls.chat
	f.Shadow.calls = &calls.shadow
	f.Deep.calls = &calls.deep
	f.Own.calls = &calls.own
	f.Own.Name = "default"
	return f
}

// parseEmbed decodes and checks src onto the test types, as Parse does.
func parseEmbed(src string) (*embedFile, embedCalls, Errors) {
	var calls embedCalls
	f := newEmbedFile(&calls)
	errs := decodeAndCheck("test.yaml", []byte(src), env("TOKEN", "env-token-value-42"), f)
	return f, calls, errs
}

func TestEmbeddedKeysDecodeFlat(t *testing.T) {
	f, _, errs := parseEmbed(`chat:
  enabled: true
  dmPolicy: allowlist
  allowFrom: ["42"]
  textChunkLimit: 100
  token: ${TOKEN}
  nested: {depth: 2}
shadow:
  dmPolicy: 2
deep:
  mode: fast
  extra: more
  dmPolicy: disabled
  textChunkLimit: 7
named:
  plain: {label: L}
  other: O
`)
	if errs != nil {
		t.Fatalf("errors: %v", errs)
	}
	want := embedChat{Enabled: true, EmbedShared: EmbedShared{
		DMPolicy: bridges.DMAllowlist, AllowFrom: []string{"42"}, TextChunkLimit: 100,
		Token: "env-token-value-42", Nested: EmbedNested{Depth: 2}, calls: f.Chat.calls,
	}}
	if !reflect.DeepEqual(f.Chat, want) {
		t.Errorf("chat = %+v\nwant %+v", f.Chat, want)
	}
	if f.Shadow.DMPolicy != 2 || f.Shadow.EmbedShared.DMPolicy != "" {
		t.Errorf("shadow: outer dmPolicy = %d, embedded = %q; the outer field must take the key", f.Shadow.DMPolicy, f.Shadow.EmbedShared.DMPolicy)
	}
	if f.Deep.Mode != "fast" || f.Deep.Extra != "more" || f.Deep.DMPolicy != bridges.DMDisabled || f.Deep.TextChunkLimit != 7 {
		t.Errorf("deep = %+v", f.Deep)
	}
	if f.Named.Label != "L" || f.Named.Other != "O" {
		t.Errorf("named = %+v", f.Named)
	}
}

func TestEmbeddedKeyProblemsAreFlatAndPositioned(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"typo in a promoted key", "chat:\n  enabled: true\n  dmPolicyy: open\n",
			[]string{`test.yaml:3:3: chat.dmPolicyy: unknown key "dmPolicyy" (did you mean "dmPolicy"?)`}},
		{"promoted keys are valid keys", "chat:\n  zzzzzzzz: 1\n",
			[]string{`test.yaml:2:3: chat.zzzzzzzz: unknown key "zzzzzzzz"; valid keys here: allowFrom, dmPolicy, enabled, nested, textChunkLimit, token`}},
		{"the embedded type is no key", "chat:\n  EmbedShared: {dmPolicy: open}\n",
			[]string{`test.yaml:2:3: chat.EmbedShared: unknown key "EmbedShared"; valid keys here: allowFrom, dmPolicy, enabled, nested, textChunkLimit, token`}},
		{"a key embedded under a name is only that name", "named:\n  label: L\n",
			[]string{`test.yaml:2:3: named.label: unknown key "label"; valid keys here: other, plain`}},
		{"wrong type in a promoted key", "chat:\n  enabled: true\n  textChunkLimit: lots\n",
			[]string{`test.yaml:3:19: chat.textChunkLimit: expected a whole number, got "lots"`}},
		{"enumeration", "deep:\n  dmPolicy: sometimes\n",
			[]string{`test.yaml:2:13: deep.dmPolicy: must be one of pairing, allowlist, open, disabled (got "sometimes")`}},
		{"bound on a promoted key", "chat:\n  textChunkLimit: 5000\ndeep:\n  textChunkLimit: -1\n",
			[]string{
				`test.yaml:2:19: chat.textChunkLimit: must be at most 4096 (got 5000)`,
				`test.yaml:4:19: deep.textChunkLimit: must be at least 0 (got -1)`,
			}},
		{"bound of the shadowing field", "shadow:\n  dmPolicy: 5\n",
			[]string{`test.yaml:2:13: shadow.dmPolicy: must be at most 3 (got 5)`}},
		{"promoted Validate, paths against the outer struct", "chat:\n  enabled: true\n  dmPolicy: open\n  nested:\n    depth: 13\n",
			[]string{
				`test.yaml:3:13: chat.dmPolicy: "open" needs "*" in allowFrom`,
				`test.yaml:5:12: chat.nested.depth: 13 is unlucky`,
			}},
		{"Validate promoted two levels", "deep:\n  mode: fast\n  dmPolicy: open\n",
			[]string{`test.yaml:3:13: deep.dmPolicy: "open" needs "*" in allowFrom`}},
		{"outer Validate calls the embedded one", "own:\n  name: ''\n  dmPolicy: open\n",
			[]string{
				`test.yaml:2:9: own.name: required`,
				`test.yaml:3:13: own.dmPolicy: "open" needs "*" in allowFrom`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, errs := parseEmbed(tt.src)
			if got := errorLines(errs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestEmbeddedKeyPositionsHaveNoTypeSegment(t *testing.T) {
	var calls embedCalls
	positions, errs := decodeYAML("test.yaml", []byte("deep:\n  mode: fast\n  allowFrom: [a]\n  nested: {depth: 1}\n"), env(), envOptions{}, newEmbedFile(&calls))
	if errs != nil {
		t.Fatal(errs)
	}
	want := map[string]pos{
		"deep":              {1, 1},
		"deep.mode":         {2, 9},
		"deep.allowFrom":    {3, 3},
		"deep.allowFrom[0]": {3, 15},
		"deep.nested":       {4, 3},
		"deep.nested.depth": {4, 19},
	}
	if !reflect.DeepEqual(positions, want) {
		t.Errorf("positions = %v\nwant %v", positions, want)
	}
}

// Each struct value's Validate runs once: the promoted one as the outer
// value's, never again for the embedded struct, and an outer type's own
// Validate instead of the embedded one, which it calls.
func TestEmbeddedValidateRunsOnce(t *testing.T) {
	_, calls, errs := parseEmbed("chat: {enabled: true}\nshadow: {dmPolicy: 1}\ndeep: {mode: m}\nown: {name: n}\n")
	if errs != nil {
		t.Fatal(errs)
	}
	if want := (embedCalls{chat: 1, shadow: 1, deep: 1, own: 1}); calls != want {
		t.Errorf("Validate calls = %+v, want %+v", calls, want)
	}
}

func TestEmbeddedSecrets(t *testing.T) {
	const src = "chat:\n  token: literal-chat-token-1\ndeep:\n  token: ${TOKEN}\nshadow:\n  token: literal-chat-token-1\n"
	found, errs := secretScalarsOf("test.yaml", []byte(src), reflect.TypeFor[embedFile]())
	if errs != nil {
		t.Fatal(errs)
	}
	var paths []string
	for _, s := range found {
		paths = append(paths, s.path+"="+s.value)
	}
	if want := []string{"chat.token=literal-chat-token-1", "deep.token=${TOKEN}", "shadow.token=literal-chat-token-1"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("source secrets = %q, want %q", paths, want)
	}

	f, _, perrs := parseEmbed(src)
	if perrs != nil {
		t.Fatal(perrs)
	}
	var fields []secretField
	collectSecrets(reflect.ValueOf(f), "", false, &fields)
	var collected []string
	for _, s := range fields {
		collected = append(collected, s.path+"="+s.value)
	}
	if want := []string{"chat.token=literal-chat-token-1", "shadow.token=literal-chat-token-1", "deep.token=env-token-value-42", "own.token="}; !reflect.DeepEqual(collected, want) {
		t.Errorf("collected secrets = %q, want %q", collected, want)
	}

	b, err := redactedJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"literal-chat-token-1", "env-token-value-42"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%q in %s", secret, b)
		}
	}
	var tree map[string]map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		t.Fatal(err)
	}
	if tree["chat"]["token"] != Redacted || tree["deep"]["token"] != Redacted || tree["shadow"]["token"] != Redacted {
		t.Errorf("redacted JSON: %s", b)
	}
	if _, ok := tree["chat"]["EmbedShared"]; ok {
		t.Errorf("redacted JSON has the embedded type as a key: %s", b)
	}
}

func TestEmbeddedSchemaIsFlat(t *testing.T) {
	pkg := typeKey(reflect.TypeFor[EmbedShared]())
	docs := map[string]string{
		pkg + ".TextChunkLimit": "The longest message.",
		pkg + ".DMPolicy":       "Who may talk.",
		typeKey(reflect.TypeFor[embedChat]()) + ".Enabled": "Starts it.",
	}
	var calls embedCalls
	s := schemaOf(reflect.TypeFor[embedFile](), reflect.ValueOf(newEmbedFile(&calls)).Elem(), docs)
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(schemaOf(reflect.TypeFor[embedFile](), reflect.ValueOf(newEmbedFile(&calls)).Elem(), docs))
	if !bytes.Equal(raw, again) {
		t.Errorf("the schema differs between two runs")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	keys := func(path ...string) []string {
		props, _ := dig(t, m, path...)["properties"].(map[string]any)
		var out []string
		for k := range props {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	shared := []string{"allowFrom", "dmPolicy", "nested", "textChunkLimit", "token"}
	for _, tt := range []struct {
		section string
		want    []string
	}{
		{"chat", append([]string{"enabled"}, shared...)},
		{"shadow", shared},
		{"deep", append([]string{"extra", "mode"}, shared...)},
		{"named", []string{"other", "plain"}},
	} {
		if got := keys(tt.section); !reflect.DeepEqual(got, slices.Sorted(slices.Values(tt.want))) {
			t.Errorf("%s properties = %q, want %q", tt.section, got, tt.want)
		}
		if ap := dig(t, m, tt.section)["additionalProperties"]; ap != false {
			t.Errorf("%s additionalProperties = %v, want false", tt.section, ap)
		}
	}
	limit := dig(t, m, "deep", "textChunkLimit")
	if limit["description"] != "The longest message." || limit["maximum"] != float64(4096) || limit["minimum"] != float64(0) {
		t.Errorf("deep.textChunkLimit = %v, want the embedded field's doc and bounds", limit)
	}
	policy := dig(t, m, "chat", "dmPolicy")
	if policy["description"] != "Who may talk." || !reflect.DeepEqual(policy["enum"], []any{"pairing", "allowlist", "open", "disabled"}) {
		t.Errorf("chat.dmPolicy = %v, want the embedded field's doc and enum", policy)
	}
	if d := dig(t, m, "chat", "enabled")["description"]; d != "Starts it." {
		t.Errorf("chat.enabled description = %v", d)
	}
	if shadow := dig(t, m, "shadow", "dmPolicy"); shadow["type"] != "integer" || shadow["maximum"] != float64(3) || shadow["description"] != nil {
		t.Errorf("shadow.dmPolicy = %v, want the outer field's", shadow)
	}
	if tok := dig(t, m, "chat", "token"); tok["writeOnly"] != true {
		t.Errorf("chat.token = %v, want writeOnly", tok)
	}
	if d := dig(t, m, "chat", "nested", "depth"); d["type"] != "integer" {
		t.Errorf("chat.nested.depth = %v", d)
	}

	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("embed.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("embed.json")
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]any{"chat": map[string]any{"enabled": true, "dmPolicy": "open", "allowFrom": []any{"*"}}}
	if err := sch.Validate(jsonRoundTrip(t, good)); err != nil {
		t.Errorf("schema refused flat promoted keys: %v", err)
	}
	bad := map[string]any{"chat": map[string]any{"EmbedShared": map[string]any{"dmPolicy": "open"}}}
	if err := sch.Validate(jsonRoundTrip(t, bad)); err == nil {
		t.Errorf("schema accepted the embedded type's name as a key")
	}
}

// refusedPointer embeds a pointer, whose nil value has no keys.
type refusedPointer struct {
	*EmbedPlain
}

// refusedCollision embeds two structs with Validate at one depth, so Go
// promotes neither.
type refusedCollision struct {
	EmbedShared
	embedOtherValidate
}

// embedOtherValidate is a second embedded struct with a Validate method.
type embedOtherValidate struct {
	Other string `json:"other,omitempty"`
}

// Validate accepts anything; it exists to collide with EmbedShared's.
func (embedOtherValidate) Validate() error { return nil }

// refusedNamedValidate embeds a struct with Validate under a json name, so
// the method would run for the key and, promoted, for the outer struct.
type refusedNamedValidate struct {
	EmbedShared `json:"shared"`
}

// keptCollision resolves the collision with its own Validate.
type keptCollision struct {
	EmbedShared
	embedOtherValidate
}

// Validate calls both embedded methods, which Go would not promote.
func (k keptCollision) Validate() error {
	return errors.Join(k.EmbedShared.Validate(), k.embedOtherValidate.Validate())
}

// ambiguousKeys has the key "Other" twice at one depth, untagged both
// times, and "Label" once tagged and once not: encoding/json drops the
// first and keeps the tagged one of the second.
type ambiguousKeys struct {
	embedOtherA
	embedOtherB
	embedLabelTagged
	embedLabelUntagged
}

// embedOtherA has the key "Other".
type embedOtherA struct{ Other string }

// embedOtherB has the key "Other" too.
type embedOtherB struct{ Other string }

// embedLabelTagged names its field "Label" by a tag.
type embedLabelTagged struct {
	Caption string `json:"Label"`
}

// embedLabelUntagged has "Label" by its Go name.
type embedLabelUntagged struct{ Label string }

func TestEmbeddingRules(t *testing.T) {
	refused := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[refusedPointer](), "embed config.EmbedPlain by value"},
		{reflect.TypeFor[refusedCollision](), "declare Validate on config.refusedCollision"},
		{reflect.TypeFor[refusedNamedValidate](), "it would run twice; make it a named field"},
	}
	for _, tt := range refused {
		t.Run(tt.typ.Name(), func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tt.want) {
					t.Errorf("panic %q, want one containing %q", msg, tt.want)
				}
			}()
			fieldsOf(tt.typ)
		})
	}
	if got := fieldsOf(reflect.TypeFor[keptCollision]()).names; !reflect.DeepEqual(got, []string{"allowFrom", "dmPolicy", "nested", "other", "textChunkLimit", "token"}) {
		t.Errorf("keptCollision keys = %q", got)
	}
	// As encoding/json: two "Other" at one depth cancel out; of two
	// "Label", the tagged one wins.
	got := fieldsOf(reflect.TypeFor[ambiguousKeys]())
	if !reflect.DeepEqual(got.names, []string{"Label"}) || got.byName["Label"].owner != reflect.TypeFor[embedLabelTagged]() {
		t.Errorf("ambiguousKeys keys = %q (%+v), want Label from embedLabelTagged", got.names, got.byName)
	}
	b, _ := json.Marshal(ambiguousKeys{embedOtherA{"a"}, embedOtherB{"b"}, embedLabelTagged{"c"}, embedLabelUntagged{"d"}})
	if string(b) != `{"Label":"c"}` {
		t.Errorf("encoding/json gives %s; fieldsOf must agree", b)
	}
}
