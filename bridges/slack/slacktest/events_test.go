package slacktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestSignatureKnownAnswer(t *testing.T) {
	// The signed request of slack-go's security_test.go.
	const (
		secret = "e6b19c573432dcc6b075501d51b51bb8"
		body   = `{"token":"aF5ynEYQH0dFN9imlgcADxDB","team_id":"XXXXXXXXX","api_app_id":"YYYYYYYYY","event":{"type":"app_mention","user":"AAAAAAAAA","text":"<@EEEEEEEEE> hello world","client_msg_id":"477cc591-ch73-a14z-4db8-g0cd76321bec","ts":"1531431954.000073","channel":"TTTTTTTTT","event_ts":"1531431954.000073"},"type":"event_callback","event_id":"TvBP7LRED7","event_time":1531431954,"authed_users":["EEEEEEEEE"]}`
		want   = "v0=adada4ed31709aef585c2580ca3267678c6a8eaeb7e0c1aca3ee57b656886b2c"
	)
	if got := Signature(secret, "1531431954", []byte(body)); got != want {
		t.Errorf("Signature = %s, want %s", got, want)
	}
}

// received is one request an event receiver got.
type received struct {
	header http.Header
	body   []byte
	valid  bool // the signature verified
}

// receiver is an Events API endpoint that checks signatures with its own
// HMAC computation and answers status.
func receiver(t *testing.T, secret string, status int) (*httptest.Server, func() []received) {
	var (
		mu  sync.Mutex
		got []received
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte("v0:" + r.Header.Get("X-Slack-Request-Timestamp") + ":"))
		mac.Write(body)
		want := "v0=" + hex.EncodeToString(mac.Sum(nil))
		mu.Lock()
		got = append(got, received{header: r.Header.Clone(), body: body, valid: hmac.Equal([]byte(want), []byte(r.Header.Get("X-Slack-Signature")))})
		mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

func TestPostEvent(t *testing.T) {
	s := New(t)
	ctx := testContext(t)
	const secret = "8f742231b10e8888abcd99yyyzzz85a5"
	rcv, got := receiver(t, secret, http.StatusOK)

	cb := s.Message("C1", "U1", "over http")
	before := time.Now().Unix()
	status, err := s.PostEvent(ctx, rcv.URL, secret, cb)
	if err != nil || status != http.StatusOK {
		t.Fatalf("PostEvent = %d, %v", status, err)
	}
	r := got()[0]
	if !r.valid {
		t.Errorf("signature %q does not verify", r.header.Get("X-Slack-Signature"))
	}
	if ts, _ := strconv.ParseInt(r.header.Get("X-Slack-Request-Timestamp"), 10, 64); ts < before || ts > time.Now().Unix() {
		t.Errorf("timestamp %d is not now", ts)
	}
	if r.header.Get("Content-Type") != "application/json" || r.header.Get("X-Slack-Retry-Num") != "" {
		t.Errorf("headers = %v", r.header)
	}
	var payload EventCallback
	if err := json.Unmarshal(r.body, &payload); err != nil || payload.EventID != cb.EventID || payload.Type != "event_callback" {
		t.Errorf("body = %s (%v)", r.body, err)
	}

	// A retry, signed an hour ago.
	old := time.Now().Add(-time.Hour)
	if _, err := s.PostEvent(ctx, rcv.URL, secret, cb, WithRetry(1, "http_timeout"), SignedAt(old)); err != nil {
		t.Fatal(err)
	}
	r = got()[1]
	if !r.valid || r.header.Get("X-Slack-Retry-Num") != "1" || r.header.Get("X-Slack-Retry-Reason") != "http_timeout" ||
		r.header.Get("X-Slack-Request-Timestamp") != strconv.FormatInt(old.Unix(), 10) {
		t.Errorf("retry headers = %v (valid %v)", r.header, r.valid)
	}

	// The wrong secret does not verify, and no secret sends no signature.
	if _, err := s.PostEvent(ctx, rcv.URL, "wrong", cb); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PostEvent(ctx, rcv.URL, "", cb); err != nil {
		t.Fatal(err)
	}
	if r := got()[2]; r.valid {
		t.Error("a signature with the wrong secret verified")
	}
	if r := got()[3]; r.header.Get("X-Slack-Signature") != "" || r.header.Get("X-Slack-Request-Timestamp") != "" {
		t.Errorf("unsigned delivery has headers %v", r.header)
	}

	// The receiver's status comes back.
	failing, _ := receiver(t, secret, http.StatusUnauthorized)
	if status, err := s.PostEvent(ctx, failing.URL, secret, cb); err != nil || status != http.StatusUnauthorized {
		t.Errorf("PostEvent to a refusing receiver = %d, %v", status, err)
	}
}

func TestSignRequest(t *testing.T) {
	body := []byte(`{"type":"url_verification","challenge":"abc"}`)
	req := httptest.NewRequest(http.MethodPost, "/events", nil)
	at := time.Unix(1_700_000_000, 0)
	SignRequest(req, "s3cret", body, at)
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte("v0:1700000000:"))
	mac.Write(body)
	if want := "v0=" + hex.EncodeToString(mac.Sum(nil)); req.Header.Get("X-Slack-Signature") != want ||
		req.Header.Get("X-Slack-Request-Timestamp") != "1700000000" {
		t.Errorf("headers = %v, want signature %s", req.Header, want)
	}
}

// event returns the inner event of a callback as JSON fields.
func event(t *testing.T, cb EventCallback) map[string]any {
	t.Helper()
	b, err := json.Marshal(cb)
	if err != nil {
		t.Fatal(err)
	}
	var outer struct {
		Event map[string]any `json:"event"`
	}
	if err := json.Unmarshal(b, &outer); err != nil {
		t.Fatal(err)
	}
	return outer.Event
}

