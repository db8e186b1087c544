package core

import (
	"fmt"
	"strings"
	"time"
)

// AgentsConfig is the `agents:` section of the configuration: settings shared
// by every agent. Per-agent overrides (`agents.list`) arrive with multi-agent
// routing.
type AgentsConfig struct {
	// Defaults apply to every agent.
	Defaults AgentDefaults `json:"defaults"`
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
