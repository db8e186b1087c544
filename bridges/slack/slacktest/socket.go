package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// writeTimeout bounds a write to a Socket Mode client that stopped reading.
const writeTimeout = 5 * time.Second

// socketConn is one open Socket Mode connection.
type socketConn struct {
	id  int
	ws  *websocket.Conn
	ctx context.Context // ends with the connection
	// greeted is closed once hello is written; nothing may be written
	// before it.
	greeted chan struct{}
	// draining is set once the connection was told to disconnect; it takes
	// no more envelopes.
	draining bool
}

// envelope is a queued Socket Mode envelope and what became of it.
type envelope struct {
	Envelope
	raw []byte // the envelope as sent
}

// wire is an envelope as Slack sends it.
type wire struct {
	EnvelopeID             string          `json:"envelope_id"`
	Type                   string          `json:"type"`
	AcceptsResponsePayload bool            `json:"accepts_response_payload"`
	Payload                json.RawMessage `json:"payload"`
	RetryAttempt           int             `json:"retry_attempt"`
	RetryReason            string          `json:"retry_reason"`
}

// PushEvent queues an Events API payload for Socket Mode, wrapped in an
// events_api envelope with retry_attempt 0, and returns the envelope ID.
// The payload is an EventCallback (from Message, AppMention or Callback),
// any other value that marshals to an event_callback, or raw JSON ([]byte,
// json.RawMessage or string); a bare inner event (type "message",
// "reaction_added", …) is wrapped with Callback first. A callback without
// event_id gets one.
//
// Each envelope goes to one open connection, the next to read the queue;
// with none open it waits for a client to connect. Messages in the payload
// are remembered, so the bot can react to, reply to and look them up. A
// malformed payload fails the test (with Errorf, so PushEvent may be called
// from any goroutine) and returns "".
func (s *Server) PushEvent(payload any) string {
	s.t.Helper()
	raw, err := s.stampPayload(payload)
	if err != nil {
		s.t.Errorf("slacktest: PushEvent: %v", err)
		return ""
	}
	return s.enqueue("events_api", raw, false, 0, "")
}

// PushEnvelope queues an envelope of another type, such as
// "slash_commands" or "interactive", with payload as is (marshaled unless
// raw JSON). Those types accept a response payload in the ack.
func (s *Server) PushEnvelope(envType string, payload any) string {
	s.t.Helper()
	raw, err := toJSON(payload)
	if err != nil {
		s.t.Errorf("slacktest: PushEnvelope: %v", err)
		return ""
	}
	return s.enqueue(envType, raw, envType != "events_api", 0, "")
}

// Redeliver queues envelope id again as Slack retries an unacknowledged
// one: a new envelope ID, the same payload (so the same event_id),
// retry_attempt one above the original's and retry_reason reason ("timeout"
// when empty). It returns the new envelope ID, or fails the test and
// returns "" for an unknown id.
func (s *Server) Redeliver(id, reason string) string {
	s.t.Helper()
	if reason == "" {
		reason = "timeout"
	}
	s.mu.Lock()
	orig := s.byID[id]
	s.mu.Unlock()
	if orig == nil {
		s.t.Errorf("slacktest: Redeliver: unknown envelope %q", id)
		return ""
	}
	return s.enqueue(orig.Type, orig.Payload, orig.AcceptsResponsePayload, orig.RetryAttempt+1, reason)
}

func (s *Server) enqueue(envType string, payload json.RawMessage, acceptsResponse bool, attempt int, reason string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", s.nextSeqLocked())
	raw, err := json.Marshal(wire{
		EnvelopeID: id, Type: envType, AcceptsResponsePayload: acceptsResponse,
		Payload: payload, RetryAttempt: attempt, RetryReason: reason,
	})
	if err != nil { // payload was validated as JSON before
		panic(err)
	}
	env := &envelope{
		Envelope: Envelope{
			ID: id, Type: envType, Payload: payload, AcceptsResponsePayload: acceptsResponse,
			RetryAttempt: attempt, RetryReason: reason,
		},
		raw: raw,
	}
	s.envelopes = append(s.envelopes, env)
	s.byID[id] = env
	s.outbox = append(s.outbox, env)
	s.changes.Changed()
	return id
}

// Envelopes returns every envelope queued so far, oldest first.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envelope, len(s.envelopes))
	for i, e := range s.envelopes {
		out[i] = e.Envelope
	}
	return out
}

// Acks returns the acknowledgements received so far, oldest first,
// including ones for unknown envelope IDs.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acks)
}

// Acked reports whether the client has acknowledged envelope id.
func (s *Server) Acked(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	return e != nil && e.Acked
}

// WaitAck blocks until the client acknowledges envelope id or ctx ends, and
// returns the first acknowledgement.
func (s *Server) WaitAck(ctx context.Context, id string) (Ack, error) {
	var ack Ack
	err := s.WaitFor(ctx, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, a := range s.acks {
			if a.EnvelopeID == id {
				ack = a
				return true
			}
		}
		return false
	})
	if err != nil {
		return ack, fmt.Errorf("slacktest: waiting for the ack of envelope %s: %w", id, ctx.Err())
	}
	return ack, nil
}

// OpenConnections reports how many Socket Mode connections are open right
// now.
func (s *Server) OpenConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Connects reports how many Socket Mode connections were accepted since
// New; a reconnect counts again. A connection counts from just before its
// hello is written.
func (s *Server) Connects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects
}

