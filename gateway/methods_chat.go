package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/prompt"
	"github.com/switchboardhq/switchboard/core/reply"
	"github.com/switchboardhq/switchboard/gateway/events"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// Limits of the chat methods (openclaw-facts §1.11).
const (
	maxSessionKeyLen   = 512
	defaultHistory     = 200
	maxHistory         = 1000
	maxHistoryChars    = 500000
	maxHistoryPayload  = 6 << 20
	defaultWaitMs      = 30000
	maxInjectLabelLen  = 100
	maxIdempotencyKey  = 256
	submitTimeout      = 30 * time.Second
	defaultPreviewMsgs = 12
	defaultPreviewLen  = 240
)

// chatSendParams are chat.send's params (openclaw-facts §1.11, §1.15).
type chatSendParams struct {
	SessionKey string `json:"sessionKey"`
	// AgentID and SessionID are what OpenClaw's TUI sends with every line
	// (openclaw@2026.9.6, ChatSendParamsSchema): see checkAgentID; a
	// sessionId names the transcript the client last saw, which OpenClaw
	// uses only to pick a faster admission path, so it is checked for form
	// and not acted on.
	AgentID                 *string         `json:"agentId,omitempty"`
	SessionID               *string         `json:"sessionId,omitempty"`
	Message                 *string         `json:"message"`
	Thinking                string          `json:"thinking,omitempty"`
	Deliver                 *bool           `json:"deliver,omitempty"`
	OriginatingChannel      string          `json:"originatingChannel,omitempty"`
	OriginatingTo           string          `json:"originatingTo,omitempty"`
	OriginatingAccountID    string          `json:"originatingAccountId,omitempty"`
	OriginatingThreadID     string          `json:"originatingThreadId,omitempty"`
	Attachments             []any           `json:"attachments,omitempty"`
	TimeoutMs               *int64          `json:"timeoutMs,omitempty"`
	SystemInputProvenance   json.RawMessage `json:"systemInputProvenance,omitempty"`
	SystemProvenanceReceipt string          `json:"systemProvenanceReceipt,omitempty"`
	IdempotencyKey          string          `json:"idempotencyKey"`
	QueueMode               string          `json:"queueMode,omitempty"`

	// The rest of OpenClaw 2026.9.6's ChatSendParamsSchema. Accepted and
	// not acted on: mentions of other people (one operator here), the
	// page the client shows (workContext), fast mode, the message replied
	// to, and the routing contract a client last saw. Refused when they
	// would ask for what Switchboard cannot do (checkChatSendExtras).
	Mentions                       json.RawMessage `json:"mentions,omitempty"`
	WorkContext                    json.RawMessage `json:"workContext,omitempty"`
	FastMode                       json.RawMessage `json:"fastMode,omitempty"`
	FastAutoOnSeconds              *int64          `json:"fastAutoOnSeconds,omitempty"`
	ReplyToID                      *string         `json:"replyToId,omitempty"`
	ExpectedSessionRoutingContract *string         `json:"expectedSessionRoutingContract,omitempty"`
	Intent                         json.RawMessage `json:"intent,omitempty"`
	ToolBindings                   json.RawMessage `json:"toolBindings,omitempty"`
	SuppressCommandInterpretation  *bool           `json:"suppressCommandInterpretation,omitempty"`
	ExpectedLeafEntryID            json.RawMessage `json:"expectedLeafEntryId,omitempty"`
	ExpectedPermissionMode         json.RawMessage `json:"expectedPermissionMode,omitempty"`
	ExpectedToolOverrides          json.RawMessage `json:"expectedToolOverrides,omitempty"`
}

