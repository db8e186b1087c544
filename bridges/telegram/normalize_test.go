package telegram

import (
	"encoding/json"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

func update(t *testing.T, raw string) *models.Update {
	t.Helper()
	var u models.Update
	if err := json.Unmarshal([]byte(raw), &u); err != nil {
		t.Fatalf("update %s: %v", raw, err)
	}
	return &u
}

func testNormalizer() normalizer {
	return normalizer{accountID: "default", agentID: "main", session: core.SessionConfig{DMScope: core.DMScopePerChannelPeer},
		bot: identity{id: 999, username: "switchboard_bot"}}
}

func TestNormalizeDirectMessage(t *testing.T) {
	msg, why, ok := testNormalizer().normalize(update(t, `{"update_id":10,"message":{"message_id":5,"date":1700000000,
		"chat":{"id":42,"type":"private","first_name":"Ada"},"from":{"id":42,"is_bot":false,"first_name":"Ada","last_name":"L","username":"ada"},
		"text":"hello"}}`))
	if !ok {
		t.Fatalf("dropped: %s", why)
	}
	in := msg.Message
	if in.SessionKey != "agent:main:telegram:direct:42" || in.ChatType != core.ChatDirect || in.Body != "hello" ||
		in.Sender.ID != "42" || in.Sender.Name != "Ada L" || in.Sender.Username != "ada" || in.MessageID != "5" ||
		in.Timestamp != 1_700_000_000_000 || in.Route != (core.Route{Channel: "telegram", AccountID: "default", To: "42"}) {
		t.Errorf("inbound = %+v", in)
	}
	if msg.DedupeKey != "telegram:999:update:10" || msg.GroupID != "" || msg.HistoryKey != "" {
		t.Errorf("gating fields = %+v", msg)
	}
}

func TestNormalizeGroupsTopicsAndMentions(t *testing.T) {
	n := testNormalizer()
	for _, tc := range []struct {
		name, raw     string
		key           core.SessionKey
		thread, body  string
		mentioned     bool
		implicit, cmd bool
	}{
		{"group without mention", `{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":-100123,"type":"supergroup","title":"Team"},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"lunch?"}}`, "agent:main:telegram:group:-100123", "", "lunch?", false, false, false},
		{"mention entity (UTF-16 offsets)", `{"update_id":2,"message":{"message_id":2,"date":1,"chat":{"id":-100123,"type":"supergroup","title":"Team"},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"😀 @Switchboard_Bot hi","entities":[{"type":"mention","offset":3,"length":16}]}}`,
			"agent:main:telegram:group:-100123", "", "😀 @Switchboard_Bot hi", true, false, false},
		{"mention of someone else", `{"update_id":3,"message":{"message_id":3,"date":1,"chat":{"id":-100123,"type":"supergroup"},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"@other hi","entities":[{"type":"mention","offset":0,"length":6}]}}`,
			"agent:main:telegram:group:-100123", "", "@other hi", false, false, false},
		{"text_mention", `{"update_id":4,"message":{"message_id":4,"date":1,"chat":{"id":-5,"type":"group"},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"Bot hi","entities":[{"type":"text_mention","offset":0,"length":3,"user":{"id":999,"is_bot":true,"first_name":"Bot"}}]}}`,
			"agent:main:telegram:group:-5", "", "Bot hi", true, false, false},
		{"reply to the bot", `{"update_id":5,"message":{"message_id":5,"date":1,"chat":{"id":-5,"type":"group"},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"and then?","reply_to_message":{"message_id":4,"date":1,"chat":{"id":-5,"type":"group"},"from":{"id":999,"is_bot":true,"first_name":"Bot"},"text":"earlier"}}}`,
			"agent:main:telegram:group:-5", "", "and then?", false, true, false},
		{"command for this bot", `{"update_id":6,"message":{"message_id":6,"date":1,"chat":{"id":-5,"type":"group"},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"/new@switchboard_bot now","entities":[{"type":"bot_command","offset":0,"length":20}]}}`,
			"agent:main:telegram:group:-5", "", "/new now", true, false, true},
		{"bare command", `{"update_id":7,"message":{"message_id":7,"date":1,"chat":{"id":-5,"type":"group"},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"/status","entities":[{"type":"bot_command","offset":0,"length":7}]}}`,
			"agent:main:telegram:group:-5", "", "/status", false, false, true},
		{"forum topic", `{"update_id":8,"message":{"message_id":8,"date":1,"message_thread_id":42,"is_topic_message":true,"chat":{"id":-100999,"type":"supergroup","is_forum":true},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"in a topic"}}`, "agent:main:telegram:group:-100999:topic:42", "42", "in a topic", false, false, false},
		{"forum general topic", `{"update_id":9,"message":{"message_id":9,"date":1,"chat":{"id":-100999,"type":"supergroup","is_forum":true},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"general"}}`, "agent:main:telegram:group:-100999:topic:1", "1", "general", false, false, false},
		{"topic reply is not a reply to the bot", `{"update_id":10,"message":{"message_id":10,"date":1,"message_thread_id":42,"is_topic_message":true,"chat":{"id":-100999,"type":"supergroup","is_forum":true},
			"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"x","reply_to_message":{"message_id":42,"date":1,"chat":{"id":-100999,"type":"supergroup"},"from":{"id":999,"is_bot":true,"first_name":"Bot"},"forum_topic_created":{"name":"T","icon_color":1}}}}`,
			"agent:main:telegram:group:-100999:topic:42", "42", "x", false, false, false},
		{"private-chat topic", `{"update_id":11,"message":{"message_id":11,"date":1,"message_thread_id":99,"chat":{"id":42,"type":"private"},
			"from":{"id":42,"is_bot":false,"first_name":"Ada"},"text":"dm topic"}}`, "agent:main:telegram:direct:42:thread:42:99", "99", "dm topic", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, why, ok := n.normalize(update(t, tc.raw))
			if !ok {
				t.Fatalf("dropped: %s", why)
			}
			in := msg.Message
			if in.SessionKey != tc.key || in.Route.ThreadID != tc.thread || in.Body != tc.body {
				t.Errorf("key %q thread %q body %q; want %q %q %q", in.SessionKey, in.Route.ThreadID, in.Body, tc.key, tc.thread, tc.body)
			}
			if in.WasMentioned != tc.mentioned || msg.ImplicitMention != tc.implicit || msg.IsControlCommand != tc.cmd {
				t.Errorf("mentioned %v implicit %v command %v; want %v %v %v", in.WasMentioned, msg.ImplicitMention, msg.IsControlCommand, tc.mentioned, tc.implicit, tc.cmd)
			}
			if in.ChatType != core.ChatGroup && in.ChatType != core.ChatDirect {
				t.Errorf("chat type %q", in.ChatType)
			}
			if in.ChatType == core.ChatGroup && (msg.GroupID == "" || msg.HistoryKey == "" || !msg.CanDetectMention) {
				t.Errorf("group gating fields missing: %+v", msg)
			}
		})
	}
}

