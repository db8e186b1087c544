package slack_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/channels"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/core"
)

func TestEditsAndDeletionsBecomeNotices(t *testing.T) {
	srv := slacktest.New(t)
	sink := &journalSink{}
	url := httpBridge(t, srv, sink, 0).URL
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()
	const orig = "1700000000.000100"
	unfurl := map[string]any{
		"type": "message", "subtype": "message_changed", "hidden": true, "channel": "C200", "channel_type": "channel",
		"ts": "1700000001.000000", "event_ts": "1700000001.000000",
		"message": map[string]any{"type": "message", "user": "U9", "text": "see https://x.example", "ts": orig},
	}
	for _, tc := range []struct {
		name    string
		event   any
		text    string // "" means no notice
		key     string
		session core.SessionKey
	}{
		{"edit in a channel", srv.Message("C200", "U9", "secret new words", slacktest.WithChannelType("channel"), slacktest.Edits(orig)),
			"Slack message edited in #C200.", "slack:message:changed:C200:" + orig, "agent:main:slack:channel:c200"},
		{"edit in a thread", srv.Message("C200", "U9", "new", slacktest.WithChannelType("channel"), slacktest.InThread("1699999999.000001"), slacktest.Edits(orig)),
			"Slack message edited in #C200.", "slack:message:changed:C200:" + orig, "agent:main:slack:channel:c200:thread:1699999999.000001"},
		{"edit in a DM", srv.Message("D100", "U9", "new", slacktest.WithChannelType("im"), slacktest.Edits(orig)),
			"Slack message edited in a direct message.", "slack:message:changed:D100:" + orig, "agent:main:slack:direct:u9"},
		{"deletion in a channel", srv.Message("C200", "U9", "", slacktest.WithChannelType("channel"), slacktest.Deletes(orig)),
			"Slack message deleted in #C200.", "slack:message:deleted:C200:" + orig, "agent:main:slack:channel:c200"},
		{"deletion in a DM", srv.Message("D100", "U9", "", slacktest.WithChannelType("im"), slacktest.Deletes(orig)),
			"Slack message deleted in a direct message.", "slack:message:deleted:D100:" + orig, "agent:main:slack:direct:u9"},
		{"edit by another bot", srv.Message("C200", "U7", "new", slacktest.FromBot("B7"), slacktest.Edits(orig)), "", "", ""},
		{"edit of the bot's own message", srv.Message("C200", srv.Identity.BotUserID, "new", slacktest.Edits(orig)), "", "", ""},
		{"link unfurl (no edited mark)", unfurl, "", "", ""},
		{"channel join", srv.Message("C200", "U9", "<@U9> has joined the channel", slacktest.WithSubtype("channel_join")), "", "", ""},
	} {
		before := len(sink.rec.Events())
		if code, err := srv.PostEvent(ctx, url, signingSecret, tc.event); err != nil || code != http.StatusOK {
			t.Errorf("%s: HTTP %d %v, want 200", tc.name, code, err)
			continue
		}
		got := sink.rec.Events()[before:]
		if tc.text == "" {
			if len(got) != 0 {
				t.Errorf("%s: notices %+v, want none", tc.name, got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%s: %d notices, want 1", tc.name, len(got))
			continue
		}
		n := got[0]
		if n.Text != tc.text || n.ContextKey != tc.key || n.Msg.Message.SessionKey != tc.session || n.Msg.Message.Sender.ID != "U9" {
			t.Errorf("%s: notice %q %q for %q from %q; want %q %q for %q from U9",
				tc.name, n.Text, n.ContextKey, n.Msg.Message.SessionKey, n.Msg.Message.Sender.ID, tc.text, tc.key, tc.session)
		}
		if strings.Contains(n.Text, "new") || n.Msg.Message.Body != "" {
			t.Errorf("%s: the edited text reached the notice: %q / %q", tc.name, n.Text, n.Msg.Message.Body)
		}
	}
	if _, _, attempts := sink.counts(); attempts != 0 {
		t.Errorf("%d notices or ignored events were submitted as messages", attempts)
	}
}

func TestNoticeWithoutSystemEventSinkIsAcked(t *testing.T) {
	srv := slacktest.New(t)
	b := newBridge(t, srv)
	sink := &bridgetest.Sink{}
	start(t, b, withoutSystemEvents{sink})
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()
	id := srv.PushEvent(srv.Message("D100", "U9", "new", slacktest.WithChannelType("im"), slacktest.Edits("1700000000.000100")))
	if _, err := srv.WaitAck(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := sink.Inbound(); len(got) != 0 {
		t.Errorf("an edit was submitted as a message: %+v", got)
	}
}

// withoutSystemEvents hides all of a sink but bridges.Sink (embedding the
// interface promotes only Submit and State): the bridge must see a sink that
// takes no system events, to show an edit is then acked and dropped.
type withoutSystemEvents struct{ bridges.Sink }

// eventDispatcher records the gate's accepted messages and system events.
type eventDispatcher struct {
	mu     sync.Mutex
	events []string
}

func (d *eventDispatcher) Submit(context.Context, *core.Inbound, string) (bool, error) {
	return false, nil
}

func (d *eventDispatcher) EnqueueSystemEvent(key core.SessionKey, text, contextKey string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, string(key)+" "+text)
	return true
}

func (d *eventDispatcher) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.events...)
}

// The gate judges a notice by the edited message's author: in a DM
// allowlist, the allowed user's edit is queued, a stranger's is not.
func TestNoticeGoesThroughTheAccessPolicy(t *testing.T) {
	srv := slacktest.New(t)
	disp := &eventDispatcher{}
	gate := &channels.Gate{Channel: "slack", AccountID: "default", Dispatch: disp,
		Access: bridges.Access{DMPolicy: bridges.DMAllowlist, AllowFrom: []string{"U9"}}}
	url := httpBridge(t, srv, gate, 0).URL
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()
	for _, user := range []string{"U9", "U66"} {
		ev := srv.Message("D1"+user, user, "new", slacktest.WithChannelType("im"), slacktest.Edits("1700000000.000100"))
		if code, err := srv.PostEvent(ctx, url, signingSecret, ev); err != nil || code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %v", user, code, err)
		}
	}
	if got := disp.all(); len(got) != 1 || got[0] != "agent:main:slack:direct:u9 Slack message edited in a direct message." {
		t.Errorf("queued %q, want only U9's edit", got)
	}
}