// checkChatSendExtras checks the chat.send members Switchboard takes from
// OpenClaw's schema without acting on them, and refuses by name those
// that ask for something it does not have: a session goal (intent), tool
// bindings, literal text that is never a /command, and the guards on
// transcript entry ids, permission modes and tool overrides (each may be
// null, which guards nothing).
func checkChatSendExtras(method string, p *chatSendParams) *protocol.ErrorShape {
	isNull := func(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }
	switch {
	case !isNull(p.Intent):
		return invalidParams(method, "intent (a session goal) is not supported by Switchboard: it has no session goals; send the message without it")
	case !isNull(p.ToolBindings):
		return invalidParams(method, "toolBindings is not supported by Switchboard: the agent's tools come from its configuration; send the message without it")
	case p.SuppressCommandInterpretation != nil && *p.SuppressCommandInterpretation:
		return invalidParams(method, "suppressCommandInterpretation is not supported by Switchboard: a message starting with / is read as a command")
	case !isNull(p.ExpectedLeafEntryID):
		return invalidParams(method, "expectedLeafEntryId must be null or absent: Switchboard's history has no entry ids to compare")
	case !isNull(p.ExpectedPermissionMode):
		return invalidParams(method, "expectedPermissionMode must be null or absent: Switchboard has no permission modes")
	case !isNull(p.ExpectedToolOverrides):
		return invalidParams(method, "expectedToolOverrides must be null or absent: Switchboard has no per-session tool overrides")
	}
	if len(p.Mentions) > 0 {
		var m []json.RawMessage
		if json.Unmarshal(p.Mentions, &m) != nil || len(m) > 10 {
			return invalidParams(method, "mentions must be a list of at most 10 mentions")
		}
	}
	if len(p.WorkContext) > 0 {
		var w struct {
			Page string `json:"page"`
		}
		if json.Unmarshal(p.WorkContext, &w) != nil || w.Page == "" {
			return invalidParams(method, "workContext must be an object with a page")
		}
	}
	if len(p.FastMode) > 0 {
		var b bool
		if json.Unmarshal(p.FastMode, &b) != nil && string(p.FastMode) != `"auto"` {
			return invalidParams(method, `fastMode must be true, false or "auto"`)
		}
	}
	if p.FastAutoOnSeconds != nil && *p.FastAutoOnSeconds < 1 {
		return invalidParams(method, "fastAutoOnSeconds must be at least 1")
	}
	if p.ReplyToID != nil && *p.ReplyToID == "" {
		return invalidParams(method, "replyToId, when given, must not be empty")
	}
	if p.ExpectedSessionRoutingContract != nil && *p.ExpectedSessionRoutingContract == "" {
		return invalidParams(method, "expectedSessionRoutingContract, when given, must not be empty")
	}
	return nil
}

