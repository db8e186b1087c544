package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
)

func TestSocketModeUnacceptedEnvelopeIsRedelivered(t *testing.T) {
	srv := slacktest.New(t)
	b := newBridge(t, srv)
	sink := &journalSink{fails: 1}
	start(t, b, sink)
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()

	first := srv.PushEvent(srv.Message("D100", "U9", "keep me", slacktest.WithChannelType("im")))
	second := srv.PushEvent(srv.Message("D100", "U9", "and me", slacktest.WithChannelType("im")))
	// Envelopes are handled in order, so once the second is acked the
	// first has been handled: refused by the journal, and not acked.
	if _, err := srv.WaitAck(ctx, second); err != nil {
		t.Fatal(err)
	}
	if srv.Acked(first) {
		t.Fatal("an envelope the sink refused was acked; Slack would not redeliver it")
	}
	retry := srv.Redeliver(first, "timeout")
	if _, err := srv.WaitAck(ctx, retry); err != nil {
		t.Fatal(err)
	}
	fresh, dups, attempts := sink.counts()
	if len(fresh) != 2 || fresh[0].Message.Body != "and me" || fresh[1].Message.Body != "keep me" || dups != 0 || attempts != 3 {
		t.Fatalf("new %+v, %d duplicates, %d attempts", fresh, dups, attempts)
	}
	// The redelivery carries the same event_id, so the same dedupe key.
	var orig slacktest.Envelope
	for _, e := range srv.Envelopes() {
		if e.ID == first {
			orig = e
		}
	}
	if fresh[1].DedupeKey == "" || !containsEventID(orig.Payload, fresh[1].DedupeKey) {
		t.Errorf("dedupe key %q does not name the event of %s", fresh[1].DedupeKey, orig.Payload)
	}
}

// containsEventID reports whether key names the event_id of payload.
func containsEventID(payload json.RawMessage, key string) bool {
	var cb struct {
		EventID string `json:"event_id"`
	}
	return json.Unmarshal(payload, &cb) == nil && cb.EventID != "" && strings.HasSuffix(key, ":event:"+cb.EventID)
}
