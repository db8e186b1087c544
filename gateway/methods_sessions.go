package gateway

import (
	"cmp"
	"context"
	"path/filepath"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/prompt"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// sessionRow is one session of sessions.list (seed 001 SessionRow).
type sessionRow struct {
	Key         string `json:"key"`
	Kind        string `json:"kind"`
	Label       string `json:"label,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Surface     string `json:"surface,omitempty"`
	Subject     string `json:"subject,omitempty"`
	Room        string `json:"room,omitempty"`
	Space       string `json:"space,omitempty"`
	// ChatKind is Switchboard's finer kind for people: direct, group,
	// channel, webchat, cron or main.
	ChatKind string `json:"chatKind"`
	// Origin is where the chat is (see core.SessionOrigin).
	Origin        *core.SessionOrigin `json:"origin,omitempty"`
	UpdatedAt     *int64              `json:"updatedAt"`
	SessionID     string              `json:"sessionId,omitempty"`
	ThinkingLevel string              `json:"thinkingLevel,omitempty"`
	Model         string              `json:"model,omitempty"`
	InputTokens   int64               `json:"inputTokens"`
	OutputTokens  int64               `json:"outputTokens"`
	TotalTokens   int64               `json:"totalTokens"`
	ContextTokens int64               `json:"contextTokens,omitempty"`
	// Earlier lists the transcripts before the last /new or /reset,
	// newest first; chat.history reads one with its sessionId.
	Earlier []core.EarlierTranscript `json:"earlier,omitempty"`
}

func rowOf(e core.SessionEntry) sessionRow {
	r := sessionRow{
		Key: string(e.Key), Kind: sessionKind(e.Key), Label: e.Label, DisplayName: e.Label,
		SessionID: e.SessionID, ThinkingLevel: e.ThinkingLevel, Model: e.Model,
		InputTokens: e.Usage.Input, OutputTokens: e.Usage.Output, TotalTokens: e.Usage.TotalTokens,
		ContextTokens: e.ContextTokens,
	}
	r.DisplayName, r.ChatKind = sessionTitle(e)
	for i := len(e.Earlier) - 1; i >= 0; i-- {
		r.Earlier = append(r.Earlier, e.Earlier[i])
	}
	if o := e.Origin; o != nil {
		r.Subject, r.Room, r.Space, r.Origin = o.Subject, o.Room, o.Space, o
	}
	if e.UpdatedAt > 0 {
		u := e.UpdatedAt
		r.UpdatedAt = &u
	}
	if e.LastRoute != nil {
		r.Surface = string(e.LastRoute.Channel)
	}
	return r
}

// sessionTitle names a session for people: its label, else what its
// origin says (the peer of a direct chat, the group's title, the thread,
// the first words of a web chat), else what its key says (a cron job), and
// its chatKind.
func sessionTitle(e core.SessionEntry) (title, kind string) {
	p, err := core.ParseSessionKey(string(e.Key))
	o := e.Origin
	switch {
	case err == nil && (p.Kind == core.SessionKindCron || p.Kind == core.SessionKindCronRun):
		kind, title = core.OriginCron, "Cron job "+p.CronJobID
	case o != nil && o.Kind != core.OriginCron:
		kind = o.Kind
		switch o.Kind {
		case core.OriginDirect:
			title = o.Peer
		case core.OriginGroup, core.OriginChannel:
			title = cmp.Or(o.Subject, o.Room)
			if o.Space != "" && title != "" {
				title += " · " + o.Space
			}
		}
		if title == "" {
			title = o.Title
		}
		if o.Thread != "" {
			title = strings.TrimSpace(title + " › " + o.Thread)
		}
		if title == "" && o.Kind == core.OriginWebchat {
			title = "Web chat"
		}
	case err == nil && p.Kind == core.SessionKindMain:
		kind, title = "main", "Main session"
	case err == nil && strings.HasPrefix(p.Rest, newSessionPrefix):
		// Made by sessions.create (the page's New chat), no turn yet.
		kind, title = core.OriginWebchat, "New chat"
	default:
		kind = sessionKind(e.Key)
	}
	if e.Label != "" {
		title = e.Label
	}
	if title == "" {
		title = string(e.Key)
	}
	return title, kind
}

// sessionKind is seed 001's kind: direct, group, global or unknown.
func sessionKind(k core.SessionKey) string {
	p, err := core.ParseSessionKey(string(k))
	if err != nil {
		return "unknown"
	}
	switch p.Kind {
	case core.SessionKindGroup, core.SessionKindChannel:
		return "group"
	case core.SessionKindGlobal:
		return "global"
	}
	return "direct"
}

// sessionsListIgnored are the members of OpenClaw 2026.9.6's
// SessionsListParamsSchema that filter or decorate by what Switchboard's
// sessions do not have (subagents, projects, owners, boards, pins,
// archives, activity summaries, paging by offset). They are accepted and
// change nothing; the Control UI sends configuredAgentsOnly on every load.
var sessionsListIgnored = []string{
	"offset", "activeOnly", "requireLastInteraction", "sortBy", "excludeSubagents", "excludeCron",
	"excludeSystem", "configuredAgentsOnly", "includeActivitySummary", "projectId", "workspaceDir",
	"group", "pinned", "boardFace", "hasBoard", "creatorId", "ownerId", "ownerFirst", "involvingMe",
	"profileRelation", "involvingProfileId", "includePeople", "archived",
}

func (s *Server) mSessionsList(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Limit                *int   `json:"limit"`
		ActiveMinutes        *int   `json:"activeMinutes"`
		IncludeGlobal        bool   `json:"includeGlobal"`
		IncludeUnknown       bool   `json:"includeUnknown"`
		IncludeDerivedTitles bool   `json:"includeDerivedTitles"`
		IncludeLastMessage   bool   `json:"includeLastMessage"`
		AgentID              string `json:"agentId"`
		Search               string `json:"search"`
		Label                string `json:"label"`
		SpawnedBy            string `json:"spawnedBy"`
	}
	if e := decodeParamsAccepting(req, &p, sessionsListIgnored...); e != nil {
		return nil, e
	}
	limit := 500
	if p.Limit != nil {
		if *p.Limit < 1 {
			return nil, invalidParams(req.Method, "limit must be at least 1")
		}
		limit = min(*p.Limit, 5000)
	}
	b := s.backend.Load()
	entries, err := b.Store.ListSessions(ctx, 5000)
	if err != nil {
		return nil, errorShape(err)
	}
	var cutoff int64
	if p.ActiveMinutes != nil && *p.ActiveMinutes > 0 {
		cutoff = s.now().UnixMilli() - int64(*p.ActiveMinutes)*60000
	}
	search := strings.ToLower(p.Search)
	rows := []sessionRow{}
	for _, e := range entries {
		if len(rows) >= limit {
			break
		}
		r := rowOf(e)
		switch {
		case cutoff > 0 && e.UpdatedAt < cutoff,
			r.Kind == "global" && !p.IncludeGlobal,
			r.Kind == "unknown" && !p.IncludeUnknown,
			p.AgentID != "" && e.Key.AgentID() != core.NormalizeAgentID(p.AgentID),
			p.Label != "" && e.Label != p.Label,
			search != "" && !strings.Contains(strings.ToLower(string(e.Key)+" "+e.Label), search),
			p.SpawnedBy != "": // no session here is spawned by another

			continue
		}
		rows = append(rows, r)
	}
	return map[string]any{
		"ts": s.now().UnixMilli(), "path": filepath.Join(s.deps.StateDir, "state.db"), "count": len(rows),
		"defaults": map[string]any{"model": b.DefaultModel, "contextTokens": b.ContextTokens},
		"sessions": rows,
	}, nil
}

func (s *Server) mSessionsResolve(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Key       string `json:"key"`
		SessionID string `json:"sessionId"`
		Label     string `json:"label"`
		AgentID   string `json:"agentId"`
	}
	if e := decodeParamsLenient(req, &p); e != nil {
		return nil, e
	}
	agentID := p.AgentID
	if agentID == "" {
		agentID = s.defaultAgentID()
	}
	if p.Key != "" {
		return map[string]any{"ok": true, "key": core.ResolveRequestSessionKey(agentID, p.Key)}, nil
	}
	if p.SessionID == "" && p.Label == "" {
		return nil, invalidParams(req.Method, "key, sessionId or label is required")
	}
	entries, err := s.backend.Load().Store.ListSessions(ctx, 5000)
	if err != nil {
		return nil, errorShape(err)
	}
	for _, e := range entries {
		if (p.SessionID != "" && e.SessionID == p.SessionID) || (p.Label != "" && e.Label == p.Label) {
			return map[string]any{"ok": true, "key": e.Key}, nil
		}
	}
	return nil, protocol.InvalidRequest("no session matches", nil)
}

// mSessionsDescribe answers sessions.describe {key, agentId?,
// includeDerivedTitles?, includeLastMessage?} with {session}: the
// session's sessions.list row, or null when there is none. OpenClaw's TUI
// asks it for the session it shows, after each run. The two include flags
// are accepted and change nothing: a row here has no derived title or last
// message.
func (s *Server) mSessionsDescribe(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Key                  string  `json:"key"`
		AgentID              *string `json:"agentId"`
		IncludeDerivedTitles bool    `json:"includeDerivedTitles"`
		IncludeLastMessage   bool    `json:"includeLastMessage"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if e := checkSessionKey(req.Method, p.Key); e != nil {
		return nil, invalidParams(req.Method, "key is required (1 to 512 characters)")
	}
	if e := s.checkAgentID(req.Method, p.AgentID); e != nil {
		return nil, e
	}
	key := core.ResolveRequestSessionKey(s.defaultAgentID(), p.Key)
	e, ok, err := s.backend.Load().Store.GetSession(ctx, key)
	if err != nil {
		return nil, errorShape(err)
	}
	if !ok {
		return map[string]any{"session": nil}, nil
	}
	return map[string]any{"session": rowOf(e)}, nil
}

func (s *Server) mSessionsPreview(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Keys     []string `json:"keys"`
		Limit    *int     `json:"limit"`
		MaxChars *int     `json:"maxChars"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if len(p.Keys) == 0 || len(p.Keys) > 64 {
		return nil, invalidParams(req.Method, "keys must list 1 to 64 session keys")
	}
	limit, maxChars := defaultPreviewMsgs, defaultPreviewLen
	if p.Limit != nil && *p.Limit > 0 {
		limit = min(*p.Limit, 100)
	}
	if p.MaxChars != nil && *p.MaxChars > 0 {
		maxChars = min(*p.MaxChars, 4000)
	}
	runner := s.backend.Load().Runner
	previews := make([]map[string]any, 0, len(p.Keys))
	for _, raw := range p.Keys {
		key := core.ResolveRequestSessionKey(s.defaultAgentID(), raw)
		_, msgs, ok, err := runner.History(ctx, key)
		if err != nil {
			return nil, errorShape(err)
		}
		items := []map[string]string{}
		for _, m := range msgs {
			var text string
			switch m := m.(type) {
			case *core.UserMessage:
				text = prompt.StripForDisplay(m.Text())
			case *core.AssistantMessage:
				text = m.Text()
			default:
				continue
			}
			if strings.TrimSpace(text) == "" {
				continue
			}
			items = append(items, map[string]string{"role": m.Role(), "text": truncateRunes(text, maxChars)})
		}
		if len(items) > limit {
			items = items[len(items)-limit:]
		}
		status := "ok"
		switch {
		case !ok:
			status = "missing"
		case len(items) == 0:
			status = "empty"
		}
		previews = append(previews, map[string]any{"key": key, "status": status, "items": items})
	}
	return map[string]any{"ts": s.now().UnixMilli(), "previews": previews}, nil
}

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// sessionParams reads the key of a session method (OpenClaw sends "key";
// "sessionKey" is accepted too) and its agentId.
type sessionParams struct {
	Key        string `json:"key"`
	SessionKey string `json:"sessionKey"`
	// AgentID scopes a key that is not agent-prefixed, as OpenClaw's TUI
	// sends it (see checkAgentID).
	AgentID *string `json:"agentId"`
}

func (p sessionParams) resolve(s *Server, method string) (core.SessionKey, *protocol.ErrorShape) {
	k := p.Key
	if k == "" {
		k = p.SessionKey
	}
	if e := checkSessionKey(method, k); e != nil {
		return "", invalidParams(method, "key is required (1 to 512 characters)")
	}
	if e := s.checkAgentID(method, p.AgentID); e != nil {
		return "", e
	}
	return core.ResolveRequestSessionKey(s.defaultAgentID(), k), nil
}

func (s *Server) mSessionsPatch(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		sessionParams
		Label         *string `json:"label"`
		ThinkingLevel *string `json:"thinkingLevel"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	key, e := p.resolve(s, req.Method)
	if e != nil {
		return nil, e
	}
	if p.Label != nil && len(*p.Label) > 200 {
		return nil, invalidParams(req.Method, "label must be at most 200 characters")
	}
	if p.ThinkingLevel != nil && !validThinking(*p.ThinkingLevel) {
		return nil, invalidParams(req.Method, "thinkingLevel must be off, minimal, low, medium, high or xhigh")
	}
	entry, err := s.backend.Load().Runner.Patch(ctx, key, setLabelThinking(p.Label, p.ThinkingLevel))
	if err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"ok": true, "key": key, "entry": rowOf(entry)}, nil
}

