package transcript_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

func TestHistoryLimitForKey(t *testing.T) {
	limits := transcript.HistoryLimits{
		DM: map[string]int{"telegram": 20, "slack": 10, "discord": 5},
		DMPerUser: map[string]map[string]int{
			"telegram": {"123": 3, "456": 0},
			"Slack":    {"U123ABC": 7},
		},
		Group: map[string]int{"telegram": 50, "discord": 30, "whatsapp": -1},
	}
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"agent:main:main", 0},
		{"global", 0},
		{"", 0},
		{"not a key", 0},
		{"agent:main:direct:123", 0}, // per-peer: no channel in the key
		{"agent:main:telegram:direct:123", 3},
		{"agent:main:telegram:direct:456", 0}, // a per-user 0 wins over dmHistoryLimit
		{"agent:main:telegram:direct:789", 20},
		{"agent:main:telegram:personal:direct:123", 3},
		{"agent:main:telegram:direct:123:thread:123:99", 3},
		{"agent:main:telegram:direct:789:thread:789:5", 20},
		{"AGENT:Main:Telegram:Direct:123", 3},
		{"agent:main:slack:direct:u123abc", 7}, // configured ids match ignoring case
		{"agent:main:slack:direct:u999", 10},
		{"agent:main:discord:dm:test-user", 5}, // OpenClaw's legacy dm shape
		{"agent:main:discord:dm:test-user:thread:t1", 5},
		{"agent:main:telegram:group:-1001234567890", 50},
		{"agent:main:telegram:group:-1001234567890:topic:42", 50},
		{"agent:main:discord:channel:987654", 30},
		{"agent:main:whatsapp:group:120363403215116621@g.us", 0}, // negative counts as no limit
		{"agent:main:slack:channel:c123", 0},
		{"agent:main:signal:direct:+15551234567", 0},
		{"agent:main:cron:nightly", 0},
		{"agent:main:subagent:abc", 0},
	} {
		if got := transcript.HistoryLimitForKey(core.SessionKey(tc.key), limits); got != tc.want {
			t.Errorf("HistoryLimitForKey(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
	if got := transcript.HistoryLimitForKey("agent:main:telegram:direct:1", transcript.HistoryLimits{}); got != 0 {
		t.Errorf("empty limits = %d", got)
	}
}

func TestLimitHistoryTurnsWithPairing(t *testing.T) {
	// OpenClaw's reason for running the pairing repair again: a limit can
	// start inside a turn only when results are out of place, and then
	// repair drops them.
	msgs := []core.Message{
		user("u1", 1),
		assistant(2, call("a", "exec")),
		user("steer", 3),
		result("a", "exec", "A", 4),
		assistant(5, text("done")),
	}
	got := transcript.RepairToolPairing(transcript.LimitHistoryTurns(msgs, 1))
	want := []core.Message{user("steer", 3), assistant(5, text("done"))}
	if encode(t, got) != encode(t, want) {
		t.Errorf("got %s", encode(t, got))
	}
}
