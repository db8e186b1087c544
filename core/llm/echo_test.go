package llm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/prompt"
)

func TestEcho(t *testing.T) {
	req := &llm.Request{
		Model: llm.ModelConfig{ID: "echo"},
		Messages: []core.Message{
			core.NewUserText("first", 1),
			&core.AssistantMessage{Content: core.Content{&core.TextContent{Text: "echo: first"}}},
			&core.UserMessage{Content: core.UserContent{Blocks: core.Content{
				&core.TextContent{Text: "hello big "},
				&core.ImageContent{Data: "AAAA", MimeType: "image/png"},
				&core.TextContent{Text: "world"},
			}}},
		},
		Tools: []llm.ToolSpec{{Name: "read"}},
	}
	rec := &recorder{}
	msg, err := llm.NewEcho("echo", llm.ProviderOptions{Clock: fixedClock}).Stream(context.Background(), req, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, rec, "start", "text_start:0",
		"text_delta:0", "text_delta:0", "text_delta:0", "text_delta:0",
		"text_end:0", "done(stop)")
	var deltas []string
	for _, e := range rec.ofType(core.AssistantEventTextDelta) {
		deltas = append(deltas, e.Delta)
	}
	if want := []string{"echo: ", "hello ", "big ", "world"}; !slices.Equal(deltas, want) {
		t.Errorf("deltas = %q, want %q", deltas, want)
	}
	if msg.Text() != "echo: hello big world" || msg.StopReason != core.StopReasonStop || len(msg.ToolCalls()) != 0 {
		t.Errorf("message = %+v", msg)
	}
	if msg.API != "echo" || msg.Provider != "echo" || msg.Model != "echo" || msg.Timestamp != fixedTime.UnixMilli() {
		t.Errorf("metadata = %+v", msg)
	}
	if msg.Usage != (core.Usage{}) {
		t.Errorf("usage = %+v", msg.Usage)
	}
}

func TestEchoCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{onEvent: func(e event) {
		if e.Type == core.AssistantEventTextDelta {
			cancel()
		}
	}}
	msg, err := llm.NewEcho("echo", llm.ProviderOptions{}).Stream(ctx, userRequest("one two three"), rec.emit)
	if !errors.Is(err, context.Canceled) || msg.StopReason != core.StopReasonAborted || msg.Text() != "echo: " {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
	wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "error(aborted)")
	if msg.ErrorMessage == "" {
		t.Error("aborted message has no errorMessage")
	}
}

func TestEchoNoUserMessage(t *testing.T) {
	msg, err := llm.NewEcho("echo", llm.ProviderOptions{}).Stream(context.Background(), nil, nil)
	if err != nil || msg.Text() != "echo: " {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
}

// Issue 26, finding 3: the echo demo's first answer was "echo: Conversation
// info (untrusted metadata): {…}" with a device id, and after /new it
// echoed the session startup prompt. It now echoes only the words the user
// typed, and greets after /new.
func TestFinding3EchoEchoesOnlyTheUsersWords(t *testing.T) {
	in := &core.Inbound{
		SessionKey: "agent:main:main", Surface: "webchat", ChatType: core.ChatDirect, Body: "hello there",
		Sender: core.Sender{ID: strings.Repeat("ab", 32), Name: "Device"},
	}
	pb := prompt.Body(in, prompt.State{IsNewSession: true, Now: func() time.Time { return fixedTime }})
	if !strings.Contains(pb.Text, prompt.LabelConversationInfo) && !strings.Contains(pb.Text, prompt.LabelSender) {
		t.Fatalf("the prompt has no metadata block to strip, so this test checks nothing:\n%s", pb.Text)
	}
	echo := func(u *core.UserMessage) string {
		t.Helper()
		msg, err := llm.NewEcho("echo", llm.ProviderOptions{Clock: fixedClock}).Stream(context.Background(),
			&llm.Request{Messages: []core.Message{u}}, (&recorder{}).emit)
		if err != nil {
			t.Fatal(err)
		}
		return msg.Text()
	}
	if got := echo(core.NewUserText(pb.Text, 1)); got != "echo: hello there" {
		t.Errorf("echo of a web chat message = %q, want %q", got, "echo: hello there")
	}

	reset := prompt.Body(&core.Inbound{SessionKey: "agent:main:main", Surface: "webchat", Body: "/new"}, prompt.State{IsNewSession: true})
	if !reset.ResetPrompt {
		t.Fatal("a bare /new on a new session is not marked as the reset prompt")
	}
	u := core.NewUserText(reset.Text, 2)
	u.Provenance = core.SystemProvenance(core.ProvenanceSourceReset)
	if got := echo(u); strings.Contains(got, "Session Startup") || !strings.HasPrefix(got, "echo: a new session has started") {
		t.Errorf("echo after /new = %q, want a greeting and none of the startup prompt", got)
	}

	beat := core.NewUserText(prompt.DefaultHeartbeatPrompt, 3)
	beat.Provenance = core.SystemProvenance(core.ProvenanceSourceHeartbeat)
	if got := echo(beat); got != "HEARTBEAT_OK" {
		t.Errorf("echo of a quiet heartbeat = %q, want the ack", got)
	}
	beat = core.NewUserText("System (untrusted): [2026-11-28 01:49:00 UTC] Backup done\n\n"+prompt.DefaultHeartbeatPrompt, 4)
	beat.Provenance = core.SystemProvenance(core.ProvenanceSourceHeartbeat)
	if got := echo(beat); got != "echo: System (untrusted): [2026-11-28 01:49:00 UTC] Backup done" {
		t.Errorf("echo of a heartbeat with an event = %q, want the event and not the poll", got)
	}
}
