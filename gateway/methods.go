package gateway

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/queue"
)

// registry is every method the gateway answers. Each must have a scope in
// protocol's policy table (a test fails on one without).
func (s *Server) registry() map[string]method {
	m := map[string]method{
		"health":             {s.mHealth, true},
		"status":             {s.mStatus, true},
		"chat.send":          {s.mChatSend, true},
		"chat.history":       {s.mChatHistory, true},
		"chat.startup":       {s.mChatHistory, true},
		"chat.abort":         {s.mChatAbort, true},
		"chat.inject":        {s.mChatInject, true},
		"agent":              {s.mAgent, true},
		"agent.wait":         {s.mAgentWait, true},
		"send":               {s.mSend, true},
		"wake":               {s.mWake, true},
		"system-event":       {s.mSystemEvent, true},
		"agents.list":        {s.mAgentsList, true},
		"agent.identity.get": {s.mAgentIdentity, true},
		"models.list":        {s.mModelsList, true},
		"channels.status":    {s.mChannelsStatus, true},
		"channels.logout":    {s.mChannelsLogout, true},
		"commands.list":      {s.mCommandsList, true},

		"sessions.list":        {s.mSessionsList, true},
		"sessions.resolve":     {s.mSessionsResolve, false},
		"sessions.preview":     {s.mSessionsPreview, true},
		"sessions.describe":    {s.mSessionsDescribe, true},
		"sessions.create":      {s.mSessionsCreate, true},
		"sessions.patch":       {s.mSessionsPatch, true},
		"sessions.reset":       {s.mSessionsReset, true},
		"sessions.delete":      {s.mSessionsDelete, true},
		"sessions.compact":     {s.mSessionsCompact, true},
		"sessions.subscribe":   {s.mSessionsSubscribe(true), true},
		"sessions.unsubscribe": {s.mSessionsSubscribe(false), true},

		"sessions.messages.subscribe":   {s.mSessionsMessages(true), true},
		"sessions.messages.unsubscribe": {s.mSessionsMessages(false), true},

		"config.get":    {s.mConfigGet, true},
		"config.schema": {s.mConfigSchema, true},
		"config.set":    {s.mConfigSet, true},
		"config.patch":  {s.mConfigPatch, true},

		"device.pair.list":    {s.mDevicePairList, true},
		"device.pair.approve": {s.mDevicePairApprove, true},
		"device.pair.reject":  {s.mDevicePairReject, true},
		"device.token.rotate": {s.mDeviceTokenRotate, true},
		"device.token.revoke": {s.mDeviceTokenRevoke, true},

		"pairing.list":    {s.mPairingList, true},
		"pairing.approve": {s.mPairingDecide(true), true},
		"pairing.reject":  {s.mPairingDecide(false), true},

		"channels.pairing.list":    {s.mChannelsPairingList, true},
		"channels.pairing.approve": {s.mChannelsPairingDecide(true), true},
		"channels.pairing.dismiss": {s.mChannelsPairingDecide(false), true},

		// Callable but not advertised, as in OpenClaw (openclaw-facts §1.13).
		"web.login.start": {s.mWebLoginStart, false},
		"web.login.wait":  {s.mWebLoginWait, false},
	}
	m["last-heartbeat"] = method{s.mLastHeartbeat, true}
	m["set-heartbeats"] = method{s.mSetHeartbeats, true}
	m["cron.list"] = method{s.mCronList, true}
	m["cron.status"] = method{s.mCronStatus, true}
	m["cron.add"] = method{s.mCronAdd, true}
	m["cron.update"] = method{s.mCronUpdate, true}
	m["cron.remove"] = method{s.mCronRemove, true}
	m["cron.run"] = method{s.mCronRun, true}
	m["cron.runs"] = method{s.mCronRuns, true}
	m["exec.approval.list"] = method{s.mApprovalList, true}
	m["exec.approval.get"] = method{s.mApprovalGet, true}
	m["exec.approval.resolve"] = method{s.mApprovalResolve, true}
	return m
}

