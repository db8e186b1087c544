package queue

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	cases := []struct {
		in   string
		want Mode
	}{
		{"steer", ModeSteer},
		{"steering", ModeSteer},
		{"queue", ModeSteer},
		{"queued", ModeSteer},
		{"followup", ModeFollowup},
		{"follow-ups", ModeFollowup},
		{"followups", ModeFollowup},
		{"collect", ModeCollect},
		{"coalesce", ModeCollect},
		{"steer-backlog", ModeSteerBacklog},
		{"steer+backlog", ModeSteerBacklog},
		{"steer_backlog", ModeSteerBacklog},
		{"interrupt", ModeInterrupt},
		{"interrupts", ModeInterrupt},
		{"abort", ModeInterrupt},
		{"  Collect\t", ModeCollect},
		{"STEER+BACKLOG", ModeSteerBacklog},
		{"\u00a0Abort\u3000", ModeInterrupt},
		{"FollowUps", ModeFollowup},
	}
	for _, tc := range cases {
		got, ok := ParseMode(tc.in)
		if !ok || got != tc.want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, true", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", " ", "backlog", "steer backlog", "follow-up", "collecting", "interrupt!", "default", "reset", "auto", "steerbacklog"} {
		if got, ok := ParseMode(bad); ok {
			t.Errorf("ParseMode(%q) = %q, true; want rejection", bad, got)
		}
	}
}