func (s *Server) mChatSend(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p chatSendParams
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if e := checkSessionKey(req.Method, p.SessionKey); e != nil {
		return nil, e
	}
	if e := s.checkAgentID(req.Method, p.AgentID); e != nil {
		return nil, e
	}
	if p.SessionID != nil && (*p.SessionID == "" || len(*p.SessionID) > maxSessionKeyLen) {
		return nil, invalidParams(req.Method, "sessionId, when given, must be 1 to 512 characters")
	}
	if e := checkChatSendExtras(req.Method, &p); e != nil {
		return nil, e
	}
	if p.IdempotencyKey == "" || len(p.IdempotencyKey) > maxIdempotencyKey {
		return nil, invalidParams(req.Method, "idempotencyKey is required (a unique id per message, at most 256 characters)")
	}
	if p.Message == nil {
		return nil, invalidParams(req.Method, "message is required")
	}
	msg := *p.Message
	if strings.ContainsRune(msg, 0) {
		return nil, protocol.InvalidRequest("message must not contain null bytes", nil)
	}
	if !utf8.ValidString(msg) {
		return nil, protocol.InvalidRequest("message must be valid UTF-8", nil)
	}
	if strings.TrimSpace(msg) == "" && len(p.Attachments) == 0 {
		return nil, protocol.InvalidRequest("message or attachment required", nil)
	}
	if (p.OriginatingChannel != "" || p.OriginatingTo != "" || p.OriginatingAccountID != "" || p.OriginatingThreadID != "" ||
		len(p.SystemInputProvenance) > 0 || p.SystemProvenanceReceipt != "") && !covers(c.scopes, protocol.ScopeAdmin) {
		return nil, protocol.MissingScope(protocol.ScopeAdmin, c.protocol)
	}
	var mode queue.Mode
	if p.QueueMode != "" {
		m, ok := queue.ParseMode(p.QueueMode)
		if !ok {
			return nil, invalidParams(req.Method, "queueMode must be steer, followup, collect or interrupt")
		}
		mode = m
	}
	b := s.backend.Load()
	key := core.ResolveRequestSessionKey(s.defaultAgentID(), p.SessionKey)
	// The sender sees the session's runs, its own and any other.
	s.hub.follow(c, key)
	runID := p.IdempotencyKey
	in := s.inbound(c, key, msg, runID)

	if queue.IsStopCommand(msg) {
		runIDs := s.runs.active(key)
		if _, err := b.Dispatcher.Submit(ctx, in); err != nil {
			return nil, submitError(err)
		}
		return map[string]any{"ok": true, "aborted": len(runIDs) > 0, "runIds": nonNil(runIDs)}, nil
	}

	dk := "chat:" + runID
	if cached, ok := s.dedupe.get(dk); ok {
		return cached, nil
	}
	if len(p.Attachments) > 0 {
		media, e := s.saveAttachments(p.Attachments)
		if e != nil {
			return nil, e
		}
		in.Media = media
	}
	started := map[string]any{"runId": runID, "status": "started"}
	s.dedupe.put(dk, map[string]any{"runId": runID, "status": "in_flight"})
	c.addRun(runID)
	sctx, cancel := context.WithTimeout(ctx, submitTimeout)
	defer cancel()
	rc, err := b.Dispatcher.SubmitWith(sctx, in, queue.SubmitOptions{RunID: runID, Mode: mode, DedupeKey: "webchat:" + runID})
	if err != nil {
		s.dedupe.forget(dk)
		return nil, submitError(err)
	}
	switch rc.Disposition {
	case queue.Duplicate:
		// A retry the journal already has (typically after a restart, which
		// emptied the idempotency cache): answer with what became of it.
		out := duplicateOutcome(runID, rc.State)
		if out["status"] == "in_flight" {
			// Its turn is still to end (a restart replays it under this
			// run id): this client gets its events and final.
			c.addRun(runID)
		}
		s.dedupe.put(dk, out)
		return out, nil
	case queue.Dropped:
		s.dedupe.forget(dk)
		return nil, protocol.Unavailable("the session's queue is full and its drop policy refused this message; retry when the current reply ends", 2000)
	case queue.Steered:
		// The running turn answers it: its chat events also go out under
		// this run id.
		s.runs.alias(key, runID)
	case queue.DirectiveApplied:
		done := map[string]any{"runId": runID, "status": "ok", "directive": true}
		s.dedupe.update(dk, done)
		return done, nil
	}
	if rc.RunID != "" && rc.RunID != runID {
		c.addRun(rc.RunID)
	}
	return started, nil
}

// duplicateOutcome is chat.send's answer for a message the journal had
// taken before, by its journal state: done is "ok" (the answer is in
// chat.history), dropped an error, anything else still in flight.
func duplicateOutcome(runID string, state store.JournalState) map[string]any {
	switch state {
	case store.JournalDone:
		return map[string]any{"runId": runID, "status": "ok"}
	case store.JournalDropped:
		return map[string]any{"runId": runID, "status": "error", "summary": "the message was dropped from its session's queue"}
	}
	return map[string]any{"runId": runID, "status": "in_flight"}
}

