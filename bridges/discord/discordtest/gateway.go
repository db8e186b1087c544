package discordtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// Gateway opcodes.
const (
	opDispatch            = 0
	opHeartbeat           = 1
	opIdentify            = 2
	opPresenceUpdate      = 3
	opVoiceStateUpdate    = 4
	opResume              = 6
	opReconnect           = 7
	opRequestGuildMembers = 8
	opInvalidSession      = 9
	opHello               = 10
	opHeartbeatACK        = 11
	opRequestSoundboard   = 31
)

// Limits of the gateway.
const (
	// maxInbound is the largest payload a client may send; Discord closes
	// with 4002 above it.
	maxInbound = 4096
	// maxOutbound bounds what may wait for one slow client; beyond it the
	// connection is dropped (its session stays resumable) rather than
	// memory growing without bound.
	maxOutbound = 8 << 20
	// maxReplay is how many dispatches a session keeps for Resume.
	maxReplay = 1000
)

// CloseCode is a WebSocket close code; the 4000s are Discord's gateway
// codes, which tell the client whether it may resume.
type CloseCode int

// Discord's gateway close codes.
const (
	CloseUnknownError         CloseCode = 4000
	CloseUnknownOpcode        CloseCode = 4001
	CloseDecodeError          CloseCode = 4002
	CloseNotAuthenticated     CloseCode = 4003
	CloseAuthenticationFailed CloseCode = 4004
	CloseAlreadyAuthenticated CloseCode = 4005
	CloseInvalidSeq           CloseCode = 4007
	CloseRateLimited          CloseCode = 4008
	CloseSessionTimedOut      CloseCode = 4009
	CloseInvalidShard         CloseCode = 4010
	CloseShardingRequired     CloseCode = 4011
	CloseInvalidAPIVersion    CloseCode = 4012
	CloseInvalidIntents       CloseCode = 4013
	CloseDisallowedIntents    CloseCode = 4014
	// closeAbnormal is recorded for connections that ended without a close
	// frame; it is never sent.
	closeAbnormal CloseCode = 1006
)

var closeReasons = map[CloseCode]string{
	CloseUnknownError:         "Unknown error.",
	CloseUnknownOpcode:        "Unknown opcode.",
	CloseDecodeError:          "Decode error.",
	CloseNotAuthenticated:     "Not authenticated.",
	CloseAuthenticationFailed: "Authentication failed.",
	CloseAlreadyAuthenticated: "Already authenticated.",
	CloseInvalidSeq:           "Invalid seq.",
	CloseRateLimited:          "Rate limited.",
	CloseSessionTimedOut:      "Session timed out.",
	CloseInvalidShard:         "Invalid shard.",
	CloseShardingRequired:     "Sharding required.",
	CloseInvalidAPIVersion:    "Invalid API version.",
	CloseInvalidIntents:       "Invalid intent(s).",
	CloseDisallowedIntents:    "Disallowed intent(s).",
}

// String returns c's number and, for Discord's codes, its meaning, e.g.
// "4004 Authentication failed.".
func (c CloseCode) String() string {
	if r, ok := closeReasons[c]; ok {
		return strconv.Itoa(int(c)) + " " + r
	}
	return strconv.Itoa(int(c))
}

// Resumable reports whether a session survives the fake closing a
// connection with c. Authentication, shard, version and intent errors are
// terminal (the client must not reconnect); 4007 and 4009 allow a new
// connection but not the old session.
func (c CloseCode) Resumable() bool {
	switch c {
	case CloseAuthenticationFailed, CloseInvalidSeq, CloseSessionTimedOut, CloseInvalidShard,
		CloseShardingRequired, CloseInvalidAPIVersion, CloseInvalidIntents, CloseDisallowedIntents:
		return false
	}
	return true
}

// Intent is a bit of Identify's intents field.
type Intent int

// The gateway intents the fake filters by. GuildMembers, GuildPresences
// and MessageContent are privileged.
const (
	IntentGuilds                 Intent = 1 << 0
	IntentGuildMembers           Intent = 1 << 1
	IntentGuildPresences         Intent = 1 << 8
	IntentGuildMessages          Intent = 1 << 9
	IntentGuildMessageReactions  Intent = 1 << 10
	IntentDirectMessages         Intent = 1 << 12
	IntentDirectMessageReactions Intent = 1 << 13
	IntentMessageContent         Intent = 1 << 15

	privilegedIntents = IntentGuildMembers | IntentGuildPresences | IntentMessageContent
	// knownIntents are the bits Discord defines (up to DIRECT_MESSAGE_POLLS).
	knownIntents Intent = 1<<26 - 1
)

