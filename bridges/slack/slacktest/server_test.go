package slacktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reply is a decoded Web API answer.
type reply map[string]any

func (r reply) ok() bool { return r["ok"] == true }
func (r reply) str(k string) string {
	v, _ := r[k].(string)
	return v
}

// post calls method with the token as slack-go does for form methods (a
// token parameter) unless asJSON, which sends a JSON body and a bearer
// token. It does not touch testing.T, so goroutines may use it.
func post(ctx context.Context, s *Server, token, method string, params map[string]any, asJSON bool) (reply, int, http.Header, error) {
	var body io.Reader
	contentType := "application/x-www-form-urlencoded"
	if asJSON {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, 0, nil, err
		}
		body, contentType = bytes.NewReader(b), "application/json; charset=utf-8"
	} else {
		form := url.Values{}
		if token != "" {
			form.Set("token", token)
		}
		for k, v := range params {
			if str, ok := v.(string); ok {
				form.Set(k, str)
				continue
			}
			b, _ := json.Marshal(v)
			form.Set(k, string(b))
		}
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.APIURL+method, body)
	if err != nil {
		return nil, 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if asJSON && token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		return nil, 0, nil, err
	}
	defer resp.Body.Close()
	var r reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, resp.StatusCode, resp.Header, fmt.Errorf("decode: %w", err)
	}
	return r, resp.StatusCode, resp.Header, nil
}

// call posts with the bot token and fails the test on transport errors or a
// status other than 200.
func call(t *testing.T, s *Server, method string, params map[string]any) reply {
	t.Helper()
	r, status, _, err := post(t.Context(), s, s.BotToken, method, params, false)
	if err != nil || status != http.StatusOK {
		t.Fatalf("%s: status %d, %v", method, status, err)
	}
	return r
}

// mustCall is call that also requires ok:true.
func mustCall(t *testing.T, s *Server, method string, params map[string]any) reply {
	t.Helper()
	r := call(t, s, method, params)
	if !r.ok() {
		t.Fatalf("%s(%v) = %v, want ok", method, params, r)
	}
	return r
}

// wantError calls method and requires {"ok":false,"error":code}.
func wantError(t *testing.T, s *Server, method string, params map[string]any, code string) {
	t.Helper()
	if r := call(t, s, method, params); r.ok() || r.str("error") != code {
		t.Errorf("%s(%v) = %v, want error %q", method, params, r, code)
	}
}

// fixedClock returns a clock stuck at 1700000000, so ts values are
// predictable.
func fixedClock() time.Time { return time.Unix(1_700_000_000, 0) }

func TestAuthTest(t *testing.T) {
	s := New(t)
	ctx := t.Context()
	for _, asJSON := range []bool{false, true} {
		r, status, _, err := post(ctx, s, s.BotToken, "auth.test", nil, asJSON)
		if err != nil || status != http.StatusOK || !r.ok() {
			t.Fatalf("auth.test (json=%v) = %v, %d, %v", asJSON, r, status, err)
		}
		id := s.Identity
		if r.str("user_id") != id.BotUserID || r.str("bot_id") != id.BotID || r.str("team_id") != id.TeamID ||
			r.str("user") != id.BotName || r.str("url") != "https://switchboard-test.slack.com/" {
			t.Errorf("auth.test = %v", r)
		}
	}

	tests := []struct {
		name, token, method, want string
	}{
		{"invalid token", "xoxb-wrong", "auth.test", "invalid_auth"},
		{"no token", "", "auth.test", "not_authed"},
		{"app token on a bot method", s.AppToken, "auth.test", "not_allowed_token_type"},
		{"bot token on apps.connections.open", s.BotToken, "apps.connections.open", "not_allowed_token_type"},
		{"unknown method", s.BotToken, "chat.meMessage", "unknown_method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, status, _, err := post(ctx, s, tt.token, tt.method, nil, true)
			if err != nil || status != http.StatusOK || r.ok() || r.str("error") != tt.want {
				t.Errorf("%s = %v, %d, %v; want error %q with HTTP 200", tt.method, r, status, err, tt.want)
			}
		})
	}
	if got := s.Requests(); len(got) != 7 || got[0] != "auth.test" || got[6] != "chat.meMessage" {
		t.Errorf("Requests() = %v", got)
	}
	if c := s.Calls()[1]; c.Token != s.BotToken || c.ContentType != "application/json" {
		t.Errorf("JSON call recorded as %+v", c)
	}
	if c := s.Calls()[0]; c.Token != s.BotToken || c.ContentType != "application/x-www-form-urlencoded" || c.Params["token"] != "" {
		t.Errorf("form call recorded as %+v (the token must not be among the params)", c)
	}
}

