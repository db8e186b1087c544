package reply

import (
	"strings"
	"unicode/utf8"
)

// Tags are the delivery directives found in a reply (openclaw-facts §5.1,
// OpenClaw's parseInlineDirectives in src/utils/directive-tags.ts).
type Tags struct {
	// ReplyToCurrent is set by [[reply_to_current]]: thread the reply to
	// the message being answered.
	ReplyToCurrent bool
	// ReplyToID is the id of the last [[reply_to:<id>]] tag.
	ReplyToID string
	// HasReplyTag reports that either reply tag was present.
	HasReplyTag bool
	// AudioAsVoice is set by [[audio_as_voice]]: send audio media as a
	// voice note.
	AudioAsVoice bool
}

// ParseTags finds and removes the reply tags [[reply_to_current]] and
// [[reply_to:<id>]], and the [[audio_as_voice]] tag. White space is
// allowed inside the brackets ([[ reply_to: 123 ]]) and case is ignored.
// A reply tag counts only at the start of the text or after white space,
// as in OpenClaw, so "[[" inside a URL or a word is left alone. The text
// comes back trimmed when a tag was removed, unchanged otherwise; the
// spaces after a removed tag go with it.
func ParseTags(text string) (string, Tags) {
	var tags Tags
	if !strings.Contains(text, "[[") {
		return text, tags
	}
	var b []byte
	changed := false
	last := 0
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], "[[")
		if j < 0 {
			break
		}
		start := i + j
		end, kind, id := matchTag(text, start)
		if kind == tagNone {
			i = start + 1
			continue
		}
		switch kind {
		case tagAudio:
			tags.AudioAsVoice = true
		case tagCurrent:
			tags.HasReplyTag, tags.ReplyToCurrent = true, true
		case tagReplyTo:
			tags.HasReplyTag = true
			if id != "" {
				tags.ReplyToID = id
			}
		}
		b = append(b, text[last:start]...)
		changed = true
		for end < len(text) && (text[end] == ' ' || text[end] == '\t') {
			end++
		}
		last, i = end, end
	}
	if !changed {
		return text, tags
	}
	b = append(b, text[last:]...)
	return jsTrim(string(b)), tags
}

type tagKind uint8

const (
	tagNone tagKind = iota
	tagAudio
	tagCurrent
	tagReplyTo
)

// matchTag reads a directive tag at text[start:] (which begins "[["),
// returning the offset after its "]]", its kind and, for reply_to, the
// trimmed id.
func matchTag(text string, start int) (end int, kind tagKind, id string) {
	s := text[start+2:]
	inner := strings.TrimLeftFunc(s, isJSSpace)
	off := start + 2 + len(s) - len(inner)
	switch {
	case hasPrefixFold(inner, "audio_as_voice"):
		if e, ok := closeTag(text, off+len("audio_as_voice")); ok {
			return e, tagAudio, ""
		}
		return 0, tagNone, ""
	}
	if start > 0 {
		// Reply tags count at the start or after white space only.
		r, _ := utf8.DecodeLastRuneInString(text[:start])
		if !isJSSpace(r) {
			return 0, tagNone, ""
		}
	}
	if hasPrefixFold(inner, "reply_to_current") {
		if e, ok := closeTag(text, off+len("reply_to_current")); ok {
			return e, tagCurrent, ""
		}
	}
	if !hasPrefixFold(inner, "reply_to") {
		return 0, tagNone, ""
	}
	rest := strings.TrimLeftFunc(inner[len("reply_to"):], isJSSpace)
	if !strings.HasPrefix(rest, ":") {
		return 0, tagNone, ""
	}
	// [^\]\n]+ then \s*]]: the id runs to the first "]", which must start
	// "]]"; the white space after the colon may form the id.
	afterColon := rest[1:]
	k := strings.IndexAny(afterColon, "]\n")
	if k <= 0 || afterColon[k] != ']' || !strings.HasPrefix(afterColon[k:], "]]") {
		return 0, tagNone, ""
	}
	idOff := len(text) - len(afterColon)
	return idOff + k + 2, tagReplyTo, jsTrim(afterColon[:k])
}

// closeTag accepts optional white space then "]]" at text[off:].
func closeTag(text string, off int) (int, bool) {
	rest := strings.TrimLeftFunc(text[off:], isJSSpace)
	if !strings.HasPrefix(rest, "]]") {
		return 0, false
	}
	return len(text) - len(rest) + 2, true
}
