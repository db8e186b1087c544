package gateway

import (
	"encoding/json"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/prompt"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// Issue 26, finding 3: after a reload the page showed the heartbeat poll,
// and after /new the session startup prompt, as the user's own words.
// chat.history now marks what Switchboard wrote with provenance
// internal_system and its source, and a person's message has none.
func TestFinding3HistoryMarksPromptsSwitchboardWrote(t *testing.T) {
	r := newRig(t, rigOptions{heartbeat: &core.HeartbeatConfig{Every: "1h", Target: "none"}})
	c := r.dial(r.opts(protocol.ScopeAdmin, protocol.ScopeRead, protocol.ScopeWrite))
	type msg struct {
		Role       string                `json:"role"`
		Provenance *core.InputProvenance `json:"provenance"`
		Content    json.RawMessage       `json:"content"`
	}
	history := func() []msg {
		t.Helper()
		h := call[struct {
			Messages []msg `json:"messages"`
		}](t, c, "chat.history", map[string]any{"sessionKey": "main"})
		return h.Messages
	}

	r.provider.Push(llmtest.Text("hi"))
	sendChat(t, c, "main", "hello", "run-1")
	chatEvents(t, c, "run-1")
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	call[map[string]any](t, c, "wake", map[string]any{"mode": "now", "text": "Calendar changed"})
	next(t, c, "heartbeat", nil)

	h := history()
	if len(h) != 4 || h[0].Role != "user" || h[0].Provenance != nil || h[2].Role != "user" ||
		h[2].Provenance == nil || *h[2].Provenance != (core.InputProvenance{Kind: core.ProvenanceInternalSystem, Source: core.ProvenanceSourceHeartbeat}) {
		t.Fatalf("history after a message and a heartbeat = %+v; want the person's message without provenance, the poll marked heartbeat", h)
	}

	r.provider.Push(llmtest.Text("Hello again"))
	sendChat(t, c, "main", "/new", "run-2")
	chatEvents(t, c, "run-2")
	h = history()
	var text string
	if len(h) > 0 {
		_ = json.Unmarshal(h[0].Content, &text)
	}
	if len(h) != 2 || h[0].Provenance == nil || h[0].Provenance.Source != core.ProvenanceSourceReset || text != prompt.BareSessionResetPrompt {
		t.Fatalf("history after /new = %+v; want the startup prompt marked reset", h)
	}
}