func TestCustomIdentity(t *testing.T) {
	s := New(t, WithBotToken("xoxb-custom"), WithIdentity(Identity{TeamID: "T123", BotUserID: "U999"}))
	r := mustCall(t, s, "auth.test", nil)
	if r.str("team_id") != "T123" || r.str("user_id") != "U999" || r.str("bot_id") != "B0FAKEBOT" {
		t.Errorf("auth.test = %v", r)
	}
}

func TestPostMessage(t *testing.T) {
	s := New(t, WithClock(fixedClock))
	var tss []string
	for i := range 3 {
		r := mustCall(t, s, "chat.postMessage", map[string]any{"channel": "C1", "text": fmt.Sprint("hello ", i)})
		if r.str("channel") != "C1" {
			t.Errorf("channel = %q", r.str("channel"))
		}
		msg, _ := r["message"].(map[string]any)
		if msg["ts"] != r.str("ts") || msg["user"] != s.Identity.BotUserID || msg["bot_id"] != s.Identity.BotID {
			t.Errorf("message = %v", msg)
		}
		tss = append(tss, r.str("ts"))
	}
	want := []string{"1700000000.000000", "1700000000.000001", "1700000000.000002"}
	if !slices.Equal(tss, want) {
		t.Errorf("ts = %v, want %v", tss, want)
	}

	// A thread reply with blocks and mrkdwn off, sent as JSON.
	blocks := []map[string]any{{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "*hi*"}}}
	r, _, _, err := post(t.Context(), s, s.BotToken, "chat.postMessage", map[string]any{
		"channel": "D1", "text": "hi", "thread_ts": tss[0], "mrkdwn": false, "blocks": blocks, "reply_broadcast": true,
	}, true)
	if err != nil || !r.ok() {
		t.Fatalf("chat.postMessage JSON = %v, %v", r, err)
	}
	sent := s.Sent()
	if len(sent) != 4 {
		t.Fatalf("Sent() has %d messages, want 4", len(sent))
	}
	if m := sent[0]; m.Method != "chat.postMessage" || m.Channel != "C1" || m.Text != "hello 0" || m.TS != tss[0] || !m.Mrkdwn {
		t.Errorf("sent[0] = %+v", m)
	}
	if m := sent[3]; m.ThreadTS != tss[0] || m.Mrkdwn || !m.ReplyBroadcast || !strings.Contains(string(m.Blocks), `"section"`) {
		t.Errorf("sent[3] = %+v", m)
	}

	wantError(t, s, "chat.postMessage", map[string]any{"channel": "C1"}, "no_text")
	wantError(t, s, "chat.postMessage", map[string]any{"channel": "C1", "text": "  "}, "no_text")
	wantError(t, s, "chat.postMessage", map[string]any{"channel": "C1", "text": "", "attachments": "[]", "blocks": "[]"}, "no_text")
	wantError(t, s, "chat.postMessage", map[string]any{"channel": "nope", "text": "x"}, "channel_not_found")
	wantError(t, s, "chat.postMessage", map[string]any{"text": "x"}, "channel_not_found")
	wantError(t, s, "chat.postMessage", map[string]any{"channel": "C1", "text": strings.Repeat("é", maxTextRunes+1)}, "msg_too_long")
	wantError(t, s, "chat.postMessage", map[string]any{"channel": "C1", "blocks": "not json"}, "invalid_blocks_format")
	wantError(t, s, "chat.postMessage", map[string]any{"channel": "C1", "blocks": []map[string]any{{"text": "no type"}}}, "invalid_blocks")
	wantError(t, s, "chat.postMessage", map[string]any{"channel": "C1", "text": "x", "thread_ts": "123"}, "invalid_thread_ts")
	mustCall(t, s, "chat.postMessage", map[string]any{"channel": "C1", "text": strings.Repeat("é", maxTextRunes)})
	if n := len(s.Sent()); n != 5 {
		t.Errorf("failed calls were recorded as sent: %d", n)
	}
}

