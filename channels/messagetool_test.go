package channels_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/telegram"
	"github.com/switchboardhq/switchboard/channels"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/queue"
)

// targets are the real bridges' target rules.
var targets = bridges.Registry{telegram.Descriptor(), slack.Descriptor()}

type sent struct {
	mu  sync.Mutex
	got []queue.Delivery
	err error
}

func (s *sent) Deliver(_ context.Context, d queue.Delivery) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, d)
	return s.err
}

func TestMessageTool(t *testing.T) {
	rec := &sent{}
	tool := &channels.MessageTool{Deliverer: rec, Targets: targets}
	here := core.Route{Channel: "slack", To: "C1"}
	call := func(args map[string]any) (tools.Result, error) {
		return tool.Execute(context.Background(), tools.Call{ID: "call_1", Name: "message", Args: args, SessionKey: "agent:main:main", Route: here, SenderIsOwner: true}, nil)
	}
	res, err := call(map[string]any{"to": "telegram:-1001:topic:7", "text": "**deploy done**"})
	if err != nil || !strings.Contains(res.Content.Text(), "telegram:-1001") {
		t.Fatalf("send = %v %v", res, err)
	}
	d := rec.got[0]
	if d.Route != (core.Route{Channel: "telegram", To: "-1001", ThreadID: "7"}) || d.Replies[0].Text != "**deploy done**" || d.RunID != "message:agent:main:main:call_1" {
		t.Errorf("delivery = %+v", d)
	}
	if _, err := call(map[string]any{"text": "here"}); err != nil || rec.got[1].Route != here {
		t.Errorf("no to: %v, route %+v", err, rec.got[1].Route)
	}
	if _, err := call(map[string]any{"to": "slack:channel:C9", "mediaUrls": []any{"https://example.com/a.png"}}); err != nil || rec.got[2].Replies[0].MediaURLs[0] != "https://example.com/a.png" {
		t.Errorf("media: %v %+v", err, rec.got[2])
	}
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"to": "telegram:1"}, "text or mediaUrls is required"},
		{map[string]any{"to": "nowhere", "text": "x"}, "is not <channel>:<chat>"},
		{map[string]any{"to": "telegram:1", "mediaUrls": []any{"file:///etc/passwd"}}, "http(s) URLs"},
	} {
		if _, err := call(tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
	rec.err = errors.New("bridge down")
	if _, err := call(map[string]any{"to": "telegram:1", "text": "x"}); err == nil || !strings.Contains(err.Error(), "bridge down") {
		t.Errorf("failed delivery: %v", err)
	}
	noRoute := &channels.MessageTool{Deliverer: rec, Targets: targets}
	if _, err := noRoute.Execute(context.Background(), tools.Call{Args: map[string]any{"text": "x"}}, nil); err == nil || !strings.Contains(err.Error(), "to is required") {
		t.Errorf("no chat: %v", err)
	}
}

// TestMessageToolNonOwner: a sender outside commands.ownerAllowFrom may
// send to the chat they are in, and nowhere else.
func TestMessageToolNonOwner(t *testing.T) {
	rec := &sent{}
	tool := &channels.MessageTool{Deliverer: rec, Targets: targets}
	here := core.Route{Channel: "telegram", To: "-100"}
	call := func(args map[string]any) (tools.Result, error) {
		return tool.Execute(context.Background(), tools.Call{ID: "c", Name: "message", Args: args, SessionKey: "agent:main:telegram:group:-100", Route: here}, nil)
	}
	_, err := call(map[string]any{"to": "telegram:42", "text": "hi owner"})
	var blocked *tools.BlockedError
	if !errors.As(err, &blocked) || !strings.Contains(err.Error(), "only the bot's owner") {
		t.Fatalf("to another chat: %v", err)
	}
	if _, err := call(map[string]any{"text": "here"}); err != nil {
		t.Fatalf("to this chat: %v", err)
	}
	if _, err := call(map[string]any{"to": "telegram:-100", "text": "named"}); err != nil {
		t.Fatalf("to this chat by name: %v", err)
	}
	if len(rec.got) != 2 {
		t.Fatalf("deliveries = %+v", rec.got)
	}
}