// setLabelThinking returns the entry change of sessions.patch and
// sessions.create: the label and thinking level when given ("off" stored
// as no level).
func setLabelThinking(label, thinking *string) func(*core.SessionEntry) {
	return func(e *core.SessionEntry) {
		if label != nil {
			e.Label = *label
		}
		if thinking != nil {
			e.ThinkingLevel = *thinking
			if e.ThinkingLevel == "off" {
				e.ThinkingLevel = ""
			}
		}
	}
}

func validThinking(s string) bool {
	switch s {
	case "off", "minimal", "low", "medium", "high", "xhigh", "":
		return true
	}
	return false
}

func (s *Server) mSessionsReset(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		sessionParams
		Reason string `json:"reason"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	key, e := p.resolve(s, req.Method)
	if e != nil {
		return nil, e
	}
	entry, err := s.backend.Load().Runner.Reset(ctx, key)
	if err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"ok": true, "key": key, "entry": rowOf(entry)}, nil
}

func (s *Server) mSessionsDelete(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		sessionParams
		DeleteTranscript *bool `json:"deleteTranscript"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	key, e := p.resolve(s, req.Method)
	if e != nil {
		return nil, e
	}
	if key == core.MainSessionKey(key.AgentID()) {
		return nil, protocol.InvalidRequest("the main session cannot be deleted; reset it instead (sessions.reset)", nil)
	}
	if err := s.backend.Load().Runner.Delete(ctx, key); err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"ok": true, "key": key, "deleted": true}, nil
}