func TestParseDropPolicy(t *testing.T) {
	cases := []struct {
		in   string
		want DropPolicy
	}{
		{"summarize", DropSummarize},
		{"summary", DropSummarize},
		{"old", DropOld},
		{"oldest", DropOld},
		{"new", DropNew},
		{"newest", DropNew},
		{" SUMMARY ", DropSummarize},
		{"Oldest", DropOld},
	}
	for _, tc := range cases {
		got, ok := ParseDropPolicy(tc.in)
		if !ok || got != tc.want {
			t.Errorf("ParseDropPolicy(%q) = %q, %v; want %q, true", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "maybe", "summarise", "drop", "older", "none"} {
		if got, ok := ParseDropPolicy(bad); ok {
			t.Errorf("ParseDropPolicy(%q) = %q, true; want rejection", bad, got)
		}
	}
}

func TestEnumValuesAllParse(t *testing.T) {
	vals := Mode("").EnumValues()
	if strings.Join(vals[:5], ",") != "steer,followup,collect,steer-backlog,interrupt" {
		t.Errorf("mode EnumValues should start with the canonical modes, got %v", vals)
	}
	if len(vals) != len(modeAliases) {
		t.Errorf("mode EnumValues has %d spellings, the aliases table %d", len(vals), len(modeAliases))
	}
	for _, v := range vals {
		if _, ok := ParseMode(v); !ok {
			t.Errorf("EnumValues lists %q, which ParseMode rejects", v)
		}
	}
	vals[0] = "mutated"
	if Mode("").EnumValues()[0] != "steer" {
		t.Error("EnumValues returns shared state")
	}
	drops := DropPolicy("").EnumValues()
	if strings.Join(drops[:3], ",") != "summarize,old,new" || len(drops) != len(dropAliases) {
		t.Errorf("drop EnumValues = %v", drops)
	}
	for _, v := range drops {
		if _, ok := ParseDropPolicy(v); !ok {
			t.Errorf("EnumValues lists %q, which ParseDropPolicy rejects", v)
		}
	}
}

func TestUnmarshalText(t *testing.T) {
	var m Mode
	if err := m.UnmarshalText([]byte(" Coalesce ")); err != nil || m != ModeCollect {
		t.Errorf("UnmarshalText(coalesce) = %q, %v", m, err)
	}
	if err := m.UnmarshalText([]byte("")); err != nil || m != "" {
		t.Errorf("UnmarshalText(\"\") = %q, %v; want the zero value", m, err)
	}
	err := m.UnmarshalText([]byte("backlog"))
	if err == nil {
		t.Fatal("UnmarshalText(backlog) succeeded")
	}
	for _, want := range []string{`"backlog"`, "steer, followup, collect, steer-backlog, interrupt", "coalesce", "abort"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}

	var p DropPolicy
	if err := p.UnmarshalText([]byte("NEWEST")); err != nil || p != DropNew {
		t.Errorf("UnmarshalText(NEWEST) = %q, %v", p, err)
	}
	if err := p.UnmarshalText([]byte("maybe")); err == nil || !strings.Contains(err.Error(), "summarize, old, new") {
		t.Errorf("UnmarshalText(maybe) error = %v", err)
	}

	var v struct {
		Mode Mode       `json:"mode"`
		Drop DropPolicy `json:"drop"`
	}
	if err := json.Unmarshal([]byte(`{"mode":"steer_backlog","drop":"summary"}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.Mode != ModeSteerBacklog || v.Drop != DropSummarize {
		t.Errorf("JSON aliases decoded to %+v", v)
	}
}

func TestDecide(t *testing.T) {
	// While a turn is active and the message is not a heartbeat: the
	// action for a message that could not be steered, and for one that was.
	busy := []struct {
		mode                   Mode
		notSteered, wasSteered Action
	}{
		{ModeSteer, ActionEnqueue, ActionRunNow},
		{ModeFollowup, ActionEnqueue, ActionEnqueue},
		{ModeCollect, ActionEnqueue, ActionEnqueue},
		{ModeSteerBacklog, ActionEnqueue, ActionEnqueue},
		{ModeInterrupt, ActionRunNow, ActionRunNow},
		{"", ActionEnqueue, ActionEnqueue},         // unset: the default, collect
		{"bogus", ActionEnqueue, ActionEnqueue},    // unknown: the default, collect
		{"Coalesce", ActionEnqueue, ActionEnqueue}, // an alias counts as its mode
		{"abort", ActionRunNow, ActionRunNow},
		{"queued", ActionEnqueue, ActionRunNow},
	}
	for _, tc := range busy {
		for _, steered := range []bool{false, true} {
			want := tc.notSteered
			if steered {
				want = tc.wasSteered
			}
			if got := Decide(true, false, tc.mode, steered); got != want {
				t.Errorf("Decide(active, not heartbeat, %q, steered=%v) = %v, want %v", tc.mode, steered, got, want)
			}
			// Idle: everything runs now, heartbeats included.
			for _, hb := range []bool{false, true} {
				if got := Decide(false, hb, tc.mode, steered); got != ActionRunNow {
					t.Errorf("Decide(idle, heartbeat=%v, %q, steered=%v) = %v, want run-now", hb, tc.mode, steered, got)
				}
			}
			// Active heartbeat: always dropped.
			if got := Decide(true, true, tc.mode, steered); got != ActionDrop {
				t.Errorf("Decide(active, heartbeat, %q, steered=%v) = %v, want drop", tc.mode, steered, got)
			}
		}
	}
}

// TestDecideOpenClaw ports queue-policy.test.ts.
func TestDecideOpenClaw(t *testing.T) {
	if got := Decide(false, false, ModeCollect, false); got != ActionRunNow {
		t.Errorf("runs immediately when there is no active run: got %v", got)
	}
	if got := Decide(true, true, ModeCollect, false); got != ActionDrop {
		t.Errorf("drops heartbeat runs while another run is active: got %v", got)
	}
	if got := Decide(true, false, ModeCollect, false); got != ActionEnqueue {
		t.Errorf("enqueues followups for non-heartbeat active runs: got %v", got)
	}
	if got := Decide(true, true, ModeFollowup, false); got != ActionDrop {
		t.Errorf("heartbeat drop wins in followup mode: got %v", got)
	}
}

func TestActionString(t *testing.T) {
	for a, want := range map[Action]string{ActionRunNow: "run-now", ActionEnqueue: "enqueue-followup", ActionDrop: "drop", Action(9): "Action(9)"} {
		if got := a.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(a), got, want)
		}
	}
}
