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
		{core.HeartbeatConfig{Target: "pager"}, "to: required when target is a channel"},
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

func TestAgentHeartbeatsMergeAndSelect(t *testing.T) {
	yes := true
	defaults := core.HeartbeatConfig{Every: "30m", Target: "last", AckMaxChars: 200}
	// No agent has its own: every agent runs the defaults.
	c := core.AgentsConfig{Defaults: core.AgentDefaults{Heartbeat: defaults}, List: []core.AgentEntry{{ID: "main"}}}
	got := c.Heartbeats([]string{"main", "ops"})
	if len(got) != 2 || got["main"] != defaults || got["ops"] != defaults {
		t.Errorf("without overrides = %+v", got)
	}
	// One agent has its own: its keys win, the rest is inherited, and only
	// that agent runs heartbeats.
	c.List = []core.AgentEntry{{ID: "Ops", Heartbeat: &core.HeartbeatConfig{Every: "1h", To: "-100", ShowOk: &yes}}}
	got = c.Heartbeats([]string{"main", "ops"})
	want := core.HeartbeatConfig{Every: "1h", Target: "last", To: "-100", AckMaxChars: 200, ShowOk: &yes}
	if len(got) != 1 || got["ops"].Every != want.Every || got["ops"].Target != "last" || got["ops"].To != "-100" ||
		got["ops"].AckMaxChars != 200 || got["ops"].ShowOk == nil || !*got["ops"].ShowOk {
		t.Errorf("with an override = %+v", got)
	}
	if _, ok := got["main"]; ok {
		t.Error("an agent without its own heartbeat ran one while another agent has one")
	}
}

func TestAgentsListValidate(t *testing.T) {
	for _, tt := range []struct {
		list []core.AgentEntry
		want string
	}{
		{[]core.AgentEntry{{}}, "list[0].id: required"},
		{[]core.AgentEntry{{ID: "main"}, {ID: "Main"}}, "listed twice"},
		{[]core.AgentEntry{{ID: "ops"}}, `no agent "ops"`},
	} {
		if err := (core.AgentsConfig{List: tt.list}).Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.list, err, tt.want)
		}
	}
	if err := (core.AgentsConfig{List: []core.AgentEntry{{ID: "main"}}}).Validate(); err != nil {
		t.Errorf("main: %v", err)
	}
}