func TestTimestampsIncreaseUnderConcurrency(t *testing.T) {
	s := New(t)
	const n = 40
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		tss []string
	)
	for range n {
		wg.Go(func() {
			r, _, _, err := post(t.Context(), s, s.BotToken, "chat.postMessage", map[string]any{"channel": "C1", "text": "x"}, false)
			if err != nil || !r.ok() {
				t.Errorf("chat.postMessage = %v, %v", r, err)
				return
			}
			mu.Lock()
			tss = append(tss, r.str("ts"))
			mu.Unlock()
		})
	}
	wg.Wait()
	sent := s.Sent()
	if len(sent) != n || len(tss) != n {
		t.Fatalf("sent %d, answered %d, want %d", len(sent), len(tss), n)
	}
	for i := 1; i < n; i++ {
		if sent[i].TS <= sent[i-1].TS {
			t.Errorf("Sent()[%d].TS = %s not above %s", i, sent[i].TS, sent[i-1].TS)
		}
	}
}

func TestUpdateAndDelete(t *testing.T) {
	s := New(t)
	ts := mustCall(t, s, "chat.postMessage", map[string]any{"channel": "C1", "text": "draft"}).str("ts")
	r := mustCall(t, s, "chat.update", map[string]any{"channel": "C1", "ts": ts, "text": "final"})
	if r.str("ts") != ts || r.str("text") != "final" {
		t.Errorf("chat.update = %v", r)
	}
	user := s.Message("C1", "U1", "mine")
	s.PushEvent(user)
	userTS := user.Event.(*MessageEvent).TS
	wantError(t, s, "chat.update", map[string]any{"channel": "C1", "ts": userTS, "text": "x"}, "cant_update_message")
	wantError(t, s, "chat.update", map[string]any{"channel": "C1", "ts": "1.000000", "text": "x"}, "message_not_found")
	wantError(t, s, "chat.update", map[string]any{"channel": "C1", "ts": ts}, "no_text")
	wantError(t, s, "chat.delete", map[string]any{"channel": "C1", "ts": userTS}, "cant_delete_message")
	mustCall(t, s, "chat.delete", map[string]any{"channel": "C1", "ts": ts})
	wantError(t, s, "chat.delete", map[string]any{"channel": "C1", "ts": ts}, "message_not_found")

	var methods []string
	for _, m := range s.Sent() {
		methods = append(methods, m.Method+" "+m.Text)
	}
	if want := []string{"chat.postMessage draft", "chat.update final", "chat.delete "}; !slices.Equal(methods, want) {
		t.Errorf("Sent() = %q, want %q", methods, want)
	}
}

