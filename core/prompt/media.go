package prompt

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/switchboardhq/switchboard/core"
)

// audioExtensions are the file extensions OpenClaw's media note treats as
// audio (src/auto-reply/media-note.ts).
var audioExtensions = []string{
	".ogg", ".opus", ".mp3", ".m4a", ".wav", ".webm", ".flac", ".aac", ".wma",
	".aiff", ".alac", ".oga",
}

// mediaEntry is one attachment as the note shows it.
type mediaEntry struct {
	path, mimeType, url string
}

// MediaNote describes the attachments of a message (seed 004 step 7,
// OpenClaw's buildInboundMediaNote): "[media attached: <path> (<type>) |
// <url>]" for one, or "[media attached: N files]" followed by one
// "[media attached i/N: …]" line each. Audio that has a transcript is
// left out (the transcript stands in for it). Paths, types and URLs are
// flattened to one line: control characters and "]" become spaces, runs
// of white space one space, bidirectional controls are dropped, and role
// tags and chat-template tokens have their brackets turned into
// parentheses. It returns "" when nothing is left to describe.
func MediaNote(media []core.Media) string {
	var entries []mediaEntry
	for _, m := range media {
		path := firstNonEmpty(jsTrim(m.Path), jsTrim(m.URL))
		if path == "" {
			continue
		}
		if jsTrim(m.Transcript) != "" && isAudio(path, m.MimeType) {
			continue
		}
		url := ""
		if jsTrim(m.Path) != "" && jsTrim(m.URL) != jsTrim(m.Path) {
			url = m.URL
		}
		entries = append(entries, mediaEntry{path: path, mimeType: m.MimeType, url: url})
	}
	switch len(entries) {
	case 0:
		return ""
	case 1:
		return mediaLine("[media attached: ", entries[0])
	}
	var b strings.Builder
	n := strconv.Itoa(len(entries))
	b.WriteString("[media attached: " + n + " files]")
	for i, e := range entries {
		b.WriteByte('\n')
		b.WriteString(mediaLine("[media attached "+strconv.Itoa(i+1)+"/"+n+": ", e))
	}
	return b.String()
}

func mediaLine(prefix string, e mediaEntry) string {
	line := prefix + mediaValue(e.path)
	if t := mediaValue(e.mimeType); t != "" {
		line += " (" + t + ")"
	}
	if u := mediaValue(e.url); u != "" {
		line += " | " + u
	}
	return line + "]"
}

// mediaValue flattens a path, type or URL to one line (OpenClaw's
// sanitizeInlineMediaNoteValue, plus dropping bidirectional and other
// hidden format characters, so a file name cannot reorder what it shows),
// and defangs the role tags and chat-template tokens in it as a raw slot
// does ("<|im_start|>.png" becomes "(|im_start|).png").
func mediaValue(v string) string {
	if jsTrim(v) == "" {
		return ""
	}
	var b strings.Builder
	b.Grow(len(v))
	space := false
	for _, r := range v {
		switch {
		case isHiddenFormat(r):
			continue
		case r == ']' || unicode.IsControl(r) || unicode.IsSpace(r) || isJSSpace(r) || r == 0x2028 || r == 0x2029:
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return defangInline(b.String())
}

// isAudio reports an audio attachment by extension or media type.
func isAudio(path, mimeType string) bool {
	if strings.HasPrefix(strings.ToLower(jsTrim(mimeType)), "audio/") {
		return true
	}
	lower := strings.ToLower(path)
	for _, ext := range audioExtensions {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}
