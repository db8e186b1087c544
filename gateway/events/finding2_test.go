package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// Issue 22, finding 2: every agent text event carried the whole text so
// far and every 150 ms a chat delta repeated it, so a reply of N bytes
// sent O(N²) bytes to each client (a 30 KB reply, 90 MB). Now an agent
// delta carries its addition only, and the chat deltas of a run stay
// within a byte budget linear in the text: streamed at the slowest pace
// that still passes the throttle every time, the bytes a client is sent
// for one reply stay a small multiple of the reply, and the text still
// arrives whole before the final.
func TestFinding2_AReplyOfNBytesCostsEachClientOrderNBytes(t *testing.T) {
	for _, tc := range []struct {
		bytes, chunk int
	}{
		{80 << 10, 64}, // the 80 KB reply, in bench-sized deltas
		{8 << 10, 4},   // a slow model: one small token per throttle interval
		{300, 3},       // a short reply streams at the throttle's pace
	} {
		t.Run(fmt.Sprintf("%dB in %dB deltas", tc.bytes, tc.chunk), func(t *testing.T) {
			clk := newClock()
			run := NewRun(testInfo(core.InboundUser), Options{Now: clk.now})
			var agentBytes, chatBytes, chatDeltas int
			var lastDelta string
			var added strings.Builder
			count := func(outs []Out) {
				for _, o := range outs {
					switch {
					case o.Agent != nil:
						b, err := json.Marshal(o.Agent)
						if err != nil {
							t.Fatal(err)
						}
						agentBytes += len(b)
						if _, ok := o.Agent.Data["text"]; ok && o.Agent.Data["phase"] == PhaseDelta {
							t.Fatalf("a delta repeats the text so far: %.200s", b)
						}
						if d, ok := o.Agent.Data["delta"].(string); ok && o.Agent.Stream == StreamAssistant {
							added.WriteString(d)
						}
					case o.Chat != nil:
						b, err := o.Chat.MarshalFor(LatestProtocol)
						if err != nil {
							t.Fatal(err)
						}
						chatBytes += len(b)
						if o.Chat.State == StateDelta {
							chatDeltas++
							lastDelta = o.Chat.Message.Text()
						}
					}
				}
			}
			count(run.Start())
			count(run.Event(assistantStart()))
			count(run.Event(textStart(0)))
			text := strings.Repeat("abcdefghijklmnopqrstuvwxyz012345", tc.bytes/32+1)[:tc.bytes]
			for i := 0; i < len(text); i += tc.chunk {
				clk.advance(DefaultThrottle)
				count(run.Flush())
				count(run.Event(textDelta(0, text[i:min(i+tc.chunk, len(text))])))
			}
			count(run.Event(textEnd(0)))
			count(run.Event(assistantEnd(core.StopReasonStop, &core.TextContent{Text: text})))
			count(run.End(finalResult(text), nil))

			if added.String() != text {
				t.Fatalf("the deltas add up to %d bytes, want the %d of the reply", added.Len(), len(text))
			}
			if lastDelta != text {
				t.Fatalf("the last chat delta has %d bytes, want the whole %d", len(lastDelta), len(text))
			}
			n := len(text)
			t.Logf("reply %d B: agent events %d B (%.1f×), chat events %d B (%.1f×) in %d deltas",
				n, agentBytes, float64(agentBytes)/float64(n), chatBytes, float64(chatBytes)/float64(n), chatDeltas)
			// Each agent event is the delta plus a fixed envelope.
			events := (n+tc.chunk-1)/tc.chunk + 16
			if agentBytes > n+events*300 {
				t.Errorf("agent events: %d bytes for a %d-byte reply in %d deltas", agentBytes, n, events)
			}
			// Chat deltas: the budget, protocol 4's deltaText (the
			// additions, N in all), the flush before the final and the
			// final itself, plus each event's envelope.
			if limit := (chatBudgetFactor+3)*n + chatBudgetSlack + (chatDeltas+1)*300; chatBytes > limit {
				t.Errorf("chat events: %d bytes for a %d-byte reply, over %d", chatBytes, n, limit)
			}
			if n <= 1024 && chatDeltas < n/tc.chunk/2 {
				t.Errorf("a short reply streamed in %d chat deltas, want one per throttle interval", chatDeltas)
			}
			if chatDeltas < 8 {
				t.Errorf("only %d chat deltas: a chat-only client would see the reply jump", chatDeltas)
			}
		})
	}
}
