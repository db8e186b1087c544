package config

import (
	"errors"
	"strings"
	"testing"
)

// parserJargon is wording of the YAML parser's own messages that a user
// should never have to decode (issue 26, finding 9).
var parserJargon = []string{
	"invalid YAML", "pre-defined", "non-map", "not allowed in this context",
	"must be specified", "could not find", "cannot start any token", "already defined",
}

// finding9SyntaxCases are the YAML mistakes a new user makes, each with
// where it is and words its message must have (issue 26, finding 9). The
// parser's fuzz target starts from them too.
var finding9SyntaxCases = []struct {
	name      string
	src       string
	line, col int
	words     []string
}{
	{
		name: "duplicate key",
		src:  "gateway:\n  bind: loopback\n  port: 18789\n  auth:\n    mode: token\n  port: 18790\n",
		line: 6, col: 3,
		words: []string{`the key "port" appears twice in "gateway"`, "first on line 3", "keep one"},
	},
	{
		name: "duplicate section",
		src:  "gateway:\n  port: 1\nmodels:\n  providers: {}\ngateway:\n  bind: lan\n",
		line: 5, col: 1,
		words: []string{`the key "gateway" appears twice at the top level`, "first on line 1", "move the keys"},
	},
	{
		name: "duplicate key in a list item",
		src:  "x-accounts:\n  - name: a\n    name: b\n",
		line: 3, col: 5,
		words: []string{`the key "name" appears twice in "x-accounts[0]"`, "first on line 2"},
	},
	{
		name: "duplicate merge key",
		src:  "x-a: &a {port: 1}\nx-b: &b {bind: lan}\ngateway:\n  <<: *a\n  <<: *b\n",
		line: 5, col: 3,
		words: []string{`"<<" appears twice in "gateway"`, "<<: [*a, *b]"},
	},
	{
		name: "tab indentation",
		src:  "gateway:\n  bind: loopback\n\tport: 18789\n",
		line: 3, col: 1,
		words: []string{"indented with a tab", "spaces"},
	},
	{
		name: "tab after spaces",
		src:  "gateway:\n  bind: loopback\n  \tport: 18789\n",
		line: 3, col: 3,
		words: []string{"indented with a tab", "spaces"},
	},
	{
		name: "nested key indented under a value",
		src:  "gateway:\n  bind: loopback\n  auth:\n    mode: token\n     token: abc\n  port: 18789\n",
		line: 5, col: 6,
		words: []string{`"token" is indented more than "mode" on line 4`, "already has a value", `indent it like "mode" (4 spaces)`},
	},
	{
		name: "key indented under a quoted value",
		src:  "gateway:\n  bind: \"loopback\"\n    port: 18789\n",
		line: 3, col: 5,
		words: []string{`"port" is indented more than "bind" on line 2`, "already has a value"},
	},
	{
		name: "key indented under a value with a comment",
		src:  "gateway:\n  port: 1 # the port\n    bind: lan\n",
		line: 3, col: 5,
		words: []string{`"bind" is indented more than "port" on line 2`, "already has a value"},
	},
	{
		name: "key indented under a flow value",
		src:  "gateway:\n  auth: {mode: token}\n    token: x\n",
		line: 3, col: 5,
		words: []string{`"token" is indented more than "auth" on line 2`, "already has a value"},
	},
	{
		name: "key indented less than its siblings",
		src:  "gateway:\n  bind: loopback\n port: 18789\nmodels:\n  providers: {}\n",
		line: 3, col: 2,
		words: []string{`"port" is indented 1 space`, `2 spaces to put it beside "bind" (line 2)`, `0 to put it beside "gateway" (line 1)`},
	},
	{
		name: "key between two levels",
		src:  "models:\n  providers:\n    echo:\n      api: echo\n     baseUrl: x\n",
		line: 5, col: 6,
		words: []string{`"baseUrl" is indented 5 spaces`, `6 spaces to put it beside "api" (line 4)`, `4 to put it beside "echo" (line 3)`},
	},
	{
		name: "list item between two levels",
		src:  "gateway:\n  trustedProxies:\n    - 127.0.0.1\n   - 10.0.0.1\n",
		line: 4, col: 4,
		words: []string{"the list item is indented 3 spaces", "4 spaces to put it beside the list item (line 3)", `2 to put it beside "trustedProxies" (line 2)`},
	},
	{
		name: "unclosed double quote",
		src:  "gateway:\n  auth:\n    token: \"abc\n  port: 18789\n",
		line: 3, col: 12,
		words: []string{`the quote (") that opens this value is never closed`, `add the closing "`},
	},
	{
		name: "unclosed single quote",
		src:  "gateway:\n  bind: 'loopback\n  port: 18789\n",
		line: 2, col: 9,
		words: []string{`the quote (') that opens this value is never closed`},
	},
	{
		name: "backslash in double quotes",
		src:  "agents:\n  defaults:\n    workspace: \"C:\\Users\\me\"\n",
		line: 3, col: 19,
		words: []string{"a backslash in double quotes starts an escape", "single quotes", "double each backslash"},
	},
	{
		name: "unknown escape",
		src:  "x-a: \"a\\qb\"\n",
		line: 1, col: 8,
		words: []string{"this backslash starts an escape YAML does not know", "single quotes"},
	},
	{
		name: "missing colon",
		src:  "gateway:\n  bind: loopback\n  port 18789\nmodels:\n  providers: {}\n",
		line: 3, col: 3,
		words: []string{`this line is not a "key: value" pair`, `if "port" is a key, write "port: " and then the value`},
	},
	{
		name: "missing space after colon",
		src:  "gateway:\n  bind: loopback\n  port:18789\n",
		line: 3, col: 3,
		words: []string{"needs a space after its colon", `write "port: " and then the value`},
	},
	{
		name: "stray word",
		src:  "gateway:\n  port: 18789\noops\nmodels:\n  providers: {}\n",
		line: 3, col: 1,
		words: []string{`this line is not a "key: value" pair`, "remove the line"},
	},
	{
		name: "list item among keys",
		src:  "gateway:\n  bind: loopback\n  - port: 18789\n",
		line: 3, col: 3,
		words: []string{`a list item ("- …") among the keys of "gateway"`, `remove the "-"`},
	},
	{
		name: "key after a list item",
		src:  "x-accounts:\n  - name: a\n  token: b\n",
		line: 3, col: 3,
		words: []string{`"token" is a key, but line 2 at the same indentation is a list item`, `indent it 2 more spaces, like "name"`},
	},
	{
		name: "second colon in a value",
		src:  "gateway:\n  auth:\n    token: abc: def\n",
		line: 3, col: 15,
		words: []string{`the value of "token" contains ": "`, `token: "…"`, `indented under "token"`},
	},
	{
		name: "unclosed flow list",
		src:  "gateway:\n  trustedProxies: [127.0.0.1, 10.0.0.1\n  port: 18789\n",
		line: 2, col: 19,
		words: []string{`the list opened with "[" here is never closed`, `add "]"`},
	},
	{
		name: "unclosed flow list at the end",
		src:  "gateway: [",
		line: 1, col: 10,
		words: []string{`the list opened with "[" here is never closed`},
	},
	{
		name: "unclosed flow mapping",
		src:  "gateway: {port: 1, bind: loopback\nmodels:\n  providers: {}\n",
		line: 1, col: 10,
		words: []string{`the mapping opened with "{" here is never closed`, `add "}"`},
	},
	{
		name: "missing comma in a flow list",
		src:  "gateway:\n  trustedProxies: [\"a\" \"b\"]\n",
		line: 2, col: 24,
		words: []string{`expected "," or "]" before this item`, "commas"},
	},
	{
		name: "stray closing bracket",
		src:  "gateway:\n  port: 1\n  ]\n",
		line: 3, col: 3,
		words: []string{`a "]" with no "[" before it`},
	},
	{
		name: "section without a colon",
		src:  "gateway\n  bind: loopback\n",
		line: 1, col: 1,
		words: []string{`"gateway" has no colon`, `"gateway:"`},
	},
	{
		name: "text after a closing double quote",
		src:  "gateway:\n  auth:\n    password: \"ab\"c\n",
		line: 3, col: 19,
		words: []string{"text after the closing quote", `(\")`},
	},
	{
		name: "quote inside single quotes",
		src:  "gateway:\n  auth:\n    password: 'it's'\n",
		line: 3, col: 19,
		words: []string{"text after the closing quote", "double it ('')"},
	},
	{
		name: "value starting with |",
		src:  "gateway:\n  auth:\n    password: |abc\n",
		line: 3, col: 15,
		words: []string{"a value starting with | begins a block of text", `password: "|…"`},
	},
	{
		name: "value starting with &",
		src:  "gateway:\n  auth:\n    password: &abc\n",
		line: 3, col: 15,
		words: []string{"a value starting with & names an anchor", `password: "&…"`},
	},
	{
		name: "colon without a key",
		src:  "stateDir: x\n: y\n",
		line: 2, col: 1,
		words: []string{`a ":" with no key before it`},
	},
	{
		name: "second colon after a number",
		src:  "gateway:\n  port: 18789: 2\n",
		line: 2, col: 14,
		words: []string{`port: "…"`},
	},
	{
		name: "value starting with @",
		src:  "channels:\n  discord:\n    token: @abc\n",
		line: 3, col: 12,
		words: []string{"cannot start with @", `token: "@…"`},
	},
}