// gatewayState is the Server's gateway half, guarded by Server.mu.
type gatewayState struct {
	conns      map[*gwConn]struct{} // live connections
	connCount  int
	sessions   []*session // resumable sessions, oldest first
	sessionSeq int
	pending    []event // pushed while no session existed
	identifies int
	resumes    int
	heartbeats int
	noACKs     bool
	outage     bool
	noHello    bool
	closes     []Close
}

func newGatewayState() gatewayState {
	return gatewayState{conns: map[*gwConn]struct{}{}}
}

// session is one identified gateway session.
type session struct {
	id      string
	intents Intent
	seq     int64
	log     [][]byte // the last dispatches, ending with sequence seq
	conn    *gwConn  // nil while no connection is attached
}

// gwConn is one gateway WebSocket connection. Frames go out through a
// queue drained by its writer goroutine, so the server never blocks on a
// slow client while holding its lock, and frames leave in sequence order.
type gwConn struct {
	n          int
	ws         *websocket.Conn
	ctx        context.Context
	cancel     context.CancelFunc
	version    int
	wake       chan struct{} // has a value when out has frames
	writerDone chan struct{}
	ended      chan struct{} // closed once the fake has recorded the end

	// guarded by Server.mu
	session    *session
	out        []outFrame
	outBytes   int
	closing    bool // the connection has ended or a close is underway
	heartbeats int
}

// outFrame is a text frame or, when close is set, a close frame after
// which the writer stops.
type outFrame struct {
	data  []byte
	close *Close
}

// event is a dispatch waiting to be sent to the sessions.
type event struct {
	name string
	// intent is the intent a session needs to get the event, 0 for none.
	intent Intent
	// data is the "d" field; for message events, msg is instead.
	data any
	// msg is blanked for sessions that may not see its content.
	msg *Message
}

// serveGateway runs one gateway connection: the handler goroutine reads,
// a writer goroutine writes.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered
	}
	ws.SetReadLimit(1 << 20) // larger payloads than maxInbound get 4002, not 1009
	ctx, cancel := context.WithCancel(context.Background())
	c := &gwConn{ws: ws, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), writerDone: make(chan struct{}), ended: make(chan struct{})}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		_ = ws.CloseNow()
		return
	}
	s.conns.Add(1)
	defer s.conns.Done()
	g := &s.gateway
	g.connCount++
	c.n = g.connCount
	g.conns[c] = struct{}{}
	q := r.URL.Query()
	c.version = 10
	outage := false
	switch {
	case q.Get("v") != "" && q.Get("v") != "9" && q.Get("v") != "10":
		s.closeLocked(c, CloseInvalidAPIVersion, "")
	case q.Get("encoding") != "" && q.Get("encoding") != "json":
		s.closeLocked(c, CloseDecodeError, "discordtest speaks encoding=json only")
	case q.Get("compress") != "":
		s.closeLocked(c, CloseDecodeError, "discordtest does not compress the transport")
	case g.outage:
		s.dropLocked(c, "discordtest: outage")
		outage = true
	default:
		if q.Get("v") == "9" {
			c.version = 9
		}
		if g.noHello {
			break
		}
		s.enqueueLocked(c, opFrame(opHello, map[string]int64{"heartbeat_interval": max(s.heartbeat.Milliseconds(), 1)}))
	}
	s.changes.Changed()
	s.mu.Unlock()
	if outage {
		_ = ws.CloseNow()
	}

	go s.writeLoop(c)
	var readErr error
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			readErr = err
			break
		}
		s.mu.Lock()
		s.handleFrameLocked(c, typ, data)
		s.changes.Changed()
		s.mu.Unlock()
	}
	s.connEnded(c, readErr)
	cancel()
	<-c.writerDone
	_ = ws.CloseNow()
}

// writeLoop sends c's queued frames until a close frame, an error or the
// end of the connection.
func (s *Server) writeLoop(c *gwConn) {
	defer close(c.writerDone)
	for {
		s.mu.Lock()
		frames := c.out
		c.out, c.outBytes = nil, 0
		s.mu.Unlock()
		for _, f := range frames {
			if f.close != nil {
				// Close waits for the client's close frame, which the
				// reading handler consumes; it then waits for the TCP close.
				_ = c.ws.Close(websocket.StatusCode(f.close.Code), f.close.Reason)
				c.cancel()
				return
			}
			if err := c.ws.Write(c.ctx, websocket.MessageText, f.data); err != nil {
				c.cancel()
				return
			}
		}
		select {
		case <-c.wake:
		case <-c.ctx.Done():
			return
		}
	}
}