// inbound builds the dispatcher's message for a gateway client's text.
// The route is the trusted part: channel webchat, whatever the client
// claims about itself.
func (s *Server) inbound(c *conn, key core.SessionKey, body, messageID string) core.Inbound {
	senderID := c.deviceID
	if senderID == "" {
		senderID = "conn:" + c.id
	}
	return core.Inbound{
		Kind: core.InboundUser, AgentID: key.AgentID(), SessionKey: key,
		Route:    core.Route{Channel: webchatChannel, To: webchatChannel},
		ChatType: core.ChatDirect, Surface: webchatChannel,
		Body: body, MessageID: core.MessageID(messageID), Timestamp: s.now().UnixMilli(),
		Sender: core.Sender{ID: senderID, Name: displayName(c.params.Client)},
	}
}

// submitError is the answer to a message the dispatcher did not accept; the
// client may retry it.
func submitError(err error) *protocol.ErrorShape {
	if errors.Is(err, queue.ErrStopped) {
		return protocol.Unavailable("the gateway is shutting down; retry after it restarts", 2000)
	}
	return protocol.Unavailable("the message could not be stored: "+err.Error(), 1000)
}

// checkAgentID checks a request's agentId, which OpenClaw's clients send
// to say which agent a sessionKey belongs to: absent, or the agent this
// gateway runs (Switchboard runs one per gateway, agents.list's only
// entry), case aside.
func (s *Server) checkAgentID(method string, id *string) *protocol.ErrorShape {
	if id == nil {
		return nil
	}
	if *id == "" {
		return invalidParams(method, "agentId, when given, must not be empty")
	}
	if agent := s.defaultAgentID(); !strings.EqualFold(*id, agent) {
		return invalidParams(method, fmt.Sprintf("unknown agentId %q: this gateway runs agent %q (see agents.list)", *id, agent))
	}
	return nil
}

func checkSessionKey(method, key string) *protocol.ErrorShape {
	if key == "" || len(key) > maxSessionKeyLen {
		return invalidParams(method, "sessionKey is required (1 to 512 characters)")
	}
	if strings.ContainsRune(key, 0) {
		return invalidParams(method, "sessionKey must not contain null bytes")
	}
	return nil
}

// chatHistoryIgnored are the members of OpenClaw 2026.9.6's
// ChatHistoryParamsSchema for paging and anchoring (cursor, offset,
// pendingBefore, messageId, inputRunIds) and a byte budget (maxBytes;
// maxChars bounds the answer here): accepted, and change nothing.
// chat.startup takes the same members. sessionId, the session's
// incarnation, is honoured: it reads one of the session's earlier
// transcripts (sessions.list's earlier); any other id reads the current.
var chatHistoryIgnored = []string{"cursor", "maxBytes", "offset", "pendingBefore", "inputRunIds", "messageId"}

