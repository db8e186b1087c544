package events

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestMarshalForProtocol(t *testing.T) {
	msg := func(text string) *ChatMessage { return newChatMessage(text, 1700000000000) }
	base := ChatEvent{RunID: "r1", SessionKey: "agent:main:main", Seq: 7}
	tests := []struct {
		name   string
		ev     ChatEvent
		v3, v4 string
	}{
		{
			name: "prefix extension",
			ev:   with(base, func(c *ChatEvent) { c.State, c.Message, c.DeltaText = StateDelta, msg("Hello world"), " world" }),
			v3:   `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"delta","message":{"role":"assistant","content":[{"type":"text","text":"Hello world"}],"timestamp":1700000000000}}`,
			v4:   `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"delta","message":{"role":"assistant","content":[{"type":"text","text":"Hello world"}],"timestamp":1700000000000},"deltaText":" world"}`,
		},
		{
			name: "non-prefix replacement",
			ev: with(base, func(c *ChatEvent) {
				c.State, c.Message, c.DeltaText, c.Replace = StateDelta, msg("Hi <there> & co"), "Hi <there> & co", true
			}),
			v3: `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"delta","message":{"role":"assistant","content":[{"type":"text","text":"Hi <there> & co"}],"timestamp":1700000000000}}`,
			v4: `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"delta","message":{"role":"assistant","content":[{"type":"text","text":"Hi <there> & co"}],"timestamp":1700000000000},"deltaText":"Hi <there> & co","replace":true}`,
		},
		{
			name: "empty delta text is still written to v4",
			ev:   with(base, func(c *ChatEvent) { c.State, c.Message = StateDelta, msg("") }),
			v3:   `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"delta","message":{"role":"assistant","content":[{"type":"text","text":""}],"timestamp":1700000000000}}`,
			v4:   `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"delta","message":{"role":"assistant","content":[{"type":"text","text":""}],"timestamp":1700000000000},"deltaText":""}`,
		},
		{
			name: "final",
			ev: with(base, func(c *ChatEvent) {
				c.State, c.Message, c.StopReason, c.Usage = StateFinal, msg("Done."), "stop", core.Usage{Input: 3, Output: 2, TotalTokens: 5}
				c.DeltaText, c.Replace, c.ErrorKind = "ignored", true, "ignored"
			}),
			v3: `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"final","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"timestamp":1700000000000},"usage":{"input":3,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":5,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop"}`,
			v4: `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"final","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"timestamp":1700000000000},"usage":{"input":3,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":5,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop"}`,
		},
		{
			name: "silent final",
			ev:   with(base, func(c *ChatEvent) { c.State = StateFinal }),
			v3:   `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"final"}`,
			v4:   `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"final"}`,
		},
		{
			name: "aborted",
			ev: with(base, func(c *ChatEvent) {
				c.State, c.Message, c.StopReason, c.Usage = StateAborted, msg("Partial"), "stop", 1
			}),
			v3: `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"aborted","message":{"role":"assistant","content":[{"type":"text","text":"Partial"}],"timestamp":1700000000000},"stopReason":"stop"}`,
			v4: `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"aborted","message":{"role":"assistant","content":[{"type":"text","text":"Partial"}],"timestamp":1700000000000},"stopReason":"stop"}`,
		},
		{
			name: "error",
			ev: with(base, func(c *ChatEvent) {
				c.State, c.ErrorMessage, c.ErrorKind = StateError, "anthropic/m: 429", "rate_limit"
			}),
			v3: `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"error","errorMessage":"anthropic/m: 429","errorKind":"rate_limit"}`,
			v4: `{"runId":"r1","sessionKey":"agent:main:main","seq":7,"state":"error","errorMessage":"anthropic/m: 429","errorKind":"rate_limit"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				proto int
				want  string
			}{{3, tt.v3}, {4, tt.v4}, {2, tt.v3}, {5, tt.v4}} {
				got, err := tt.ev.MarshalFor(c.proto)
				if err != nil || string(got) != c.want {
					t.Errorf("v%d:\n got %s (%v)\nwant %s", c.proto, got, err, c.want)
				}
			}
			// encoding/json re-escapes <, > and & in what MarshalJSON wrote;
			// the value is the same.
			got, _ := json.Marshal(tt.ev)
			var a, b any
			if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(tt.v4), &b) != nil || !reflect.DeepEqual(a, b) {
				t.Errorf("json.Marshal:\n got %s\nwant %s", got, tt.v4)
			}
		})
	}
	if _, err := (ChatEvent{State: "bogus"}).MarshalFor(4); err == nil {
		t.Error("unknown state encoded")
	}
}

func with(c ChatEvent, f func(*ChatEvent)) ChatEvent { f(&c); return c }

func TestAgentEventJSON(t *testing.T) {
	a := AgentEvent{RunID: "r1", Seq: 3, Stream: StreamTool, TS: 1700000000000, SessionKey: "agent:main:main",
		Data: map[string]any{"phase": "start", "name": "read", "toolCallId": "t1", "args": map[string]any{"path": "a"}}}
	got, err := json.Marshal(a)
	want := `{"runId":"r1","seq":3,"stream":"tool","ts":1700000000000,"sessionKey":"agent:main:main","data":{"args":{"path":"a"},"name":"read","phase":"start","toolCallId":"t1"}}`
	if err != nil || string(got) != want {
		t.Fatalf("got %s (%v)\nwant %s", got, err, want)
	}
}
