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