// mChatHistory answers chat.history and chat.startup. chat.startup is
// OpenClaw's first read of a conversation (its Control UI calls nothing
// else): with a sessionKey it is chat.history; with OpenClaw's shortId it
// answers an unresolved resolution.
func (s *Server) mChatHistory(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		SessionKey string  `json:"sessionKey"`
		AgentID    *string `json:"agentId"`
		Limit      *int    `json:"limit"`
		MaxChars   *int    `json:"maxChars"`
		ShortID    *string `json:"shortId"`
		SlugHint   *string `json:"slugHint"`
		SessionID  string  `json:"sessionId"`
	}
	if e := decodeParamsAccepting(req, &p, chatHistoryIgnored...); e != nil {
		return nil, e
	}
	if e := s.checkAgentID(req.Method, p.AgentID); e != nil {
		return nil, e
	}
	if req.Method == "chat.startup" && p.SessionKey == "" && p.ShortID != nil {
		// chat.startup's other form names a session by OpenClaw's short
		// id; Switchboard's sessions have none, so it resolves nothing.
		return map[string]any{"resolution": map[string]any{"ok": false}}, nil
	}
	if p.ShortID != nil || p.SlugHint != nil {
		return nil, invalidParams(req.Method, "shortId and slugHint are chat.startup's, without sessionKey")
	}
	if e := checkSessionKey(req.Method, p.SessionKey); e != nil {
		return nil, e
	}
	limit := defaultHistory
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > maxHistory {
			return nil, invalidParams(req.Method, "limit must be between 1 and 1000")
		}
		limit = *p.Limit
	}
	maxChars := maxHistoryChars
	if p.MaxChars != nil {
		if *p.MaxChars < 1 || *p.MaxChars > maxHistoryChars {
			return nil, invalidParams(req.Method, "maxChars must be between 1 and 500000")
		}
		maxChars = *p.MaxChars
	}
	key := core.ResolveRequestSessionKey(s.defaultAgentID(), p.SessionKey)
	// A client that loads a session's history shows it: it gets the
	// session's live runs from now on (as OpenClaw's TUI and Control UI
	// expect, and the web chat page), before the history is read, so no
	// run falls between the two.
	s.hub.follow(c, key)
	entry, msgs, _, err := s.backend.Load().Runner.HistoryOf(ctx, key, p.SessionID)
	if err != nil {
		return nil, errorShape(err)
	}
	visible := make([]core.Message, 0, len(msgs))
	for _, m := range msgs {
		if am, ok := m.(*core.AssistantMessage); ok && len(am.ToolCalls()) == 0 && reply.IsSilent(am.Text()) {
			continue // a NO_REPLY turn shows nothing
		}
		visible = append(visible, displayMessage(m))
	}
	// Keep the newest messages within limit, maxChars and the payload cap.
	if len(visible) > limit {
		visible = visible[len(visible)-limit:]
	}
	out := make([]json.RawMessage, 0, len(visible))
	chars, size := 0, 0
	for i := len(visible) - 1; i >= 0; i-- {
		raw, err := json.Marshal(visible[i])
		if err != nil {
			continue
		}
		chars += messageChars(visible[i])
		size += len(raw)
		if len(out) > 0 && (chars > maxChars || size > maxHistoryPayload) {
			break
		}
		out = append(out, raw)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	thinking := entry.ThinkingLevel
	if thinking == "" {
		thinking = "off"
	}
	return map[string]any{"sessionKey": key, "sessionId": entry.SessionID, "messages": out, "thinkingLevel": thinking}, nil
}

// displayMessage returns m as a person should see it: a user message
// without the metadata blocks the prompt builder put around the sender's
// words (OpenClaw strips them for display too). m itself is not changed.
func displayMessage(m core.Message) core.Message {
	um, ok := m.(*core.UserMessage)
	if !ok {
		return m
	}
	cp := *um
	if um.Content.Blocks == nil {
		cp.Content.Text = prompt.StripForDisplay(um.Content.Text)
		return &cp
	}
	cp.Content.Blocks = make(core.Content, len(um.Content.Blocks))
	for i, b := range um.Content.Blocks {
		if tc, ok := b.(*core.TextContent); ok {
			t := *tc
			t.Text = prompt.StripForDisplay(tc.Text)
			b = &t
		}
		cp.Content.Blocks[i] = b
	}
	return &cp
}

// messageChars is the text length of a message, for chat.history's
// maxChars.
func messageChars(m core.Message) int {
	switch m := m.(type) {
	case *core.UserMessage:
		return len(m.Text())
	case *core.AssistantMessage:
		return len(m.Text())
	}
	return 0
}

