package core

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// AgentsConfig is the `agents:` section of the configuration: settings shared
// by every agent, and per-agent overrides.
type AgentsConfig struct {
	// Defaults apply to every agent.
	Defaults AgentDefaults `json:"defaults"`
	// List holds per-agent overrides. Until multi-agent routing lands the
	// only agent is the default one, "main".
	List []AgentEntry `json:"list,omitempty"`
}

// AgentEntry is one agent's overrides (agents.list[]).
type AgentEntry struct {
	// ID names the agent: "main" (the default agent) for now.
	ID string `json:"id"`
	// Heartbeat is merged over agents.defaults.heartbeat: the keys it sets
	// win. When any agent has one, only those agents run heartbeats.
	Heartbeat *HeartbeatConfig `json:"heartbeat,omitempty"`
}

// Validate checks the ids: required, unique, and an agent that exists.
func (c AgentsConfig) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, a := range c.List {
		path := fmt.Sprintf("list[%d].id", i)
		id := NormalizeAgentID(a.ID)
		switch {
		case strings.TrimSpace(a.ID) == "":
			errs = append(errs, FieldErrorf(path, `required: the agent's id, "main" for the default agent`))
		case seen[id]:
			errs = append(errs, FieldErrorf(path, fmt.Sprintf("%q is listed twice; merge the two entries", a.ID)))
		case id != DefaultAgentID:
			errs = append(errs, FieldErrorf(path, fmt.Sprintf("no agent %q: only the default agent %q exists until multi-agent routing lands", a.ID, DefaultAgentID)))
		}
		seen[id] = true
	}
	return errors.Join(errs...)
}

// Heartbeats returns each agent's heartbeat settings: an agent's own
// heartbeat merged over the defaults (the keys it sets win). When any
// listed agent has a heartbeat, only those agents run one; otherwise every
// agent in agents (the default agent when empty) runs the defaults.
func (c AgentsConfig) Heartbeats(agents []string) map[string]HeartbeatConfig {
	if len(agents) == 0 {
		agents = []string{DefaultAgentID}
	}
	own := map[string]*HeartbeatConfig{}
	for _, a := range c.List {
		if a.Heartbeat != nil {
			own[NormalizeAgentID(a.ID)] = a.Heartbeat
		}
	}
	out := map[string]HeartbeatConfig{}
	for _, id := range agents {
		id = NormalizeAgentID(id)
		switch h, ok := own[id]; {
		case ok:
			out[id] = c.Defaults.Heartbeat.merge(*h)
		case len(own) == 0:
			out[id] = c.Defaults.Heartbeat
		}
	}
	return out
}

// AgentDefaults holds the per-agent settings every agent starts from.
type AgentDefaults struct {
	// Model selects the model that answers: a primary "<provider>/<model>"
	// reference into models.providers, plus optional fallbacks.
	Model ModelSelection `json:"model"`
	// Workspace is the directory holding the agent's working files (SOUL.md,
	// AGENTS.md, HEARTBEAT.md, files the tools read and write). Empty means
	// "<stateDir>/workspace". A leading "~/" means the home directory.
	Workspace string `json:"workspace,omitempty"`
	// MaxConcurrent caps how many turns run at once across all sessions on the
	// main lane (one turn per session is always the limit). Default 4.
	MaxConcurrent int `json:"maxConcurrent,omitempty" min:"1"`
	// TimeoutSeconds bounds one agent turn, tool calls included; a turn that
	// runs longer is aborted. Default 172800 (48 hours).
	TimeoutSeconds int `json:"timeoutSeconds,omitempty" min:"1"`
	// Heartbeat is the agent's periodic heartbeat turn.
	Heartbeat HeartbeatConfig `json:"heartbeat"`
	// UserTimezone is the user's IANA time zone (for example
	// "Europe/Berlin"), used by heartbeat activeHours with timezone "user".
	// Empty means the host's zone.
	UserTimezone string `json:"userTimezone,omitempty"`
}

// Validate checks userTimezone.
func (d AgentDefaults) Validate() error {
	if d.UserTimezone != "" {
		if _, err := time.LoadLocation(d.UserTimezone); err != nil {
			return FieldErrorf("userTimezone", fmt.Sprintf("%q is not a known time zone; write an IANA name such as \"Europe/Berlin\"", d.UserTimezone))
		}
	}
	return nil
}

// ModelSelection names the model a turn uses and where to go when it fails.
type ModelSelection struct {
	// Primary is the model every turn tries first, written
	// "<provider>/<model>", where provider is a key of models.providers (for
	// example "anthropic/claude-opus-4-6" or "echo/echo").
	Primary string `json:"primary,omitempty"`
	// Fallbacks are tried in order when the primary fails before streaming
	// its first token (rate limit, overload, server error). Same form as
	// Primary.
	Fallbacks []string `json:"fallbacks,omitempty"`
}

// DefaultAgentsConfig returns the agent settings used when the configuration
// does not say otherwise.
func DefaultAgentsConfig() AgentsConfig {
	return AgentsConfig{Defaults: AgentDefaults{
		MaxConcurrent:  4,
		TimeoutSeconds: 48 * 60 * 60,
	}}
}

// ModelRef is a parsed "<provider>/<model>" reference.
type ModelRef struct {
	// Provider is the key of models.providers.
	Provider string
	// Model is the provider's model id; it may itself contain slashes.
	Model string
}

// String returns the reference in "<provider>/<model>" form.
func (r ModelRef) String() string { return r.Provider + "/" + r.Model }

// ParseModelRef splits a "<provider>/<model>" reference at its first slash,
// so model ids that contain slashes (OpenRouter's "anthropic/claude-…") keep
// them.
func ParseModelRef(s string) (ModelRef, error) {
	provider, model, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || provider == "" || model == "" {
		return ModelRef{}, fmt.Errorf("model reference %q must look like \"<provider>/<model>\", for example \"echo/echo\"", s)
	}
	return ModelRef{Provider: provider, Model: model}, nil
}