// enqueueLocked queues a text frame for c.
func (s *Server) enqueueLocked(c *gwConn, data []byte) {
	if c.closing {
		return
	}
	if c.outBytes+len(data) > maxOutbound {
		s.dropLocked(c, "discordtest: client too slow, outbound queue full")
		c.cancel()
		return
	}
	c.out = append(c.out, outFrame{data: data})
	c.outBytes += len(data)
	c.signal()
}

func (c *gwConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// closeLocked sends c a close frame after what is already queued. The
// session is detached, and ended for codes that are not Resumable.
func (s *Server) closeLocked(c *gwConn, code CloseCode, reason string) {
	if c.closing {
		return
	}
	if reason == "" {
		reason = closeReasons[code]
	}
	c.closing = true
	rec := Close{Conn: c.n, Code: code, Reason: reason, ByServer: true}
	s.gateway.closes = append(s.gateway.closes, rec)
	if sess := c.session; sess != nil {
		if code.Resumable() {
			s.detachLocked(sess)
		} else {
			s.endSessionLocked(sess)
		}
	}
	c.out = append(c.out, outFrame{close: &rec})
	c.signal()
}

// dropLocked marks c as dropped without a close frame; the caller closes
// the socket. The session stays resumable.
func (s *Server) dropLocked(c *gwConn, reason string) {
	if c.closing {
		return
	}
	c.closing = true
	s.gateway.closes = append(s.gateway.closes, Close{Conn: c.n, Code: closeAbnormal, Reason: reason, ByServer: true})
	if c.session != nil {
		s.detachLocked(c.session)
	}
}

// connEnded records the end of a connection the fake did not end itself.
// A client closing with 1000 or 1001 ends its session, as on Discord.
func (s *Server) connEnded(c *gwConn, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.closing {
		c.closing = true
		rec := Close{Conn: c.n, Code: closeAbnormal}
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			rec.Code, rec.Reason = CloseCode(ce.Code), ce.Reason
		}
		s.gateway.closes = append(s.gateway.closes, rec)
		if sess := c.session; sess != nil {
			if rec.Code == CloseCode(websocket.StatusNormalClosure) || rec.Code == CloseCode(websocket.StatusGoingAway) {
				s.endSessionLocked(sess)
			} else {
				s.detachLocked(sess)
			}
		}
	}
	if c.session != nil {
		s.detachLocked(c.session)
	}
	delete(s.gateway.conns, c)
	close(c.ended)
	s.changes.Changed()
}

// detachLocked separates sess from its connection; it keeps collecting
// dispatches for a resume.
func (s *Server) detachLocked(sess *session) {
	if sess.conn != nil {
		sess.conn.session = nil
		sess.conn = nil
	}
}

// endSessionLocked forgets sess: it can no longer be resumed.
func (s *Server) endSessionLocked(sess *session) {
	s.detachLocked(sess)
	s.gateway.sessions = slices.DeleteFunc(s.gateway.sessions, func(x *session) bool { return x == sess })
}

// frame is a gateway payload.
type frame struct {
	Op int     `json:"op"`
	D  any     `json:"d"`
	S  *int64  `json:"s"`
	T  *string `json:"t"`
}

func opFrame(op int, d any) []byte {
	b, err := json.Marshal(frame{Op: op, D: d})
	if err != nil {
		panic(fmt.Sprintf("discordtest: encode op %d: %v", op, err)) // only fixed shapes get here
	}
	return b
}

// handleFrameLocked acts on one payload from the client.
func (s *Server) handleFrameLocked(c *gwConn, typ websocket.MessageType, data []byte) {
	if c.closing {
		return
	}
	var p struct {
		Op *int            `json:"op"`
		D  json.RawMessage `json:"d"`
	}
	if typ != websocket.MessageText || len(data) > maxInbound || json.Unmarshal(data, &p) != nil || p.Op == nil {
		s.closeLocked(c, CloseDecodeError, "")
		return
	}
	switch *p.Op {
	case opHeartbeat:
		s.gateway.heartbeats++
		c.heartbeats++
		if !s.gateway.noACKs {
			s.enqueueLocked(c, opFrame(opHeartbeatACK, nil))
		}
	case opIdentify:
		s.identifyLocked(c, p.D)
	case opResume:
		s.resumeLocked(c, p.D)
	case opPresenceUpdate, opVoiceStateUpdate, opRequestGuildMembers, opRequestSoundboard:
		if c.session == nil {
			s.closeLocked(c, CloseNotAuthenticated, "")
		}
	default:
		s.closeLocked(c, CloseUnknownOpcode, "")
	}
}

