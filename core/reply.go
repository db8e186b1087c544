package core

import "encoding/json"

// ReplyPayload is one reply the agent sends back to a channel (seed 000 §7,
// extended with the fields of OpenClaw's reply payload, openclaw-facts
// §5.1). A bridge turns it into platform messages: text chunked and
// converted to the platform's markup, media uploaded, the reply threaded.
// Every member is optional and omitted when zero, so a payload from a
// plugin that sets only text is also valid JSON for the gateway.
type ReplyPayload struct {
	// Text is the reply in Markdown.
	Text string `json:"text,omitempty"`
	// MediaURL is one attachment URL and MediaURLs a list of them; the
	// seed has both because senders use either form.
	MediaURL  string   `json:"mediaUrl,omitempty"`
	MediaURLs []string `json:"mediaUrls,omitempty"`
	// Interactive describes buttons and similar controls. It stays raw JSON
	// here because each platform renders its own subset; the bridges that
	// support controls decode it.
	Interactive json.RawMessage `json:"interactive,omitempty"`
	// Btw marks the answer to a side question (a "by the way" aside kept
	// out of the session history) and carries the question, so a channel
	// can show what is being answered.
	Btw *ReplyBtw `json:"btw,omitempty"`
	// ReplyToID is the platform message id the reply answers, for
	// threading.
	ReplyToID string `json:"replyToId,omitempty"`
	// ReplyToTag reports that the threading came from a reply tag in the
	// model's output ([[reply_to:<id>]]) rather than from the channel.
	ReplyToTag bool `json:"replyToTag,omitempty"`
	// ReplyToCurrent reports a [[reply_to_current]] tag not yet resolved to
	// the id of the message being answered.
	ReplyToCurrent bool `json:"replyToCurrent,omitempty"`
	// AudioAsVoice asks the bridge to send audio media as a voice note.
	AudioAsVoice bool `json:"audioAsVoice,omitempty"`
	// IsError marks a reply that reports a failure of the run.
	IsError bool `json:"isError,omitempty"`
	// IsReasoning marks the model's reasoning; channels without a reasoning
	// lane drop it.
	IsReasoning bool `json:"isReasoning,omitempty"`
	// IsCompactionNotice marks the notice that the session history was
	// compacted.
	IsCompactionNotice bool `json:"isCompactionNotice,omitempty"`
	// ChannelData is a per-channel envelope keyed by channel name, for what
	// only one platform understands; other bridges ignore it.
	ChannelData map[string]json.RawMessage `json:"channelData,omitempty"`
}

// ReplyBtw is the side question a reply answers (see ReplyPayload.Btw).
type ReplyBtw struct {
	Question string `json:"question"`
}