func TestReactions(t *testing.T) {
	s := New(t)
	ev := s.Message("C1", "U1", "react to me")
	s.PushEvent(ev)
	ts := ev.Event.(*MessageEvent).TS
	item := func(name string) map[string]any {
		return map[string]any{"channel": "C1", "timestamp": ts, "name": name}
	}

	mustCall(t, s, "reactions.add", item("eyes"))
	wantError(t, s, "reactions.add", item("eyes"), "already_reacted")
	mustCall(t, s, "reactions.add", item("thumbsup::skin-tone-2"))
	wantError(t, s, "reactions.add", item(":eyes:"), "invalid_name")
	wantError(t, s, "reactions.add", item(""), "invalid_name")
	wantError(t, s, "reactions.add", map[string]any{"channel": "C1", "timestamp": "1.000000", "name": "eyes"}, "message_not_found")
	wantError(t, s, "reactions.add", map[string]any{"name": "eyes"}, "no_item_specified")
	mustCall(t, s, "reactions.remove", item("eyes"))
	wantError(t, s, "reactions.remove", item("eyes"), "no_reaction")

	want := []Reaction{
		{Method: "reactions.add", Name: "eyes", Channel: "C1", Timestamp: ts},
		{Method: "reactions.add", Name: "thumbsup::skin-tone-2", Channel: "C1", Timestamp: ts},
		{Method: "reactions.remove", Name: "eyes", Channel: "C1", Timestamp: ts},
	}
	if got := s.Reactions(); !slices.Equal(got, want) {
		t.Errorf("Reactions() = %+v, want %+v", got, want)
	}
}

func TestConversationsAndUsersInfo(t *testing.T) {
	s := New(t)
	s.AddConversation(Conversation{ID: "G9", Name: "group-dm", IsMpIM: true, IsPrivate: true})
	s.AddUser(User{ID: "U7", Name: "ann", RealName: "Ann Example", Profile: UserProfile{DisplayName: "ann"}})

	tests := []struct {
		id   string
		want string // flags that must be true
	}{
		{"C1", "is_channel"},
		{"D1", "is_im"},
		{"G1", "is_group is_private"},
		{"G9", "is_mpim is_private"},
	}
	for _, tt := range tests {
		ch, _ := mustCall(t, s, "conversations.info", map[string]any{"channel": tt.id})["channel"].(map[string]any)
		var flags []string
		for _, f := range []string{"is_channel", "is_group", "is_im", "is_mpim", "is_private"} {
			if ch[f] == true {
				flags = append(flags, f)
			}
		}
		if got := strings.Join(flags, " "); got != tt.want || ch["id"] != tt.id {
			t.Errorf("conversations.info(%s) = %v, flags %q, want %q", tt.id, ch, got, tt.want)
		}
	}
	wantError(t, s, "conversations.info", map[string]any{"channel": "X1"}, "channel_not_found")

	// A pushed event's channel_type wins over the guess from the prefix.
	s.PushEvent(s.Message("C5", "U1", "hi", WithChannelType(ChannelTypeMPIM)))
	if ch, _ := mustCall(t, s, "conversations.info", map[string]any{"channel": "C5"})["channel"].(map[string]any); ch["is_mpim"] != true || ch["is_channel"] == true {
		t.Errorf("conversations.info(C5) after an mpim event = %v", ch)
	}

	u, _ := mustCall(t, s, "users.info", map[string]any{"user": "U7"})["user"].(map[string]any)
	if u["real_name"] != "Ann Example" || u["team_id"] != s.Identity.TeamID {
		t.Errorf("users.info(U7) = %v", u)
	}
	bot, _ := mustCall(t, s, "users.info", map[string]any{"user": s.Identity.BotUserID})["user"].(map[string]any)
	if bot["is_bot"] != true {
		t.Errorf("users.info(bot) = %v", bot)
	}
	made, _ := mustCall(t, s, "users.info", map[string]any{"user": "U55"})["user"].(map[string]any)
	if made["id"] != "U55" || made["name"] == "" {
		t.Errorf("users.info(U55) = %v", made)
	}
	wantError(t, s, "users.info", map[string]any{"user": "nobody"}, "user_not_found")
}