func (s *Server) mSessionsCompact(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		sessionParams
		MaxLines *int `json:"maxLines"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	key, e := p.resolve(s, req.Method)
	if e != nil {
		return nil, e
	}
	if err := s.backend.Load().Runner.Compact(ctx, key, nil); err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"ok": true, "key": key, "compacted": true}, nil
}

func (s *Server) mSessionsSubscribe(on bool) handler {
	return func(_ context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
		var p struct{}
		if e := decodeParamsLenient(req, &p); e != nil {
			return nil, e
		}
		c.setSubscribed(on)
		return map[string]any{"ok": true, "subscribed": on}, nil
	}
}

// mSessionsMessages is sessions.messages.subscribe and unsubscribe
// ({key, agentId?, includeApprovals?}, OpenClaw's closed schema): the
// client gets, or stops getting, the chat and agent events of the
// session's runs, as OpenClaw's Control UI asks for the session it shows.
// includeApprovals is accepted and changes nothing: approval events go to
// every client with the approvals scope.
func (s *Server) mSessionsMessages(on bool) handler {
	return func(_ context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
		var p struct {
			Key              string `json:"key"`
			AgentID          string `json:"agentId"`
			IncludeApprovals *bool  `json:"includeApprovals"`
		}
		if e := decodeParams(req, &p); e != nil {
			return nil, e
		}
		if e := checkSessionKey(req.Method, p.Key); e != nil {
			return nil, invalidParams(req.Method, "key is required (1 to 512 characters)")
		}
		if p.IncludeApprovals != nil && (!on || !*p.IncludeApprovals) {
			return nil, invalidParams(req.Method, "includeApprovals may only be true, and only when subscribing")
		}
		agentID := p.AgentID
		if agentID == "" {
			agentID = s.defaultAgentID()
		}
		key := core.ResolveRequestSessionKey(agentID, p.Key)
		if on {
			s.hub.follow(c, key)
		} else {
			s.hub.unfollow(c, key)
		}
		return map[string]any{"subscribed": on, "key": key}, nil
	}
}
