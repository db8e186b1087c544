package agent

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/prompt"
	"github.com/switchboardhq/switchboard/core/reply"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// resolveSession loads or creates the session's index entry (from the
// runner's cache when the session is warm). A message
// starting with /new or /reset starts a new transcript (the old file stays);
// the command is consumed, and a bare command is left for prompt assembly to
// turn into the session-start prompt. It returns the body to assemble and
// whether this is the session's first turn.
func (tr *turnRun) resolveSession(ctx context.Context, in *core.Inbound, cached *cachedSession) (string, bool, error) {
	var entry core.SessionEntry
	found := false
	if cached != nil {
		entry, found = cached.entry, true
	} else {
		var err error
		entry, found, err = tr.deps.Sessions.GetSession(ctx, in.SessionKey)
		if err != nil {
			return "", false, fmt.Errorf("agent: %w", err)
		}
	}
	now := tr.deps.Now().UnixMilli()
	body := in.Body
	reset, rest := resetCommand(body)
	isNew := !found || reset
	if isNew {
		old := entry
		entry = core.SessionEntry{
			Key:       in.SessionKey,
			AgentID:   tr.cfg.AgentID,
			SessionID: tr.deps.NewID(),
			CreatedAt: now,
			UpdatedAt: now,
			Label:     old.Label,
			LastRoute: old.LastRoute,
		}
		if found {
			entry.Earlier = core.Retired(old, now)
		}
	}
	if reset && rest != "" {
		body = rest
	}
	tr.entry = entry
	return body, isNew, nil
}

// resetCommand reports whether body starts with /new or /reset (as a whole
// word, any case) and returns the rest of the message.
func resetCommand(body string) (bool, string) {
	s := strings.TrimSpace(body)
	word, rest, _ := strings.Cut(s, " ")
	if i := strings.IndexAny(word, "\n\t"); i >= 0 {
		word, rest = word[:i], s[i+1:]
	}
	switch strings.ToLower(word) {
	case "/new", "/reset":
		return true, strings.TrimSpace(rest)
	}
	return false, ""
}

// resolveModel picks the model refs of the turn and the primary's settings.
func (tr *turnRun) resolveModel() error {
	primary := tr.cfg.Model.Primary
	if tr.t.Model != "" {
		primary = tr.t.Model
	}
	tr.refs = append([]string{primary}, tr.cfg.Model.Fallbacks...)
	_, mc, err := tr.deps.Models.Resolve(primary)
	if err != nil {
		return fmt.Errorf("agent: model %s: %w", primary, err)
	}
	tr.model = mc
	return nil
}

// buildSystem assembles the system prompt, which is byte-stable across the
// turns of a session: tool list, workspace files, trusted inbound block.
func (tr *turnRun) buildSystem(in *core.Inbound) {
	var summaries []prompt.ToolSummary
	if tr.deps.Tools != nil && tr.deps.Tools.Registry != nil {
		for _, s := range tr.deps.Tools.Registry.Specs() {
			summaries = append(summaries, prompt.ToolSummary{Name: s.Name, Description: s.Description})
			tr.specs = append(tr.specs, llm.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
		}
	}
	var ws fs.FS = tr.cfg.Workspace
	tr.system = prompt.System(prompt.SystemOptions{
		Identity:        tr.cfg.Identity,
		Tools:           summaries,
		Heartbeats:      tr.cfg.Heartbeat.Enabled,
		HeartbeatPrompt: tr.cfg.Heartbeat.Prompt,
		Workspace:       ws,
		Inbound:         in,
	})
}

// resolveThinking picks the thinking level: the turn's override, else the
// message's leading think word, else the session's setting.
func (tr *turnRun) resolveThinking(fromMessage string) llm.ThinkingLevel {
	for _, s := range []string{string(tr.t.Thinking), fromMessage, tr.entry.ThinkingLevel} {
		if l, ok := llm.ParseThinkingLevel(s); ok {
			return l
		}
	}
	return ""
}

// contextHistory turns transcript messages into the history sent to the
// model (seed 004 phase C). hideOrphan drops a trailing user message left by
// a crashed run; it is false when rebuilding mid-turn, where the trailing
// user message is this turn's own prompt.
func (tr *turnRun) contextHistory(all []core.Message, hideOrphan bool) []core.Message {
	opts := transcript.PipelineOptions{
		DropUnsignedThinking: true,
		HistoryLimit:         transcript.HistoryLimitForKey(tr.t.Inbound.SessionKey, tr.cfg.HistoryLimits),
		IsHeartbeatAck: func(text string) bool {
			return reply.StripHeartbeatToken(text, reply.ModeHeartbeat, tr.cfg.Heartbeat.AckMaxChars).ShouldSkip
		},
		IsHeartbeatPrompt: tr.isHeartbeatPrompt,
	}
	if hideOrphan {
		out, _ := transcript.Pipeline(all, opts)
		return out
	}
	// Mid-turn: the same steps minus the orphan check and the history limit
	// (which counts this turn's prompt and must not cut into the turn).
	msgs := transcript.ContextMessages(all)
	msgs = transcript.DropUnsignedThinking(msgs)
	return transcript.RepairToolPairing(msgs)
}

// isHeartbeatPrompt reports a user message that is a heartbeat poll
// (openclaw-facts §6.3): it starts with the configured prompt, or is a
// heartbeat task prompt.
func (tr *turnRun) isHeartbeatPrompt(text string) bool {
	t := strings.TrimSpace(text)
	p := strings.TrimSpace(tr.cfg.Heartbeat.Prompt)
	if p == "" {
		p = prompt.DefaultHeartbeatPrompt
	}
	if strings.HasPrefix(t, p) {
		return true
	}
	return strings.HasPrefix(t, "Run the following periodic tasks (only those due based on their intervals):") &&
		strings.Contains(t, "After completing all due tasks, reply HEARTBEAT_OK.")
}