func (s *Server) mChatAbort(_ context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		SessionKey string  `json:"sessionKey"`
		RunID      string  `json:"runId"`
		AgentID    *string `json:"agentId"`
		// PreserveSideRuns is OpenClaw's: keep side runs (subagents) of the
		// session going. Switchboard's abort stops the session's run only,
		// so it is accepted and has nothing more to keep.
		PreserveSideRuns *bool `json:"preserveSideRuns"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if e := checkSessionKey(req.Method, p.SessionKey); e != nil {
		return nil, e
	}
	if e := s.checkAgentID(req.Method, p.AgentID); e != nil {
		return nil, e
	}
	key := core.ResolveRequestSessionKey(s.defaultAgentID(), p.SessionKey)
	if p.RunID != "" {
		owner, ok := s.runs.sessionOf(p.RunID)
		if !ok {
			return map[string]any{"ok": true, "aborted": false, "runIds": []string{}}, nil
		}
		if owner != key {
			return nil, protocol.InvalidRequest("runId does not match sessionKey", nil)
		}
	}
	runIDs := s.runs.active(key)
	aborted := s.backend.Load().Dispatcher.Abort(key)
	if !aborted {
		runIDs = nil
	}
	return map[string]any{"ok": true, "aborted": aborted, "runIds": nonNil(runIDs)}, nil
}

func (s *Server) mChatInject(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		SessionKey string  `json:"sessionKey"`
		AgentID    *string `json:"agentId"`
		Message    string  `json:"message"`
		Label      string  `json:"label"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if e := checkSessionKey(req.Method, p.SessionKey); e != nil {
		return nil, e
	}
	if e := s.checkAgentID(req.Method, p.AgentID); e != nil {
		return nil, e
	}
	if strings.TrimSpace(p.Message) == "" || strings.ContainsRune(p.Message, 0) {
		return nil, invalidParams(req.Method, "message is required and must not contain null bytes")
	}
	if len(p.Label) > maxInjectLabelLen {
		return nil, invalidParams(req.Method, "label must be at most 100 characters")
	}
	key := core.ResolveRequestSessionKey(s.defaultAgentID(), p.SessionKey)
	s.hub.follow(c, key)
	text := p.Message
	if p.Label != "" {
		text = "[" + p.Label + "]\n\n" + text
	}
	now := s.now().UnixMilli()
	msg := &core.AssistantMessage{
		Content: core.Content{&core.TextContent{Text: text}}, API: "gateway-injected", Provider: "gateway", Model: "inject",
		StopReason: core.StopReasonStop, Timestamp: now,
	}
	if err := s.backend.Load().Runner.Inject(ctx, key, msg); err != nil {
		return nil, errorShape(err)
	}
	runID := "inject-" + newUUID()
	s.broadcastChat(events.ChatEvent{
		RunID: runID, SessionKey: string(key), State: events.StateFinal,
		Message: &events.ChatMessage{Role: "assistant", Content: []events.ChatContent{{Type: "text", Text: text}}, Timestamp: now},
	}, false)
	return map[string]any{"ok": true, "sessionKey": key, "runId": runID}, nil
}

// agentParams are the agent method's params (openclaw-facts §1.12). Members
// Switchboard does not act on are accepted and ignored.
type agentParams struct {
	Message        *string `json:"message"`
	IdempotencyKey string  `json:"idempotencyKey"`
	AgentID        string  `json:"agentId"`
	SessionKey     string  `json:"sessionKey"`
	Deliver        bool    `json:"deliver"`
	Channel        string  `json:"channel"`
	To             string  `json:"to"`
	AccountID      string  `json:"accountId"`
	ThreadID       string  `json:"threadId"`
	Lane           string  `json:"lane"`
	BestEffort     bool    `json:"bestEffortDeliver"`
}

