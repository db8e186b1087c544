package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// encoding is how a test request carries its parameters.
type encoding int

const (
	asMultipart encoding = iota // what go-telegram/bot sends
	asJSON
	asForm
)

func (e encoding) String() string {
	return [...]string{"multipart", "json", "form"}[e]
}

// reply is the Bot API envelope.
type reply struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// formValue encodes a parameter the way go-telegram/bot does: strings as is,
// everything else as JSON.
func formValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// encode builds a request body for params in the given encoding.
func encode(enc encoding, params map[string]any) (io.Reader, string, error) {
	switch enc {
	case asJSON:
		b, err := json.Marshal(params)
		return bytes.NewReader(b), "application/json", err
	case asForm:
		form := url.Values{}
		for k, v := range params {
			form.Set(k, formValue(v))
		}
		return strings.NewReader(form.Encode()), "application/x-www-form-urlencoded", nil
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range params {
		if f, ok := v.(fileUpload); ok {
			part, err := w.CreateFormFile(k, f.name)
			if err != nil {
				return nil, "", err
			}
			if _, err := part.Write(f.data); err != nil {
				return nil, "", err
			}
			continue
		}
		if err := w.WriteField(k, formValue(v)); err != nil {
			return nil, "", err
		}
	}
	return &buf, w.FormDataContentType(), w.Close()
}

// fileUpload is a multipart file parameter.
type fileUpload struct {
	name string
	data []byte
}

// post calls method with params and decodes the envelope. It does not touch
// testing.T, so goroutines may use it.
func post(ctx context.Context, s *Server, enc encoding, method string, params map[string]any) (reply, error) {
	body, contentType, err := encode(enc, params)
	if err != nil {
		return reply{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/bot"+s.Token+"/"+method, body)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := s.Client().Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	var r reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return reply{}, fmt.Errorf("decode: %w", err)
	}
	if r.OK != (resp.StatusCode == http.StatusOK) || !r.OK && r.ErrorCode != resp.StatusCode {
		return r, fmt.Errorf("HTTP %d with ok=%v error_code=%d", resp.StatusCode, r.OK, r.ErrorCode)
	}
	return r, nil
}

// polled is the outcome of a getUpdates call made in a goroutine.
type polled struct {
	reply reply
	err   error
}

func call(t *testing.T, s *Server, enc encoding, method string, params map[string]any) reply {
	t.Helper()
	r, err := post(t.Context(), s, enc, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return r
}

// mustCall calls method and decodes its result into dst, failing on an error
// reply.
func mustCall(t *testing.T, s *Server, enc encoding, method string, params map[string]any, dst any) {
	t.Helper()
	r := call(t, s, enc, method, params)
	if !r.OK {
		t.Fatalf("%s(%v) = %d %q", method, params, r.ErrorCode, r.Description)
	}
	if dst != nil {
		if err := json.Unmarshal(r.Result, dst); err != nil {
			t.Fatalf("%s: decode result %s: %v", method, r.Result, err)
		}
	}
}

func wantError(t *testing.T, r reply, code int, description string) {
	t.Helper()
	if r.OK || r.ErrorCode != code || r.Description != description {
		t.Errorf("reply = ok:%v %d %q, want %d %q", r.OK, r.ErrorCode, r.Description, code, description)
	}
}

func updateIDs(t *testing.T, r reply) []int64 {
	t.Helper()
	if !r.OK {
		t.Fatalf("getUpdates = %d %q", r.ErrorCode, r.Description)
	}
	var updates []Update
	if err := json.Unmarshal(r.Result, &updates); err != nil {
		t.Fatalf("decode updates %s: %v", r.Result, err)
	}
	ids := []int64{}
	for _, u := range updates {
		ids = append(ids, u.UpdateID)
	}
	return ids
}

func sameIDs(a, b []int64) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

var ann = User{ID: 42, FirstName: "Ann", Username: "ann_test"}

func TestTokenMethodsAndEncodings(t *testing.T) {
	s := New(t)

	resp, err := s.Client().Post(s.URL+"/bot123:wrong/getMe", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || strings.TrimSpace(string(body)) != `{"ok":false,"error_code":401,"description":"Unauthorized"}` {
		t.Errorf("wrong token = %d %s", resp.StatusCode, body)
	}

	wantError(t, call(t, s, asJSON, "noSuchMethod", nil), 404, "Not Found")

	for _, enc := range []encoding{asMultipart, asJSON, asForm} {
		var me User
		mustCall(t, s, enc, "getMe", nil, &me)
		if me != s.BotUser || me.Username != "switchboard_bot" || !me.IsBot || me.ID != 7000000001 {
			t.Errorf("%v getMe = %+v, want %+v", enc, me, s.BotUser)
		}
	}

	// GET with the query string, and method names in any case.
	resp, err = s.Client().Get(s.URL + "/bot" + s.Token + "/GETME")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /GETME = %d", resp.StatusCode)
	}

	// go-telegram/bot sends parameterless methods as an empty multipart body.
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/bot"+s.Token+"/getMe", http.NoBody)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=xyz")
	resp, err = s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("empty multipart getMe = %d", resp.StatusCode)
	}

	got := s.Requests()
	want := []string{"noSuchMethod", "getMe", "getMe", "getMe", "getMe", "getMe"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Requests() = %v, want %v", got, want)
	}
	calls := s.Calls()
	if calls[1].ContentType != "multipart/form-data" || calls[2].ContentType != "application/json" ||
		calls[3].ContentType != "application/x-www-form-urlencoded" {
		t.Errorf("content types = %q %q %q", calls[1].ContentType, calls[2].ContentType, calls[3].ContentType)
	}
}

func TestCustomTokenAndBot(t *testing.T) {
	s := New(t, WithToken("555:secret"), WithBotUser(User{FirstName: "Other", Username: "other_bot"}))
	var me User
	mustCall(t, s, asJSON, "getMe", nil, &me)
	if me.ID != 555 || me.Username != "other_bot" || !me.IsBot {
		t.Errorf("getMe = %+v", me)
	}
}

// Updates pushed from many goroutines while the bot confirms offsets are
// all delivered: an update_id is taken and queued in one step, so no
// update can join the queue behind a higher one the bot already confirmed
// (the load tool lost Telegram messages that way).
func TestConcurrentPushesAreNotSkipped(t *testing.T) {
	s := New(t)
	const pushers, each = 20, 50
	var wg sync.WaitGroup
	for p := range pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s.PushUpdate(s.TextMessage(int64(p+1), ChatPrivate, ann, fmt.Sprint("m", i)))
			}
		}()
	}
	seen := map[int64]bool{}
	offset := int64(0)
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < pushers*each && time.Now().Before(deadline) {
		for _, id := range updateIDs(t, call(t, s, asJSON, "getUpdates", map[string]any{"offset": offset, "timeout": 1})) {
			seen[id] = true
			offset = max(offset, id+1)
		}
	}
	wg.Wait()
	if len(seen) != pushers*each {
		t.Fatalf("got %d of %d updates", len(seen), pushers*each)
	}
}

