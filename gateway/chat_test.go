package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// chatPayload is a chat event as a v4 client reads it.
type chatPayload struct {
	RunID      string `json:"runId"`
	SessionKey string `json:"sessionKey"`
	Seq        int64  `json:"seq"`
	State      string `json:"state"`
	Message    *struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
	DeltaText    *string `json:"deltaText"`
	Replace      bool    `json:"replace"`
	ErrorMessage string  `json:"errorMessage"`
	ErrorKind    string  `json:"errorKind"`
	StopReason   string  `json:"stopReason"`
	Usage        any     `json:"usage"`
}

func (p chatPayload) text() string {
	if p.Message == nil || len(p.Message.Content) == 0 {
		return ""
	}
	return p.Message.Content[0].Text
}

// chatEvents collects the chat events of runID until its terminal one.
func chatEvents(t *testing.T, c *client.Client, runID string) []chatPayload {
	t.Helper()
	var out []chatPayload
	for {
		ev := next(t, c, "chat", nil)
		p := decode[chatPayload](t, ev.Payload)
		if p.RunID != runID {
			continue
		}
		out = append(out, p)
		if p.State != "delta" {
			return out
		}
	}
}

func sendChat(t *testing.T, c *client.Client, key, msg, idem string) map[string]any {
	t.Helper()
	return call[map[string]any](t, c, "chat.send", map[string]any{"sessionKey": key, "message": msg, "idempotencyKey": idem})
}

func TestChatSendStreamsDeltasAndFinal(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("Hello", ", ", "world", "!"))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))

	res := sendChat(t, c, "main", "hi there", "run-1")
	if res["runId"] != "run-1" || res["status"] != "started" {
		t.Fatalf("chat.send = %v, want {runId:run-1, status:started}", res)
	}
	evs := chatEvents(t, c, "run-1")
	final := evs[len(evs)-1]
	if final.State != "final" || final.text() != "Hello, world!" || final.StopReason == "" {
		t.Fatalf("final = %+v, want the whole reply with a stopReason", final)
	}
	if len(evs) < 2 {
		t.Fatalf("got %d chat events, want at least one delta before the final", len(evs))
	}
	prev := ""
	for _, d := range evs[:len(evs)-1] {
		if d.State != "delta" || d.SessionKey != "agent:main:main" {
			t.Fatalf("event %+v", d)
		}
		if !strings.HasPrefix(d.text(), prev) || d.DeltaText == nil || prev+*d.DeltaText != d.text() {
			t.Fatalf("delta %q (deltaText %v) does not extend %q", d.text(), d.DeltaText, prev)
		}
		prev = d.text()
	}
	// The turn is in the session's history.
	h := call[map[string]any](t, c, "chat.history", map[string]any{"sessionKey": "main"})
	msgs := h["messages"].([]any)
	if len(msgs) != 2 || h["sessionKey"] != "agent:main:main" || h["sessionId"] == "" {
		t.Fatalf("chat.history = %v", h)
	}
	if got := msgs[1].(map[string]any)["role"]; got != "assistant" {
		t.Errorf("last history message role = %v", got)
	}
	// The model saw the metadata blocks around the message; the history
	// shows the sender's words alone.
	if got := msgs[0].(map[string]any)["content"]; got != "hi there" {
		t.Errorf("history user message content = %#v, want the text as sent", got)
	}
	if reqs := r.provider.Requests(); len(reqs) == 0 || !strings.Contains(toJSON(reqs[0].Messages), "untrusted metadata") {
		t.Error("the model's prompt had no metadata block; the history check above proves nothing")
	}
}

