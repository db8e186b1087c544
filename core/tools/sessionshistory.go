package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Limits of sessions_history.
const (
	// SessionsHistoryDefaultLimit is how many recent messages are shown
	// when the model passes no limit.
	SessionsHistoryDefaultLimit = 20
	// SessionsHistoryMaxLimit is the largest limit accepted.
	SessionsHistoryMaxLimit = 100
	// sessionsHistoryMessageChars caps each message's text.
	sessionsHistoryMessageChars = 2000
)

const sessionsHistorySchema = `{"type":"object","properties":{` +
	`"sessionKey":{"type":"string","description":"The session to read, as sessions_list shows it (e.g. agent:main:telegram:direct:42)."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":100,"default":20,"description":"How many of the most recent messages to show."}},` +
	`"required":["sessionKey"]}`

// HistoryReader reads a session's transcript; *agent.Runner implements it.
type HistoryReader interface {
	History(ctx context.Context, key core.SessionKey) (core.SessionEntry, []core.Message, bool, error)
}

// SessionsHistory is the sessions_history tool: it shows the recent
// messages of another session of the calling agent, oldest first. The text
// is channel content, returned as a tool result, never placed in a trusted
// prompt position.
type SessionsHistory struct {
	// Sessions reads transcripts; it is required.
	Sessions HistoryReader
}

var _ Tool = (*SessionsHistory)(nil)

// Spec describes sessions_history to the model.
func (t *SessionsHistory) Spec() Spec {
	return Spec{
		Name: "sessions_history",
		Description: "Read the recent messages of one of your other conversations (find its key with sessions_list): " +
			"who said what, oldest first, with tool calls summarized.",
		Parameters: json.RawMessage(sessionsHistorySchema),
		Flags:      Flags{OwnerOnly: true},
	}
}

// Execute shows the session's recent messages.
func (t *SessionsHistory) Execute(ctx context.Context, call Call, _ func(Result)) (Result, error) {
	if t.Sessions == nil {
		return Result{}, errors.New("no sessions are available")
	}
	raw, _ := call.Args["sessionKey"].(string)
	key := core.SessionKey(strings.TrimSpace(raw))
	if key == "" {
		return Result{}, errors.New("sessionKey is required; find one with sessions_list")
	}
	limit := SessionsHistoryDefaultLimit
	if v, ok := present(call.Args, "limit"); ok {
		n, isInt := wholeNumber(v)
		if !isInt || n < 1 || n > SessionsHistoryMaxLimit {
			return Result{}, fmt.Errorf("limit must be an integer from 1 to %d; got %s", SessionsHistoryMaxLimit, describeArg(v))
		}
		limit = int(n)
	}
	if key.AgentID() != core.NormalizeAgentID(call.AgentID) {
		return Result{}, fmt.Errorf("session %q belongs to another agent; only your own sessions can be read", key)
	}
	_, msgs, ok, err := t.Sessions.History(ctx, key)
	if err != nil {
		return Result{}, fmt.Errorf("reading %s: %w", key, err)
	}
	if !ok {
		return Result{}, fmt.Errorf("no session %q; find one with sessions_list", key)
	}
	start := max(len(msgs)-limit, 0)
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s: last %d of %d messages.\n", key, len(msgs)-start, len(msgs))
	for _, m := range msgs[start:] {
		b.WriteString(historyLine(m))
		b.WriteByte('\n')
	}
	return TextResult(strings.TrimRight(b.String(), "\n")), nil
}

// historyLine renders one message as "role: text".
func historyLine(m core.Message) string {
	switch m := m.(type) {
	case *core.UserMessage:
		return "user: " + clip(m.Text())
	case *core.AssistantMessage:
		var calls []string
		for _, c := range m.ToolCalls() {
			calls = append(calls, c.Name)
		}
		s := "assistant: " + clip(m.Text())
		if len(calls) > 0 {
			s += " [called " + strings.Join(calls, ", ") + "]"
		}
		return s
	case *core.ToolResultMessage:
		return "tool " + m.ToolName + ": " + clip(m.Content.Text())
	}
	return "(other message)"
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > sessionsHistoryMessageChars {
		return string(r[:sessionsHistoryMessageChars]) + "…"
	}
	return s
}