func TestFailNextAndRateLimit(t *testing.T) {
	s := New(t)
	ctx := t.Context()
	s.FailNext("chat.postMessage", "channel_not_found")
	s.FailNext("chat.postMessage", "account_inactive")
	s.RateLimitNext("chat.postMessage", 7)
	params := map[string]any{"channel": "C1", "text": "x"}
	wantError(t, s, "chat.postMessage", params, "channel_not_found")
	wantError(t, s, "chat.postMessage", params, "account_inactive")

	r, status, header, err := post(ctx, s, s.BotToken, "chat.postMessage", params, false)
	if err != nil || status != http.StatusTooManyRequests || header.Get("Retry-After") != "7" || r.str("error") != "ratelimited" {
		t.Errorf("rate limited call = %v, %d, Retry-After %q, %v", r, status, header.Get("Retry-After"), err)
	}
	mustCall(t, s, "chat.postMessage", params)
	if n := len(s.Sent()); n != 1 {
		t.Errorf("faults had side effects: %d sent", n)
	}
	if n := len(s.Requests()); n != 4 {
		t.Errorf("Requests() has %d calls, want 4", n)
	}

	s.FailNext("auth.test", "invalid_auth")
	wantError(t, s, "auth.test", nil, "invalid_auth")
	mustCall(t, s, "auth.test", nil)
}

func TestNetworkFaults(t *testing.T) {
	s := New(t)
	ctx := t.Context()
	params := map[string]any{"channel": "C1", "text": "x"}
	s.ServerErrorNext("chat.postMessage", http.StatusServiceUnavailable)
	s.CutNext("chat.postMessage")
	s.StallNext("chat.postMessage")

	if _, status, _, err := post(ctx, s, s.BotToken, "chat.postMessage", params, false); status != http.StatusServiceUnavailable || err == nil {
		t.Errorf("server error = %d, %v; want 503 with a body that is not JSON", status, err)
	}
	if _, _, _, err := post(ctx, s, s.BotToken, "chat.postMessage", params, false); err == nil {
		t.Error("a cut call answered")
	}
	// A stalled call answers nothing until the client gives up.
	stallCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, _, _, err := post(stallCtx, s, s.BotToken, "chat.postMessage", params, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stalled call = %v, want the client's deadline", err)
	}
	mustCall(t, s, "chat.postMessage", params)
	if n := len(s.Sent()); n != 1 {
		t.Errorf("faults had side effects: %d sent", n)
	}
	if n := len(s.Requests()); n != 4 {
		t.Errorf("Requests() has %d calls, want 4 (faulted calls are recorded)", n)
	}
}

func TestCallsCarryTheClockTime(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	s := New(t, WithClock(clock))
	s.RateLimitNext("chat.postMessage", 30)
	params := map[string]any{"channel": "C1", "text": "x"}
	if _, status, _, err := post(t.Context(), s, s.BotToken, "chat.postMessage", params, false); err != nil || status != http.StatusTooManyRequests {
		t.Fatalf("rate limited call: %d %v", status, err)
	}
	mu.Lock()
	now = now.Add(30 * time.Second)
	mu.Unlock()
	mustCall(t, s, "chat.postMessage", params)
	calls := s.Calls()
	if len(calls) != 2 || !calls[0].At.Equal(time.Unix(1_700_000_000, 0)) || !calls[1].At.Equal(time.Unix(1_700_000_030, 0)) {
		t.Errorf("calls = %+v, want At from the clock: the 429 at 1700000000, the retry 30 s later", calls)
	}
}

