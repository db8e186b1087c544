package discordtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var ann = User{ID: "500", Username: "ann"}

func TestAuthorization(t *testing.T) {
	s := New(t)

	for _, auth := range []string{noAuth, "Bot wrong", s.Token, "Bearer " + s.Token} {
		status, body, _ := do(t, s, "GET", "/users/@me", nil, auth)
		if status != 401 {
			t.Errorf("auth %q: status %d, want 401", auth, status)
		}
		wantJSON(t, "401 body", body, `{"code":0,"message":"401: Unauthorized"}`)
	}

	var me User
	mustDo(t, s, "GET", "/users/@me", nil, &me)
	if me != s.BotUser || me.ID != DefaultBotID || !me.Bot || me.Discriminator != "0" {
		t.Errorf("GET /users/@me = %+v", me)
	}
	// Any API version works, and the token names the bot as real ones do.
	if status, _, _ := do(t, s, "GET", "/api/v10/users/@me", nil, ""); status != 200 {
		t.Errorf("v10 = %d", status)
	}
	if status, _, _ := do(t, s, "GET", "/api/users/@me", nil, ""); status != 200 {
		t.Errorf("unversioned = %d", status)
	}
	id, _ := base64.RawStdEncoding.DecodeString(strings.Split(DefaultToken, ".")[0])
	if string(id) != DefaultBotID {
		t.Errorf("token names bot %q", id)
	}

	// GET /gateway needs no token, /gateway/bot does.
	status, body, _ := do(t, s, "GET", "/gateway", nil, noAuth)
	if status != 200 {
		t.Fatalf("GET /gateway = %d", status)
	}
	wantJSON(t, "GET /gateway", body, `{"url":"`+s.GatewayURL+`"}`)
	if status, _, _ := do(t, s, "GET", "/gateway/bot", nil, noAuth); status != 401 {
		t.Errorf("GET /gateway/bot without token = %d", status)
	}

	reqs := s.Requests()
	if len(reqs) != 9 {
		t.Fatalf("Requests() has %d entries, want 9", len(reqs))
	}
	if r := reqs[0]; r.Authorized || r.Route != RouteGetCurrentUser || r.Status != 401 || r.Path != "/users/@me" || r.Method != "GET" {
		t.Errorf("first request = %+v", r)
	}
	if r := reqs[4]; !r.Authorized || r.Status != 200 {
		t.Errorf("authorized request = %+v", r)
	}
}

func TestCustomTokenAndBot(t *testing.T) {
	s := New(t, WithToken("other-token"), WithBotUser(User{Username: "relay"}))
	if status, _, _ := do(t, s, "GET", "/users/@me", nil, "Bot "+DefaultToken); status != 401 {
		t.Errorf("default token accepted: %d", status)
	}
	var me User
	mustDo(t, s, "GET", "/users/@me", nil, &me)
	if me.Username != "relay" || me.ID != DefaultBotID || !me.Bot {
		t.Errorf("bot = %+v", me)
	}
}

func TestUnknownRoutes(t *testing.T) {
	s := New(t)
	status, body, _ := do(t, s, "GET", "/guilds/1/members", nil, "")
	if status != 404 {
		t.Errorf("unknown route = %d", status)
	}
	wantJSON(t, "404 body", body, `{"code":0,"message":"404: Not Found"}`)
	if status, _, _ := do(t, s, "GET", "/nothing-here", nil, ""); status != 404 {
		t.Errorf("outside /api = %d", status)
	}
	status, body, _ = do(t, s, "DELETE", "/channels/1/typing", nil, "")
	if status != 405 {
		t.Errorf("wrong method = %d", status)
	}
	wantJSON(t, "405 body", body, `{"code":0,"message":"405: Method Not Allowed"}`)
	if r := s.Requests()[0]; r.Route != "" || r.Status != 404 {
		t.Errorf("unknown request recorded as %+v", r)
	}
}

