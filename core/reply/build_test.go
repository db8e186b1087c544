package reply

import (
	"reflect"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func assistant(text string) *core.AssistantMessage {
	return &core.AssistantMessage{Content: core.Content{&core.TextContent{Text: text}}, StopReason: core.StopReasonStop}
}

func TestBuild(t *testing.T) {
	cases := []struct {
		name string
		msg  *core.AssistantMessage
		opts Options
		want []core.ReplyPayload
	}{
		{"plain", assistant("Hello!"), Options{}, []core.ReplyPayload{{Text: "Hello!"}}},
		{"trimmed", assistant("\n  Hello!  \n"), Options{}, []core.ReplyPayload{{Text: "Hello!"}}},
		{"silent", assistant("NO_REPLY"), Options{}, nil},
		{"silent envelope", assistant(`{"action":"NO_REPLY"}`), Options{}, nil},
		{"silent after a reply tag", assistant("[[reply_to_current]] NO_REPLY"), Options{}, nil},
		{"trailing token stripped", assistant("Done.\n\nNO_REPLY"), Options{}, []core.ReplyPayload{{Text: "Done."}}},
		{"glued leading token stripped", assistant("NO_REPLYHello there"), Options{}, []core.ReplyPayload{{Text: "Hello there"}}},
		{"token in the middle kept", assistant("say NO_REPLY to them"), Options{}, []core.ReplyPayload{{Text: "say NO_REPLY to them"}}},
		{"leftover fragment is silent", assistant("NO NO_REPLY"), Options{}, nil},
		{"heartbeat ack", assistant("HEARTBEAT_OK"), Options{Heartbeat: true}, nil},
		{"heartbeat short remainder is an ack", assistant("All quiet. HEARTBEAT_OK"), Options{Heartbeat: true}, nil},
		{"heartbeat alert without token", assistant("Disk is 95% full."), Options{Heartbeat: true}, []core.ReplyPayload{{Text: "Disk is 95% full."}}},
		{"heartbeat long remainder delivered", assistant(strings.Repeat("x", 20) + " HEARTBEAT_OK"), Options{Heartbeat: true, AckMaxChars: 10}, []core.ReplyPayload{{Text: strings.Repeat("x", 20)}}},
		{"token stripped from a message", assistant("HEARTBEAT_OK Here is the answer."), Options{}, []core.ReplyPayload{{Text: "Here is the answer."}}},
		{"token alone in a message", assistant("HEARTBEAT_OK"), Options{}, nil},
		{"wrapped token in a message", assistant("**HEARTBEAT_OK**"), Options{}, nil},
		{"reply tags", assistant("[[reply_to:77]] Sure."), Options{}, []core.ReplyPayload{{Text: "Sure.", ReplyToID: "77", ReplyToTag: true}}},
		{"reply to current", assistant("[[reply_to_current]] Sure."), Options{}, []core.ReplyPayload{{Text: "Sure.", ReplyToCurrent: true, ReplyToTag: true}}},
		{"media", assistant("Here it is\nMEDIA:https://example.com/a.png"), Options{}, []core.ReplyPayload{{Text: "Here it is", MediaURL: "https://example.com/a.png", MediaURLs: []string{"https://example.com/a.png"}}}},
		{"media only", assistant("MEDIA:/tmp/a.png"), Options{}, []core.ReplyPayload{{MediaURL: "/tmp/a.png", MediaURLs: []string{"/tmp/a.png"}}}},
		{"silent with media keeps media", assistant("MEDIA:/tmp/a.png\nNO_REPLY"), Options{}, []core.ReplyPayload{{MediaURL: "/tmp/a.png", MediaURLs: []string{"/tmp/a.png"}}}},
		{"voice note", assistant("[[audio_as_voice]]\nMEDIA:/tmp/a.ogg"), Options{}, []core.ReplyPayload{{MediaURL: "/tmp/a.ogg", MediaURLs: []string{"/tmp/a.ogg"}, AudioAsVoice: true}}},
		{"error without text", &core.AssistantMessage{StopReason: core.StopReasonError, ErrorMessage: "429 Too Many Requests"}, Options{}, []core.ReplyPayload{{Text: overloadedText, IsError: true}}},
		{"error with text keeps the text", &core.AssistantMessage{Content: core.Content{&core.TextContent{Text: "partial"}}, StopReason: core.StopReasonError, ErrorMessage: "boom"}, Options{}, []core.ReplyPayload{{Text: "partial"}}},
		{"empty error message", &core.AssistantMessage{StopReason: core.StopReasonError}, Options{}, []core.ReplyPayload{{Text: unknownErrorText, IsError: true}}},
		{"tool error fallback", assistant(""), Options{ToolErrorText: "command not found: foo", ToolErrorName: "exec"}, []core.ReplyPayload{{Text: "⚠️ 🛠️ exec failed: command not found: foo", IsError: true}}},
		{"tool error fallback for tags only", assistant("[[reply_to_current]]"), Options{ToolErrorText: "x"}, []core.ReplyPayload{{Text: "⚠️ 🛠️ tool failed: x", IsError: true}}},
		{"no fallback when a messaging tool replied", assistant(""), Options{ToolErrorText: "x", MessagingToolReplied: true}, nil},
		{"no fallback for a chosen silence", assistant("NO_REPLY"), Options{ToolErrorText: "x"}, nil},
		{"no fallback for a heartbeat ack", assistant("HEARTBEAT_OK"), Options{Heartbeat: true, ToolErrorText: "x"}, nil},
		{"no fallback with a reply", assistant("Could not run it, sorry."), Options{ToolErrorText: "x"}, []core.ReplyPayload{{Text: "Could not run it, sorry."}}},
		{"nothing at all", assistant(""), Options{}, nil},
		{"nil message", nil, Options{}, nil},
		{"nil message with tool error", nil, Options{ToolErrorText: "x"}, []core.ReplyPayload{{Text: "⚠️ 🛠️ tool failed: x", IsError: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Build(tc.msg, tc.opts)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Build = %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestBuildJoinsTextBlocks(t *testing.T) {
	msg := &core.AssistantMessage{Content: core.Content{
		&core.ThinkingContent{Thinking: "hmm NO_REPLY"},
		&core.TextContent{Text: "NO_"},
		&core.TextContent{Text: "REPLY"},
	}}
	if got := Build(msg, Options{}); got != nil {
		t.Errorf("streamed token split over blocks: %#v", got)
	}
}

func TestAssistantErrorText(t *testing.T) {
	cases := map[string]string{
		"": unknownErrorText,
		"prompt is too long: 210000 tokens > 200000 maximum": contextOverflowText,
		"400 roles must alternate":                           roleOrderingText,
		`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens too large"}}`: "LLM request rejected: max_tokens too large",
		`{"type":"overloaded_error"}`: overloadedText,
		"rate_limit_error: slow down": overloadedText,
		"context deadline exceeded":   timeoutText,
		"something odd":               "something odd",
		strings.Repeat("é", 700):      strings.Repeat("é", 600) + "…",
	}
	for raw, want := range cases {
		if got := AssistantErrorText(raw); got != want {
			t.Errorf("AssistantErrorText(%.40q) = %.60q, want %.60q", raw, got, want)
		}
	}
}