func TestNormalizeDrops(t *testing.T) {
	n := testNormalizer()
	for name, raw := range map[string]string{
		"edit":        `{"update_id":1,"edited_message":{"message_id":1,"date":1,"chat":{"id":42,"type":"private"},"from":{"id":42,"is_bot":false,"first_name":"A"},"text":"x"}}`,
		"own message": `{"update_id":2,"message":{"message_id":1,"date":1,"chat":{"id":42,"type":"private"},"from":{"id":999,"is_bot":true,"first_name":"Bot"},"text":"x"}}`,
		"other bot":   `{"update_id":3,"message":{"message_id":1,"date":1,"chat":{"id":-5,"type":"group"},"from":{"id":5,"is_bot":true,"first_name":"B"},"text":"x"}}`,
		"channel":     `{"update_id":4,"channel_post":{"message_id":1,"date":1,"chat":{"id":-100,"type":"channel"},"text":"x"}}`,
		"service":     `{"update_id":5,"message":{"message_id":1,"date":1,"chat":{"id":-5,"type":"group"},"from":{"id":7,"is_bot":false,"first_name":"B"},"new_chat_title":"T"}}`,
	} {
		if _, _, ok := n.normalize(update(t, raw)); ok {
			t.Errorf("%s: normalized, want dropped", name)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	f.Add(`{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":42,"type":"private"},"from":{"id":42,"is_bot":false,"first_name":"A"},"text":"/x@switchboard_bot y","entities":[{"type":"bot_command","offset":0,"length":99}]}}`)
	f.Add(`{"update_id":2,"message":{"message_id":1,"date":1,"chat":{"id":-5,"type":"group"},"from":{"id":7,"is_bot":false,"first_name":"B"},"text":"😀😀","entities":[{"type":"mention","offset":-1,"length":3}]}}`)
	n := testNormalizer()
	f.Fuzz(func(t *testing.T, raw string) {
		var u models.Update
		if json.Unmarshal([]byte(raw), &u) != nil {
			return
		}
		msg, _, ok := n.normalize(&u)
		if ok && (msg.Message == nil || msg.Message.SessionKey == "" || msg.DedupeKey == "") {
			t.Fatalf("normalized without a session key or dedupe key: %+v", msg)
		}
	})
}

func TestNormalizeMentionPatterns(t *testing.T) {
	n := testNormalizer()
	var err error
	if n.mentions, err = bridges.NewMentions([]string{`\bhey bot\b`}); err != nil {
		t.Fatal(err)
	}
	n.bot.username = "" // patterns alone make mentions detectable
	msg, _, ok := n.normalize(update(t, `{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":-5,"type":"group"},
		"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"Hey Bot, what's up?"}}`))
	if !ok || !msg.Message.WasMentioned || !msg.CanDetectMention {
		t.Errorf("pattern mention: ok %v mentioned %v detectable %v", ok, msg.Message.WasMentioned, msg.CanDetectMention)
	}
	msg, _, _ = n.normalize(update(t, `{"update_id":2,"message":{"message_id":2,"date":1,"chat":{"id":-5,"type":"group"},
		"from":{"id":7,"is_bot":false,"first_name":"Bob"},"text":"they bother me"}}`))
	if msg.Message.WasMentioned {
		t.Error("a non-matching message counted as a mention")
	}
}