// TestFinding9YAMLSyntaxErrorLine writes the YAML mistakes a new user
// makes and checks that each is reported once, at the line (and column)
// of the mistake, in a sentence that says what is wrong and what to write
// instead, with none of the parser's jargon.
func TestFinding9YAMLSyntaxErrorLine(t *testing.T) {
	for _, tt := range finding9SyntaxCases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tt.src), env())
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("want one problem, got %v", err)
			}
			e := es[0]
			if e.Line != tt.line || e.Column != tt.col {
				t.Errorf("at %d:%d, want %d:%d: %v", e.Line, e.Column, tt.line, tt.col, e)
			}
			for _, w := range tt.words {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q does not say %q", e.Message, w)
				}
			}
			for _, j := range parserJargon {
				if strings.Contains(e.Message, j) {
					t.Errorf("message %q has the parser's words %q", e.Message, j)
				}
			}
			if strings.Contains(e.Error(), "\n") {
				t.Errorf("message spans lines: %q", e.Error())
			}
		})
	}
}

// TestFinding9EveryDuplicateKeyReported checks that a file with several
// duplicate keys has each reported in one pass, in file order.
func TestFinding9EveryDuplicateKeyReported(t *testing.T) {
	src := "gateway:\n  port: 1\n  port: 2\n  port: 3\nmodels:\n  providers:\n    e: {api: echo, api: echo}\n"
	es := parseErrors(t, src, env())
	want := []struct {
		line  int
		words string
	}{
		{3, `the key "port" appears twice in "gateway" (first on line 2)`},
		{4, `the key "port" appears twice in "gateway" (first on line 2)`},
		{7, `the key "api" appears twice in "models.providers.e" (first on line 7)`},
	}
	if len(es) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(es), len(want), es)
	}
	for i, w := range want {
		if es[i].Line != w.line || !strings.Contains(es[i].Message, w.words) {
			t.Errorf("problem %d = %v, want line %d saying %q", i, es[i], w.line, w.words)
		}
	}
}

