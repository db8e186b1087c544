package heartbeat_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/heartbeat"
)

func TestJobSpecValidate(t *testing.T) {
	every := heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 60000}
	turn := heartbeat.Payload{Kind: heartbeat.PayloadAgentTurn, Message: "go"}
	event := heartbeat.Payload{Kind: heartbeat.PayloadSystemEvent, Text: "hi"}
	for _, tt := range []struct {
		name string
		job  heartbeat.JobSpec
		want string
	}{
		{"no id", heartbeat.JobSpec{Schedule: every, Payload: turn}, "id: required"},
		{"id with colon", heartbeat.JobSpec{ID: "a:b", Schedule: every, Payload: turn}, "must not contain"},
		{"bad schedule", heartbeat.JobSpec{ID: "j", Schedule: heartbeat.Schedule{Kind: heartbeat.ScheduleEvery}, Payload: turn}, "schedule.everyMs"},
		{"unknown payload", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: heartbeat.Payload{Kind: "shell"}}, "payload.kind"},
		{"empty message", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: heartbeat.Payload{Kind: heartbeat.PayloadAgentTurn}}, "payload.message"},
		{"empty text", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: heartbeat.Payload{Kind: heartbeat.PayloadSystemEvent}}, "payload.text"},
		{"main with a turn", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: turn, SessionTarget: "main"}, "main takes a systemEvent"},
		{"isolated event", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: event, SessionTarget: "isolated"}, "systemEvent goes to the main session"},
		{"bad target", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: turn, SessionTarget: "elsewhere"}, "sessionTarget"},
		{"bad wake", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: event, WakeMode: "later"}, "wakeMode"},
		{"announce without to", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: turn, Delivery: &heartbeat.Delivery{Mode: "announce", Channel: "telegram"}}, "announce needs channel and to"},
		{"webhook to a private address", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: turn, Delivery: &heartbeat.Delivery{Mode: "webhook", To: "http://169.254.169.254/latest"}}, "delivery.to"},
		{"bad delivery", heartbeat.JobSpec{ID: "j", Schedule: every, Payload: turn, Delivery: &heartbeat.Delivery{Mode: "email"}}, "delivery.mode"},
	} {
		err := tt.job.Check()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	ok := heartbeat.JobSpec{ID: "j", Schedule: every, Payload: event}
	if err := ok.Check(); err != nil {
		t.Errorf("a main-session event job: %v", err)
	}
}

func TestCronConfigRejectsDuplicateIDs(t *testing.T) {
	j := heartbeat.JobSpec{ID: "same"}
	err := heartbeat.CronConfig{Jobs: []heartbeat.JobSpec{j, j}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "jobs[1].id") {
		t.Errorf("duplicate ids: %v", err)
	}
}