func TestChatSendAbortSendsAbortedWithPartialText(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("partial answer", " never sent").HangAfter(1))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	sendChat(t, c, "main", "long question", "run-abort")
	next(t, c, "chat", func(e client.Event) bool { return strings.Contains(string(e.Payload), "partial answer") })
	if e := callErr(t, c, "chat.abort", map[string]any{"sessionKey": "other", "runId": "run-abort"}); e.Message != "runId does not match sessionKey" {
		t.Errorf("abort with another session's key: %+v", e)
	}
	res := call[map[string]any](t, c, "chat.abort", map[string]any{"sessionKey": "main", "runId": "run-abort"})
	if res["aborted"] != true {
		t.Fatalf("chat.abort = %v", res)
	}
	evs := chatEvents(t, c, "run-abort")
	last := evs[len(evs)-1]
	if last.State != "aborted" || last.text() != "partial answer" {
		t.Fatalf("terminal = %+v, want aborted with the partial text", last)
	}
	// Once it ended there is nothing to abort.
	if res := call[map[string]any](t, c, "chat.abort", map[string]any{"sessionKey": "main", "runId": "run-abort"}); res["aborted"] != false {
		t.Errorf("abort of a finished run = %v", res)
	}
}

func TestChatSendModelErrorSendsError(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.HTTPError(400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	sendChat(t, c, "main", "hello", "run-err")
	evs := chatEvents(t, c, "run-err")
	last := evs[len(evs)-1]
	if last.State != "error" || last.ErrorMessage == "" || last.ErrorKind == "" {
		t.Fatalf("terminal = %+v, want error with errorMessage and errorKind", last)
	}
}

func TestChatSendIsIdempotent(t *testing.T) {
	r := newRig(t, rigOptions{})
	gate := make(chan struct{})
	r.provider.Push(llmtest.Text("once").Gated(gate))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	if res := sendChat(t, c, "main", "hi", "idem-1"); res["status"] != "started" {
		t.Fatalf("first = %v", res)
	}
	if res := sendChat(t, c, "main", "hi", "idem-1"); res["status"] != "in_flight" || res["runId"] != "idem-1" {
		t.Fatalf("retry in flight = %v, want in_flight", res)
	}
	close(gate)
	chatEvents(t, c, "idem-1")
	// The completed answer is replayed, and no second run starts.
	if res := sendChat(t, c, "main", "hi", "idem-1"); res["status"] != "ok" || res["runId"] != "idem-1" {
		t.Fatalf("retry after the final = %v, want ok", res)
	}
	if n := len(r.provider.Requests()); n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}
}

func TestChatSendValidation(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"sessionKey": "main", "message": "a\x00b", "idempotencyKey": "k1"}, "null bytes"},
		{map[string]any{"sessionKey": "main", "message": "  ", "idempotencyKey": "k2"}, "message or attachment required"},
		{map[string]any{"sessionKey": "main", "message": "hi"}, "idempotencyKey is required"},
		{map[string]any{"message": "hi", "idempotencyKey": "k3"}, "sessionKey is required"},
		{map[string]any{"sessionKey": "main", "message": "hi", "idempotencyKey": "k4", "bogus": 1}, `unknown member "bogus"`},
		{map[string]any{"sessionKey": "main", "message": "hi", "idempotencyKey": "k5", "originatingChannel": "telegram"}, "missing scope: operator.admin"},
	} {
		e := callErr(t, c, "chat.send", tc.params)
		if !strings.Contains(e.Message, tc.want) {
			t.Errorf("chat.send %v: %s, want %q", tc.params, e.Message, tc.want)
		}
	}
	if n := len(r.provider.Requests()); n != 0 {
		t.Errorf("rejected messages reached the model %d times", n)
	}
}

func TestChatSendStopPhraseAbortsTheRun(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("thinking", " forever").HangAfter(1))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	sendChat(t, c, "main", "start", "run-stop")
	next(t, c, "chat", func(e client.Event) bool { return strings.Contains(string(e.Payload), "thinking") })
	res := sendChat(t, c, "main", "stop", "stop-1")
	if res["aborted"] != true {
		t.Fatalf("stop phrase = %v, want aborted", res)
	}
	evs := chatEvents(t, c, "run-stop")
	if evs[len(evs)-1].State != "aborted" {
		t.Errorf("terminal = %+v", evs[len(evs)-1])
	}
}