func TestMessageBuilders(t *testing.T) {
	s := New(t, WithClock(fixedClock))
	a, b := s.Message("C1", "U1", "one"), s.Message("C1", "U1", "two")
	if a.EventID == b.EventID || a.EventID == "" || a.EventTime != 1_700_000_000 || a.Token != VerificationToken ||
		a.APIAppID != s.Identity.AppID || len(a.Authorizations) != 1 || a.Authorizations[0].UserID != s.Identity.BotUserID {
		t.Errorf("callbacks = %+v, %+v", a, b)
	}
	first := a.Event.(*MessageEvent)
	if first.TS != "1700000000.000000" || first.EventTS != first.TS || first.ClientMsgID == "" || first.Team != s.Identity.TeamID {
		t.Errorf("message = %+v", first)
	}
	s.PushEvent(a)

	tests := []struct {
		name string
		cb   EventCallback
		want map[string]any
	}{
		{"dm", s.Message("D1", "U1", "hi"), map[string]any{"channel_type": "im", "subtype": nil}},
		{"private", s.Message("G1", "U1", "hi"), map[string]any{"channel_type": "group"}},
		{"mpim", s.Message("G2", "U1", "hi", WithChannelType(ChannelTypeMPIM)), map[string]any{"channel_type": "mpim"}},
		{"thread reply", s.Message("C1", "U2", "re", InThread(first.TS)),
			map[string]any{"thread_ts": first.TS, "parent_user_id": "U1"}},
		{"bot user", s.Message("C1", s.Identity.BotUserID, "echo", FromBot(s.Identity.BotID)),
			map[string]any{"bot_id": s.Identity.BotID, "user": s.Identity.BotUserID, "subtype": nil, "client_msg_id": nil}},
		{"legacy bot", s.Message("C1", "", "alert", BotMessage("B9", "monitor")),
			map[string]any{"subtype": "bot_message", "bot_id": "B9", "username": "monitor", "user": nil}},
		{"broadcast", s.Message("C1", "U1", "also", InThread(first.TS), WithSubtype(SubtypeThreadBroadcast)),
			map[string]any{"subtype": "thread_broadcast"}},
		{"blocks", s.Message("C1", "U1", "b", WithBlocks(json.RawMessage(`[{"type":"rich_text","elements":[]}]`))),
			map[string]any{"text": "b"}},
		{"deleted", s.Message("C1", "U1", "", Deletes(first.TS)),
			map[string]any{"subtype": "message_deleted", "hidden": true, "deleted_ts": first.TS, "text": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := event(t, tt.cb)
			for k, want := range tt.want {
				if got, ok := ev[k]; want == nil && ok || want != nil && got != want {
					t.Errorf("%s = %v, want %v (event %v)", k, got, want, ev)
				}
			}
		})
	}
	if prev, _ := event(t, tests[len(tests)-1].cb)["previous_message"].(map[string]any); prev["text"] != "one" || prev["ts"] != first.TS {
		t.Errorf("previous_message of the deletion = %v", prev)
	}

	edit := event(t, s.Message("C1", "U1", "one, edited", Edits(first.TS)))
	inner, _ := edit["message"].(map[string]any)
	prev, _ := edit["previous_message"].(map[string]any)
	edited, _ := inner["edited"].(map[string]any)
	if edit["subtype"] != "message_changed" || edit["hidden"] != true || edit["channel"] != "C1" || edit["ts"] == first.TS ||
		inner["ts"] != first.TS || inner["text"] != "one, edited" || inner["channel"] != nil ||
		edited["user"] != "U1" || edited["ts"] != edit["ts"] || prev["text"] != "one" {
		t.Errorf("message_changed = %v", edit)
	}

	mention := event(t, s.AppMention("C1", "U1", "hey <@"+s.Identity.BotUserID+"> status", InThread(first.TS)))
	if mention["type"] != "app_mention" || mention["text"] != "hey <@U0FAKEBOT> status" || mention["thread_ts"] != first.TS ||
		mention["channel_type"] != nil {
		t.Errorf("app_mention = %v", mention)
	}
}

func TestPushedMessagesAreRemembered(t *testing.T) {
	s := New(t)
	orig := s.Message("C1", "U1", "before")
	s.PushEvent(orig)
	ts := orig.Event.(*MessageEvent).TS
	s.PushEvent(s.Message("C1", "U1", "after", Edits(ts)))
	if prev, _ := event(t, s.Message("C1", "U1", "", Deletes(ts)))["previous_message"].(map[string]any); prev["text"] != "after" {
		t.Errorf("previous_message after an edit = %v", prev)
	}

	// Raw JSON is remembered too, so the bot can react to it.
	raw := `{"type":"event_callback","event":{"type":"message","channel":"C2","user":"U1","text":"raw","ts":"1600000000.000001"}}`
	s.PushEvent(raw)
	mustCall(t, s, "reactions.add", map[string]any{"channel": "C2", "timestamp": "1600000000.000001", "name": "eyes"})
	env := s.Envelopes()
	var payload EventCallback
	if err := json.Unmarshal(env[len(env)-1].Payload, &payload); err != nil || payload.EventID == "" {
		t.Errorf("raw payload was not given an event_id: %s", env[len(env)-1].Payload)
	}

	s.PushEvent(s.Message("C1", "U1", "", Deletes(ts)))
	mustCall(t, s, "conversations.info", map[string]any{"channel": "C1"})
	wantError(t, s, "reactions.add", map[string]any{"channel": "C1", "timestamp": ts, "name": "eyes"}, "message_not_found")
}