func TestGetUpdatesOffsetSemantics(t *testing.T) {
	s := New(t)
	for i := range 3 {
		if id := s.PushUpdate(s.TextMessage(1, ChatPrivate, ann, fmt.Sprint("m", i))); id != int64(i+1) {
			t.Fatalf("PushUpdate #%d = %d", i, id)
		}
	}
	for _, enc := range []encoding{asMultipart, asJSON, asForm} {
		if ids := updateIDs(t, call(t, s, enc, "getUpdates", nil)); !sameIDs(ids, []int64{1, 2, 3}) {
			t.Errorf("%v: unconfirmed updates = %v, want all three again", enc, ids)
		}
	}
	if ids := updateIDs(t, call(t, s, asJSON, "getUpdates", map[string]any{"limit": 2})); !sameIDs(ids, []int64{1, 2}) {
		t.Errorf("limit 2 = %v", ids)
	}
	if ids := updateIDs(t, call(t, s, asMultipart, "getUpdates", map[string]any{"offset": 3})); !sameIDs(ids, []int64{3}) {
		t.Errorf("offset 3 = %v", ids)
	}
	if ids := updateIDs(t, call(t, s, asJSON, "getUpdates", map[string]any{"offset": 0})); !sameIDs(ids, []int64{3}) {
		t.Errorf("after confirming 1 and 2 = %v, want them forgotten", ids)
	}
	if n := s.PendingUpdates(); n != 1 {
		t.Errorf("PendingUpdates = %d, want 1", n)
	}
	if ids := updateIDs(t, call(t, s, asForm, "getUpdates", map[string]any{"offset": 4, "allowed_updates": []string{"message"}})); len(ids) != 0 {
		t.Errorf("offset past all = %v", ids)
	}

	// Explicit IDs are kept, and assigned ones continue above them.
	s.PushUpdate(`{"update_id":100,"message":{"message_id":50,"date":1,"chat":{"id":1,"type":"private"},"text":"x"}}`)
	if id := s.PushUpdate([]byte(`{"message":{"message_id":51,"date":1,"chat":{"id":1,"type":"private"},"text":"y"}}`)); id != 101 {
		t.Errorf("update after 100 got id %d", id)
	}
	s.PushUpdate(Update{Message: &Message{MessageID: 52, Chat: Chat{ID: 1, Type: ChatPrivate}, Text: "z"}})
	// A negative offset keeps the last -offset updates.
	if ids := updateIDs(t, call(t, s, asJSON, "getUpdates", map[string]any{"offset": -2})); !sameIDs(ids, []int64{101, 102}) {
		t.Errorf("offset -2 = %v", ids)
	}
}

