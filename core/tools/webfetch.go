package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/switchboardhq/switchboard/egress"
)

// Limits of the web_fetch tool.
const (
	// WebFetchDefaultMaxChars is how many characters of page text web_fetch
	// returns when the model passes no maxChars.
	WebFetchDefaultMaxChars = 50_000
	// WebFetchMaxChars is the largest maxChars web_fetch accepts.
	WebFetchMaxChars = 200_000
	// WebFetchMaxBytes is how much of a response body web_fetch reads; the
	// rest is never downloaded. The egress client's own MaxResponseBytes
	// applies too, whichever is smaller.
	WebFetchMaxBytes = 4 << 20
)

// ErrUnsupportedContentType is returned (wrapped) by web_fetch for a
// response that is not text/html, text/plain, text/markdown or
// application/json.
var ErrUnsupportedContentType = errors.New("unsupported content type")

// webFetchTypes are the media types web_fetch reads.
var webFetchTypes = []string{"text/html", "text/plain", "text/markdown", "application/json"}

var webFetchSchema = fmt.Sprintf(`{"type":"object","properties":{`+
	`"url":{"type":"string","description":"The absolute http(s) URL to fetch."},`+
	`"maxChars":{"type":"integer","minimum":1,"maximum":%[1]d,"default":%[2]d,`+
	`"description":"How many characters of text to return at most, 1 to %[1]d. Default %[2]d."}},`+
	`"required":["url"]}`, WebFetchMaxChars, WebFetchDefaultMaxChars)

// Compile-time check that WebFetch is a tool.
var _ Tool = (*WebFetch)(nil)

// WebFetch is the web_fetch tool: it GETs a URL the model chose through an
// egress.Client, which refuses private, loopback and metadata addresses on
// every hop, and returns the page as readable text. It is safe for
// concurrent use.
type WebFetch struct {
	// Client makes the requests; it is required. Production builds it with
	// egress.New and the zero policy.
	Client *egress.Client
}

// webFetchDetails is the Details of a web_fetch result.
type webFetchDetails struct {
	URL         string `json:"url"`
	FinalURL    string `json:"finalUrl"`
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	Title       string `json:"title,omitempty"`
	// Chars is the length of the whole text, before truncation.
	Chars     int  `json:"chars"`
	Truncated bool `json:"truncated,omitempty"`
	// BodyTruncated reports that the response was larger than web_fetch
	// reads, so the text is of its start only.
	BodyTruncated bool `json:"bodyTruncated,omitempty"`
}

// Spec describes web_fetch to the model.
func (t *WebFetch) Spec() Spec {
	return Spec{
		Name: "web_fetch",
		Description: "Fetch a public web page or document by URL and return it as readable text " +
			"(HTML is converted to text with links as [text](url)). Reads text/html, text/plain, " +
			"text/markdown and application/json; other content types are refused. Private and " +
			"local network addresses are refused. Returns at most maxChars characters (default " +
			strconv.Itoa(WebFetchDefaultMaxChars) + ").",
		Parameters: json.RawMessage(webFetchSchema),
	}
}