// healthSnapshot is the health method's payload and hello-ok's
// snapshot.health. It does no IO.
func (s *Server) healthSnapshot(context.Context) map[string]any {
	ready, components := true, map[string]string{}
	if s.deps.Readiness != nil {
		ready, components = s.deps.Readiness()
	}
	h := map[string]any{
		"ok": ready, "ts": s.now().UnixMilli(), "uptimeMs": s.now().Sub(s.started).Milliseconds(),
		"components": components, "defaultAgentId": s.defaultAgentID(),
	}
	if b := s.backend.Load(); b != nil {
		if b.Dispatcher != nil {
			st := b.Dispatcher.Stats()
			h["queue"] = map[string]int{"sessions": st.Sessions, "active": st.Active, "queued": st.Queued}
		}
		h["channels"] = s.channelMap(b)
	}
	return h
}

func (s *Server) mHealth(ctx context.Context, _ *conn, _ protocol.RequestFrame) (any, *protocol.ErrorShape) {
	return s.healthSnapshot(ctx), nil
}

func (s *Server) mStatus(ctx context.Context, _ *conn, _ protocol.RequestFrame) (any, *protocol.ErrorShape) {
	mode, _, _ := s.currentSecret()
	st := map[string]any{
		"version": s.deps.Version, "uptimeMs": s.now().Sub(s.started).Milliseconds(),
		"connections": s.hub.count(), "authMode": mode, "bind": s.cfg.Host(),
		"stateDir": s.deps.StateDir, "defaultAgentId": s.defaultAgentID(),
	}
	if b := s.backend.Load(); b != nil {
		st["defaultModel"] = b.DefaultModel
		if b.Dispatcher != nil {
			q := b.Dispatcher.Stats()
			st["queue"] = map[string]int{"sessions": q.Sessions, "active": q.Active, "queued": q.Queued}
		}
		if b.Store != nil {
			if rows, err := b.Store.ListSessions(ctx, 10); err == nil {
				recent := make([]map[string]any, 0, len(rows))
				for _, e := range rows {
					recent = append(recent, map[string]any{"key": e.Key, "updatedAt": e.UpdatedAt, "model": e.Model})
				}
				st["sessions"] = map[string]any{"recent": recent}
			}
		}
	}
	return st, nil
}