// TestFinding9MultiLineValuePosition checks that a value the parser joined
// across lines (a list item indented under a key that has a value) is
// reported where the value starts, not where the parser stopped reading it.
func TestFinding9MultiLineValuePosition(t *testing.T) {
	src := "channels:\n  telegram:\n    allowFrom:\n      - 123\n    dmPolicy: open\n      - 456\n"
	es := parseErrors(t, src, env())
	for _, e := range es {
		if e.Path == "channels.telegram.dmPolicy" {
			if e.Line != 5 || e.Column != 15 || !strings.Contains(e.Message, `"open - 456"`) {
				t.Errorf("got %v, want it at 5:15 naming the joined value", e)
			}
			return
		}
	}
	t.Fatalf("no problem reported for dmPolicy: %v", es)
}

// TestFinding9SyntaxErrorsQuoteNoValue checks that the messages for a file
// that is not valid YAML never quote a value from it: such a file's secrets
// cannot be located to be scrubbed, and the gateway shows its problems to
// clients that see the file only redacted.
func TestFinding9SyntaxErrorsQuoteNoValue(t *testing.T) {
	const secret = "sk-ant-api03-Zq8XfK2mWc9LpR4tYv7NbH3sDg6JkE1a"
	srcs := []string{
		"models:\n  providers:\n    a:\n      api: anthropic-messages\n" + secret + "\n",
		"models:\n  providers:\n    a:\n      apiKey: " + secret + "\n" + "      " + secret + " x\n",
		"models:\n  providers:\n    a:\n      api: echo\n      apiKey:" + secret + "\n",
		"models:\n  providers:\n    a:\n      apiKey: ab: " + secret + "\n",
		"models:\n  providers:\n    a:\n      apiKey: @" + secret + "\n",
		"models:\n  providers:\n    a:\n      apiKey: &" + secret + "\n",
		"models:\n  providers:\n    a:\n      apiKey: |" + secret + "\n",
		"models:\n  providers:\n    a:\n      apiKey: \"" + secret + "\\q\"\n",
		"models:\n  providers:\n    a:\n      apiKey: \"" + secret + "\"x\n",
		"x-keys: [\"" + secret + "\" \"" + secret + "\"]\n",
		"x-keys:\n  - a\n " + secret + "\n",
		"x-keys:\n    - a\n   - " + secret + "\n",
		secret + "\n  a: 1\n",
	}
	for i, src := range srcs {
		_, err := Parse("config.yaml", []byte(src), env())
		if err == nil {
			t.Errorf("case %d parsed", i)
			continue
		}
		if strings.Contains(err.Error(), secret[8:20]) {
			t.Errorf("case %d quotes the value: %v", i, err)
		}
	}
}
