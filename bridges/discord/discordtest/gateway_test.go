package discordtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// payload is a gateway payload as a client reads it.
type payload struct {
	Op int             `json:"op"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
	D  json.RawMessage `json:"d"`
}

func (p payload) name() string {
	if p.T == nil {
		return ""
	}
	return *p.T
}

func (p payload) seq() int64 {
	if p.S == nil {
		return -1
	}
	return *p.S
}

// gwClient is a bare gateway client on coder/websocket.
type gwClient struct {
	t         *testing.T
	s         *Server
	ws        *websocket.Conn
	sessionID string
}

// dialRaw connects to the gateway with query (e.g. "v=10&encoding=json")
// without reading anything.
func dialRaw(t *testing.T, s *Server, query string) *gwClient {
	t.Helper()
	ws, _, err := websocket.Dial(waitCtx(t), s.GatewayURL+"/?"+query, &websocket.DialOptions{HTTPClient: s.gw.Client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &gwClient{t: t, s: s, ws: ws}
}

// dial connects as discordgo does and reads Hello. An empty query means
// "v=10&encoding=json".
func dial(t *testing.T, s *Server, query string) *gwClient {
	t.Helper()
	if query == "" {
		query = "v=10&encoding=json"
	}
	c := dialRaw(t, s, query)
	if hello := c.read(); hello.Op != opHello {
		t.Fatalf("first payload = %+v, want Hello", hello)
	}
	return c
}

func (c *gwClient) send(op int, d any) {
	c.t.Helper()
	b, err := json.Marshal(map[string]any{"op": op, "d": d})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.ws.Write(waitCtx(c.t), websocket.MessageText, b); err != nil {
		c.t.Fatalf("send op %d: %v", op, err)
	}
}

func (c *gwClient) read() payload {
	c.t.Helper()
	_, b, err := c.ws.Read(waitCtx(c.t))
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var p payload
	if err := json.Unmarshal(b, &p); err != nil {
		c.t.Fatalf("decode %s: %v", b, err)
	}
	return p
}

// expect reads the next payload and checks its op and, for dispatches, its
// event name.
func (c *gwClient) expect(op int, name string) payload {
	c.t.Helper()
	p := c.read()
	if p.Op != op || p.name() != name {
		c.t.Fatalf("got op %d %q %s, want op %d %q", p.Op, p.name(), p.D, op, name)
	}
	return p
}

// identify sends Identify with intents and reads READY.
func (c *gwClient) identify(intents Intent) payload {
	c.t.Helper()
	c.send(opIdentify, map[string]any{
		"token": "Bot " + c.s.Token, "intents": intents, "compress": false,
		"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"},
	})
	ready := c.expect(opDispatch, "READY")
	var d struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal(ready.D, &d)
	c.sessionID = d.SessionID
	return ready
}

func (c *gwClient) resume(seq int64) {
	c.t.Helper()
	c.send(opResume, map[string]any{"token": c.s.Token, "session_id": c.sessionID, "seq": seq})
}

// closed reads until the connection ends and returns the close frame's
// code and reason; -1 when it ended without one.
func (c *gwClient) closed() (websocket.StatusCode, string) {
	c.t.Helper()
	ctx := waitCtx(c.t)
	for {
		_, _, err := c.ws.Read(ctx)
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Reason
		}
		if ctx.Err() != nil {
			c.t.Fatalf("connection still open: %v", err)
		}
		return -1, ""
	}
}

// message decodes a MESSAGE_* dispatch.
func message(t *testing.T, p payload) Message {
	t.Helper()
	var m Message
	if err := json.Unmarshal(p.D, &m); err != nil {
		t.Fatalf("decode %s: %v", p.D, err)
	}
	return m
}

const allIntents = IntentGuilds | IntentGuildMessages | IntentGuildMessageReactions |
	IntentDirectMessages | IntentDirectMessageReactions | IntentMessageContent

func TestHelloIdentifyReady(t *testing.T) {
	s := New(t, WithHeartbeatInterval(1500*time.Millisecond))
	s.AddChannel(Channel{ID: "200", Name: "general"})
	s.AddChannel(Channel{ID: "300", Type: ChannelPublicThread, ParentID: "200"})

	c := dialRaw(t, s, "v=9&encoding=json")
	hello := c.read()
	if hello.Op != opHello || hello.S != nil || hello.T != nil {
		t.Fatalf("hello = %+v", hello)
	}
	wantJSON(t, "hello", hello.D, `{"heartbeat_interval":1500}`)

	// Heartbeats are answered before and after Identify.
	c.send(opHeartbeat, nil)
	c.expect(opHeartbeatACK, "")

	ready := c.identify(IntentGuilds | IntentGuildMessages)
	if ready.seq() != 1 {
		t.Errorf("READY seq %d", ready.seq())
	}
	var d struct {
		V                int      `json:"v"`
		User             User     `json:"user"`
		SessionID        string   `json:"session_id"`
		ResumeGatewayURL string   `json:"resume_gateway_url"`
		Shard            [2]int   `json:"shard"`
		Guilds           []any    `json:"guilds"`
		Application      struct{} `json:"application"`
	}
	if err := json.Unmarshal(ready.D, &d); err != nil {
		t.Fatal(err)
	}
	if d.V != 9 || d.User != s.BotUser || len(d.SessionID) != 32 || d.ResumeGatewayURL != s.GatewayURL || d.Shard != [2]int{0, 1} {
		t.Errorf("READY = %s", ready.D)
	}
	wantJSON(t, "READY guilds", mustJSON(t, d.Guilds), `[{"id":"`+DefaultGuildID+`","unavailable":true}]`)

	gc := c.expect(opDispatch, "GUILD_CREATE")
	var guild struct {
		ID       string    `json:"id"`
		Channels []Channel `json:"channels"`
		Threads  []Channel `json:"threads"`
	}
	if err := json.Unmarshal(gc.D, &guild); err != nil {
		t.Fatal(err)
	}
	if gc.seq() != 2 || guild.ID != DefaultGuildID || len(guild.Channels) != 1 || guild.Channels[0].ID != "200" ||
		len(guild.Threads) != 1 || guild.Threads[0].ParentID != "200" {
		t.Errorf("GUILD_CREATE seq %d = %s", gc.seq(), gc.D)
	}

	c.send(opHeartbeat, 2)
	c.expect(opHeartbeatACK, "")
	// Presence updates are accepted once identified.
	c.send(opPresenceUpdate, map[string]any{"status": "online", "since": nil, "activities": []any{}, "afk": false})
	c.send(opHeartbeat, 2)
	c.expect(opHeartbeatACK, "")
	if s.Identifies() != 1 || s.Heartbeats() != 3 || s.Connections() != 1 || s.Resumes() != 0 {
		t.Errorf("counters: identifies %d heartbeats %d connections %d resumes %d",
			s.Identifies(), s.Heartbeats(), s.Connections(), s.Resumes())
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDispatchSequenceAndMessageShape(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(allIntents &^ IntentGuilds) // no GUILD_CREATE to skip

	bob := User{ID: "501", Username: "bob", Bot: true}
	first := s.PushMessageCreate(s.GuildMessage("200", ann, "hi "+s.BotMention()+" and <@501> <@&77> @here", WithMentions(bob)))
	s.PushMessageCreate(s.GuildMessage("200", bob, "answer", ReplyTo(first.ID)))
	dm := s.PushMessageCreate(s.DirectMessage(ann, "private"))
	thread := s.PushMessageCreate(s.ThreadMessage("300", "200", ann, "threaded", WithMember(Member{Nick: "Annie", Roles: []string{"77"}})))

	var seqs []int64
	var got []Message
	for range 4 {
		p := c.expect(opDispatch, "MESSAGE_CREATE")
		seqs = append(seqs, p.seq())
		got = append(got, message(t, p))
	}
	if seqs[0] != 2 || seqs[1] != 3 || seqs[2] != 4 || seqs[3] != 5 {
		t.Errorf("sequence numbers %v, want 2…5", seqs)
	}

	m := got[0]
	if m.ID != first.ID || m.GuildID != DefaultGuildID || m.ChannelID != "200" || m.Author.ID != "500" || m.Author.Bot ||
		m.Member == nil || !m.MentionEveryone || len(m.MentionRoles) != 1 || m.MentionRoles[0] != "77" {
		t.Errorf("guild message = %+v", m)
	}
	if len(m.Mentions) != 2 || m.Mentions[0].ID != s.BotUser.ID || m.Mentions[1].ID != "501" {
		t.Errorf("mentions = %+v", m.Mentions)
	}
	r := got[1]
	if r.Type != MessageReply || r.Reference == nil || r.Reference.MessageID != first.ID || r.Referenced == nil ||
		r.Referenced.Content != first.Content || !r.Author.Bot || r.Member != nil ||
		len(r.Mentions) != 1 || r.Mentions[0].ID != "500" {
		t.Errorf("reply = %+v", r)
	}
	if d := got[2]; d.ID != dm.ID || d.GuildID != "" || d.Member != nil || d.ChannelID != s.DMChannel(ann).ID {
		t.Errorf("DM = %+v", d)
	}
	if th := got[3]; th.ChannelID != "300" || th.ID != thread.ID || th.GuildID != DefaultGuildID || th.Member.Nick != "Annie" {
		t.Errorf("thread message = %+v", th)
	}

	// Push sends any event as is.
	s.Push("MESSAGE_DELETE", map[string]string{"id": first.ID, "channel_id": "200"})
	p := c.expect(opDispatch, "MESSAGE_DELETE")
	if p.seq() != 6 {
		t.Errorf("MESSAGE_DELETE seq %d", p.seq())
	}
	wantJSON(t, "MESSAGE_DELETE", p.D, `{"id":"`+first.ID+`","channel_id":"200"}`)
}

func TestEventsWaitForFirstSession(t *testing.T) {
	s := New(t)
	early := s.PushMessageCreate(s.GuildMessage("200", ann, "early"))
	s.Push("CUSTOM_EVENT", []byte(`{"x":1}`))
	c := dial(t, s, "")
	c.identify(allIntents)
	c.expect(opDispatch, "GUILD_CREATE")
	if m := message(t, c.expect(opDispatch, "MESSAGE_CREATE")); m.ID != early.ID {
		t.Errorf("held message = %+v", m)
	}
	c.expect(opDispatch, "CUSTOM_EVENT")
}

func TestResumeReplaysMissedEvents(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(allIntents &^ IntentGuilds)
	if s.Online() {
		t.Error("Online before the first heartbeat")
	}
	c.send(opHeartbeat, 1)
	c.expect(opHeartbeatACK, "")
	if !s.Online() {
		t.Error("not Online after a heartbeat")
	}
	s.PushMessageCreate(s.GuildMessage("200", ann, "seen"))
	if p := c.expect(opDispatch, "MESSAGE_CREATE"); p.seq() != 2 {
		t.Fatalf("seq %d", p.seq())
	}

	s.DropConnection()
	if s.Online() {
		t.Error("Online after DropConnection")
	}
	if code, _ := c.closed(); code != -1 {
		t.Errorf("dropped connection closed with %d, want no close frame", code)
	}
	missed1 := s.PushMessageCreate(s.GuildMessage("200", ann, "missed 1"))
	missed2 := s.PushMessageCreate(s.GuildMessage("200", ann, "missed 2"))

	c2 := dial(t, s, "")
	c2.sessionID = c.sessionID
	c2.resume(2)
	for _, want := range []struct {
		id  string
		seq int64
	}{{missed1.ID, 3}, {missed2.ID, 4}} {
		p := c2.expect(opDispatch, "MESSAGE_CREATE")
		if m := message(t, p); m.ID != want.id || p.seq() != want.seq {
			t.Errorf("replayed %q seq %d, want %s seq %d", m.Content, p.seq(), want.id, want.seq)
		}
	}
	if p := c2.expect(opDispatch, "RESUMED"); p.seq() != 4 {
		t.Errorf("RESUMED seq %d, want 4", p.seq())
	}
	if s.Resumes() != 1 || s.Identifies() != 1 || s.Connections() != 2 {
		t.Errorf("resumes %d identifies %d connections %d", s.Resumes(), s.Identifies(), s.Connections())
	}
	s.PushMessageCreate(s.GuildMessage("200", ann, "live"))
	if p := c2.expect(opDispatch, "MESSAGE_CREATE"); p.seq() != 5 {
		t.Errorf("after resume seq %d, want 5", p.seq())
	}

	// Resuming from the start replays everything still kept.
	s.DropConnection()
	c2.closed()
	c3 := dial(t, s, "")
	c3.sessionID = c.sessionID
	c3.resume(0)
	for want := int64(1); want <= 5; want++ {
		if p := c3.read(); p.seq() != want {
			t.Fatalf("replay from 0: seq %d, want %d", p.seq(), want)
		}
	}
	c3.expect(opDispatch, "RESUMED")

	closes := s.Closes()
	if len(closes) != 2 || closes[0] != (Close{Conn: 1, Code: 1006, Reason: "discordtest: DropConnection", ByServer: true}) {
		t.Errorf("Closes() = %+v", closes)
	}
}

func TestResumeRefused(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(IntentGuildMessages)
	sessionID := c.sessionID

	// An unknown session gets Invalid Session, and the connection may
	// identify instead.
	c2 := dial(t, s, "")
	c2.sessionID = "no-such-session"
	c2.resume(1)
	if p := c2.expect(opInvalidSession, ""); string(p.D) != "false" {
		t.Errorf("op 9 d = %s", p.D)
	}
	c2.identify(IntentGuildMessages)
	if c2.sessionID == sessionID || s.Identifies() != 2 {
		t.Errorf("second identify: session %s, identifies %d", c2.sessionID, s.Identifies())
	}

	// A sequence number the session never reached closes with 4007 and
	// ends the session.
	c3 := dial(t, s, "")
	c3.sessionID = sessionID
	c3.resume(99)
	if code, _ := c3.closed(); code != 4007 {
		t.Errorf("future seq closed with %d", code)
	}
	c4 := dial(t, s, "")
	c4.sessionID = sessionID
	c4.resume(1)
	c4.expect(opInvalidSession, "")

	// A wrong token fails authentication.
	c5 := dial(t, s, "")
	c5.send(opResume, map[string]any{"token": "Bot nope", "session_id": c2.sessionID, "seq": 1})
	if code, reason := c5.closed(); code != 4004 || reason != "Authentication failed." {
		t.Errorf("wrong token closed with %d %q", code, reason)
	}
}

func TestClientCloseEndsSession(t *testing.T) {
	for _, tt := range []struct {
		code      websocket.StatusCode
		resumable bool
	}{
		{websocket.StatusNormalClosure, false},
		{websocket.StatusGoingAway, false},
		{websocket.StatusServiceRestart, true}, // discordgo's answer to op 7
		{4000, true},
	} {
		t.Run(tt.code.String(), func(t *testing.T) {
			s := New(t)
			c := dial(t, s, "")
			c.identify(IntentGuildMessages)
			if err := c.ws.Close(tt.code, "bye"); err != nil {
				t.Fatal(err)
			}
			if err := s.WaitFor(waitCtx(t), func() bool { return len(s.Closes()) == 1 }); err != nil {
				t.Fatal(err)
			}
			if got := s.Closes()[0]; got != (Close{Conn: 1, Code: CloseCode(tt.code), Reason: "bye"}) {
				t.Errorf("Closes()[0] = %+v", got)
			}
			c2 := dial(t, s, "")
			c2.sessionID = c.sessionID
			c2.resume(1)
			if tt.resumable {
				c2.expect(opDispatch, "RESUMED")
			} else {
				c2.expect(opInvalidSession, "")
			}
		})
	}
}

func TestExpireDetachedSessions(t *testing.T) {
	s := New(t)
	live := dial(t, s, "")
	live.identify(IntentGuildMessages)
	gone := dial(t, s, "")
	gone.identify(IntentGuildMessages)
	if err := gone.ws.Close(4000, "restarting"); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitFor(waitCtx(t), func() bool { return len(s.Closes()) == 1 }); err != nil {
		t.Fatal(err)
	}
	s.ExpireDetachedSessions()

	// The session on a live connection is untouched.
	m := s.PushMessageCreate(s.GuildMessage("200", ann, "still here"))
	if got := message(t, live.expect(opDispatch, "MESSAGE_CREATE")); got.ID != m.ID {
		t.Errorf("live session got %+v", got)
	}
	// The detached one can no longer be resumed.
	again := dial(t, s, "")
	again.sessionID = gone.sessionID
	again.resume(1)
	if p := again.expect(opInvalidSession, ""); string(p.D) != "false" {
		t.Errorf("op 9 d = %s", p.D)
	}

	// With no session left, an event waits for the next READY instead of
	// collecting for a session nobody will resume.
	if err := live.ws.Close(4000, "restarting"); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitFor(waitCtx(t), func() bool { return len(s.Closes()) == 2 }); err != nil {
		t.Fatal(err)
	}
	s.ExpireDetachedSessions()
	held := s.PushMessageCreate(s.GuildMessage("200", ann, "held"))
	next := dial(t, s, "")
	next.identify(IntentGuildMessages)
	if got := message(t, next.expect(opDispatch, "MESSAGE_CREATE")); got.ID != held.ID {
		t.Errorf("next session got %+v, want the held message", got)
	}
}

func TestCloseWith(t *testing.T) {
	for _, code := range []CloseCode{
		CloseUnknownError, CloseDecodeError, CloseRateLimited,
		CloseAuthenticationFailed, CloseInvalidSeq, CloseSessionTimedOut, CloseInvalidShard,
		CloseShardingRequired, CloseInvalidAPIVersion, CloseInvalidIntents, CloseDisallowedIntents,
	} {
		t.Run(code.String(), func(t *testing.T) {
			s := New(t)
			c := dial(t, s, "")
			c.identify(IntentGuildMessages)
			s.CloseWith(code, "")
			gotCode, reason := c.closed()
			if CloseCode(gotCode) != code || reason != closeReasons[code] {
				t.Errorf("closed with %d %q, want %d %q", gotCode, reason, code, closeReasons[code])
			}
			c2 := dial(t, s, "")
			c2.sessionID = c.sessionID
			c2.resume(1)
			if code.Resumable() {
				c2.expect(opDispatch, "RESUMED")
			} else {
				c2.expect(opInvalidSession, "")
			}
			want := Close{Conn: 1, Code: code, Reason: closeReasons[code], ByServer: true}
			if got := s.Closes(); len(got) == 0 || got[0] != want {
				t.Errorf("Closes() = %+v, want first %+v", got, want)
			}
		})
	}

	s := New(t)
	c := dial(t, s, "")
	s.CloseWith(CloseUnknownError, "custom reason")
	if code, reason := c.closed(); code != 4000 || reason != "custom reason" {
		t.Errorf("custom close = %d %q", code, reason)
	}
	if CloseAuthenticationFailed.String() != "4004 Authentication failed." || CloseCode(1000).String() != "1000" {
		t.Errorf("String() = %q, %q", CloseAuthenticationFailed, CloseCode(1000))
	}
}

func TestProtocolErrors(t *testing.T) {
	tests := []struct {
		name  string
		opts  []Option
		query string // "" for a good one
		do    func(c *gwClient)
		code  CloseCode
	}{
		{"wrong token", nil, "", func(c *gwClient) {
			c.send(opIdentify, map[string]any{"token": "Bot wrong", "intents": 1})
		}, CloseAuthenticationFailed},
		{"presence before identify", nil, "", func(c *gwClient) {
			c.send(opPresenceUpdate, map[string]any{"status": "online"})
		}, CloseNotAuthenticated},
		{"unknown opcode", nil, "", func(c *gwClient) { c.send(99, nil) }, CloseUnknownOpcode},
		{"dispatch from client", nil, "", func(c *gwClient) { c.send(opDispatch, nil) }, CloseUnknownOpcode},
		{"invalid JSON", nil, "", func(c *gwClient) {
			_ = c.ws.Write(waitCtx(c.t), websocket.MessageText, []byte("{op:1"))
		}, CloseDecodeError},
		{"binary frame", nil, "", func(c *gwClient) {
			_ = c.ws.Write(waitCtx(c.t), websocket.MessageBinary, []byte(`{"op":1,"d":null}`))
		}, CloseDecodeError},
		{"payload over 4096 bytes", nil, "", func(c *gwClient) {
			c.send(opHeartbeat, strings.Repeat("x", 4100))
		}, CloseDecodeError},
		{"identify twice", nil, "", func(c *gwClient) {
			c.identify(IntentGuilds)
			c.send(opIdentify, map[string]any{"token": c.s.Token, "intents": 1})
		}, CloseAlreadyAuthenticated},
		{"invalid shard", nil, "", func(c *gwClient) {
			c.send(opIdentify, map[string]any{"token": c.s.Token, "intents": 1, "shard": []int{1, 1}})
		}, CloseInvalidShard},
		{"invalid intents", nil, "", func(c *gwClient) {
			c.send(opIdentify, map[string]any{"token": c.s.Token, "intents": 1 << 30})
		}, CloseInvalidIntents},
		{"disallowed intents", []Option{WithPrivilegedIntents(IntentGuildMembers)}, "", func(c *gwClient) {
			c.send(opIdentify, map[string]any{"token": c.s.Token, "intents": IntentGuilds | IntentMessageContent})
		}, CloseDisallowedIntents},
		{"old API version", nil, "v=6&encoding=json", nil, CloseInvalidAPIVersion},
		{"etf encoding", nil, "v=10&encoding=etf", nil, CloseDecodeError},
		{"transport compression", nil, "v=10&encoding=json&compress=zlib-stream", nil, CloseDecodeError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(t, tt.opts...)
			var c *gwClient
			if tt.query == "" {
				c = dial(t, s, "")
			} else {
				c = dialRaw(t, s, tt.query)
			}
			if tt.do != nil {
				tt.do(c)
			}
			if code, _ := c.closed(); CloseCode(code) != tt.code {
				t.Errorf("closed with %d, want %d", code, tt.code)
			}
		})
	}

	// The privileged intents the application has are accepted.
	s := New(t, WithPrivilegedIntents(IntentMessageContent))
	dial(t, s, "").identify(IntentGuilds | IntentMessageContent)
}

func TestReconnectAndInvalidSession(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(IntentGuildMessages)

	s.SendReconnect()
	if p := c.expect(opReconnect, ""); string(p.D) != "null" {
		t.Errorf("op 7 d = %s", p.D)
	}

	// A resumable Invalid Session detaches the session; the same
	// connection may resume it.
	s.SendInvalidSession(true)
	if p := c.expect(opInvalidSession, ""); string(p.D) != "true" {
		t.Errorf("op 9 d = %s", p.D)
	}
	missed := s.PushMessageCreate(s.GuildMessage("200", ann, "while invalid"))
	c.resume(1)
	if m := message(t, c.expect(opDispatch, "MESSAGE_CREATE")); m.ID != missed.ID {
		t.Errorf("replayed %+v", m)
	}
	c.expect(opDispatch, "RESUMED")

	// A final one ends the session; the connection identifies anew, as
	// discordgo does.
	old := c.sessionID
	s.SendInvalidSession(false)
	if p := c.expect(opInvalidSession, ""); string(p.D) != "false" {
		t.Errorf("op 9 d = %s", p.D)
	}
	c.identify(IntentGuildMessages)
	if c.sessionID == old || s.Identifies() != 2 || s.Resumes() != 1 {
		t.Errorf("session %s (old %s), identifies %d, resumes %d", c.sessionID, old, s.Identifies(), s.Resumes())
	}
	c2 := dial(t, s, "")
	c2.sessionID = old
	c2.resume(1)
	c2.expect(opInvalidSession, "")
}

func TestHeartbeatACKsOff(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(IntentGuildMessages)
	s.SetHeartbeatACKs(false)
	c.send(opHeartbeat, 1)
	if err := s.WaitFor(waitCtx(t), func() bool { return s.Heartbeats() == 1 }); err != nil {
		t.Fatal(err)
	}
	s.SetHeartbeatACKs(true)
	c.send(opHeartbeat, 1)
	c.expect(opHeartbeatACK, "")
	// Had the first heartbeat been acknowledged, this would read an ACK.
	s.PushMessageCreate(s.GuildMessage("200", ann, "next"))
	c.expect(opDispatch, "MESSAGE_CREATE")
}

func TestIntentsFilterAndContent(t *testing.T) {
	s := New(t)
	noContent := dial(t, s, "")
	noContent.identify(IntentGuildMessages | IntentDirectMessages)
	dmOnly := dial(t, s, "")
	dmOnly.identify(IntentDirectMessages | IntentMessageContent)

	attach := WithAttachment("a.txt", "text/plain", []byte("a"))
	s.PushMessageCreate(s.GuildMessage("200", ann, "secret", attach))
	s.PushMessageCreate(s.GuildMessage("200", ann, s.BotMention()+" visible"))
	s.PushMessageCreate(s.DirectMessage(ann, "dm visible"))

	hidden := message(t, noContent.expect(opDispatch, "MESSAGE_CREATE"))
	if hidden.Content != "" || len(hidden.Attachments) != 0 || hidden.Attachments == nil {
		t.Errorf("without MESSAGE_CONTENT = %+v", hidden)
	}
	if m := message(t, noContent.expect(opDispatch, "MESSAGE_CREATE")); m.Content != s.BotMention()+" visible" {
		t.Errorf("mention = %q", m.Content)
	}
	if m := message(t, noContent.expect(opDispatch, "MESSAGE_CREATE")); m.Content != "dm visible" {
		t.Errorf("DM = %q", m.Content)
	}
	// Without GUILD_MESSAGES the guild messages never arrive.
	if m := message(t, dmOnly.expect(opDispatch, "MESSAGE_CREATE")); m.Content != "dm visible" {
		t.Errorf("DM-only session got %q", m.Content)
	}
}

func TestBotActionsEcho(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(allIntents &^ IntentGuilds &^ IntentMessageContent)
	in := s.PushMessageCreate(s.GuildMessage("200", ann, "hello"))
	c.expect(opDispatch, "MESSAGE_CREATE")

	var sent Message
	mustDo(t, s, "POST", "/channels/200/messages", map[string]string{"content": "echo me"}, &sent)
	created := message(t, c.expect(opDispatch, "MESSAGE_CREATE"))
	// The bot's own messages keep their content without MESSAGE_CONTENT.
	if created.ID != sent.ID || !created.Author.Bot || created.Content != "echo me" {
		t.Errorf("echo = %+v", created)
	}
	mustDo(t, s, "PATCH", "/channels/200/messages/"+sent.ID, map[string]string{"content": "edited"}, nil)
	if m := message(t, c.expect(opDispatch, "MESSAGE_UPDATE")); m.ID != sent.ID || m.Content != "edited" || m.EditedTimestamp == nil {
		t.Errorf("update = %+v", m)
	}
	mustDo(t, s, "PUT", "/channels/200/messages/"+in.ID+"/reactions/%F0%9F%91%8D/@me", nil, nil)
	p := c.expect(opDispatch, "MESSAGE_REACTION_ADD")
	wantJSON(t, "reaction", p.D, `{"user_id":"`+s.BotUser.ID+`","channel_id":"200","message_id":"`+in.ID+`",
		"message_author_id":"500","guild_id":"`+DefaultGuildID+`","emoji":{"id":null,"name":"👍"},"burst":false,"type":0}`)
}

func TestChannelNewsWhileConnected(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(IntentGuilds | IntentDirectMessages | IntentMessageContent)
	s.AddChannel(Channel{ID: "200"})
	if p := c.expect(opDispatch, "GUILD_CREATE"); !strings.Contains(string(p.D), `"id":"200"`) {
		t.Errorf("GUILD_CREATE = %s", p.D)
	}
	s.AddChannel(Channel{ID: "201"})
	if p := c.expect(opDispatch, "CHANNEL_CREATE"); !strings.Contains(string(p.D), `"id":"201"`) {
		t.Errorf("CHANNEL_CREATE = %s", p.D)
	}
	s.AddChannel(Channel{ID: "300", Type: ChannelPublicThread, ParentID: "200"})
	if p := c.expect(opDispatch, "THREAD_CREATE"); !strings.Contains(string(p.D), `"newly_created":true`) {
		t.Errorf("THREAD_CREATE = %s", p.D)
	}
	// DMs are not announced; the next event is the message.
	s.PushMessageCreate(s.DirectMessage(ann, "x"))
	if m := message(t, c.read()); m.Content != "x" {
		t.Errorf("after DM channel: %+v", m)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(IntentGuildMessages | IntentMessageContent)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil && i < 50; i++ {
			_ = s.Sent()
			_ = s.Requests()
			_ = s.Closes()
		}
	}()
	var pushers sync.WaitGroup
	for range 4 {
		pushers.Go(func() {
			for range 5 {
				s.PushMessageCreate(s.GuildMessage("200", ann, "m"))
			}
		})
	}
	pushers.Wait()
	last := int64(1)
	for range 20 {
		p := c.expect(opDispatch, "MESSAGE_CREATE")
		if p.seq() != last+1 {
			t.Fatalf("seq %d after %d", p.seq(), last)
		}
		last = p.seq()
	}
	<-done
}

func TestOutage(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(allIntents)
	s.SetOutage(true)
	if code, _ := c.closed(); code != -1 {
		t.Errorf("live connection closed with %d during an outage, want a cut (no close frame)", code)
	}
	// New connections are cut before Hello, and counted.
	for range 3 {
		d := dialRaw(t, s, "v=10&encoding=json")
		if code, _ := d.closed(); code != -1 {
			t.Errorf("connection during the outage closed with %d, want a cut", code)
		}
	}
	if n := s.Connections(); n != 4 {
		t.Errorf("%d connections counted, want 4", n)
	}
	s.SetOutage(false)
	// The session survived: a resume works.
	d := dial(t, s, "")
	d.sessionID = c.sessionID
	d.resume(1)
	for p := d.read(); p.name() != "RESUMED"; p = d.read() {
	}
	if s.Resumes() != 1 {
		t.Errorf("resumes = %d after the outage", s.Resumes())
	}
}

func TestWithholdHello(t *testing.T) {
	s := New(t)
	s.WithholdHello(true)
	c := dialRaw(t, s, "v=10&encoding=json")
	// Nothing arrives: the first read only ends with the test's deadline,
	// so ask with a short one.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, b, err := c.ws.Read(ctx); err == nil {
		t.Fatalf("got %s, want no Hello", b)
	}
	s.WithholdHello(false)
	dial(t, s, "") // reads Hello
}

func TestBotRolesInGuildCreate(t *testing.T) {
	s := New(t)
	s.SetBotRoles(DefaultGuildID, "900", "901")
	c := dial(t, s, "")
	c.identify(allIntents)
	gc := c.expect(opDispatch, "GUILD_CREATE")
	var g struct {
		Members []struct {
			User  User     `json:"user"`
			Roles []string `json:"roles"`
		} `json:"members"`
	}
	if err := json.Unmarshal(gc.D, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Members) != 1 || g.Members[0].User.ID != s.BotUser.ID || len(g.Members[0].Roles) != 2 || g.Members[0].Roles[0] != "900" {
		t.Errorf("members = %+v, want the bot with its roles", g.Members)
	}
}