func (s *Server) mWake(_ context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Mode string `json:"mode"`
		Text string `json:"text"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.Mode != "now" && p.Mode != "next-heartbeat" {
		return nil, invalidParams(req.Method, `mode must be "now" or "next-heartbeat"`)
	}
	if strings.TrimSpace(p.Text) == "" {
		return nil, invalidParams(req.Method, "text is required")
	}
	b := s.backend.Load()
	key := core.MainSessionKey(s.defaultAgentID())
	if b.Heartbeat != nil {
		key = b.Heartbeat.SessionKey()
	}
	queued := b.Dispatcher.EnqueueSystemEvent(key, p.Text, queue.EventOptions{FromOwner: true})
	woke := false
	if p.Mode == "now" && b.Heartbeat != nil {
		b.Heartbeat.Wake("wake")
		woke = true
	}
	return map[string]any{"ok": true, "mode": p.Mode, "queued": queued, "woke": woke, "sessionKey": key}, nil
}

func (s *Server) mSystemEvent(_ context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Text       string `json:"text"`
		SessionKey string `json:"sessionKey"`
		ContextKey string `json:"contextKey"`
	}
	if e := decodeParamsLenient(req, &p); e != nil {
		return nil, e
	}
	if strings.TrimSpace(p.Text) == "" {
		return nil, invalidParams(req.Method, "text is required")
	}
	key := core.ResolveRequestSessionKey(s.defaultAgentID(), p.SessionKey)
	// system-event needs operator.admin: the operator's own note is
	// trusted, unlike anything a channel sends.
	queued := s.backend.Load().Dispatcher.EnqueueSystemEvent(key, p.Text, queue.EventOptions{ContextKey: p.ContextKey, Trusted: true})
	return map[string]any{"ok": true, "queued": queued, "sessionKey": key}, nil
}

// agentSummary is one agents.list row in OpenClaw 2026.9.6's
// AgentSummarySchema shape: the display identity under identity, and the
// agent's model, which OpenClaw's Control UI reads to decide whether a
// model is set up (without it, it asks to "Connect an AI provider").
type agentSummary struct {
	ID       string         `json:"id"`
	Name     string         `json:"name,omitempty"`
	Identity *agentIdentity `json:"identity,omitempty"`
	Model    *agentModel    `json:"model,omitempty"`
}

type agentIdentity struct {
	Name   string `json:"name,omitempty"`
	Emoji  string `json:"emoji,omitempty"`
	Avatar string `json:"avatar,omitempty"`
}

type agentModel struct {
	Primary string `json:"primary,omitempty"`
}

func (s *Server) mAgentsList(context.Context, *conn, protocol.RequestFrame) (any, *protocol.ErrorShape) {
	b := s.backend.Load()
	agents := b.Agents
	if len(agents) == 0 {
		agents = []AgentInfo{{ID: core.DefaultAgentID}}
	}
	rows := make([]agentSummary, 0, len(agents))
	for _, a := range agents {
		r := agentSummary{ID: a.ID, Name: a.Name}
		if a.Name != "" || a.Emoji != "" || a.Avatar != "" {
			r.Identity = &agentIdentity{Name: a.Name, Emoji: a.Emoji, Avatar: a.Avatar}
		}
		if a.ID == s.defaultAgentID() && b.DefaultModel != "" {
			r.Model = &agentModel{Primary: b.DefaultModel}
		}
		rows = append(rows, r)
	}
	return map[string]any{"defaultId": s.defaultAgentID(), "mainKey": core.MainKey, "scope": "per-sender", "agents": rows}, nil
}

func (s *Server) mAgentIdentity(_ context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		AgentID    string `json:"agentId"`
		SessionKey string `json:"sessionKey"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	id := p.AgentID
	if id == "" && p.SessionKey != "" {
		id = core.ResolveRequestSessionKey(s.defaultAgentID(), p.SessionKey).AgentID()
	}
	if id == "" {
		id = s.defaultAgentID()
	}
	for _, a := range s.backend.Load().Agents {
		if a.ID == id {
			return a, nil
		}
	}
	if id == s.defaultAgentID() {
		return AgentInfo{ID: id}, nil
	}
	return nil, protocol.InvalidRequest("unknown agent: "+id, nil)
}

func (s *Server) mModelsList(context.Context, *conn, protocol.RequestFrame) (any, *protocol.ErrorShape) {
	return map[string]any{"models": nonNil(s.backend.Load().Models)}, nil
}

func (s *Server) channelMap(b *Backend) map[string]any {
	out := map[string]any{}
	if b.Channels == nil {
		return out
	}
	for _, ch := range b.Channels() {
		out[ch.Channel+":"+ch.AccountID] = ch
	}
	return out
}

func (s *Server) mChannelsStatus(context.Context, *conn, protocol.RequestFrame) (any, *protocol.ErrorShape) {
	b := s.backend.Load()
	order, labels := []string{}, map[string]string{}
	channels, accounts := map[string]any{}, map[string][]ChannelStatus{}
	if b.Channels != nil {
		for _, ch := range b.Channels() {
			if _, seen := accounts[ch.Channel]; !seen {
				order = append(order, ch.Channel)
				labels[ch.Channel] = ch.Label
				channels[ch.Channel] = ch
			}
			accounts[ch.Channel] = append(accounts[ch.Channel], ch)
		}
	}
	return map[string]any{"ts": s.now().UnixMilli(), "channelOrder": order, "channelLabels": labels, "channels": channels, "channelAccounts": accounts}, nil
}