func TestWaitSent(t *testing.T) {
	s := New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, _, _, err := post(ctx, s, s.BotToken, "chat.postMessage", map[string]any{"channel": "C1", "text": "later"}, false)
		errc <- err
	}()
	sent, err := s.WaitSent(ctx, 1)
	if err != nil || len(sent) != 1 || sent[0].Text != "later" {
		t.Fatalf("WaitSent = %+v, %v", sent, err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	if _, err := s.WaitSent(short, 2); err == nil {
		t.Error("WaitSent with a canceled context succeeded")
	}
}

// download fetches u with the given Authorization header ("" for none).
func download(t *testing.T, s *Server, u, auth string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func TestFileUploadAndDownload(t *testing.T) {
	s := New(t)
	data := []byte("report contents")

	// files.getUploadURLExternal, the upload, files.completeUploadExternal,
	// as slack-go's UploadFile does them.
	r := mustCall(t, s, "files.getUploadURLExternal", map[string]any{"filename": "report.txt", "length": fmt.Sprint(len(data))})
	fileID, uploadURL := r.str("file_id"), r.str("upload_url")
	if !strings.HasPrefix(uploadURL, s.URL+"/") || fileID == "" {
		t.Fatalf("files.getUploadURLExternal = %v", r)
	}
	wantError(t, s, "files.completeUploadExternal", map[string]any{"files": []map[string]string{{"id": fileID}}}, "file_not_found")

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "report.txt")
	part.Write(data)
	mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, uploadURL, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+s.BotToken)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ack, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(ack) != fmt.Sprintf("OK - %d", len(data)) {
		t.Fatalf("upload = %d %q", resp.StatusCode, ack)
	}

	r = mustCall(t, s, "files.completeUploadExternal", map[string]any{
		"files": []map[string]string{{"id": fileID, "title": "Report"}}, "channel_id": "C1", "thread_ts": "1700000000.000001",
		"initial_comment": "here",
	})
	files, _ := r["files"].([]any)
	if len(files) != 1 || files[0].(map[string]any)["id"] != fileID {
		t.Errorf("files.completeUploadExternal = %v", r)
	}
	ups := s.Uploads()
	if len(ups) != 1 || ups[0].FileID != fileID || ups[0].Filename != "report.txt" || ups[0].Title != "Report" ||
		string(ups[0].Data) != string(data) || ups[0].Length != len(data) || ups[0].Channel != "C1" ||
		ups[0].ThreadTS != "1700000000.000001" || ups[0].InitialComment != "here" {
		t.Errorf("Uploads() = %+v", ups)
	}
	wantError(t, s, "files.getUploadURLExternal", map[string]any{"filename": "x"}, "invalid_arguments")

	// The uploaded file is served to the bot token only.
	u := s.URL + "/files/" + fileID
	if status, _ := download(t, s, u, ""); status != http.StatusForbidden {
		t.Errorf("download without a token: %d, want 403", status)
	}
	if status, _ := download(t, s, u, "Bearer xoxb-other"); status != http.StatusForbidden {
		t.Errorf("download with a wrong token: %d, want 403", status)
	}
	if status, got := download(t, s, u, "Bearer "+s.BotToken); status != http.StatusOK || string(got) != string(data) {
		t.Errorf("download = %d %q", status, got)
	}
	if status, _ := download(t, s, s.URL+"/files/F0NOPE", "Bearer "+s.BotToken); status != http.StatusNotFound {
		t.Errorf("download of an unknown file: %d, want 404", status)
	}
}

func TestFileInMessageEvent(t *testing.T) {
	s := New(t)
	png := []byte("\x89PNG fake")
	ev := s.Message("C1", "U1", "look", WithFile("cat.png", "", png)).Event.(*MessageEvent)
	if ev.Subtype != SubtypeFileShare || len(ev.Files) != 1 {
		t.Fatalf("event = %+v", ev)
	}
	f := ev.Files[0]
	if f.Mimetype != "image/png" || f.Filetype != "png" || f.Size != len(png) || f.User != "U1" ||
		f.URLPrivate != s.URL+"/files/"+f.ID+"/cat.png" {
		t.Errorf("file = %+v", f)
	}
	if status, _ := download(t, s, f.URLPrivate, ""); status != http.StatusForbidden {
		t.Errorf("url_private without a token: %d, want 403", status)
	}
	if status, got := download(t, s, f.URLPrivateDownload, "Bearer "+s.BotToken); status != http.StatusOK || string(got) != string(png) {
		t.Errorf("url_private_download = %d %q", status, got)
	}
	added := s.AddFile("notes.txt", "text/plain", []byte("n"))
	if status, got := download(t, s, added.URLPrivate, "Bearer "+s.BotToken); status != http.StatusOK || string(got) != "n" {
		t.Errorf("AddFile download = %d %q", status, got)
	}
}