func TestAgentMethodAnswersTwiceAndAgentWait(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("agent reply"))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.CallStream(ctx, "agent", map[string]any{"message": "do it", "idempotencyKey": "ag-1", "sessionKey": "main"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Next(ctx)
	if err != nil || !first.OK || !strings.Contains(string(first.Payload), `"accepted"`) {
		t.Fatalf("first response = %+v, %v", first, err)
	}
	second, err := st.Next(ctx)
	if err != nil || !second.OK || !strings.Contains(string(second.Payload), `"completed"`) || !strings.Contains(string(second.Payload), "agent reply") {
		t.Fatalf("second response = %+v, %v", second, err)
	}
	w := call[map[string]any](t, c, "agent.wait", map[string]any{"runId": "ag-1", "timeoutMs": 1000})
	if w["status"] != "ok" {
		t.Errorf("agent.wait = %v", w)
	}
	if w := call[map[string]any](t, c, "agent.wait", map[string]any{"runId": "nope", "timeoutMs": 10}); w["status"] != "timeout" {
		t.Errorf("agent.wait of an unknown run = %v, want timeout", w)
	}
}

// The structured stream goes to clients that ask for it; a client that
// does not (OpenClaw's) gets the run's lifecycle and its text in chat
// events: for a short reply from a fast model, six frames in all with
// chat.send's response (issue 24).
func TestShortReplyToAPlainClientIsSixFrames(t *testing.T) {
	// The gateway's clock stands still: the twenty tokens arrive in one
	// instant however slowly the machine runs them through.
	r := newRig(t, rigOptions{fakeClock: true})
	tokens := make([]string, 20)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("w%d ", i)
	}
	r.provider.Push(llmtest.Text(tokens...))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	sendChat(t, c, "main", "hi", "run-plain")
	frames := []string{"res chat.send"}
	for {
		ev := next(t, c, "", func(e client.Event) bool { return e.Name == "chat" || e.Name == "agent" })
		p := decode[map[string]any](t, ev.Payload)
		if p["runId"] != "run-plain" {
			continue
		}
		if ev.Name == "agent" {
			frames = append(frames, fmt.Sprintf("agent %v %v", p["stream"], p["data"].(map[string]any)["phase"]))
			continue
		}
		frames = append(frames, fmt.Sprintf("chat %v", p["state"]))
		if p["state"] != "delta" {
			break
		}
	}
	// The run sends its start, a delta at the first token, its end, the
	// last delta and the final; a client slower than the run may find the
	// second delta folded into the first, still queued (they are
	// droppable snapshots).
	want := []string{"res chat.send", "agent lifecycle start", "chat delta", "agent lifecycle end", "chat delta", "chat final"}
	folded := []string{"res chat.send", "agent lifecycle start", "chat delta", "agent lifecycle end", "chat final"}
	if !reflect.DeepEqual(frames, want) && !reflect.DeepEqual(frames, folded) {
		t.Fatalf("frames:\n%s\nwant:\n%s", strings.Join(frames, "\n"), strings.Join(want, "\n"))
	}
}

func TestAgentEventsCarryBlockStructure(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("structured"))
	capOpts := r.opts(protocol.ScopeRead, protocol.ScopeWrite)
	capOpts.Caps = []string{protocol.CapToolEvents, protocol.CapStructuredStream}
	c := r.dial(capOpts)
	sendChat(t, c, "main", "hi", "run-struct")
	var phases []string
	for {
		ev := next(t, c, "agent", nil)
		p := decode[map[string]any](t, ev.Payload)
		if p["runId"] != "run-struct" {
			continue
		}
		data := p["data"].(map[string]any)
		phase, _ := data["phase"].(string)
		phases = append(phases, p["stream"].(string)+":"+phase)
		if p["stream"] == "assistant" && phase == "delta" && (data["messageId"] == nil || data["contentIndex"] == nil) {
			t.Errorf("assistant delta without messageId/contentIndex: %v", data)
		}
		if p["stream"] == "lifecycle" && phase == "end" {
			break
		}
	}
	joined := strings.Join(phases, " ")
	for _, want := range []string{"lifecycle:start", "assistant:message_start", "assistant:block_start", "assistant:delta", "assistant:block_stop", "assistant:message_stop", "lifecycle:end"} {
		if !strings.Contains(joined, want) {
			t.Errorf("agent events %q lack %s", joined, want)
		}
	}
}