// Execute fetches call.Args["url"]. The result text starts with the final
// URL (after redirects) and, for HTML, the page title.
func (t *WebFetch) Execute(ctx context.Context, call Call, _ func(Result)) (Result, error) {
	if t.Client == nil {
		return Result{}, errors.New("no egress client is configured")
	}
	rawURL, maxChars, err := parseWebFetchArgs(call.Args)
	if err != nil {
		return Result{}, err
	}
	resp, err := t.Client.Get(ctx, rawURL)
	if err != nil {
		return Result{}, fmt.Errorf("fetching: %w", err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	finalURL := withoutFragment(final)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Result{}, fmt.Errorf("%s answered %d %s; check the URL", finalURL, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, WebFetchMaxBytes))
	bodyTruncated := len(body) == WebFetchMaxBytes
	if errors.Is(err, egress.ErrTooLarge) {
		bodyTruncated, err = true, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("reading %s: %w", finalURL, err)
	}
	mediaType := resp.Header.Get("Content-Type")
	if mediaType == "" {
		mediaType = http.DetectContentType(body)
	}
	mediaType, _, err = mime.ParseMediaType(mediaType)
	if err != nil || !slices.Contains(webFetchTypes, mediaType) {
		shown := mediaType
		if err != nil {
			shown = strconv.Quote(resp.Header.Get("Content-Type"))
		}
		return Result{}, fmt.Errorf("%s is %s: %w; web_fetch reads %s", finalURL, shown, ErrUnsupportedContentType, strings.Join(webFetchTypes, ", "))
	}
	body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	var title, text string
	if mediaType == "text/html" {
		title, text = htmlToText(body, final)
	} else {
		text = strings.TrimSpace(string(body))
	}
	details := webFetchDetails{
		URL: rawURL, FinalURL: finalURL, Status: resp.StatusCode, ContentType: mediaType, Title: title,
		Chars: utf8.RuneCountInString(text), BodyTruncated: bodyTruncated,
	}
	var b strings.Builder
	b.WriteString("URL: " + finalURL + "\n")
	if title != "" {
		b.WriteString("Title: " + title + "\n")
	}
	b.WriteString("\n")
	if details.Chars > maxChars {
		details.Truncated = true
		text = truncateRunes(text, maxChars)
	}
	b.WriteString(text)
	switch {
	case details.Truncated:
		fmt.Fprintf(&b, "\n\n[Truncated: showing the first %d of %d characters", maxChars, details.Chars)
		if maxChars < WebFetchMaxChars {
			fmt.Fprintf(&b, "; pass a larger maxChars (at most %d) for more", WebFetchMaxChars)
		}
		b.WriteString(".]")
	case bodyTruncated:
		b.WriteString("\n\n[Truncated: the document is larger than web_fetch reads; this is its start.]")
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return Result{}, fmt.Errorf("encoding details: %w", err)
	}
	res := TextResult(b.String())
	res.Details = raw
	return res, nil
}

func parseWebFetchArgs(args map[string]any) (string, int, error) {
	v, _ := present(args, "url")
	rawURL, ok := v.(string)
	if !ok || strings.TrimSpace(rawURL) == "" {
		return "", 0, fmt.Errorf("url must be an absolute http(s) URL such as https://example.com/page; got %s", describeArg(v))
	}
	maxChars := WebFetchDefaultMaxChars
	if v, ok := present(args, "maxChars"); ok {
		n, isInt := wholeNumber(v)
		if !isInt || n < 1 || n > WebFetchMaxChars {
			return "", 0, fmt.Errorf("maxChars must be an integer from 1 to %d; got %s", WebFetchMaxChars, describeArg(v))
		}
		maxChars = int(n)
	}
	return strings.TrimSpace(rawURL), maxChars, nil
}

// withoutFragment renders u without its fragment, which the server never
// saw.
func withoutFragment(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// truncateRunes returns the first n runes of s.
func truncateRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// maxHTMLDepth bounds how deep htmlToText descends: deeper content is
// dropped rather than risking the stack on a hostile page.
const maxHTMLDepth = 256

// htmlToText renders an HTML document as readable text: headings as
// "# Heading", paragraphs separated by blank lines, list items as "- ",
// links as [text](href) with href resolved against base, whitespace
// collapsed outside <pre>. Scripts, styles, navigation and other
// non-content elements are dropped. It also returns the <title>.
func htmlToText(doc []byte, base *url.URL) (title, text string) {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		// html.Parse only fails on a reader error; the reader is in memory.
		return "", strings.TrimSpace(string(doc))
	}
	w := htmlWriter{base: base}
	title = collapseSpace(findTitle(root, 0))
	w.walk(root, 0)
	return title, w.String()
}

func findTitle(n *html.Node, depth int) string {
	if depth > maxHTMLDepth {
		return ""
	}
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return b.String()
	}
	if n.Type == html.ElementNode && (n.DataAtom == atom.Svg || n.DataAtom == atom.Math) {
		return "" // their <title> elements name a drawing, not the page
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c, depth+1); t != "" {
			return t
		}
	}
	return ""
}

// htmlWriter accumulates the text of a document.
type htmlWriter struct {
	base   *url.URL
	buf    []byte
	pre    int  // depth of <pre> elements
	inLink bool // inside an <a> being rendered as a link
}

// skippedElements hold no readable content.
var skippedElements = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Nav: true, atom.Noscript: true,
	atom.Template: true, atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true,
	atom.Canvas: true, atom.Select: true, atom.Button: true, atom.Form: true,
}

