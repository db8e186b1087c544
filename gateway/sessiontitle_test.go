package gateway

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// Issue 26, "sessions people recognise": a list of session keys
// (agent:main:main) named nothing a person knew. sessions.list names each
// session by its label, else by its chat (the peer, the group and thread,
// the first words of a web chat), else by its key (a cron job), with a
// chatKind.
func TestSessionTitles(t *testing.T) {
	for _, c := range []struct {
		name  string
		e     core.SessionEntry
		title string
		kind  string
	}{
		{"direct", core.SessionEntry{Key: "agent:main:telegram:direct:42", Origin: &core.SessionOrigin{Kind: core.OriginDirect, Channel: "telegram", Peer: "Ann Lee", Title: "hi"}}, "Ann Lee", "direct"},
		{"group thread", core.SessionEntry{Key: "agent:main:slack:channel:c1:thread:9", Origin: &core.SessionOrigin{Kind: core.OriginChannel, Room: "#ops", Space: "Acme", Thread: "Deploy"}}, "#ops · Acme › Deploy", "channel"},
		{"group", core.SessionEntry{Key: "agent:main:telegram:group:-100", Origin: &core.SessionOrigin{Kind: core.OriginGroup, Subject: "Family"}}, "Family", "group"},
		{"web chat", core.SessionEntry{Key: "agent:main:session-ab", Origin: &core.SessionOrigin{Kind: core.OriginWebchat, Title: "Plan the trip"}}, "Plan the trip", "webchat"},
		{"web chat, only commands", core.SessionEntry{Key: "agent:main:session-cd", Origin: &core.SessionOrigin{Kind: core.OriginWebchat}}, "Web chat", "webchat"},
		{"cron", core.SessionEntry{Key: "agent:main:cron:nightly", Origin: &core.SessionOrigin{Kind: core.OriginCron}}, "Cron job nightly", "cron"},
		{"new chat, no turn yet", core.SessionEntry{Key: "agent:main:session-0f"}, "New chat", "webchat"},
		{"main, heartbeats only", core.SessionEntry{Key: "agent:main:main"}, "Main session", "main"},
		{"label wins", core.SessionEntry{Key: "agent:main:main", Label: "Ops desk", Origin: &core.SessionOrigin{Kind: core.OriginWebchat, Title: "x"}}, "Ops desk", "webchat"},
	} {
		if title, kind := sessionTitle(c.e); title != c.title || kind != c.kind {
			t.Errorf("%s: sessionTitle = %q, %q; want %q, %q", c.name, title, kind, c.title, c.kind)
		}
	}

	// Through the gateway: a new web chat is named by its first words.
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	created := call[map[string]any](t, c, "sessions.create", map[string]any{})
	key, _ := created["key"].(string)
	r.provider.Push(llmtest.Text("Sure."))
	sendChat(t, c, key, "  Plan the   trip to Lisbon in May  ", "run-1")
	chatEvents(t, c, "run-1")
	list := call[struct {
		Sessions []sessionRow `json:"sessions"`
	}](t, c, "sessions.list", map[string]any{})
	for _, row := range list.Sessions {
		if row.Key == key {
			if row.DisplayName != "Plan the trip to Lisbon in May" || row.ChatKind != "webchat" || row.Origin == nil || row.Origin.Channel != "webchat" {
				t.Errorf("row of the new chat = %+v", row)
			}
			return
		}
	}
	t.Fatalf("sessions.list has no row for %s: %+v", key, list.Sessions)
}

// Issue 26: "earlier conversations of a session after /new reachable". A
// reset keeps the old transcript on disk; now sessions.list lists it under
// earlier (newest first, titled by its first words) and chat.history reads
// it by its sessionId. Any other id reads the current transcript.
func TestEarlierConversationsAfterNew(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	r.provider.Push(llmtest.Text("Lisbon it is."), llmtest.Text("Fresh start."), llmtest.Text("Porto, then."))
	sendChat(t, c, "main", "Plan the trip to Lisbon", "run-1")
	chatEvents(t, c, "run-1")
	sendChat(t, c, "main", "/new", "run-2")
	chatEvents(t, c, "run-2")
	sendChat(t, c, "main", "And Porto?", "run-3")
	chatEvents(t, c, "run-3")

	list := call[struct {
		Sessions []sessionRow `json:"sessions"`
	}](t, c, "sessions.list", map[string]any{})
	var row *sessionRow
	for i := range list.Sessions {
		if list.Sessions[i].Key == "agent:main:main" {
			row = &list.Sessions[i]
		}
	}
	if row == nil || len(row.Earlier) != 1 || row.Earlier[0].Title != "Plan the trip to Lisbon" || row.Earlier[0].SessionID == row.SessionID ||
		row.Earlier[0].EndedAt < row.Earlier[0].CreatedAt {
		t.Fatalf("main's row = %+v; want one earlier transcript titled by its first words", row)
	}
	texts := func(sessionID string) (string, []string) {
		t.Helper()
		params := map[string]any{"sessionKey": "main"}
		if sessionID != "" {
			params["sessionId"] = sessionID
		}
		h := call[struct {
			SessionID string           `json:"sessionId"`
			Messages  []map[string]any `json:"messages"`
		}](t, c, "chat.history", params)
		var out []string
		for _, m := range h.Messages {
			if s, ok := m["content"].(string); ok {
				out = append(out, s)
			}
		}
		return h.SessionID, out
	}
	if id, got := texts(row.Earlier[0].SessionID); id != row.Earlier[0].SessionID || len(got) != 1 || got[0] != "Plan the trip to Lisbon" {
		t.Errorf("the earlier transcript reads %s %q", id, got)
	}
	if id, got := texts(""); id != row.SessionID || len(got) != 2 || got[1] != "And Porto?" {
		t.Errorf("the current transcript reads %s %q", id, got)
	}
	if id, _ := texts("not-one-of-its-transcripts"); id != row.SessionID {
		t.Errorf("an unknown sessionId read %s, want the current %s", id, row.SessionID)
	}
}