func (s *Server) mAgent(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p agentParams
	if e := decodeParamsLenient(req, &p); e != nil {
		return nil, e
	}
	if p.Message == nil || strings.TrimSpace(*p.Message) == "" {
		return nil, invalidParams(req.Method, "message is required")
	}
	if strings.ContainsRune(*p.Message, 0) {
		return nil, protocol.InvalidRequest("message must not contain null bytes", nil)
	}
	if p.IdempotencyKey == "" || len(p.IdempotencyKey) > maxIdempotencyKey {
		return nil, invalidParams(req.Method, "idempotencyKey is required (a unique id per message, at most 256 characters)")
	}
	agentID := p.AgentID
	if agentID == "" {
		agentID = s.defaultAgentID()
	}
	key := core.ResolveRequestSessionKey(agentID, p.SessionKey)
	s.hub.follow(c, key)
	runID := p.IdempotencyKey
	in := s.inbound(c, key, *p.Message, runID)
	if p.Deliver && p.Channel != "" && p.Channel != webchatChannel {
		if p.To == "" && !p.BestEffort {
			return nil, protocol.InvalidRequest("deliver needs a destination: set to (and channel), or bestEffortDeliver to run without delivery", nil)
		}
		if p.To != "" {
			in.Route = core.Route{Channel: core.ChannelName(p.Channel), AccountID: core.AccountID(p.AccountID), To: core.ChatID(p.To), ThreadID: p.ThreadID}
		}
	}

	dk := "agent:" + runID
	accepted, replay := s.dedupe.get(dk)
	if !replay {
		accepted = map[string]any{"runId": runID, "status": "accepted", "acceptedAt": s.now().UnixMilli()}
		s.dedupe.put(dk, accepted)
		c.addRun(runID)
		sctx, cancel := context.WithTimeout(ctx, submitTimeout)
		rc, err := s.backend.Load().Dispatcher.SubmitWith(sctx, in, queue.SubmitOptions{RunID: runID, Lane: p.Lane, DedupeKey: "agent:" + runID})
		cancel()
		if err != nil {
			s.dedupe.forget(dk)
			return nil, submitError(err)
		}
		if rc.Disposition == queue.Dropped {
			s.dedupe.forget(dk)
			return nil, protocol.Unavailable("the session's queue is full and its drop policy refused this message", 2000)
		}
		if rc.Disposition == queue.Steered {
			s.runs.alias(key, runID)
		}
	}
	c.respond(req.ID, accepted, nil)

	// The second answer comes when the run ends.
	done, wait := s.runs.wait(runID)
	c.inflight.Add(1)
	go func() {
		defer c.inflight.Done()
		if done == nil {
			select {
			case done = <-wait:
			case <-c.ctx.Done():
				s.runs.unwait(runID, wait)
				return
			}
		}
		if done.Status != "ok" {
			c.respond(req.ID, nil, &protocol.ErrorShape{
				Code: protocol.CodeUnavailable, Message: done.Error,
				Details: map[string]any{"runId": runID, "status": "error", "summary": done.Error},
			})
			return
		}
		result := map[string]any{"payloads": nonNil(done.Result.Replies)}
		if f := done.Result.Final; f != nil {
			result["meta"] = map[string]any{"durationMs": done.EndedAt - done.StartedAt, "usage": done.Result.Usage, "stopReason": f.StopReason}
		}
		c.respond(req.ID, map[string]any{"runId": runID, "status": "ok", "summary": "completed", "result": result}, nil)
	}()
	return respondLater, nil
}