// tokenOK accepts the token with or without the "Bot " prefix, which
// discordgo sends in Identify.
func (s *Server) tokenOK(token string) bool {
	return token == s.Token || token == "Bot "+s.Token
}

func (s *Server) identifyLocked(c *gwConn, raw json.RawMessage) {
	if c.session != nil {
		s.closeLocked(c, CloseAlreadyAuthenticated, "")
		return
	}
	var d struct {
		Token   string  `json:"token"`
		Intents *Intent `json:"intents"`
		Shard   *[2]int `json:"shard"`
	}
	if json.Unmarshal(raw, &d) != nil {
		s.closeLocked(c, CloseDecodeError, "")
		return
	}
	var intents Intent
	if d.Intents != nil {
		intents = *d.Intents
	}
	shard := [2]int{0, 1}
	if d.Shard != nil {
		shard = *d.Shard
	}
	switch {
	case !s.tokenOK(d.Token):
		s.closeLocked(c, CloseAuthenticationFailed, "")
	case shard[1] < 1 || shard[0] < 0 || shard[0] >= shard[1]:
		s.closeLocked(c, CloseInvalidShard, "")
	case intents < 0 || intents&^knownIntents != 0:
		s.closeLocked(c, CloseInvalidIntents, "")
	case intents&privilegedIntents&^s.privileged != 0:
		s.closeLocked(c, CloseDisallowedIntents, "")
	default:
		g := &s.gateway
		g.identifies++
		g.sessionSeq++
		sess := &session{id: fmt.Sprintf("%032x", g.sessionSeq), intents: intents, conn: c}
		c.session = sess
		g.sessions = append(g.sessions, sess)
		guilds := make([]map[string]any, 0, len(s.guilds))
		for _, id := range s.guilds {
			guilds = append(guilds, map[string]any{"id": id, "unavailable": true})
		}
		s.sendLocked(sess, "READY", map[string]any{
			"v":                  c.version,
			"user":               s.BotUser,
			"guilds":             guilds,
			"session_id":         sess.id,
			"resume_gateway_url": s.GatewayURL,
			"shard":              shard,
			"application":        map[string]any{"id": s.BotUser.ID, "flags": 0},
			"private_channels":   []any{},
		})
		if intents&IntentGuilds != 0 {
			for _, id := range s.guilds {
				s.sendLocked(sess, "GUILD_CREATE", s.guildLocked(id))
			}
		}
		for _, ev := range g.pending {
			s.deliverLocked(sess, ev)
		}
		g.pending = nil
	}
}

// supersedeGrace bounds how long a Resume waits for the connection it
// replaces to end. A client that gives up on a socket closes it before
// dialling again, but the fake may read the Resume on the new socket
// before the close frame on the old one; waiting lets Closes record the
// client's own close code instead of a drop.
const supersedeGrace = time.Second

func (s *Server) resumeLocked(c *gwConn, raw json.RawMessage) {
	s.resumeAfterLocked(c, raw, false)
}

