package telegramtest

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseHTMLAccepts(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		plain string
		want  []MessageEntity
	}{
		{"plain", "plain text", "plain text", nil},
		{"bold and strong", "<b>bold</b> and <strong>strong</strong>", "bold and strong",
			[]MessageEntity{{Type: "bold", Offset: 0, Length: 4}, {Type: "bold", Offset: 9, Length: 6}}},
		{"synonyms", "<i>1</i><em>2</em><u>3</u><ins>4</ins><s>5</s><strike>6</strike><del>7</del>", "1234567",
			[]MessageEntity{
				{Type: "italic", Offset: 0, Length: 1}, {Type: "italic", Offset: 1, Length: 1},
				{Type: "underline", Offset: 2, Length: 1}, {Type: "underline", Offset: 3, Length: 1},
				{Type: "strikethrough", Offset: 4, Length: 1}, {Type: "strikethrough", Offset: 5, Length: 1},
				{Type: "strikethrough", Offset: 6, Length: 1},
			}},
		{"spoilers", `<span class="tg-spoiler">x</span><tg-spoiler>y</tg-spoiler>`, "xy",
			[]MessageEntity{{Type: "spoiler", Offset: 0, Length: 1}, {Type: "spoiler", Offset: 1, Length: 1}}},
		{"link with entity in href", `<a href="https://example.com/?a=1&amp;b=2">link</a>`, "link",
			[]MessageEntity{{Type: "text_link", Offset: 0, Length: 4, URL: "https://example.com/?a=1&b=2"}}},
		{"single-quoted href", `<a href='https://example.com'>x</a>`, "x",
			[]MessageEntity{{Type: "text_link", Offset: 0, Length: 1, URL: "https://example.com"}}},
		{"user mention link", `<a href="tg://user?id=42">Ann</a>`, "Ann",
			[]MessageEntity{{Type: "text_mention", Offset: 0, Length: 3, User: &User{ID: 42}}}},
		{"code", "<code>x := 1</code>", "x := 1", []MessageEntity{{Type: "code", Offset: 0, Length: 6}}},
		{"pre", "<pre>line 1\nline 2</pre>", "line 1\nline 2", []MessageEntity{{Type: "pre", Offset: 0, Length: 13}}},
		{"pre with language", `<pre><code class="language-go">fmt.Println()</code></pre>`, "fmt.Println()",
			[]MessageEntity{{Type: "pre", Offset: 0, Length: 13, Language: "go"}}},
		{"language outside pre is dropped", `<code class="language-go">x</code>`, "x",
			[]MessageEntity{{Type: "code", Offset: 0, Length: 1}}},
		{"blockquotes", "<blockquote>q</blockquote><blockquote expandable>e</blockquote>", "qe",
			[]MessageEntity{{Type: "blockquote", Offset: 0, Length: 1}, {Type: "expandable_blockquote", Offset: 1, Length: 1}}},
		{"custom emoji", `<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>`, "👍",
			[]MessageEntity{{Type: "custom_emoji", Offset: 0, Length: 2, CustomEmojiID: "5368324170671202286"}}},
		{"entities", "&lt;tag&gt; &amp; &quot;q&quot; &#39;&#x41;&#X42;", `<tag> & "q" 'AB`, nil},
		{"nested", "<b>bold <i>both</i></b>", "bold both",
			[]MessageEntity{{Type: "bold", Offset: 0, Length: 9}, {Type: "italic", Offset: 5, Length: 4}}},
		{"UTF-16 offsets", "😀 é <b>x</b>", "😀 é x", []MessageEntity{{Type: "bold", Offset: 5, Length: 1}}},
		{"bare greater-than", "a > b", "a > b", nil},
		{"upper-case tags", "<B>x</B>", "x", []MessageEntity{{Type: "bold", Offset: 0, Length: 1}}},
		{"anonymous end tag", "<b>x</>", "x", []MessageEntity{{Type: "bold", Offset: 0, Length: 1}}},
		{"spaces in tags", "<b >x</b >", "x", []MessageEntity{{Type: "bold", Offset: 0, Length: 1}}},
		{"empty entity dropped", "<b></b>x", "x", nil},
		{"unknown attribute ignored", `<b class="x">y</b>`, "y", []MessageEntity{{Type: "bold", Offset: 0, Length: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, entities, err := parseHTML(tt.in)
			if err != nil {
				t.Fatalf("parseHTML(%q): %v", tt.in, err)
			}
			if plain != tt.plain || !reflect.DeepEqual(entities, tt.want) {
				t.Errorf("parseHTML(%q) = %q %+v, want %q %+v", tt.in, plain, entities, tt.plain, tt.want)
			}
		})
	}
}

func TestParseHTMLRejects(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"<x>y</x>", `Unsupported start tag "x" at byte offset 0`},
		{"a <div>b</div>", `Unsupported start tag "div" at byte offset 2`},
		{"line<br>", `Unsupported start tag "br" at byte offset 4`},
		{"<!-- note -->", `Unsupported start tag "!--" at byte offset 0`},
		{"a < b", `Unsupported start tag "" at byte offset 2`},
		{"<b>x", `Can't find end tag corresponding to start tag "b"`},
		{"<b><i>x</b></i>", `Unmatched end tag at byte offset 7, expected "</i>", found "</b>"`},
		{"x</b>", "Unexpected end tag at byte offset 1"},
		{"<b", "Unclosed start tag at byte offset 0"},
		{"<b>x</b", "Unclosed end tag at byte offset 4"},
		{`<a href="x>y</a>`, "Unclosed end of attribute value at byte offset 9"},
		{"<span>x</span>", `Tag "span" must have class "tg-spoiler" at byte offset 0`},
		{`<tg-emoji emoji-id="abc">x</tg-emoji>`, "Invalid custom emoji identifier specified"},
		{"<pre lang>x</pre>", `Expected equal sign in declaration of an attribute of the tag "pre"`},
		{"a & b", `Character "&" at byte offset 2 is not part of an HTML entity`},
		{"&nbsp;", `Unsupported HTML entity "&nbsp;" at byte offset 0`},
		{"&lt", `Character "&" at byte offset 0`},
		{"&#0;", `Unsupported HTML entity "&#0;"`},
		{"&#xD800;", `Unsupported HTML entity "&#xD800;"`},
		{`<a href="?a=1&b=2">x</a>`, `Character "&" at byte offset 13`},
	}
	for _, tt := range tests {
		_, _, err := parseHTML(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseHTML(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestDetectEntities(t *testing.T) {
	tests := []struct {
		in   string
		want []MessageEntity
	}{
		{"/start", []MessageEntity{{Type: "bot_command", Offset: 0, Length: 6}}},
		{"/ask@switchboard_bot hi", []MessageEntity{{Type: "bot_command", Offset: 0, Length: 20}}},
		{"hi @switchboard_bot!", []MessageEntity{{Type: "mention", Offset: 3, Length: 16}}},
		{"😀 @annie", []MessageEntity{{Type: "mention", Offset: 3, Length: 6}}},
		{"mail a@example.com", nil},
		{"see /usr/bin", nil},
		{"a/b", nil},
		{"@ab", nil},
	}
	for _, tt := range tests {
		if got := detectEntities(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("detectEntities(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
