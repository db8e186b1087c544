// Package markup converts the markdown LLMs write into each chat platform's
// markup, and splits the result into messages that fit the platform's
// limit. Everything here is a pure function of its input: no IO, no
// goroutines, no state; any input is accepted and nothing panics.
//
// # Pipeline
//
//	md ──Parse──▶ Doc ──Render(doc, target)──▶ text ──ChunkText(text, target.ChunkOptions)──▶ []string
//
// RenderChunks does all three. The per-target shortcuts (TelegramHTML,
// PlainText, SlackMrkdwn, DiscordMarkdown, WhatsAppText) do the first two.
//
// # The intermediate representation
//
// A Doc is a small tree: a list of Blocks, each of one BlockKind
// (Paragraph, Heading, List, Quote, CodeBlock, Table, Rule). Lists hold
// ListItems and quotes hold Blocks, so they nest; the other kinds are
// leaves. The text of paragraphs, headings and table cells is a flat list
// of Inline runs: literal text (markup and escapes resolved, nothing
// escaped for any platform) with a Style bit set (Bold, Italic, Strike,
// Spoiler, Code) and an optional Link destination. Adjacent runs differ in
// style or link. Nesting of inline styles is not kept as a tree: a
// renderer reopens markers as the style set changes from run to run, which
// is what lets every renderer produce properly nested markup whatever the
// input looked like.
//
// # What Parse understands
//
// CommonMark's block structure for paragraphs, ATX and setext headings,
// thematic breaks, block quotes (with lazy continuation), bullet and
// ordered lists (nesting by indentation; a sub-item indented two columns
// under "1. " still nests, as LLMs write it), fenced code blocks (the info
// string's first word is the language; an unclosed fence runs to the end)
// and indented code blocks; plus GFM pipe tables. A single newline inside a
// paragraph is kept as a line break (chat clients show newlines and LLMs
// mean them), and any list item may interrupt a paragraph.
//
// Inline: code spans, backslash escapes, **bold**/__bold__, *italic*/
// _italic_ (CommonMark's delimiter rules, so an underscore inside a word,
// as in snake_case, is literal), ~~strike~~ and ||spoiler|| (exactly two
// characters each: "~5 min" stays literal), [label](url "title") links and
// ![alt](src) images (shown as links), <scheme:...> and <user@host>
// autolinks, bare http(s) URLs (with GFM's trailing punctuation rules), and
// chat tokens such as Slack's <@U123> or Discord's <#123>, kept as literal
// text. Raw HTML is not interpreted: it is text. Reference links are not
// supported. Nesting of quotes and list items is capped at 16 levels;
// deeper content is paragraph text.
//
// # Rendering
//
// Every target keeps the structure: blocks are separated by a blank line,
// headings are their own line, list items start with "• " (Discord: "- ")
// or "N. " and their further lines are indented by the marker's width, and
// a thematic break is a line of "─". Per target:
//
//   - Telegram: Bot API HTML for parse_mode "HTML". Only <b>, <i>, <s>,
//     <tg-spoiler>, <code>, <pre>, <pre><code class="language-x">,
//     <a href> and <blockquote> are written; text escapes exactly "&", "<"
//     and ">", and href values '"' as well. Headings are bold lines. Code
//     spans drop their other styles (code nests with nothing), code inside
//     a link label is plain, and an inner quote is merged into the outer
//     <blockquote> (blockquotes do not nest). Tables are a <pre> block of
//     aligned columns.
//   - Plain: no markup at all, for when Telegram rejects the entities:
//     quotes get "> ", code blocks are their content, tables are aligned
//     columns. HTMLToPlain does the same to an already chunked Telegram
//     chunk, never making it longer.
//   - Slack mrkdwn: *bold*, _italic_, ~strike~, `code`, ``` blocks,
//     <url|label> links, "> " quotes; "&", "<" and ">" escaped except in
//     Slack's own tokens (<@U…>, <#C…|name>, <!here>, <!channel>, …), which
//     pass through. Headings are bold lines, tables a code block, spoilers
//     plain text.
//   - WhatsApp: *bold*, _italic_, ~strike~, `code` and ``` blocks, "> "
//     quotes, links as "label (url)"; tables become a bold title line per
//     row with "• Header: value" bullets. Nothing is escaped.
//   - Discord: markdown much as written (**bold**, _italic_, ~~strike~~,
//     ||spoiler||, # headings up to level 3, [label](url), ```lang
//     blocks), tables as a code block of aligned columns. Literal text is
//     escaped only where Discord would format it.
//
// Markers of the marker-based targets (Slack, WhatsApp, Discord) are
// closed before each line break and reopened after it, and whitespace at a
// styled run's edges is moved outside them, since those platforms only
// recognise markers that hug text within one line. Column alignment counts
// runes, so wide CJK characters and emoji can misalign a table.
//
// Links are only made for safe schemes: http and https (with a host) and
// mailto everywhere, and tg on Telegram and Plain. Any other link (such as
// javascript:, data:, file: or a relative path) is shown as its label
// alone. A link whose label is its URL is shown as the bare URL where the
// platform links URLs itself.
//
// # Chunking
//
// ChunkText splits rendered text so that every chunk is at most
// ChunkOptions.Limit long, counted in Runes (default), UTF16 (Telegram's
// unit: an emoji outside the BMP counts 2) or Bytes. In ModeLength (the
// default) it splits only when needed, preferring within the last half of
// what fits a paragraph break, then a line break, then a sentence end, then
// a space, and only then any character boundary; it never splits a UTF-8
// sequence (so never a surrogate pair) and avoids splitting before
// combining marks, variation selectors and joiners. ModeNewline first makes
// every paragraph outside code and markup its own chunk, then splits long
// paragraphs at line breaks.
//
// The Syntax says what must survive a split. For markdown-like text a
// split inside a code fence closes the fence at the end of the chunk and
// reopens it, with its language, at the start of the next. For Slack, <...>
// tokens and &...; entities are never split. For Telegram HTML, tags and
// entities are never split, and the tags open at the split are closed at
// the end of the chunk and reopened (attributes included) at the start of
// the next, so each chunk is valid HTML on its own and Telegram can parse
// it alone. The reopened markup counts toward the limit. If reopening
// cannot fit (a link tag longer than the limit), that chunk degrades: its
// tags are dropped or its fence is not reopened, rather than exceed the
// limit. Limits below MinLimit are raised to it.
//
// # Limits
//
// The defaults are OpenClaw's, from openclaw-facts §5.3 (chunk limits and
// markdown per channel): Telegram 4000 (TelegramLimit, deliberately under
// the Bot API's 4096), Slack 8000 (SlackLimit), Discord 2000 and 17 lines
// (DiscordLimit, DiscordMaxLines), WhatsApp 4000 (WhatsAppLimit), and 4000
// for anything else (DefaultLimit). Target.ChunkOptions applies them with
// each platform's unit and syntax. For Telegram the HTML markup is counted
// too, which is conservative: Telegram counts the text after parsing it.
package markup
