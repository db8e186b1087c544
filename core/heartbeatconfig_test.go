package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func TestHeartbeatConfigDefaults(t *testing.T) {
	var h core.HeartbeatConfig
	if d, err := h.Interval(); d != 30*time.Minute || err != nil {
		t.Errorf("default every = %v %v, want 30m", d, err)
	}
	if ok, alerts, ind := h.Visibility(); ok || !alerts || !ind {
		t.Errorf("default visibility = %v %v %v, want false true true", ok, alerts, ind)
	}
	for in, want := range map[string]time.Duration{"0m": 0, "0": 0, "45": 45 * time.Minute, "1h": time.Hour, "1d": 24 * time.Hour} {
		if d, err := (core.HeartbeatConfig{Every: in}).Interval(); d != want || err != nil {
			t.Errorf("every %q = %v %v, want %v", in, d, err, want)
		}
	}
}

func TestHeartbeatConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		cfg  core.HeartbeatConfig
		want string
	}{
		{core.HeartbeatConfig{Every: "soon"}, "every:"},
		{core.HeartbeatConfig{Target: "pager"}, `target: "pager" is not a target`},
		{core.HeartbeatConfig{Target: "slack"}, "to: required when target is a channel"},
		{core.HeartbeatConfig{DirectPolicy: "deny"}, `directPolicy: "deny" is not a policy`},
		{core.HeartbeatConfig{Model: "cheap"}, "model:"},
	} {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
	ok := core.HeartbeatConfig{Every: "1h", Target: "last", DirectPolicy: "block", Model: "echo/echo"}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
	if err := (core.AgentDefaults{UserTimezone: "Mars/Olympus"}).Validate(); err == nil || !strings.Contains(err.Error(), "userTimezone") {
		t.Errorf("bad userTimezone: %v", err)
	}
}