// WaitConnected blocks until n Socket Mode connections have been accepted
// since New and one is open, or ctx ends. After a Disconnect, wait for
// Connects()+1 to know the client is back.
func (s *Server) WaitConnected(ctx context.Context, n int) error {
	err := s.WaitFor(ctx, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.connects >= n && len(s.conns) > 0
	})
	if err != nil {
		return fmt.Errorf("slacktest: waiting for Socket Mode connection %d: %w", n, ctx.Err())
	}
	return nil
}

// Disconnect sends every open connection {"type":"disconnect","reason":
// "refresh_requested"}, as Slack does before it recycles a connection, and
// closes it. slack-go's socketmode client opens a new connection in
// response. Envelopes not yet written stay queued for the next connection.
// It returns how many connections were told.
func (s *Server) Disconnect() int {
	conns := s.takeConns(true)
	msg, _ := json.Marshal(map[string]any{
		"type":       "disconnect",
		"reason":     "refresh_requested",
		"debug_info": map[string]any{"host": "applink-fake"},
	})
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			select {
			case <-c.greeted:
			case <-c.ctx.Done():
				return
			}
			ctx, cancel := context.WithTimeout(c.ctx, writeTimeout)
			defer cancel()
			if c.ws.Write(ctx, websocket.MessageText, msg) == nil {
				_ = c.ws.Close(websocket.StatusNormalClosure, "refresh_requested")
			} else {
				_ = c.ws.CloseNow()
			}
		})
	}
	wg.Wait()
	return len(conns)
}

// DropConnections closes every open connection without a word, as a network
// failure would, and returns how many there were.
func (s *Server) DropConnections() int {
	conns := s.takeConns(false)
	for _, c := range conns {
		_ = c.ws.CloseNow()
	}
	return len(conns)
}

// takeConns returns the open connections, marking them draining if asked.
func (s *Server) takeConns(drain bool) []*socketConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	conns := make([]*socketConn, 0, len(s.conns))
	for _, c := range s.conns {
		c.draining = c.draining || drain
		conns = append(conns, c)
	}
	s.changes.Changed()
	return conns
}

// serveSocket runs one Socket Mode connection: it checks the one-time
// ticket from apps.connections.open, greets with hello, then writes queued
// envelopes, pings, and records acks until either side closes.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.tickets[ticket] && !s.closed
	delete(s.tickets, ticket)
	if valid {
		s.sockets.Add(1)
	}
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid or reused ticket; call apps.connections.open for a new URL", http.StatusUnauthorized)
		return
	}
	defer s.sockets.Done()

	// slack-go sends Origin: https://api.slack.com.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: []string{"api.slack.com"}})
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()

	// The connection is registered before hello goes out, so a test that
	// has read hello finds it open, e.g. to Disconnect it.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.connects++
	c := &socketConn{id: s.connects, ws: ws, ctx: ctx, greeted: make(chan struct{})}
	s.conns[c.id] = c
	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": len(s.conns),
		"debug_info": map[string]any{
			"host":                        "applink-fake",
			"build_number":                1,
			"approximate_connection_time": 18060,
		},
		"connection_info": map[string]any{"app_id": s.Identity.AppID},
	})
	s.changes.Changed()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c.id)
		s.changes.Changed()
		s.mu.Unlock()
	}()

	wctx, wcancel := context.WithTimeout(ctx, writeTimeout)
	err = ws.Write(wctx, websocket.MessageText, hello)
	wcancel()
	if err != nil {
		return
	}
	close(c.greeted)

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // before wg.Wait: stops the writer and pinger
	wg.Go(func() { s.writeEnvelopes(ctx, c) })
	wg.Go(func() { s.ping(ctx, c) })
	s.readAcks(ctx, c)
}

// writeEnvelopes writes queued envelopes to c until ctx ends or a write
// fails; an envelope whose write failed goes back to the head of the queue.
func (s *Server) writeEnvelopes(ctx context.Context, c *socketConn) {
	for {
		s.mu.Lock()
		var env *envelope
		if !c.draining && len(s.outbox) > 0 {
			env = s.outbox[0]
			s.outbox = s.outbox[1:]
			env.Delivered = true // before the write: the ack may beat its return
			s.changes.Changed()
		}
		changed := s.changes.Next()
		s.mu.Unlock()

		if env == nil {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return
			}
		}
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		err := c.ws.Write(wctx, websocket.MessageText, env.raw)
		cancel()
		if err == nil {
			continue
		}
		s.mu.Lock()
		env.Delivered = false
		s.outbox = append([]*envelope{env}, s.outbox...)
		s.changes.Changed()
		s.mu.Unlock()
		_ = c.ws.CloseNow()
		return
	}
}

// ping pings c at once and then every pingInterval, as Slack does; slack-go
// reconnects when pings stop.
func (s *Server) ping(ctx context.Context, c *socketConn) {
	t := time.NewTicker(s.pingInterval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, s.pingInterval)
		_ = c.ws.Ping(pctx) // a missing pong is the client's problem, not the fake's
		cancel()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// readAcks records the client's messages as acks until the connection ends.
func (s *Server) readAcks(ctx context.Context, c *socketConn) {
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		var msg struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(data, &msg); err != nil {
			s.t.Errorf("slacktest: Socket Mode client sent a message that is not JSON: %q", data)
			continue
		}
		if string(msg.Payload) == "null" {
			msg.Payload = nil
		}
		s.mu.Lock()
		s.acks = append(s.acks, Ack{EnvelopeID: msg.EnvelopeID, Payload: msg.Payload, Raw: slices.Clone(data)})
		if e := s.byID[msg.EnvelopeID]; e != nil {
			e.Acked = true
		}
		s.changes.Changed()
		s.mu.Unlock()
	}
}