// paragraphElements are separated from their surroundings by a blank line,
// lineElements by a line break.
var (
	paragraphElements = map[atom.Atom]bool{
		atom.P: true, atom.Blockquote: true, atom.Pre: true, atom.Table: true, atom.Ul: true, atom.Ol: true,
		atom.Dl: true, atom.Figure: true, atom.Hr: true, atom.H1: true, atom.H2: true, atom.H3: true,
		atom.H4: true, atom.H5: true, atom.H6: true,
	}
	lineElements = map[atom.Atom]bool{
		atom.Div: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true,
		atom.Main: true, atom.Aside: true, atom.Li: true, atom.Tr: true, atom.Dt: true, atom.Dd: true,
		atom.Figcaption: true, atom.Address: true, atom.Details: true, atom.Summary: true, atom.Caption: true,
	}
	headingLevel = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}
)

func (w *htmlWriter) walk(n *html.Node, depth int) {
	if depth > maxHTMLDepth {
		return
	}
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.DocumentNode:
		w.children(n, depth)
		return
	case html.ElementNode:
	default:
		return // comments, doctypes
	}
	if skippedElements[n.DataAtom] {
		return
	}
	gap := 0
	switch {
	case paragraphElements[n.DataAtom]:
		gap = 2
	case lineElements[n.DataAtom]:
		gap = 1
	}
	w.block(gap)
	switch n.DataAtom {
	case atom.Br:
		w.buf = append(bytes.TrimRight(w.buf, " "), '\n')
		return
	case atom.Li:
		w.buf = append(w.buf, "- "...)
	case atom.Pre:
		w.pre++
		defer func() { w.pre-- }()
	case atom.Td, atom.Th:
		w.space()
	case atom.A:
		if href := w.href(n); href != "" && !w.inLink {
			w.link(n, href, depth)
			return
		}
	}
	if level := headingLevel[n.DataAtom]; level > 0 {
		w.buf = append(w.buf, strings.Repeat("#", level)+" "...)
	}
	w.children(n, depth)
	w.block(gap)
}

func (w *htmlWriter) children(n *html.Node, depth int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c, depth+1)
	}
}

// link renders an <a> as [text](href); a link without text is dropped.
func (w *htmlWriter) link(n *html.Node, href string, depth int) {
	w.inLink = true
	defer func() { w.inLink = false }()
	w.space()
	start := len(w.buf)
	w.children(n, depth)
	label := strings.TrimSpace(string(w.buf[start:]))
	w.buf = w.buf[:start]
	if label == "" {
		return
	}
	w.buf = append(w.buf, "["+label+"]("+href+")"...)
}

// href returns a's target resolved against the base, if it is an http(s)
// URL.
func (w *htmlWriter) href(n *html.Node) string {
	for _, a := range n.Attr {
		if a.Namespace != "" || a.Key != "href" {
			continue
		}
		u, err := url.Parse(strings.TrimSpace(a.Val))
		if err != nil {
			return ""
		}
		if w.base != nil {
			u = w.base.ResolveReference(u)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return ""
		}
		return u.String()
	}
	return ""
}

// text appends s, with whitespace runs collapsed to one space outside
// <pre>.
func (w *htmlWriter) text(s string) {
	if w.pre > 0 {
		w.buf = append(w.buf, s...)
		return
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	for i, f := range strings.FieldsFunc(s, unicode.IsSpace) {
		if i > 0 || unicode.IsSpace(first) {
			w.space()
		}
		w.buf = append(w.buf, f...)
	}
	if unicode.IsSpace(last) {
		w.space()
	}
}

// space appends one space unless the text is at the start of a line or
// already ends in one.
func (w *htmlWriter) space() {
	if n := len(w.buf); n > 0 && w.buf[n-1] != ' ' && w.buf[n-1] != '\n' {
		w.buf = append(w.buf, ' ')
	}
}

// block ends the text so far with n line breaks (at least), dropping
// trailing spaces; at the start of the document it does nothing.
func (w *htmlWriter) block(n int) {
	if n == 0 {
		return
	}
	w.buf = bytes.TrimRight(w.buf, " ")
	if len(w.buf) == 0 {
		return
	}
	have := len(w.buf) - len(bytes.TrimRight(w.buf, "\n"))
	for ; have < n; have++ {
		w.buf = append(w.buf, '\n')
	}
}

// String returns the text with trailing spaces on each line removed, at
// most one blank line in a row, and no surrounding space.
func (w *htmlWriter) String() string {
	lines := strings.Split(string(w.buf), "\n")
	out := lines[:0]
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// collapseSpace collapses whitespace runs in s to single spaces.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
