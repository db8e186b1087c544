package reply

import (
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Options tune Build.
type Options struct {
	// Heartbeat reports that the turn answered a heartbeat poll: the reply
	// is stripped in ModeHeartbeat, so a short remainder is an ack and
	// nothing is sent. Otherwise ModeMessage applies.
	Heartbeat bool
	// AckMaxChars is the heartbeat ack threshold; zero means
	// DefaultAckMaxChars.
	AckMaxChars int
	// ToolErrorText is the error of the last failed tool call of the run,
	// if any; it becomes the fallback reply when the model said nothing.
	ToolErrorText string
	// ToolErrorName is the name of that tool, for the fallback's wording.
	ToolErrorName string
	// MessagingToolReplied reports that a messaging tool already delivered
	// a reply this run, so no fallback is sent.
	MessagingToolReplied bool
}

// Build turns the run's final assistant message into reply payloads:
//
//   - a message that stopped with an error and has no text becomes one
//     IsError payload explaining the failure (AssistantErrorText);
//   - MEDIA: lines become MediaURL/MediaURLs (SplitMedia) and reply tags
//     become ReplyToCurrent/ReplyToID/ReplyToTag (ParseTags);
//   - a silent reply (IsSilent, or nothing left after StripSilent, or only a
//     stray "NO"/"NO_RE" fragment) gives no payload unless it carries media;
//   - HEARTBEAT_OK is stripped (StripHeartbeatToken, in ModeHeartbeat when
//     opts.Heartbeat) and an ack gives no payload;
//   - when the model produced nothing at all and a tool failed, one IsError
//     payload quotes the tool error (ToolErrorText), unless a messaging
//     tool already replied. A deliberate NO_REPLY or heartbeat ack is the
//     model's answer and gets no fallback.
//
// It returns nil when nothing is to be sent.
func Build(msg *core.AssistantMessage, opts Options) []core.ReplyPayload {
	text := ""
	failed := false
	errorMessage := ""
	if msg != nil {
		text = msg.Text()
		failed = msg.StopReason == core.StopReasonError
		errorMessage = msg.ErrorMessage
	}
	if failed && jsTrim(text) == "" {
		return []core.ReplyPayload{{Text: AssistantErrorText(errorMessage), IsError: true}}
	}
	p, outcome := normalize(text, opts)
	switch outcome {
	case outcomeSend:
		return []core.ReplyPayload{p}
	case outcomeEmpty:
		if jsTrim(opts.ToolErrorText) != "" && !opts.MessagingToolReplied {
			return []core.ReplyPayload{{Text: ToolErrorText(opts.ToolErrorName, opts.ToolErrorText), IsError: true}}
		}
	}
	return nil
}

// outcome says what normalize made of a reply.
type outcome uint8

const (
	outcomeSend   outcome = iota // a payload to deliver
	outcomeEmpty                 // nothing renderable: no text, no media
	outcomeSilent                // the model chose silence or acked a heartbeat
)

// normalize applies the reply pipeline to one text.
func normalize(text string, opts Options) (core.ReplyPayload, outcome) {
	if jsTrim(text) == "" {
		return core.ReplyPayload{}, outcomeEmpty
	}
	if IsSilent(text) {
		return core.ReplyPayload{}, outcomeSilent
	}
	text, media := SplitMedia(text)
	text, tags := ParseTags(text)
	hasMedia := len(media) > 0
	if !hasMedia && jsTrim(text) == "" {
		if tags.AudioAsVoice || tags.HasReplyTag {
			return core.ReplyPayload{}, outcomeEmpty
		}
	}

	if IsSilent(text) {
		if !hasMedia {
			return core.ReplyPayload{}, outcomeSilent
		}
		text = ""
	}
	if rest, ok := StripSilent(text); ok {
		text = rest
		if text == "" && !hasMedia {
			return core.ReplyPayload{}, outcomeSilent
		}
	}
	if text != "" && IsSilentPrefix(jsTrim(text)) {
		if !hasMedia {
			return core.ReplyPayload{}, outcomeSilent
		}
		text = ""
	}

	mode := ModeMessage
	if opts.Heartbeat {
		mode = ModeHeartbeat
	}
	if opts.Heartbeat || strings.Contains(text, HeartbeatToken) {
		res := StripHeartbeatToken(text, mode, opts.AckMaxChars)
		if res.ShouldSkip {
			if !hasMedia {
				return core.ReplyPayload{}, outcomeSilent
			}
			text = ""
		} else {
			text = res.Text
			if res.DidStrip && strings.Trim(text, "*`~_ ") == "" {
				// "**HEARTBEAT_OK**" leaves its wrappers behind.
				text = ""
			}
		}
	}

	text = jsTrim(text)
	if text == "" && !hasMedia {
		return core.ReplyPayload{}, outcomeSilent
	}
	p := core.ReplyPayload{
		Text:           text,
		ReplyToID:      tags.ReplyToID,
		ReplyToTag:     tags.HasReplyTag,
		ReplyToCurrent: tags.ReplyToCurrent,
		AudioAsVoice:   tags.AudioAsVoice,
	}
	if hasMedia {
		p.MediaURL = media[0]
		p.MediaURLs = media
	}
	return p, outcomeSend
}