func (s *Server) resumeAfterLocked(c *gwConn, raw json.RawMessage, waited bool) {
	if c.session != nil {
		s.closeLocked(c, CloseAlreadyAuthenticated, "")
		return
	}
	var d struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	if json.Unmarshal(raw, &d) != nil {
		s.closeLocked(c, CloseDecodeError, "")
		return
	}
	if !s.tokenOK(d.Token) {
		s.closeLocked(c, CloseAuthenticationFailed, "")
		return
	}
	i := slices.IndexFunc(s.gateway.sessions, func(x *session) bool { return x.id == d.SessionID })
	if i < 0 {
		s.enqueueLocked(c, opFrame(opInvalidSession, false))
		return
	}
	sess := s.gateway.sessions[i]
	first := sess.seq - int64(len(sess.log)) // the client must have seen this one
	switch {
	case d.Seq > sess.seq:
		s.endSessionLocked(sess)
		s.closeLocked(c, CloseInvalidSeq, "")
		return
	case d.Seq < first:
		s.endSessionLocked(sess)
		s.enqueueLocked(c, opFrame(opInvalidSession, false))
		return
	}
	if old := sess.conn; old != nil && !old.closing && !waited {
		s.mu.Unlock()
		t := time.NewTimer(supersedeGrace)
		select {
		case <-old.ended:
		case <-t.C:
		case <-c.ctx.Done():
		}
		t.Stop()
		s.mu.Lock()
		// The session may have changed meanwhile: look it up again.
		s.resumeAfterLocked(c, raw, true)
		return
	}
	if old := sess.conn; old != nil {
		// The client gave up on a connection the fake still thought alive.
		s.dropLocked(old, "discordtest: session resumed elsewhere")
		old.cancel()
	}
	sess.conn, c.session = c, sess
	for _, f := range sess.log[d.Seq-first:] {
		s.enqueueLocked(c, f)
	}
	// RESUMED repeats the last sequence number rather than taking a new
	// one, so it is neither logged nor replayed.
	t := "RESUMED"
	seq := sess.seq
	b, _ := json.Marshal(frame{Op: opDispatch, D: map[string]any{}, S: &seq, T: &t})
	s.enqueueLocked(c, b)
	s.gateway.resumes++
}

// dispatchLocked sends ev to every session. With none, a held event waits
// for the next READY; others (channel news, echoes of the bot's own
// actions) are dropped, as READY and GUILD_CREATE will cover them.
func (s *Server) dispatchLocked(ev event, hold bool) {
	if len(s.gateway.sessions) == 0 {
		if hold {
			s.gateway.pending = append(s.gateway.pending, ev)
		}
		return
	}
	for _, sess := range s.gateway.sessions {
		s.deliverLocked(sess, ev)
	}
}

// deliverLocked sends ev to sess if its intents allow, blanking message
// content it may not see.
func (s *Server) deliverLocked(sess *session, ev event) {
	if ev.intent != 0 && sess.intents&ev.intent == 0 {
		return
	}
	data := ev.data
	if ev.msg != nil {
		data = s.visibleLocked(sess, *ev.msg)
	}
	s.sendLocked(sess, ev.name, data)
}

// visibleLocked returns m as sess may see it: without the MESSAGE_CONTENT
// intent, content, embeds, attachments and components are empty except in
// DMs, messages that mention the bot and the bot's own messages.
func (s *Server) visibleLocked(sess *session, m Message) Message {
	if m.Referenced != nil {
		r := s.visibleLocked(sess, *m.Referenced)
		m.Referenced = &r
	}
	if sess.intents&IntentMessageContent != 0 || m.GuildID == "" || m.Author.ID == s.BotUser.ID ||
		slices.ContainsFunc(m.Mentions, func(u User) bool { return u.ID == s.BotUser.ID }) {
		return m
	}
	m.Content = ""
	m.Embeds = []json.RawMessage{}
	m.Attachments = []Attachment{}
	m.Components = nil
	return m
}

// sendLocked gives data the session's next sequence number, keeps it for
// resumes and queues it on the session's connection, if any.
func (s *Server) sendLocked(sess *session, name string, data any) {
	sess.seq++
	seq := sess.seq
	b, err := json.Marshal(frame{Op: opDispatch, D: data, S: &seq, T: &name})
	if err != nil {
		s.t.Errorf("discordtest: encode %s: %v", name, err)
		sess.seq--
		return
	}
	sess.log = append(sess.log, b)
	if len(sess.log) > maxReplay {
		sess.log = slices.Delete(sess.log, 0, len(sess.log)-maxReplay)
	}
	if sess.conn != nil {
		s.enqueueLocked(sess.conn, b)
	}
}

// liveConnsLocked returns the connections not yet closing, oldest first.
func (s *Server) liveConnsLocked() []*gwConn {
	var conns []*gwConn
	for c := range s.gateway.conns {
		if !c.closing {
			conns = append(conns, c)
		}
	}
	slices.SortFunc(conns, func(a, b *gwConn) int { return a.n - b.n })
	return conns
}

// DropConnection cuts every gateway connection without a close frame, as
// a network failure would. Sessions stay resumable, so a client reconnects
// and resumes. With discordgo, wait for Online first.
func (s *Server) DropConnection() {
	s.mu.Lock()
	conns := s.liveConnsLocked()
	for _, c := range conns {
		s.dropLocked(c, "discordtest: DropConnection")
	}
	s.changes.Changed()
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.CloseNow()
	}
}

