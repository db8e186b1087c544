package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// testContext is the test's context with a deadline, so a broken fake fails
// the test instead of hanging it.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// socketURL calls apps.connections.open with the app token.
func socketURL(t *testing.T, s *Server) string {
	t.Helper()
	r, status, _, err := post(t.Context(), s, s.AppToken, "apps.connections.open", nil, true)
	if err != nil || status != http.StatusOK || !r.ok() {
		t.Fatalf("apps.connections.open = %v, %d, %v", r, status, err)
	}
	u := r.str("url")
	if !strings.HasPrefix(u, "ws://") || !strings.Contains(u, "/socket?ticket=") {
		t.Fatalf("url = %q", u)
	}
	return u
}

// dial connects to a Socket Mode URL as slack-go does (with its Origin
// header) and closes the connection when the test ends.
func dial(ctx context.Context, t *testing.T, u string) *websocket.Conn {
	t.Helper()
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {"https://api.slack.com"}},
	})
	if err != nil {
		t.Fatalf("dial %s: %v (response %v)", u, err, resp)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// readMessage reads one JSON message.
func readMessage(ctx context.Context, t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	typ, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.MessageText {
		t.Fatalf("message type %v, want text", typ)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("message %q: %v", data, err)
	}
	return m
}

// connect opens a Socket Mode connection and reads the hello.
func connect(ctx context.Context, t *testing.T, s *Server) *websocket.Conn {
	t.Helper()
	c := dial(ctx, t, socketURL(t, s))
	if hello := readMessage(ctx, t, c); hello["type"] != "hello" {
		t.Fatalf("first message = %v, want hello", hello)
	}
	return c
}

func writeAck(ctx context.Context, t *testing.T, c *websocket.Conn, ack string) {
	t.Helper()
	if err := c.Write(ctx, websocket.MessageText, []byte(ack)); err != nil {
		t.Fatalf("write ack: %v", err)
	}
}

func TestSocketHelloEventAck(t *testing.T) {
	s := New(t)
	ctx := testContext(t)
	u := socketURL(t, s)
	c := dial(ctx, t, u)

	hello := readMessage(ctx, t, c)
	info, _ := hello["connection_info"].(map[string]any)
	if hello["type"] != "hello" || hello["num_connections"] != 1.0 || info["app_id"] != s.Identity.AppID {
		t.Errorf("hello = %v", hello)
	}
	if err := s.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := s.OpenConnections(); n != 1 {
		t.Errorf("OpenConnections() = %d, want 1", n)
	}

	cb := s.Message("C1", "U1", "hello bot")
	id := s.PushEvent(cb)
	env := readMessage(ctx, t, c)
	if env["envelope_id"] != id || env["type"] != "events_api" || env["accepts_response_payload"] != false ||
		env["retry_attempt"] != 0.0 || env["retry_reason"] != "" {
		t.Errorf("envelope = %v", env)
	}
	payload, _ := env["payload"].(map[string]any)
	event, _ := payload["event"].(map[string]any)
	if payload["type"] != "event_callback" || payload["event_id"] != cb.EventID || payload["team_id"] != s.Identity.TeamID ||
		event["type"] != "message" || event["text"] != "hello bot" || event["channel_type"] != "channel" {
		t.Errorf("payload = %v", payload)
	}
	if s.Acked(id) {
		t.Error("Acked before the client acked")
	}

	writeAck(ctx, t, c, `{"envelope_id":"`+id+`"}`)
	ack, err := s.WaitAck(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Payload != nil || !s.Acked(id) {
		t.Errorf("ack = %+v, Acked = %v", ack, s.Acked(id))
	}
	if envs := s.Envelopes(); len(envs) != 1 || !envs[0].Delivered || !envs[0].Acked || envs[0].ID != id {
		t.Errorf("Envelopes() = %+v", envs)
	}

	// An ack with a response payload, for a slash command.
	cmd := s.PushEnvelope("slash_commands", map[string]any{"command": "/pair", "text": "123"})
	env = readMessage(ctx, t, c)
	if env["type"] != "slash_commands" || env["accepts_response_payload"] != true {
		t.Errorf("slash command envelope = %v", env)
	}
	writeAck(ctx, t, c, `{"envelope_id":"`+cmd+`","payload":{"text":"paired"}}`)
	if ack, err := s.WaitAck(ctx, cmd); err != nil || string(ack.Payload) != `{"text":"paired"}` {
		t.Errorf("WaitAck = %+v, %v", ack, err)
	}

	// The ticket is single-use.
	_, resp, err := websocket.Dial(ctx, u, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("reusing the ticket: %v, %v; want 401", resp, err)
	}
}

func TestSocketQueuesUntilConnected(t *testing.T) {
	s := New(t)
	ctx := testContext(t)
	first := s.PushEvent(map[string]any{"type": "reaction_added", "user": "U1", "reaction": "eyes",
		"item": map[string]any{"type": "message", "channel": "C1", "ts": "1700000000.000001"}})
	second := s.PushEvent(s.AppMention("C1", "U1", "help"))

	c := connect(ctx, t, s)
	env := readMessage(ctx, t, c)
	payload, _ := env["payload"].(map[string]any)
	event, _ := payload["event"].(map[string]any)
	if env["envelope_id"] != first || payload["type"] != "event_callback" || payload["event_id"] == "" || event["reaction"] != "eyes" {
		t.Errorf("first envelope = %v (a bare inner event must be wrapped)", env)
	}
	env = readMessage(ctx, t, c)
	payload, _ = env["payload"].(map[string]any)
	event, _ = payload["event"].(map[string]any)
	if env["envelope_id"] != second || event["type"] != "app_mention" || event["text"] != "<@"+s.Identity.BotUserID+"> help" {
		t.Errorf("second envelope = %v", env)
	}
}

func TestSocketDisconnect(t *testing.T) {
	s := New(t)
	ctx := testContext(t)
	c := connect(ctx, t, s)

	done := make(chan int, 1)
	go func() { done <- s.Disconnect() }()
	msg := readMessage(ctx, t, c)
	if msg["type"] != "disconnect" || msg["reason"] != "refresh_requested" {
		t.Errorf("message = %v, want a disconnect", msg)
	}
	_, _, err := c.Read(ctx)
	if status := websocket.CloseStatus(err); status != websocket.StatusNormalClosure {
		t.Errorf("read after disconnect: %v, want a normal closure", err)
	}
	if n := <-done; n != 1 {
		t.Errorf("Disconnect() = %d, want 1", n)
	}
	if err := s.WaitFor(ctx, func() bool { return s.OpenConnections() == 0 }); err != nil {
		t.Fatal(err)
	}

	// Envelopes pushed meanwhile go to the next connection.
	id := s.PushEvent(s.Message("D1", "U1", "are you there"))
	c2 := connect(ctx, t, s)
	if err := s.WaitConnected(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if env := readMessage(ctx, t, c2); env["envelope_id"] != id {
		t.Errorf("envelope after reconnect = %v", env)
	}
	if n := s.Connects(); n != 2 {
		t.Errorf("Connects() = %d, want 2", n)
	}
}

func TestSocketDropConnections(t *testing.T) {
	s := New(t)
	ctx := testContext(t)
	c := connect(ctx, t, s)
	if n := s.DropConnections(); n != 1 {
		t.Errorf("DropConnections() = %d, want 1", n)
	}
	if _, _, err := c.Read(ctx); err == nil {
		t.Error("read after DropConnections succeeded")
	}
	if err := s.WaitFor(ctx, func() bool { return s.OpenConnections() == 0 }); err != nil {
		t.Fatal(err)
	}
}

func TestSocketRedeliver(t *testing.T) {
	s := New(t)
	ctx := testContext(t)
	c := connect(ctx, t, s)
	cb := s.Message("C1", "U1", "retry me")
	first := s.PushEvent(cb)
	readMessage(ctx, t, c) // not acked

	second := s.Redeliver(first, "")
	if second == "" || second == first {
		t.Fatalf("Redeliver = %q", second)
	}
	env := readMessage(ctx, t, c)
	payload, _ := env["payload"].(map[string]any)
	if env["envelope_id"] != second || env["retry_attempt"] != 1.0 || env["retry_reason"] != "timeout" || payload["event_id"] != cb.EventID {
		t.Errorf("redelivered envelope = %v", env)
	}
	third := s.Redeliver(second, "warmup")
	env = readMessage(ctx, t, c)
	if env["envelope_id"] != third || env["retry_attempt"] != 2.0 || env["retry_reason"] != "warmup" {
		t.Errorf("second redelivery = %v", env)
	}

	writeAck(ctx, t, c, `{"envelope_id":"`+third+`"}`)
	if _, err := s.WaitAck(ctx, third); err != nil {
		t.Fatal(err)
	}
	if s.Acked(first) || s.Acked(second) {
		t.Error("acking the retry acked the originals")
	}
}

func TestSocketRejectsBadTickets(t *testing.T) {
	s := New(t)
	ctx := testContext(t)
	_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/socket?ticket=made-up", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("made-up ticket: %v, %v; want 401", resp, err)
	}
	if s.Connects() != 0 {
		t.Errorf("Connects() = %d", s.Connects())
	}
}

func TestWaitAckTimesOut(t *testing.T) {
	s := New(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.WaitAck(ctx, "nope"); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitAck = %v, want context.Canceled", err)
	}
}