// Tool events go only to the client that started the run and asked for
// them with the tool-events cap; the reply of text + tool + text arrives
// with its block boundaries in order.
func TestToolEventsOnlyForTheStarterWithTheCap(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.ToolCalls(llmtest.Call("lookup", `{"q":"x"}`)), llmtest.Text("after the tool"))
	o := r.opts(protocol.ScopeRead, protocol.ScopeWrite)
	o.Caps = []string{protocol.CapToolEvents, protocol.CapStructuredStream}
	starter := r.dial(o)
	watcher := r.dial(o) // has the cap, but did not start the run
	plain := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	// Both show the session, so they get its runs (less the tool details).
	call[map[string]any](t, watcher, "chat.history", map[string]any{"sessionKey": "main"})
	call[map[string]any](t, plain, "sessions.messages.subscribe", map[string]any{"key": "main"})
	sendChat(t, starter, "main", "use a tool", "run-tool")

	collect := func(c *client.Client) (streams []string) {
		for {
			ev := next(t, c, "agent", nil)
			p := decode[map[string]any](t, ev.Payload)
			if p["runId"] != "run-tool" {
				continue
			}
			data := p["data"].(map[string]any)
			streams = append(streams, p["stream"].(string)+":"+toString(data["phase"])+":"+toString(data["blockType"]))
			if p["stream"] == "lifecycle" && data["phase"] == "end" {
				return streams
			}
		}
	}
	got := strings.Join(collect(starter), " ")
	for _, want := range []string{"tool:start:", "tool:result:", "assistant:block_start:toolCall"} {
		if !strings.Contains(got, want) {
			t.Errorf("the starter's agent events lack %s: %s", want, got)
		}
	}
	if i, j := strings.Index(got, "tool:result:"), strings.LastIndex(got, "assistant:block_start:text"); i < 0 || j < i {
		t.Errorf("the text after the tool does not follow its result: %s", got)
	}
	for _, c := range []*client.Client{watcher, plain} {
		if got := strings.Join(collect(c), " "); strings.Contains(got, "tool:") || strings.Contains(got, "toolCall") {
			t.Errorf("a client that did not start the run got tool events: %s", got)
		}
	}
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

func TestChatSendAttachmentsReachTheModel(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("I see it."))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	png := []byte("\x89PNG\r\n\x1a\nfake image bytes")
	res := call[map[string]any](t, c, "chat.send", map[string]any{
		"sessionKey": "main", "message": "what is this?", "idempotencyKey": "att-1",
		"attachments": []any{map[string]any{"type": "image", "mimeType": "image/png", "fileName": "shot.png", "content": base64.StdEncoding.EncodeToString(png)}},
	})
	if res["status"] != "started" {
		t.Fatalf("chat.send = %v", res)
	}
	chatEvents(t, c, "att-1")
	reqs := r.provider.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model calls = %d", len(reqs))
	}
	files, _ := filepath.Glob(filepath.Join(r.dir, "media", "webchat", "*.png"))
	if len(files) != 1 {
		t.Fatalf("saved attachments = %v", files)
	}
	if data, _ := os.ReadFile(files[0]); !bytes.Equal(data, png) {
		t.Error("the saved attachment differs from what was sent")
	}
	if prompt := toJSON(reqs[0].Messages); !strings.Contains(prompt, filepath.Base(files[0])) && !strings.Contains(prompt, "image/png") {
		t.Errorf("the model's prompt does not mention the attachment:\n%s", prompt)
	}

	for name, att := range map[string]any{
		"not base64": map[string]any{"mimeType": "image/png", "content": "%%%"},
		"too large":  map[string]any{"mimeType": "application/pdf", "content": base64.StdEncoding.EncodeToString(make([]byte, maxAttachmentBytes+1))},
		"no content": map[string]any{"mimeType": "image/png"},
	} {
		e := callErr(t, c, "chat.send", map[string]any{"sessionKey": "main", "message": "x", "idempotencyKey": "bad-" + name, "attachments": []any{att}})
		if e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, "attachment") {
			t.Errorf("%s: %+v", name, e)
		}
	}
}
