package markup

// Target is a platform's markup flavour. The zero value is Plain.
type Target uint8

// The targets.
const (
	// Plain is text without markup: the same structure, links as
	// "label (url)". It is what Telegram gets when it rejects the HTML.
	Plain Target = iota
	// Telegram is Telegram Bot API HTML (parse_mode "HTML").
	Telegram
	// Slack is Slack mrkdwn.
	Slack
	// Discord is Discord's markdown.
	Discord
	// WhatsApp is WhatsApp's text formatting.
	WhatsApp
)

// Default chunk limits per platform, from openclaw-facts §5.3 "Chunk limits
// and markdown per channel".
const (
	// DefaultLimit is the fallback chunk limit (OpenClaw's
	// src/auto-reply/chunk.ts DEFAULT_CHUNK_LIMIT).
	DefaultLimit = 4000
	// TelegramLimit is Telegram's chunk limit: 4000, deliberately under the
	// Bot API's 4096 (TELEGRAM_TEXT_CHUNK_LIMIT in OpenClaw's
	// extensions/telegram/src/outbound-adapter.ts).
	TelegramLimit = 4000
	// TelegramMaxLength is the Bot API's hard limit on a message's text,
	// in UTF-16 code units after entity parsing.
	TelegramMaxLength = 4096
	// SlackLimit is Slack's chunk limit (SLACK_TEXT_LIMIT in OpenClaw's
	// extensions/slack/src/limits.ts, a hard ceiling; Slack's own docs page
	// says 4000).
	SlackLimit = 8000
	// DiscordLimit is Discord's message length limit
	// (extensions/discord/src/outbound-adapter.ts).
	DiscordLimit = 2000
	// DiscordMaxLines is Discord's soft cap on lines per message
	// (maxLinesPerMessage in extensions/discord/src/chunk.ts).
	DiscordMaxLines = 17
	// WhatsAppLimit is WhatsApp's chunk limit
	// (extensions/whatsapp/src/outbound-adapter.ts).
	WhatsAppLimit = 4000
)

// String returns the target's name.
func (t Target) String() string {
	switch t {
	case Plain:
		return "plain"
	case Telegram:
		return "telegram"
	case Slack:
		return "slack"
	case Discord:
		return "discord"
	case WhatsApp:
		return "whatsapp"
	}
	return "unknown"
}

// Limit returns the target's default chunk limit.
func (t Target) Limit() int {
	switch t {
	case Telegram:
		return TelegramLimit
	case Slack:
		return SlackLimit
	case Discord:
		return DiscordLimit
	case WhatsApp:
		return WhatsAppLimit
	}
	return DefaultLimit
}

// ChunkOptions returns the chunking rules for text rendered for the
// target: limit (or the target's Limit when limit <= 0), mode, and the
// target's unit and syntax. Telegram counts UTF-16 code units and keeps
// HTML tags balanced per chunk; Slack keeps <...> tokens and entities
// whole; Discord also caps chunks at DiscordMaxLines lines.
func (t Target) ChunkOptions(limit int, mode Mode) ChunkOptions {
	if limit <= 0 {
		limit = t.Limit()
	}
	o := ChunkOptions{Limit: limit, Mode: mode}
	switch t {
	case Telegram:
		o.Unit, o.Syntax = UTF16, SyntaxHTML
	case Slack:
		o.Syntax = SyntaxSlack
	case Discord:
		o.MaxLines = DiscordMaxLines
	}
	return o
}

// dialect returns the target's dialect; an unknown target renders Plain.
func (t Target) dialect() dialect {
	switch t {
	case Telegram:
		return telegramDialect{}
	case Slack:
		return slackDialect{}
	case Discord:
		return discordDialect{}
	case WhatsApp:
		return whatsAppDialect{}
	}
	return plainDialect{}
}

// RenderChunks parses md, renders it for the target and splits the result
// into chunks of at most limit (the target's Limit when limit <= 0) with
// the target's ChunkOptions. It returns no chunks for blank input.
func RenderChunks(md string, t Target, limit int, mode Mode) []string {
	return ChunkText(Render(Parse(md), t), t.ChunkOptions(limit, mode))
}

// TelegramHTML renders markdown as Telegram Bot API HTML (parse_mode
// "HTML").
func TelegramHTML(md string) string { return Render(Parse(md), Telegram) }

// PlainText renders markdown as plain text.
func PlainText(md string) string { return Render(Parse(md), Plain) }

// SlackMrkdwn renders markdown as Slack mrkdwn.
func SlackMrkdwn(md string) string { return Render(Parse(md), Slack) }

// DiscordMarkdown renders markdown as Discord markdown.
func DiscordMarkdown(md string) string { return Render(Parse(md), Discord) }

// WhatsAppText renders markdown as WhatsApp formatted text.
func WhatsAppText(md string) string { return Render(Parse(md), WhatsApp) }
