package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// DefaultHeartbeatEvery is how often an agent's heartbeat runs unless
// agents.defaults.heartbeat.every says otherwise.
const DefaultHeartbeatEvery = 30 * time.Minute

// heartbeatTargets are the values of HeartbeatConfig.Target that are not
// a bridge's channel; the configuration checks that any other names one.
var heartbeatTargets = []string{"", "none", "last", string(WebchatChannel)}

// HeartbeatConfig is agents.defaults.heartbeat: the agent's periodic
// heartbeat turn (openclaw-facts §6.1). The heartbeat prompt runs as a user
// turn in the heartbeat session; a reply that is only HEARTBEAT_OK (or a
// short remainder, see AckMaxChars) is an ack and goes nowhere, anything
// else is an alert delivered to Target.
type HeartbeatConfig struct {
	// Every is the interval: a duration such as "30m", "1h" or "1d"; a bare
	// number means minutes. "0m" turns heartbeats off. Default "30m".
	Every string `json:"every,omitempty"`
	// Prompt is the heartbeat turn's user message, verbatim. Empty means
	// the default: "Read HEARTBEAT.md if it exists (workspace context).
	// Follow it strictly. Do not infer or repeat old tasks from prior
	// chats. If nothing needs attention, reply HEARTBEAT_OK."
	Prompt string `json:"prompt,omitempty"`
	// AckMaxChars is how much text may remain after HEARTBEAT_OK is
	// stripped for the reply to still count as an ack. Default 300.
	AckMaxChars int `json:"ackMaxChars,omitempty" min:"0"`
	// Target is where alerts go: "none" (default: nowhere, they stay in
	// the transcript and the heartbeat event), "last" (the chat the
	// heartbeat session last heard from), or a channel (a key under
	// channels:, or "webchat") with To.
	Target string `json:"target,omitempty"`
	// To is the chat on Target's channel, written as in a delivery
	// target's chat part (see each channel's target forms). With target
	// "last" it overrides the chat.
	To string `json:"to,omitempty"`
	// AccountID picks the bot account on Target's channel; empty means the
	// default one.
	AccountID string `json:"accountId,omitempty"`
	// DirectPolicy is "allow" (default) or "block": block never delivers an
	// alert into a direct chat (the heartbeat is skipped with reason
	// dm-blocked).
	DirectPolicy string `json:"directPolicy,omitempty"`
	// Session is the session the heartbeat runs in: empty or "main" for the
	// agent's main session, or a session key. It does not change where
	// alerts go.
	Session string `json:"session,omitempty"`
	// ActiveHours limits heartbeats to a daily window; outside it they are
	// skipped (quiet-hours).
	ActiveHours ActiveHours `json:"activeHours"`
	// Model overrides the agent's model for heartbeat turns
	// ("<provider>/<model>").
	Model string `json:"model,omitempty"`
	// TimeoutSeconds bounds a heartbeat turn; 0 means the agent's timeout.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty" min:"0"`
	// ShowOk also delivers acks (as "HEARTBEAT_OK") to the target. Default
	// false.
	ShowOk *bool `json:"showOk,omitempty"`
	// ShowAlerts delivers alerts to the target. Default true.
	ShowAlerts *bool `json:"showAlerts,omitempty"`
	// UseIndicator marks heartbeat events with an indicator type (ok,
	// alert, error) for status displays. Default true. When showOk,
	// showAlerts and useIndicator are all false the heartbeat is skipped
	// (alerts-disabled).
	UseIndicator *bool `json:"useIndicator,omitempty"`
}

// merge returns h with the keys o sets laid over it.
func (h HeartbeatConfig) merge(o HeartbeatConfig) HeartbeatConfig {
	str := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	str(&h.Every, o.Every)
	str(&h.Prompt, o.Prompt)
	str(&h.Target, o.Target)
	str(&h.To, o.To)
	str(&h.AccountID, o.AccountID)
	str(&h.DirectPolicy, o.DirectPolicy)
	str(&h.Session, o.Session)
	str(&h.Model, o.Model)
	if o.AckMaxChars != 0 {
		h.AckMaxChars = o.AckMaxChars
	}
	if o.TimeoutSeconds != 0 {
		h.TimeoutSeconds = o.TimeoutSeconds
	}
	if !o.ActiveHours.IsZero() {
		h.ActiveHours = o.ActiveHours
	}
	for _, p := range []struct{ dst, src **bool }{{&h.ShowOk, &o.ShowOk}, {&h.ShowAlerts, &o.ShowAlerts}, {&h.UseIndicator, &o.UseIndicator}} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	return h
}

// Interval returns the parsed Every; zero means disabled.
func (h HeartbeatConfig) Interval() (time.Duration, error) {
	if strings.TrimSpace(h.Every) == "" {
		return DefaultHeartbeatEvery, nil
	}
	return ParseDuration(h.Every, time.Minute)
}

// Visibility returns showOk, showAlerts and useIndicator with their
// defaults applied.
func (h HeartbeatConfig) Visibility() (showOk, showAlerts, useIndicator bool) {
	get := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	return get(h.ShowOk, false), get(h.ShowAlerts, true), get(h.UseIndicator, true)
}

// Validate checks every, target, to, directPolicy and model (activeHours
// validates itself).
func (h HeartbeatConfig) Validate() error {
	var errs []error
	if _, err := h.Interval(); err != nil {
		errs = append(errs, FieldErrorf("every", err.Error()))
	}
	if !slices.Contains(heartbeatTargets, h.Target) && strings.TrimSpace(h.To) == "" {
		errs = append(errs, FieldErrorf("to", "required when target is a channel: the chat alerts go to, written as in a delivery target (the part after \""+h.Target+":\")"))
	}
	if h.DirectPolicy != "" && h.DirectPolicy != "allow" && h.DirectPolicy != "block" {
		errs = append(errs, FieldErrorf("directPolicy", fmt.Sprintf(`%q is not a policy; write "allow" or "block"`, h.DirectPolicy)))
	}
	if h.Model != "" {
		if _, err := ParseModelRef(h.Model); err != nil {
			errs = append(errs, FieldErrorf("model", err.Error()))
		}
	}
	return errors.Join(errs...)
}