func TestLongPollWakesOnPush(t *testing.T) {
	s := New(t)
	result := make(chan polled, 1)
	go func() {
		r, err := post(context.Background(), s, asMultipart, "getUpdates", map[string]any{"offset": 1, "timeout": 30})
		result <- polled{r, err}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := s.WaitFor(ctx, func() bool { return s.LongPolls() == 1 }); err != nil {
		t.Fatalf("poll never started waiting: %v", err)
	}
	s.PushUpdate(s.TextMessage(1, ChatPrivate, ann, "hello"))
	select {
	case p := <-result:
		if p.err != nil {
			t.Fatal(p.err)
		}
		if ids := updateIDs(t, p.reply); !sameIDs(ids, []int64{1}) {
			t.Errorf("woken poll returned %v", ids)
		}
	case <-ctx.Done():
		t.Fatal("long poll did not wake on push")
	}
}

func TestLongPollTimesOutEmpty(t *testing.T) {
	s := New(t)
	r := call(t, s, asJSON, "getUpdates", map[string]any{"timeout": 1})
	if ids := updateIDs(t, r); len(ids) != 0 || string(r.Result) != "[]" {
		t.Errorf("timed-out poll = %s", r.Result)
	}
}

func TestLongPollEndsWithClient(t *testing.T) {
	s := New(t)
	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, 1)
	go func() {
		body, contentType, _ := encode(asJSON, map[string]any{"timeout": 30})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/bot"+s.Token+"/getUpdates", body)
		req.Header.Set("Content-Type", contentType)
		resp, err := s.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errs <- err
	}()
	wait, stop := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop()
	if err := s.WaitFor(wait, func() bool { return s.LongPolls() == 1 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errs; err == nil {
		t.Error("cancelled poll succeeded")
	}
	if err := s.WaitFor(wait, func() bool { return s.LongPolls() == 0 }); err != nil {
		t.Errorf("server still holds the cancelled poll: %v", err)
	}
}

func TestSecondPollerTerminatesFirst(t *testing.T) {
	s := New(t)
	first := make(chan polled, 1)
	go func() {
		r, err := post(context.Background(), s, asJSON, "getUpdates", map[string]any{"timeout": 30})
		first <- polled{r, err}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := s.WaitFor(ctx, func() bool { return s.LongPolls() == 1 }); err != nil {
		t.Fatal(err)
	}
	if ids := updateIDs(t, call(t, s, asJSON, "getUpdates", nil)); len(ids) != 0 {
		t.Errorf("second poll = %v", ids)
	}
	p := <-first
	if p.err != nil {
		t.Fatal(p.err)
	}
	wantError(t, p.reply, 409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
}

func TestWebhookBlocksGetUpdates(t *testing.T) {
	s := New(t)
	s.PushUpdate(s.TextMessage(1, ChatPrivate, ann, "queued"))
	mustCall(t, s, asMultipart, "setWebhook", map[string]any{
		"url": "https://bot.example/hook", "secret_token": "s3cret", "allowed_updates": []string{"message"},
	}, nil)
	if w := s.Webhook(); w.URL != "https://bot.example/hook" || w.SecretToken != "s3cret" || fmt.Sprint(w.AllowedUpdates) != "[message]" {
		t.Errorf("Webhook() = %+v", w)
	}
	wantError(t, call(t, s, asMultipart, "getUpdates", nil), 409,
		"Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
	var info struct {
		URL     string `json:"url"`
		Pending int    `json:"pending_update_count"`
	}
	mustCall(t, s, asJSON, "getWebhookInfo", nil, &info)
	if info.URL != "https://bot.example/hook" || info.Pending != 1 {
		t.Errorf("getWebhookInfo = %+v", info)
	}
	mustCall(t, s, asMultipart, "deleteWebhook", map[string]any{"drop_pending_updates": true}, nil)
	if w := s.Webhook(); w.URL != "" {
		t.Errorf("webhook after delete = %+v", w)
	}
	if ids := updateIDs(t, call(t, s, asMultipart, "getUpdates", nil)); len(ids) != 0 {
		t.Errorf("dropped updates still delivered: %v", ids)
	}
}

func TestWebhookPost(t *testing.T) {
	s := New(t)
	type delivery struct {
		secret string
		update Update
	}
	got := make(chan delivery, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var u Update
		if err := json.NewDecoder(r.Body).Decode(&u); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got <- delivery{r.Header.Get("X-Telegram-Bot-Api-Secret-Token"), u}
	}))
	defer receiver.Close()

	if err := s.WebhookPost(t.Context(), receiver.URL, "s3cret", s.TextMessage(1, ChatPrivate, ann, "hi")); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d.secret != "s3cret" || d.update.UpdateID != 1 || d.update.Message.Text != "hi" {
		t.Errorf("delivered %+v", d)
	}
	if s.PendingUpdates() != 0 {
		t.Error("webhook update was also queued for getUpdates")
	}

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	defer failing.Close()
	if err := s.WebhookPost(t.Context(), failing.URL, "", Update{}); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("WebhookPost to a 403 receiver = %v", err)
	}
}

func TestSendMessageRecordsAndValidates(t *testing.T) {
	s := New(t)
	const group = -1001234567890
	u := s.TextMessage(group, ChatSupergroup, ann, "question", InTopic(7))
	s.PushUpdate(u)
	userMsg := u.Message.MessageID

	var m Message
	mustCall(t, s, asMultipart, "sendMessage", map[string]any{
		"chat_id": group, "message_thread_id": 7, "text": "<b>answer</b> &amp; more", "parse_mode": "HTML",
		"reply_parameters": map[string]any{"message_id": userMsg}, "disable_notification": true,
		"link_preview_options": map[string]any{"is_disabled": true},
	}, &m)
	if m.MessageID != userMsg+1 || m.Chat.ID != group || m.Chat.Type != ChatSupergroup || m.From.ID != s.BotUser.ID ||
		m.MessageThreadID != 7 || !m.IsTopicMessage || m.Text != "answer & more" ||
		m.ReplyToMessage == nil || m.ReplyToMessage.Text != "question" {
		t.Errorf("sendMessage result = %+v", m)
	}
	var m2 Message
	mustCall(t, s, asJSON, "sendMessage", map[string]any{"chat_id": fmt.Sprint(group), "text": "plain", "reply_to_message_id": m.MessageID}, &m2)
	if m2.MessageID != m.MessageID+1 || m2.ReplyToMessage.MessageID != m.MessageID {
		t.Errorf("second message = %+v", m2)
	}
	var other Message
	mustCall(t, s, asForm, "sendMessage", map[string]any{"chat_id": 5, "text": "elsewhere"}, &other)
	if other.MessageID != 1 || other.Chat.Type != ChatPrivate {
		t.Errorf("message ids are not per chat: %+v", other)
	}

	sent := s.Sent()
	if len(sent) != 3 {
		t.Fatalf("Sent() has %d messages", len(sent))
	}
	first := sent[0]
	if first.Method != "sendMessage" || first.ChatID != group || first.ThreadID != 7 || first.MessageID != m.MessageID ||
		first.Text != "<b>answer</b> &amp; more" || first.ParseMode != "HTML" || first.PlainText != "answer & more" ||
		len(first.Entities) != 1 || first.ReplyToMessageID != userMsg || !first.DisableNotification ||
		string(first.LinkPreviewOptions) != `{"is_disabled":true}` {
		t.Errorf("Sent()[0] = %+v", first)
	}
	if sent[1].ReplyToMessageID != m.MessageID || sent[1].ParseMode != "" || sent[1].PlainText != "plain" {
		t.Errorf("Sent()[1] = %+v", sent[1])
	}

	wantError(t, call(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": group, "text": "x", "reply_parameters": map[string]any{"message_id": 999}}),
		400, "Bad Request: message to be replied not found")
	mustCall(t, s, asMultipart, "sendMessage", map[string]any{
		"chat_id": group, "text": "x", "reply_parameters": map[string]any{"message_id": 999, "allow_sending_without_reply": true},
	}, nil)
	wantError(t, call(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": group, "text": ""}), 400, "Bad Request: message text is empty")
	wantError(t, call(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": group, "text": "<b> </b>", "parse_mode": "HTML"}),
		400, "Bad Request: message text is empty")
	wantError(t, call(t, s, asMultipart, "sendMessage", map[string]any{"text": "x"}), 400, "Bad Request: chat_id is empty")
	wantError(t, call(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": 1, "text": "x", "parse_mode": "BBCode"}),
		400, "Bad Request: unsupported parse_mode")
	if n := len(s.Sent()); n != 4 {
		t.Errorf("failed sends were recorded: %d messages", n)
	}
}

func TestSendMessageHTML(t *testing.T) {
	s := New(t)
	tests := []struct {
		text, wantErr string
	}{
		{"<b>bold</b> <i>it</i> <u>u</u> <s>s</s> <tg-spoiler>sp</tg-spoiler> <code>c</code>", ""},
		{`<pre><code class="language-go">x</code></pre><blockquote expandable>q</blockquote><a href="https://e.x">l</a>`, ""},
		{"1 &lt; 2 &amp;&amp; 3 &gt; 2 &#128512;", ""},
		{"**markdown** is just text", ""},
		{"<b>unclosed", `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`},
		{"<p>para</p>", `Bad Request: can't parse entities: Unsupported start tag "p" at byte offset 0`},
		{"<b><i>x</b></i>", `Bad Request: can't parse entities: Unmatched end tag at byte offset 7, expected "</i>", found "</b>"`},
		{"1 < 2", `Bad Request: can't parse entities: Unsupported start tag "" at byte offset 2`},
		{"fish & chips", `Bad Request: can't parse entities: Character "&" at byte offset 5 is not part of an HTML entity; escape it as "&amp;"`},
	}
	for _, tt := range tests {
		for _, enc := range []encoding{asMultipart, asJSON} {
			r := call(t, s, enc, "sendMessage", map[string]any{"chat_id": 1, "text": tt.text, "parse_mode": "HTML"})
			switch {
			case tt.wantErr == "" && !r.OK:
				t.Errorf("%v %q rejected: %s", enc, tt.text, r.Description)
			case tt.wantErr != "":
				wantError(t, r, 400, tt.wantErr)
			}
		}
	}
	// Without a parse mode nothing is markup.
	mustCall(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": 1, "text": "<b>unclosed & raw"}, nil)
}

func TestMessageLengthLimit(t *testing.T) {
	s := New(t)
	tests := []struct {
		name, text, mode string
		ok               bool
	}{
		{"4096 ASCII", strings.Repeat("a", 4096), "", true},
		{"4097 ASCII", strings.Repeat("a", 4097), "", false},
		{"markup does not count", "<b>" + strings.Repeat("a", 4096) + "</b>", "HTML", true},
		{"entities count once", strings.Repeat("&amp;", 4096), "HTML", true},
		{"entities past the limit", strings.Repeat("&amp;", 4097), "HTML", false},
		{"emoji count two units", strings.Repeat("😀", 2048), "", true},
		{"emoji past the limit", strings.Repeat("😀", 2048) + "a", "", false},
		{"Cyrillic counts one unit", strings.Repeat("я", 4096), "", true},
	}
	for _, tt := range tests {
		r := call(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": 1, "text": tt.text, "parse_mode": tt.mode})
		if tt.ok && !r.OK {
			t.Errorf("%s: rejected: %s", tt.name, r.Description)
		}
		if !tt.ok {
			wantError(t, r, 400, "Bad Request: message is too long")
		}
	}
}

func TestEditMessageText(t *testing.T) {
	s := New(t)
	var m Message
	mustCall(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": 1, "text": "draft"}, &m)

	wantError(t, call(t, s, asMultipart, "editMessageText", map[string]any{"chat_id": 1, "message_id": m.MessageID, "text": "draft"}),
		400, "Bad Request: message is not modified: specified new message content and reply markup of the message are exactly the same as a previous message and reply markup of the message")
	var edited Message
	mustCall(t, s, asMultipart, "editMessageText", map[string]any{"chat_id": 1, "message_id": m.MessageID, "text": "<i>final</i>", "parse_mode": "HTML"}, &edited)
	if edited.MessageID != m.MessageID || edited.Text != "final" || edited.EditDate == 0 || len(edited.Entities) != 1 {
		t.Errorf("edited = %+v", edited)
	}
	wantError(t, call(t, s, asMultipart, "editMessageText", map[string]any{"chat_id": 1, "message_id": 99, "text": "x"}),
		400, "Bad Request: message to edit not found")
	u := s.TextMessage(1, ChatPrivate, ann, "mine")
	s.PushUpdate(u)
	wantError(t, call(t, s, asMultipart, "editMessageText", map[string]any{"chat_id": 1, "message_id": u.Message.MessageID, "text": "x"}),
		400, "Bad Request: message can't be edited")
	wantError(t, call(t, s, asMultipart, "editMessageText", map[string]any{"chat_id": 1, "message_id": m.MessageID, "text": "<b>x", "parse_mode": "HTML"}),
		400, `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`)

	sent := s.Sent()
	if len(sent) != 2 || sent[1].Method != "editMessageText" || sent[1].MessageID != m.MessageID || sent[1].PlainText != "final" {
		t.Errorf("Sent() = %+v", sent)
	}
}

func TestWaitSent(t *testing.T) {
	s := New(t)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 3 {
			if _, err := post(context.Background(), s, asMultipart, "sendMessage", map[string]any{"chat_id": 1, "text": fmt.Sprint("m", i)}); err != nil {
				t.Error(err)
			}
		}
	})
	defer wg.Wait()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sent, err := s.WaitSent(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 3 || sent[0].Text != "m0" || sent[2].Text != "m2" {
		t.Errorf("WaitSent = %+v", sent)
	}

	short, stop := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer stop()
	if _, err := s.WaitSent(short, 4); err == nil {
		t.Error("WaitSent(4) succeeded with 3 messages")
	}
}

func TestFaultInjection(t *testing.T) {
	s := New(t)
	s.FailNext("sendMessage", 429, "", 7)
	s.FailNext("SENDMESSAGE", 500, "", 0)
	s.FailNext("getUpdates", 409, "", 0)
	s.FailNext("sendChatAction", 403, "Forbidden: bot was kicked from the group chat", 0)

	r := call(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": 1, "text": "x"})
	wantError(t, r, 429, "Too Many Requests: retry after 7")
	if r.Parameters == nil || r.Parameters.RetryAfter != 7 {
		t.Errorf("429 parameters = %+v", r.Parameters)
	}
	wantError(t, call(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": 1, "text": "x"}), 500, "Internal Server Error")
	mustCall(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": 1, "text": "x"}, nil)
	wantError(t, call(t, s, asMultipart, "getUpdates", nil), 409,
		"Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
	updateIDs(t, call(t, s, asMultipart, "getUpdates", nil))
	wantError(t, call(t, s, asMultipart, "sendChatAction", map[string]any{"chat_id": 1, "action": "typing"}), 403,
		"Forbidden: bot was kicked from the group chat")
	if n := len(s.Sent()); n != 1 {
		t.Errorf("failed calls had side effects: %d sent", n)
	}
	if n := len(s.ChatActions()); n != 0 {
		t.Errorf("failed chat action recorded: %d", n)
	}
}

func TestCutConnection(t *testing.T) {
	s := New(t)
	s.CutConnection("sendMessage")
	body, contentType, err := encode(asMultipart, map[string]any{"chat_id": 1, "text": "lost"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Client().Post(s.URL+"/bot"+s.Token+"/sendMessage", contentType, body)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("cut call answered %d", resp.StatusCode)
	}
	if len(s.Sent()) != 0 {
		t.Error("cut call had side effects")
	}
	mustCall(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": 1, "text": "delivered"}, nil)
	if got := s.Requests(); fmt.Sprint(got) != "[sendMessage sendMessage]" {
		t.Errorf("Requests() = %v", got)
	}
}

func TestFilesAndDownload(t *testing.T) {
	s := New(t)
	s.AddFile("doc-1", "documents/report.pdf", []byte("%PDF-1.7"))

	for _, enc := range []encoding{asMultipart, asJSON} {
		var f File
		mustCall(t, s, enc, "getFile", map[string]any{"file_id": "doc-1"}, &f)
		if f.FileID != "doc-1" || f.FilePath != "documents/report.pdf" || f.FileSize != 8 || f.FileUniqueID == "" {
			t.Errorf("%v getFile = %+v", enc, f)
		}
	}
	wantError(t, call(t, s, asJSON, "getFile", map[string]any{"file_id": "nope"}), 400, "Bad Request: invalid file_id")

	get := func(path string) (int, string) {
		resp, err := s.Client().Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/file/bot" + s.Token + "/documents/report.pdf"); code != 200 || body != "%PDF-1.7" {
		t.Errorf("download = %d %q", code, body)
	}
	if code, _ := get("/file/bot" + s.Token + "/documents/missing.pdf"); code != 404 {
		t.Errorf("missing download = %d", code)
	}
	if code, _ := get("/file/bot1:wrong/documents/report.pdf"); code != 401 {
		t.Errorf("download with wrong token = %d", code)
	}
}

func TestSendPhotoAndDocument(t *testing.T) {
	s := New(t)
	var photo Message
	mustCall(t, s, asMultipart, "sendPhoto", map[string]any{
		"chat_id": 1, "photo": fileUpload{"cat.png", []byte("PNG")}, "caption": "<i>cat</i>", "parse_mode": "HTML",
	}, &photo)
	if len(photo.Photo) == 0 || photo.Caption != "cat" || len(photo.CaptionEntities) != 1 {
		t.Fatalf("sendPhoto = %+v", photo)
	}
	// The bot can fetch its own upload back.
	var f File
	mustCall(t, s, asJSON, "getFile", map[string]any{"file_id": photo.Photo[0].FileID}, &f)
	resp, err := s.Client().Get(s.URL + "/file/bot" + s.Token + "/" + f.FilePath)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(data) != "PNG" {
		t.Errorf("downloaded upload = %q", data)
	}

	var doc Message
	mustCall(t, s, asMultipart, "sendDocument", map[string]any{"chat_id": 1, "document": "https://example.com/a.pdf"}, &doc)
	if doc.Document == nil || doc.Document.FileName != "a.pdf" || doc.Document.MimeType != "application/pdf" {
		t.Errorf("sendDocument by URL = %+v", doc.Document)
	}
	mustCall(t, s, asJSON, "sendDocument", map[string]any{"chat_id": 1, "document": photo.Photo[0].FileID}, nil)
	mustCall(t, s, asMultipart, "sendDocument", map[string]any{
		"chat_id": 1, "document": "attach://file0", "file0": fileUpload{"notes.txt", []byte("hi")},
	}, nil)

	wantError(t, call(t, s, asJSON, "sendDocument", map[string]any{"chat_id": 1, "document": "no-such-id"}),
		400, "Bad Request: wrong file identifier/HTTP URL specified")
	wantError(t, call(t, s, asJSON, "sendPhoto", map[string]any{"chat_id": 1}), 400, "Bad Request: there is no photo in the request")
	wantError(t, call(t, s, asMultipart, "sendPhoto", map[string]any{"chat_id": 1, "photo": fileUpload{"e.png", nil}}),
		400, "Bad Request: file must be non-empty")
	wantError(t, call(t, s, asJSON, "sendPhoto", map[string]any{"chat_id": 1, "photo": "https://e.x/p.jpg", "caption": strings.Repeat("c", 1025)}),
		400, "Bad Request: message caption is too long")

	sent := s.Sent()
	if len(sent) != 4 {
		t.Fatalf("Sent() = %+v", sent)
	}
	if p := sent[0]; p.Method != "sendPhoto" || p.Text != "<i>cat</i>" || p.PlainText != "cat" ||
		p.File.FileName != "cat.png" || string(p.File.Data) != "PNG" || p.File.FileID != photo.Photo[0].FileID {
		t.Errorf("sent photo = %+v file %+v", p, p.File)
	}
	if d := sent[1]; d.Method != "sendDocument" || d.File.Ref != "https://example.com/a.pdf" || d.File.Data != nil {
		t.Errorf("sent document = %+v file %+v", d, d.File)
	}
	if d := sent[2]; d.File.Ref != photo.Photo[0].FileID || d.File.FileID != photo.Photo[0].FileID {
		t.Errorf("document by file_id = %+v", d.File)
	}
	if d := sent[3]; d.File.FileName != "notes.txt" || string(d.File.Data) != "hi" {
		t.Errorf("document by attach:// = %+v", d.File)
	}
}

func TestRecordedCalls(t *testing.T) {
	s := New(t)
	mustCall(t, s, asMultipart, "sendChatAction", map[string]any{"chat_id": -5, "action": "typing", "message_thread_id": 3}, nil)
	wantError(t, call(t, s, asMultipart, "sendChatAction", map[string]any{"chat_id": -5, "action": "dancing"}),
		400, "Bad Request: wrong parameter action in request")
	if got := s.ChatActions(); len(got) != 1 || got[0] != (ChatAction{ChatID: -5, ThreadID: 3, Action: "typing"}) {
		t.Errorf("ChatActions() = %+v", got)
	}

	commands := []BotCommand{{"ask", "Ask a question"}, {"reset", "Start over"}}
	mustCall(t, s, asMultipart, "setMyCommands", map[string]any{"commands": commands, "scope": map[string]string{"type": "default"}}, nil)
	if got := s.Commands(); fmt.Sprint(got) != fmt.Sprint(commands) {
		t.Errorf("Commands() = %+v", got)
	}
	var listed []BotCommand
	mustCall(t, s, asJSON, "getMyCommands", nil, &listed)
	if fmt.Sprint(listed) != fmt.Sprint(commands) {
		t.Errorf("getMyCommands = %+v", listed)
	}
	wantError(t, call(t, s, asJSON, "setMyCommands", map[string]any{"commands": []BotCommand{{"Ask", "x"}}}), 400, "Bad Request: BOT_COMMAND_INVALID")

	mustCall(t, s, asMultipart, "setMessageReaction", map[string]any{
		"chat_id": 1, "message_id": 9, "reaction": []ReactionType{{Type: "emoji", Emoji: "👀"}},
	}, nil)
	mustCall(t, s, asJSON, "setMessageReaction", map[string]any{"chat_id": 1, "message_id": 9}, nil)
	reactions := s.Reactions()
	if len(reactions) != 2 || reactions[0].MessageID != 9 || reactions[0].Reaction[0].Emoji != "👀" || len(reactions[1].Reaction) != 0 {
		t.Errorf("Reactions() = %+v", reactions)
	}

	mustCall(t, s, asForm, "answerCallbackQuery", map[string]any{"callback_query_id": "cb1", "text": "done"}, nil)
	if got := s.CallbackAnswers(); len(got) != 1 || got[0].CallbackQueryID != "cb1" || got[0].Text != "done" {
		t.Errorf("CallbackAnswers() = %+v", got)
	}
}

func TestTextMessageBuilder(t *testing.T) {
	clock := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s := New(t, WithClock(func() time.Time { return clock }))
	const group = -1009
	bob := User{ID: 7, FirstName: "Bob"}

	var botMsg Message
	mustCall(t, s, asMultipart, "sendMessage", map[string]any{"chat_id": group, "text": "bot said"}, &botMsg)

	u := s.TextMessage(group, ChatSupergroup, ann, "/ask@switchboard_bot hey Bob @switchboard_bot",
		ReplyTo(botMsg.MessageID), InTopic(12), WithTextMention("Bob", bob), WithChatTitle("Team"))
	m := u.Message
	if m.MessageID != botMsg.MessageID+1 || m.Date != clock.Unix() || m.Chat.ID != group || m.Chat.Type != ChatSupergroup ||
		m.Chat.Title != "Team" || !m.Chat.IsForum || m.MessageThreadID != 12 || !m.IsTopicMessage || m.From.ID != ann.ID {
		t.Errorf("message = %+v", m)
	}
	if m.ReplyToMessage == nil || m.ReplyToMessage.Text != "bot said" || m.ReplyToMessage.From.ID != s.BotUser.ID {
		t.Errorf("reply_to_message = %+v", m.ReplyToMessage)
	}
	wantEntities := []MessageEntity{
		{Type: "bot_command", Offset: 0, Length: 20},
		{Type: "text_mention", Offset: 25, Length: 3, User: &bob},
		{Type: "mention", Offset: 29, Length: 16},
	}
	if !reflect.DeepEqual(m.Entities, wantEntities) {
		t.Errorf("entities = %+v, want %+v", m.Entities, wantEntities)
	}

	private := s.TextMessage(42, ChatPrivate, ann, "hello", WithEntities())
	if c := private.Message.Chat; c.Type != ChatPrivate || c.FirstName != "Ann" || c.Username != "ann_test" || private.Message.Entities != nil {
		t.Errorf("private message = %+v", private.Message)
	}

	photo := s.TextMessage(42, ChatPrivate, ann, "look @someone", WithPhoto("ph1", []byte("JPEG")))
	if p := photo.Message; p.Text != "" || p.Caption != "look @someone" || len(p.CaptionEntities) != 1 ||
		len(p.Photo) != 2 || p.Photo[1].FileID != "ph1" {
		t.Errorf("photo message = %+v", p)
	}
	doc := s.TextMessage(42, ChatPrivate, ann, "", WithDocument("d1", "notes.txt", "text/plain", []byte("notes")))
	if d := doc.Message.Document; d == nil || d.FileName != "notes.txt" || d.FileSize != 5 {
		t.Errorf("document message = %+v", doc.Message)
	}
	for _, id := range []string{"ph1", "ph1_s", "d1"} {
		var f File
		mustCall(t, s, asJSON, "getFile", map[string]any{"file_id": id}, &f)
		if f.FilePath == "" {
			t.Errorf("getFile(%s) = %+v", id, f)
		}
	}

	// Pushed, the update reaches getUpdates intact and can be replied to.
	s.PushUpdate(u)
	r := call(t, s, asJSON, "getUpdates", nil)
	var updates []Update
	if err := json.Unmarshal(r.Result, &updates); err != nil || len(updates) != 1 || updates[0].Message.Text != m.Text {
		t.Fatalf("getUpdates = %s (%v)", r.Result, err)
	}
	mustCall(t, s, asJSON, "sendMessage", map[string]any{"chat_id": group, "text": "ok", "reply_parameters": map[string]any{"message_id": m.MessageID}}, nil)
}
