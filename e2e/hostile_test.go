package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// hostile is a message that would run script if the page put it into the
// DOM as HTML, or made its links live.
const hostile = "look <img src=x onerror=alert(1)> and [click me](javascript:alert(2)) " +
	"and [safe](https://example.com/docs) <script>alert(3)</script>"

// inertChecks asserts the conversation holds no image, script or iframe
// from a message, no link but http(s)/mailto, every link with rel
// noopener noreferrer, and the hostile markup shown as text.
func inertChecks(t *testing.T, tb *tab) {
	t.Helper()
	var res struct {
		Elements int      `json:"elements"`
		Hrefs    []string `json:"hrefs"`
		Rels     []string `json:"rels"`
		Text     string   `json:"text"`
		Handlers int      `json:"handlers"`
	}
	raw := eval[string](tb, `JSON.stringify((() => {
  const m = document.getElementById("messages");
  const links = [...m.querySelectorAll("a")];
  return {
    elements: m.querySelectorAll("img, script, iframe, object, embed, svg, style").length,
    hrefs: links.map(a => a.getAttribute("href")),
    rels: links.map(a => a.rel),
    text: m.textContent,
    handlers: [...m.querySelectorAll("*")].filter(e => [...e.attributes].some(a => a.name.startsWith("on"))).length,
  };
})())`)
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	if res.Elements != 0 || res.Handlers != 0 {
		t.Errorf("the conversation has %d img/script/iframe-like elements and %d elements with on* attributes; want none", res.Elements, res.Handlers)
	}
	for i, h := range res.Hrefs {
		if !strings.HasPrefix(h, "https://") && !strings.HasPrefix(h, "http://") && !strings.HasPrefix(h, "mailto:") {
			t.Errorf("link %q is live; only http(s) and mailto links may be", h)
		}
		if res.Rels[i] != "noopener noreferrer" {
			t.Errorf("link %q has rel %q, want noopener noreferrer", h, res.Rels[i])
		}
	}
	if len(res.Hrefs) == 0 {
		t.Error("no link rendered at all; the https link should be")
	}
	for _, want := range []string{"<img src=x onerror=alert(1)>", "<script>alert(3)</script>", "click me"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the conversation does not show %q as text", want)
		}
	}
}

// TestWebChatRendersHostileTextInert: markup in the user's message and in
// the model's reply is shown as text, live and after a reload; a
// javascript: link is not a link. The tab fails the test if any dialog
// opened.
func TestWebChatRendersHostileTextInert(t *testing.T) {
	_, _, tb := connected(t, llmtest.Text("You said: ", hostile))
	tb.send(hostile)
	tb.waitAssistant("You said: look")
	tb.waitIdle()
	inertChecks(t, tb)

	tb.do("reload", chromedp.Reload())
	tb.waitConnected()
	tb.waitAssistant("You said: look")
	inertChecks(t, tb)
}

// TestMarkdownRendering runs the page's markdown module on a table of
// inputs in the browser and compares the HTML it builds.
func TestMarkdownRendering(t *testing.T) {
	needBrowser(t)
	d := newDaemon(t, nil)
	d.start()
	tb := openTab(t, d.url())
	cases := []struct{ in, want string }{
		{"plain text", "<p>plain text</p>"},
		{"a <b>bold</b> & <i>x</i>", "<p>a &lt;b&gt;bold&lt;/b&gt; &amp; &lt;i&gt;x&lt;/i&gt;</p>"},
		{"**bold** and *it* and ~~gone~~ and `co<de>`", "<p><strong>bold</strong> and <em>it</em> and <del>gone</del> and <code>co&lt;de&gt;</code></p>"},
		{"line one\nline two", "<p>line one<br>line two</p>"},
		{"```html\n<script>alert(1)</script>\n```", `<pre><code data-lang="html">&lt;script&gt;alert(1)&lt;/script&gt;</code></pre>`},
		{"[ok](https://example.com/a?b=1&c=2)", `<p><a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">ok</a></p>`},
		{"[x](javascript:alert(1))", `<p><span class="md-unsafe-link" title="link removed: only http, https and mailto links are allowed">x</span></p>`},
		{"[x](JaVaScRiPt:alert(1))", `<p><span class="md-unsafe-link" title="link removed: only http, https and mailto links are allowed">x</span></p>`},
		{"[x](data:text/html,<script>alert(1)</script>)", `<p>[x](data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;)</p>`},
		{"[x](vbscript:msgbox)", `<p><span class="md-unsafe-link" title="link removed: only http, https and mailto links are allowed">x</span></p>`},
		{"<javascript:alert(1)>", "<p>&lt;javascript:alert(1)&gt;</p>"},
		{"![img](https://example.com/x.png)", `<p>!<a href="https://example.com/x.png" target="_blank" rel="noopener noreferrer">img</a></p>`},
		{"see https://example.com/page.", `<p>see <a href="https://example.com/page" target="_blank" rel="noopener noreferrer">https://example.com/page</a>.</p>`},
		{"[**b**](https://e.com) `[c](javascript:x)`", `<p><a href="https://e.com/" target="_blank" rel="noopener noreferrer"><strong>b</strong></a> <code>[c](javascript:x)</code></p>`},
		{"- one\n- two\n\n1. first\n2. second", "<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>"},
		{"# Title\n> quoted <b>", `<h3 class="md-heading">Title</h3><blockquote><p>quoted &lt;b&gt;</p></blockquote>`},
		{"&lt;img src=x onerror=alert(1)&gt;", "<p>&amp;lt;img src=x onerror=alert(1)&amp;gt;</p>"},
	}
	in := make([]string, len(cases))
	for i, c := range cases {
		in[i] = c.in
	}
	arg, _ := json.Marshal(in)
	raw := eval[string](tb, `import("/ui/js/markdown.js").then(m => JSON.stringify(`+string(arg)+`.map(s => {
  const d = document.createElement("div");
  d.append(m.renderMarkdown(s));
  return d.innerHTML;
})))`)
	var got []string
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("renderMarkdown(%q)\n got %s\nwant %s", c.in, got[i], c.want)
		}
	}
}