// ExpireDetachedSessions forgets every session no connection carries, as
// Discord does when a session's resume window has passed: events stop
// collecting for it, a Resume of it gets Invalid Session, and an event
// pushed while no session is left waits for the next READY. Sessions on
// live connections are untouched. Safe from any goroutine.
func (s *Server) ExpireDetachedSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gateway.sessions = slices.DeleteFunc(s.gateway.sessions, func(x *session) bool { return x.conn == nil })
	s.changes.Changed()
}

// SetOutage starts or ends a gateway outage. While it lasts, live
// connections are cut and every new one is accepted and cut at once,
// before Hello and without a close frame (the client sees 1006), as when
// Discord's gateway is down behind its load balancer. Sessions stay
// resumable; Connections keeps counting the attempts.
func (s *Server) SetOutage(on bool) {
	s.mu.Lock()
	s.gateway.outage = on
	var conns []*gwConn
	if on {
		conns = s.liveConnsLocked()
		for _, c := range conns {
			s.dropLocked(c, "discordtest: outage")
		}
	}
	s.changes.Changed()
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.CloseNow()
	}
}

// WithholdHello makes new gateway connections (on) get no Hello, so a
// client waits in vain, as in Discord's "no HELLO received" incidents;
// off restores Hello for connections made afterwards.
func (s *Server) WithholdHello(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gateway.noHello = on
	s.changes.Changed()
}

// CloseWith closes every gateway connection with code and reason (empty:
// Discord's text for code; at most 123 bytes), after the frames already
// queued. Codes that
// are not Resumable (4004, 4007, 4009, 4010–4014) end the session; others
// (4000 and the rest) leave it resumable.
func (s *Server) CloseWith(code CloseCode, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.liveConnsLocked() {
		s.closeLocked(c, code, reason)
	}
	s.changes.Changed()
}

// SendReconnect sends Reconnect (op 7) on every gateway connection; the
// client is expected to close and resume.
func (s *Server) SendReconnect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.liveConnsLocked() {
		s.enqueueLocked(c, opFrame(opReconnect, nil))
	}
	s.changes.Changed()
}

// SendInvalidSession sends Invalid Session (op 9, d: resumable) on every
// identified gateway connection and detaches the session, so the
// connection accepts a new Identify (or Resume). Without resumable the
// session ends.
func (s *Server) SendInvalidSession(resumable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.liveConnsLocked() {
		sess := c.session
		if sess == nil {
			continue
		}
		s.enqueueLocked(c, opFrame(opInvalidSession, resumable))
		if resumable {
			s.detachLocked(sess)
		} else {
			s.endSessionLocked(sess)
		}
	}
	s.changes.Changed()
}

// SetHeartbeatACKs turns heartbeat ACKs on (the default) or off, to make a
// connection look like a zombie to the client.
func (s *Server) SetHeartbeatACKs(enabled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gateway.noACKs = !enabled
}

// Identifies reports how many Identify payloads started a session, each
// one also lowering session_start_limit.remaining of GET /gateway/bot.
func (s *Server) Identifies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gateway.identifies
}

// Resumes reports how many sessions were resumed (answered with RESUMED).
func (s *Server) Resumes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gateway.resumes
}

// Connections reports how many gateway connections were accepted so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gateway.connCount
}

// Sessions reports how many gateway connections carry a session (after
// READY or RESUMED) right now and are not closing: more than one means two
// clients run the bot at once.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.gateway.conns {
		if !c.closing && c.session != nil {
			n++
		}
	}
	return n
}

// Heartbeats reports how many heartbeats (op 1) clients sent.
func (s *Server) Heartbeats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gateway.heartbeats
}

// Online reports whether a gateway connection carries a session (after
// READY or RESUMED) and its client has sent a heartbeat on it. discordgo
// starts heartbeating only once Open has returned, and until its first
// heartbeat a disruption races with it: its heartbeat goroutine then
// writes to the dead connection and closes the fresh one with 1000, ending
// the session. Wait for Online (s.WaitFor(ctx, s.Online)) after Open and
// after every resume before the next DropConnection, CloseWith,
// SendReconnect or SendInvalidSession.
func (s *Server) Online() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.gateway.conns {
		if !c.closing && c.session != nil && c.heartbeats > 0 {
			return true
		}
	}
	return false
}

// Closes returns how the gateway connections ended so far, in the order
// they ended (or the fake began closing them).
func (s *Server) Closes() []Close {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.gateway.closes)
}
