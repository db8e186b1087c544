package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// sessionsCreateUnsupported are the members of OpenClaw 2026.9.6's
// SessionsCreateParamsSchema that name something Switchboard does not have
// (per-session models and runtimes, permission modes, forks, worktrees,
// projects, a first turn). sessions.create refuses each by name rather than
// creating a session that silently lacks it.
// newSessionPrefix opens the key sessions.create makes when given none.
const newSessionPrefix = "session-"

var sessionsCreateUnsupported = []string{
	"model", "agentRuntime", "contextWindow", "fastMode", "permissionMode", "toolOverrides",
	"incognito", "spawnDepth", "fork", "forkFrom", "task", "message", "mentions", "attachments",
	"projectId", "projectGitUrl", "repository", "worktree", "worktreeSource", "worktreeBaseRef",
	"worktreeName", "cwd", "execNode", "sandboxMode",
}

// mSessionsCreate answers sessions.create, which OpenClaw's TUI sends for
// /new: {key?, agentId?, label?, thinkingLevel?, parentSessionKey?,
// succeedsParent?, emitCommandHooks?, …}. It creates the session's entry
// (or adopts the existing one, as OpenClaw does for a key that exists) and
// answers {ok, key, sessionId, entry}. Without a key it makes one from a
// random id. idempotencyKey, displayName, titleSource, category,
// visibility, catalogId, timeoutMs and the parent members are accepted and
// not acted on: a session here has no lineage or catalog, and the parent
// keeps its own transcript.
func (s *Server) mSessionsCreate(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var members map[string]json.RawMessage
	if json.Unmarshal(req.Params, &members) == nil {
		for _, m := range sessionsCreateUnsupported {
			if _, ok := members[m]; ok {
				return nil, invalidParams(req.Method, fmt.Sprintf("%q is not supported by Switchboard (one model and workspace per agent, no forks or worktrees); create the session without it", m))
			}
		}
	}
	var p struct {
		Key              *string         `json:"key"`
		IdempotencyKey   *string         `json:"idempotencyKey"`
		AgentID          *string         `json:"agentId"`
		Label            *string         `json:"label"`
		DisplayName      *string         `json:"displayName"`
		TitleSource      *string         `json:"titleSource"`
		Category         *string         `json:"category"`
		ThinkingLevel    *string         `json:"thinkingLevel"`
		Visibility       json.RawMessage `json:"visibility"`
		CatalogID        *string         `json:"catalogId"`
		ParentSessionKey *string         `json:"parentSessionKey"`
		EmitCommandHooks *bool           `json:"emitCommandHooks"`
		SucceedsParent   *bool           `json:"succeedsParent"`
		TimeoutMs        *int64          `json:"timeoutMs"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if e := s.checkAgentID(req.Method, p.AgentID); e != nil {
		return nil, e
	}
	for name, v := range map[string]*string{"idempotencyKey": p.IdempotencyKey, "catalogId": p.CatalogID, "parentSessionKey": p.ParentSessionKey} {
		if v != nil && (*v == "" || len(*v) > maxSessionKeyLen) {
			return nil, invalidParams(req.Method, name+", when given, must be 1 to 512 characters")
		}
	}
	if p.Label != nil && (*p.Label == "" || len(*p.Label) > 200) {
		return nil, invalidParams(req.Method, "label, when given, must be 1 to 200 characters")
	}
	if p.ThinkingLevel != nil && (*p.ThinkingLevel == "" || !validThinking(*p.ThinkingLevel)) {
		return nil, invalidParams(req.Method, "thinkingLevel must be off, minimal, low, medium, high or xhigh")
	}
	if p.TimeoutMs != nil && *p.TimeoutMs < 0 {
		return nil, invalidParams(req.Method, "timeoutMs must not be negative")
	}
	if p.SucceedsParent != nil && p.ParentSessionKey == nil {
		return nil, invalidParams(req.Method, "succeedsParent requires parentSessionKey")
	}
	raw := ""
	if p.Key != nil {
		if e := checkSessionKey(req.Method, *p.Key); e != nil {
			return nil, invalidParams(req.Method, "key, when given, must be 1 to 512 characters")
		}
		raw = *p.Key
	} else {
		var id [16]byte
		_, _ = rand.Read(id[:])
		raw = newSessionPrefix + hex.EncodeToString(id[:])
	}
	key := core.ResolveRequestSessionKey(s.defaultAgentID(), raw)
	if p.Label != nil {
		if taken, e := s.labelTaken(ctx, key, *p.Label); e != nil || taken {
			if e != nil {
				return nil, e
			}
			return nil, invalidParams(req.Method, fmt.Sprintf("label %q is already used by another session; choose another", *p.Label))
		}
	}
	entry, err := s.backend.Load().Runner.Patch(ctx, key, setLabelThinking(p.Label, p.ThinkingLevel))
	if err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"ok": true, "key": key, "sessionId": entry.SessionID, "entry": rowOf(entry)}, nil
}

// labelTaken reports whether a session other than key has label (OpenClaw
// keeps labels unique).
func (s *Server) labelTaken(ctx context.Context, key core.SessionKey, label string) (bool, *protocol.ErrorShape) {
	entries, err := s.backend.Load().Store.ListSessions(ctx, 5000)
	if err != nil {
		return false, errorShape(err)
	}
	return slices.ContainsFunc(entries, func(e core.SessionEntry) bool { return e.Key != key && e.Label == label }), nil
}