func (s *Server) mAgentWait(_ context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		RunID     string `json:"runId"`
		TimeoutMs *int64 `json:"timeoutMs"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.RunID == "" {
		return nil, invalidParams(req.Method, "runId is required")
	}
	timeout := int64(defaultWaitMs)
	if p.TimeoutMs != nil {
		if *p.TimeoutMs < 0 {
			return nil, invalidParams(req.Method, "timeoutMs must not be negative")
		}
		timeout = *p.TimeoutMs
	}
	answer := func(o *runOutcome) map[string]any {
		out := map[string]any{"runId": p.RunID, "status": o.Status, "startedAt": o.StartedAt, "endedAt": o.EndedAt}
		if o.Error != "" {
			out["error"] = o.Error
		}
		return out
	}
	done, wait := s.runs.wait(p.RunID)
	if done != nil {
		return answer(done), nil
	}
	c.inflight.Add(1)
	go func() {
		defer c.inflight.Done()
		t := time.NewTimer(time.Duration(timeout) * time.Millisecond)
		defer t.Stop()
		select {
		case o := <-wait:
			c.respond(req.ID, answer(o), nil)
		case <-t.C:
			s.runs.unwait(p.RunID, wait)
			c.respond(req.ID, map[string]any{"runId": p.RunID, "status": "timeout"}, nil)
		case <-c.ctx.Done():
			s.runs.unwait(p.RunID, wait)
		}
	}()
	return respondLater, nil
}

func (s *Server) mSend(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		To             string   `json:"to"`
		Message        string   `json:"message"`
		MediaURL       string   `json:"mediaUrl"`
		MediaURLs      []string `json:"mediaUrls"`
		GifPlayback    bool     `json:"gifPlayback"`
		Channel        string   `json:"channel"`
		AccountID      string   `json:"accountId"`
		AgentID        string   `json:"agentId"`
		ThreadID       string   `json:"threadId"`
		SessionKey     string   `json:"sessionKey"`
		IdempotencyKey string   `json:"idempotencyKey"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.IdempotencyKey == "" {
		return nil, invalidParams(req.Method, "idempotencyKey is required")
	}
	if p.Channel == "" && strings.Contains(p.To, ":") {
		// A target such as "telegram:-1001234567890:topic:42".
		r, err := s.parseTarget(p.To)
		if err != nil {
			return nil, invalidParams(req.Method, err.Error())
		}
		p.Channel, p.To, p.AccountID = string(r.Channel), string(r.To), string(r.AccountID)
		if p.ThreadID == "" {
			p.ThreadID = r.ThreadID
		}
	}
	if p.To == "" || p.Channel == "" {
		return nil, invalidParams(req.Method, "to and channel are required (or to as a target: <channel>:<chat>)")
	}
	if p.Message == "" && p.MediaURL == "" && len(p.MediaURLs) == 0 {
		return nil, invalidParams(req.Method, "message or mediaUrl is required")
	}
	dk := "send:" + p.IdempotencyKey
	if cached, ok := s.dedupe.get(dk); ok {
		return cached, nil
	}
	b := s.backend.Load()
	if b.Deliverer == nil {
		return nil, protocol.NewError(protocol.CodeUnavailable, "no bridge for channel "+p.Channel+" is running")
	}
	media := p.MediaURLs
	if p.MediaURL != "" {
		media = append([]string{p.MediaURL}, media...)
	}
	key := core.SessionKey("")
	if p.SessionKey != "" {
		key = core.ResolveRequestSessionKey(s.defaultAgentID(), p.SessionKey)
	}
	err := b.Deliverer.Deliver(ctx, queue.Delivery{
		Kind: queue.DeliveryNotice, SessionKey: key,
		Route:   core.Route{Channel: core.ChannelName(p.Channel), AccountID: core.AccountID(p.AccountID), To: core.ChatID(p.To), ThreadID: p.ThreadID},
		Replies: []core.ReplyPayload{{Text: p.Message, MediaURLs: media}},
	})
	if err != nil {
		return nil, protocol.Unavailable("send to "+p.Channel+" failed: "+err.Error(), 0)
	}
	out := map[string]any{"runId": p.IdempotencyKey, "channel": p.Channel, "to": p.To, "status": "ok"}
	s.dedupe.put(dk, out)
	return out, nil
}

// parseTarget reads send's "<channel>[#<account>]:<chat>" through the
// backend's Targets, or as written when it has none.
func (s *Server) parseTarget(target string) (core.Route, error) {
	if t := s.backend.Load().Targets; t != nil {
		return t.ParseTarget(target)
	}
	channel, chat, _ := strings.Cut(target, ":")
	channel, account, _ := strings.Cut(channel, "#")
	return core.Route{Channel: core.ChannelName(strings.ToLower(channel)), AccountID: core.AccountID(account), To: core.ChatID(chat)}, nil
}