func TestClientRedirectsDiscordOnly(t *testing.T) {
	s := New(t)
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://discord.com/api/v9/users/@me", nil)
	req.Header.Set("Authorization", "Bot "+s.Token)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("https://discord.com via Client = %d", resp.StatusCode)
	}
	resp, err = s.Client().Get("https://example.com/")
	if err == nil {
		resp.Body.Close()
		t.Fatal("request to example.com went through")
	}
	if !strings.Contains(err.Error(), "only discord.com is faked") {
		t.Errorf("error = %v", err)
	}
}

func TestCreateMessage(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := New(t, WithClock(func() time.Time { return now }))
	s.AddChannel(Channel{ID: "200", Name: "general"})
	in := s.PushMessageCreate(s.GuildMessage("200", ann, "question"))

	var m Message
	mustDo(t, s, "POST", "/channels/200/messages", map[string]any{
		"content":           "answer <@500>",
		"allowed_mentions":  map[string]any{"parse": []string{}, "replied_user": true},
		"message_reference": map[string]any{"message_id": in.ID},
		"tts":               false,
	}, &m)
	if m.Author != s.BotUser || m.ChannelID != "200" || m.GuildID != DefaultGuildID || m.Content != "answer <@500>" {
		t.Errorf("message = %+v", m)
	}
	if m.Type != MessageReply || m.Reference == nil || m.Reference.MessageID != in.ID || m.Referenced == nil || m.Referenced.Content != "question" {
		t.Errorf("reply fields = %+v / %+v", m.Reference, m.Referenced)
	}
	if len(m.Mentions) != 1 || m.Mentions[0].ID != "500" || !m.Timestamp.Equal(now) {
		t.Errorf("mentions %+v, timestamp %v", m.Mentions, m.Timestamp)
	}
	// Snowflakes carry the clock and increase.
	id, _ := strconv.ParseUint(m.ID, 10, 64)
	inID, _ := strconv.ParseUint(in.ID, 10, 64)
	if id <= inID || !discordEpoch.Add(time.Duration(id>>22)*time.Millisecond).Equal(now) {
		t.Errorf("snowflake %d after %d does not encode %v", id, inID, now)
	}

	sent, err := s.WaitSent(waitCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	got := sent[0]
	if got.Edit || got.ChannelID != "200" || got.MessageID != m.ID || got.Content != "answer <@500>" ||
		got.Reference == nil || got.Reference.MessageID != in.ID ||
		got.AllowedMentions == nil || len(got.AllowedMentions.Parse) != 0 || !got.AllowedMentions.RepliedUser {
		t.Errorf("Sent()[0] = %+v", got)
	}

	// A second message without a reference is a plain one.
	var plain Message
	mustDo(t, s, "POST", "/channels/200/messages", map[string]any{"content": "more", "embeds": []any{map[string]string{"title": "x"}}}, &plain)
	if plain.Type != MessageDefault || plain.Reference != nil || len(plain.Embeds) != 1 {
		t.Errorf("plain = %+v", plain)
	}
	if sent := s.Sent(); len(sent) != 2 || len(sent[1].Embeds) != 1 || sent[1].AllowedMentions != nil {
		t.Errorf("Sent() = %+v", sent)
	}
}

func TestContentLimit(t *testing.T) {
	s := New(t)
	s.AddChannel(Channel{ID: "200"})
	// The limit counts characters, not bytes.
	mustDo(t, s, "POST", "/channels/200/messages", map[string]any{"content": strings.Repeat("é", 2000)}, nil)

	status, body, _ := do(t, s, "POST", "/channels/200/messages", map[string]any{"content": strings.Repeat("x", 2001)}, "")
	if status != 400 {
		t.Errorf("2001 characters = %d", status)
	}
	wantJSON(t, "2001 characters", body, `{"code":50035,"message":"Invalid Form Body",
		"errors":{"content":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH","message":"Must be 2000 or fewer in length."}]}}}`)
	if n := len(s.Sent()); n != 1 {
		t.Errorf("refused message recorded: %d sent", n)
	}
}

func TestMessageErrors(t *testing.T) {
	s := New(t)
	s.AddChannel(Channel{ID: "200"})
	tests := []struct {
		name   string
		path   string
		body   any
		status int
		want   string
	}{
		{"empty", "/channels/200/messages", map[string]any{"content": ""}, 400,
			`{"code":50006,"message":"Cannot send an empty message"}`},
		{"unknown channel", "/channels/999/messages", map[string]any{"content": "x"}, 404,
			`{"code":10003,"message":"Unknown Channel"}`},
		{"invalid JSON", "/channels/200/messages", "{not json", 400,
			`{"code":50109,"message":"The request body contains invalid JSON."}`},
		{"reply to unknown message", "/channels/200/messages", map[string]any{"content": "x", "message_reference": map[string]any{"message_id": "1"}}, 400,
			`{"code":50035,"message":"Invalid Form Body","errors":{"message_reference":{"_errors":[{"code":"REPLIES_UNKNOWN_MESSAGE","message":"Unknown message"}]}}}`},
		{"too many embeds", "/channels/200/messages", map[string]any{"embeds": make([]map[string]string, 11)}, 400,
			`{"code":50035,"message":"Invalid Form Body","errors":{"embeds":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH","message":"Must be 10 or fewer in length."}]}}}`},
		{"users parsed and listed", "/channels/200/messages", map[string]any{"content": "x", "allowed_mentions": map[string]any{"parse": []string{"users"}, "users": []string{"500"}}}, 400,
			`{"code":50035,"message":"Invalid Form Body","errors":{"allowed_mentions":{"_errors":[{"code":"MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE","message":"parse:[\"users\"] and users: [ids...] are mutually exclusive."}]}}}`},
		{"unknown parse kind", "/channels/200/messages", map[string]any{"content": "x", "allowed_mentions": map[string]any{"parse": []string{"roles", "user"}}}, 400,
			`{"code":50035,"message":"Invalid Form Body","errors":{"allowed_mentions":{"parse":{"1":{"_errors":[{"code":"ENUM_TYPE_COERCE","message":"Value \"user\" is not a valid enum value."}]}}}}}`},
		{"unknown channel lookup", "/channels/999", nil, 404, `{"code":10003,"message":"Unknown Channel"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := "POST"
			if tt.body == nil {
				method = "GET"
			}
			status, body, _ := do(t, s, method, tt.path, tt.body, "")
			if status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
			wantJSON(t, "body", body, tt.want)
		})
	}
	if n := len(s.Sent()); n != 0 {
		t.Errorf("failed calls recorded %d sent messages", n)
	}

	// fail_if_not_exists: false sends a plain message instead.
	var m Message
	mustDo(t, s, "POST", "/channels/200/messages", map[string]any{
		"content": "x", "message_reference": map[string]any{"message_id": "1", "fail_if_not_exists": false},
	}, &m)
	if m.Type != MessageDefault || m.Reference != nil {
		t.Errorf("lenient reply = %+v", m)
	}
}

func TestEditMessage(t *testing.T) {
	s := New(t)
	s.AddChannel(Channel{ID: "200"})
	theirs := s.PushMessageCreate(s.GuildMessage("200", ann, "theirs"))
	var mine Message
	mustDo(t, s, "POST", "/channels/200/messages", map[string]any{"content": "draft"}, &mine)

	var edited Message
	mustDo(t, s, "PATCH", "/channels/200/messages/"+mine.ID, map[string]any{"content": "final"}, &edited)
	if edited.ID != mine.ID || edited.Content != "final" || edited.EditedTimestamp == nil {
		t.Errorf("edited = %+v", edited)
	}
	// Embeds alone leave the content.
	mustDo(t, s, "PATCH", "/channels/200/messages/"+mine.ID, map[string]any{"embeds": []any{map[string]string{"title": "t"}}}, &edited)
	if edited.Content != "final" || len(edited.Embeds) != 1 {
		t.Errorf("embed edit = %+v", edited)
	}
	sent := s.Sent()
	if len(sent) != 3 || !sent[1].Edit || sent[1].MessageID != mine.ID || sent[1].Content != "final" || !sent[2].Edit || sent[2].Content != "final" {
		t.Errorf("Sent() = %+v", sent)
	}

	for _, tt := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/channels/200/messages/" + theirs.ID, `{"content":"x"}`, 403, `{"code":50005,"message":"Cannot edit a message authored by another user"}`},
		{"/channels/200/messages/1", `{"content":"x"}`, 404, `{"code":10008,"message":"Unknown Message"}`},
		{"/channels/999/messages/1", `{"content":"x"}`, 404, `{"code":10003,"message":"Unknown Channel"}`},
		{"/channels/200/messages/" + mine.ID, `{"content":"` + strings.Repeat("x", 2001) + `"}`, 400, ""},
		{"/channels/200/messages/" + mine.ID, `{"content":"","embeds":[]}`, 400, `{"code":50006,"message":"Cannot send an empty message"}`},
	} {
		status, body, _ := do(t, s, "PATCH", tt.path, tt.body, "")
		if status != tt.status {
			t.Errorf("PATCH %s %.20s = %d %s, want %d", tt.path, tt.body, status, body, tt.status)
		}
		if tt.want != "" {
			wantJSON(t, "PATCH "+tt.path, body, tt.want)
		}
	}
	if n := len(s.Sent()); n != 3 {
		t.Errorf("failed edits recorded: %d sent", n)
	}
}

func TestReactionsAndTyping(t *testing.T) {
	s := New(t)
	m := s.PushMessageCreate(s.GuildMessage("200", ann, "react to me"))
	base := "/channels/200/messages/" + m.ID + "/reactions/"
	for _, emoji := range []string{"👍", "#️⃣", "party:123456789012345678"} {
		status, body, _ := do(t, s, "PUT", base+url.PathEscape(emoji)+"/@me", nil, "")
		if status != 204 || len(body) != 0 {
			t.Errorf("react %q = %d %s", emoji, status, body)
		}
	}
	status, body, _ := do(t, s, "PUT", base+url.PathEscape(":thumbsup:")+"/@me", nil, "")
	if status != 400 {
		t.Errorf("shortcode = %d", status)
	}
	wantJSON(t, "shortcode", body, `{"code":10014,"message":"Unknown Emoji"}`)
	if status, _, _ := do(t, s, "PUT", "/channels/200/messages/1/reactions/%F0%9F%91%8D/@me", nil, ""); status != 404 {
		t.Errorf("unknown message = %d", status)
	}
	want := []Reaction{
		{ChannelID: "200", MessageID: m.ID, Emoji: "👍"},
		{ChannelID: "200", MessageID: m.ID, Emoji: "#️⃣"},
		{ChannelID: "200", MessageID: m.ID, Emoji: "party:123456789012345678"},
	}
	if got := s.Reactions(); !slices.Equal(got, want) {
		t.Errorf("Reactions() = %+v", got)
	}

	if status, _, _ := do(t, s, "POST", "/channels/200/typing", nil, ""); status != 204 {
		t.Errorf("typing = %d", status)
	}
	if status, _, _ := do(t, s, "POST", "/channels/999/typing", nil, ""); status != 404 {
		t.Errorf("typing in unknown channel = %d", status)
	}
	if got := s.Typing(); !slices.Equal(got, []string{"200"}) {
		t.Errorf("Typing() = %v", got)
	}
}

func TestChannelsAndUsers(t *testing.T) {
	s := New(t)
	s.AddChannel(Channel{ID: "200", Name: "general"})
	s.AddChannel(Channel{ID: "201", Type: ChannelGuildText, GuildID: "900"})
	dm := s.DirectMessage(ann, "hi")
	s.ThreadMessage("300", "200", ann, "in thread")

	for _, tt := range []struct {
		id   string
		want string
	}{
		{"200", `{"id":"200","type":0,"guild_id":"` + DefaultGuildID + `","name":"general"}`},
		{"201", `{"id":"201","type":0,"guild_id":"900","name":"channel-201"}`},
		{dm.ChannelID, `{"id":"` + dm.ChannelID + `","type":1,"recipients":[{"id":"500","username":"ann","discriminator":"0"}]}`},
		{"300", `{"id":"300","type":11,"guild_id":"` + DefaultGuildID + `","parent_id":"200","name":"channel-300","owner_id":"500"}`},
	} {
		status, body, _ := do(t, s, "GET", "/channels/"+tt.id, nil, "")
		if status != 200 {
			t.Errorf("GET /channels/%s = %d", tt.id, status)
		}
		wantJSON(t, "channel "+tt.id, body, tt.want)
	}

	// POST /users/@me/channels finds the same DM, for known users only.
	var ch Channel
	mustDo(t, s, "POST", "/users/@me/channels", map[string]string{"recipient_id": "500"}, &ch)
	if ch.ID != dm.ChannelID || ch.Type != ChannelDM || s.DMChannel(ann).ID != dm.ChannelID {
		t.Errorf("DM channel = %+v, want %s", ch, dm.ChannelID)
	}
	if status, _, _ := do(t, s, "POST", "/users/@me/channels", map[string]string{"recipient_id": "777"}, ""); status != 404 {
		t.Errorf("DM with unknown user = %d", status)
	}
	s.AddUser(User{ID: "777", Username: "bob"})
	var bob User
	mustDo(t, s, "GET", "/users/777", nil, &bob)
	if bob.Username != "bob" || bob.Discriminator != "0" {
		t.Errorf("GET /users/777 = %+v", bob)
	}
	if status, _, _ := do(t, s, "GET", "/users/778", nil, ""); status != 404 {
		t.Errorf("unknown user = %d", status)
	}
}

func TestRateLimitNext(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := New(t, WithClock(func() time.Time { return now }))
	s.AddChannel(Channel{ID: "200"})
	s.RateLimitNext(RouteCreateMessage, 1500*time.Millisecond, false)
	s.RateLimitNext(RouteCreateMessage, 250*time.Millisecond, true)

	status, body, h := do(t, s, "POST", "/channels/200/messages", map[string]string{"content": "x"}, "")
	if status != 429 {
		t.Fatalf("status %d", status)
	}
	wantJSON(t, "429 body", body, `{"message":"You are being rate limited.","retry_after":1.5,"global":false}`)
	for k, v := range map[string]string{
		"Retry-After": "2", "X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "0",
		"X-RateLimit-Reset": "1800000001.500", "X-RateLimit-Reset-After": "1.500", "X-RateLimit-Scope": "user",
		"X-RateLimit-Global": "", "Content-Type": "application/json",
	} {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if h.Get("X-RateLimit-Bucket") == "" {
		t.Error("no X-RateLimit-Bucket")
	}

	status, body, h = do(t, s, "POST", "/channels/200/messages", map[string]string{"content": "x"}, "")
	if status != 429 || h.Get("X-RateLimit-Global") != "true" || h.Get("X-RateLimit-Scope") != "global" || h.Get("Retry-After") != "1" {
		t.Errorf("global 429 = %d %v", status, h)
	}
	wantJSON(t, "global 429 body", body, `{"message":"You are being rate limited.","retry_after":0.25,"global":true}`)

	// Only the prepared requests are refused, and they send nothing.
	mustDo(t, s, "POST", "/channels/200/messages", map[string]string{"content": "x"}, nil)
	if n := len(s.Sent()); n != 1 {
		t.Errorf("%d messages sent, want 1", n)
	}

	s.FailNext(RouteTriggerTyping, 403, 50013, "Missing Permissions")
	status, body, _ = do(t, s, "POST", "/channels/200/typing", nil, "")
	if status != 403 {
		t.Errorf("FailNext status %d", status)
	}
	wantJSON(t, "FailNext body", body, `{"code":50013,"message":"Missing Permissions"}`)
	s.FailNext(RouteGetCurrentUser, 502, 0, "")
	_, body, _ = do(t, s, "GET", "/users/@me", nil, "")
	wantJSON(t, "FailNext default message", body, `{"code":0,"message":"502: Bad Gateway"}`)
	if len(s.Typing()) != 0 {
		t.Error("failed typing recorded")
	}

	rec := &recordingTB{TB: t}
	New(rec).RateLimitNext("POST /channels/{id}/messages", time.Second, false)
	if errs := rec.errors(); len(errs) != 1 || !strings.Contains(errs[0], "unknown route") {
		t.Errorf("misspelt route reported %q", errs)
	}
}

func TestMultipartUploadAndDownload(t *testing.T) {
	s := New(t)
	s.AddChannel(Channel{ID: "200"})
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="payload_json"`)
	h.Set("Content-Type", "application/json")
	pj, _ := w.CreatePart(h)
	_, _ = pj.Write([]byte(`{"content":"see file"}`))
	h = textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="files[0]"; filename="notes.txt"`)
	h.Set("Content-Type", "text/plain")
	fp, _ := w.CreatePart(h)
	_, _ = fp.Write([]byte("file body"))
	_ = w.Close()

	req, _ := http.NewRequestWithContext(t.Context(), "POST", s.APIURL+"channels/200/messages", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bot "+s.Token)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	err = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("upload = %d %v", resp.StatusCode, err)
	}
	if m.Content != "see file" || len(m.Attachments) != 1 || m.Attachments[0].Filename != "notes.txt" || m.Attachments[0].Size != 9 {
		t.Errorf("message = %+v", m)
	}
	sent := s.Sent()
	if len(sent) != 1 || len(sent[0].Files) != 1 || string(sent[0].Files[0].Data) != "file body" ||
		sent[0].Files[0].Field != "files[0]" || sent[0].Files[0].ContentType != "text/plain" {
		t.Errorf("Sent() = %+v", sent)
	}

	// Attachments of uploaded and pushed messages download from the fake.
	pushed := s.PushMessageCreate(s.GuildMessage("200", ann, "", WithAttachment("cat.png", "image/png", []byte("PNG…"))))
	for url, want := range map[string]string{m.Attachments[0].URL: "file body", pushed.Attachments[0].URL: "PNG…"} {
		resp, err := s.Client().Get(url)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(data) != want {
			t.Errorf("GET %s = %d %q", url, resp.StatusCode, data)
		}
	}
	if resp, err := s.Client().Get(s.URL + "/attachments/200/1/none.txt"); err != nil || resp.StatusCode != 404 {
		t.Errorf("missing attachment = %v %v", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}
}

func TestGatewayBotStartLimit(t *testing.T) {
	s := New(t, WithSessionStartLimit(10))
	check := func(remaining int) {
		t.Helper()
		status, body, _ := do(t, s, "GET", "/gateway/bot", nil, "")
		if status != 200 {
			t.Fatalf("GET /gateway/bot = %d", status)
		}
		wantJSON(t, "GET /gateway/bot", body, `{"url":"`+s.GatewayURL+`","shards":1,
			"session_start_limit":{"total":10,"remaining":`+strconv.Itoa(remaining)+`,"reset_after":86400000,"max_concurrency":1}}`)
	}
	check(10)
	c := dial(t, s, "")
	c.identify(IntentGuilds)
	check(9)
}

func TestGetMessagesAfter(t *testing.T) {
	s := New(t)
	u := User{ID: "500", Username: "ada"}
	var ids []string
	for i := range 4 {
		ids = append(ids, s.PushMessageCreate(s.GuildMessage("200", u, "m"+strconv.Itoa(i))).ID)
	}
	var got []Message
	mustDo(t, s, "GET", "/channels/200/messages?after="+ids[1]+"&limit=100", nil, &got)
	if len(got) != 2 || got[0].ID != ids[3] || got[1].ID != ids[2] {
		t.Errorf("messages after %s = %+v, want the two newer ones, newest first", ids[1], got)
	}
	mustDo(t, s, "GET", "/channels/200/messages?after="+ids[0]+"&limit=1", nil, &got)
	if len(got) != 1 || got[0].ID != ids[1] {
		t.Errorf("limit 1 after the first = %+v, want the oldest newer one", got)
	}
}