func (s *Server) mChannelsLogout(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Channel   string `json:"channel"`
		AccountID string `json:"accountId"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.Channel == "" {
		return nil, invalidParams(req.Method, "channel is required")
	}
	b := s.backend.Load()
	if b.Logout == nil {
		return nil, protocol.NewError(protocol.CodeUnavailable, "no bridge for channel "+p.Channel+" is running")
	}
	if err := b.Logout(ctx, p.Channel, p.AccountID); err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"ok": true, "channel": p.Channel, "accountId": p.AccountID}, nil
}

// chatCommands are the slash commands a chat message may be.
var chatCommands = []map[string]string{
	{"name": "stop", "description": "Stop the running reply and clear queued messages.", "usage": "/stop"},
	{"name": "new", "description": "Start a new conversation in this session.", "usage": "/new"},
	{"name": "reset", "description": "Start a new conversation in this session (same as /new).", "usage": "/reset"},
	{"name": "queue", "description": "Set how messages queue while a reply runs.", "usage": "/queue collect|followup|steer|steer-backlog|interrupt [debounce:2s] [cap:20] [drop:old|new|summarize]"},
}

func (s *Server) mCommandsList(context.Context, *conn, protocol.RequestFrame) (any, *protocol.ErrorShape) {
	return map[string]any{"commands": chatCommands}, nil
}

func (s *Server) mConfigGet(ctx context.Context, _ *conn, _ protocol.RequestFrame) (any, *protocol.ErrorShape) {
	cs := s.backend.Load().Config
	if cs == nil {
		return nil, protocol.NewError(protocol.CodeUnavailable, "configuration methods are not available in this process")
	}
	v, err := cs.Get(ctx)
	if err != nil {
		return nil, errorShape(err)
	}
	return v, nil
}

func (s *Server) mConfigSchema(ctx context.Context, _ *conn, _ protocol.RequestFrame) (any, *protocol.ErrorShape) {
	cs := s.backend.Load().Config
	if cs == nil {
		return nil, protocol.NewError(protocol.CodeUnavailable, "configuration methods are not available in this process")
	}
	v, err := cs.Schema(ctx)
	if err != nil {
		return nil, errorShape(err)
	}
	return v, nil
}

func (s *Server) mConfigSet(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Raw      *string `json:"raw"`
		BaseHash string  `json:"baseHash"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.Raw == nil {
		return nil, invalidParams(req.Method, "raw (the whole configuration document) is required")
	}
	cs := s.backend.Load().Config
	if cs == nil {
		return nil, protocol.NewError(protocol.CodeUnavailable, "configuration methods are not available in this process")
	}
	v, err := cs.Set(ctx, *p.Raw, p.BaseHash)
	if err != nil {
		return nil, errorShape(err)
	}
	return v, nil
}

func (s *Server) mConfigPatch(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Raw      json.RawMessage `json:"raw"`
		Patch    json.RawMessage `json:"patch"`
		BaseHash string          `json:"baseHash"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	patch := p.Patch
	if patch == nil {
		patch = p.Raw
	}
	if patch == nil {
		return nil, invalidParams(req.Method, "patch (a JSON merge patch object) is required")
	}
	// OpenClaw clients send the patch as a JSON string in raw.
	var str string
	if err := json.Unmarshal(patch, &str); err == nil {
		patch = json.RawMessage(str)
	}
	cs := s.backend.Load().Config
	if cs == nil {
		return nil, protocol.NewError(protocol.CodeUnavailable, "configuration methods are not available in this process")
	}
	v, err := cs.Patch(ctx, []byte(patch), p.BaseHash)
	if err != nil {
		return nil, errorShape(err)
	}
	return v, nil
}
