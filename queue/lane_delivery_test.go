package queue

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// A reply waiting on its platform (Telegram paces a chat to one message a
// second) does not hold the turn slot: with a main lane of one, another
// session's turn runs while the first reply is still being delivered.
func TestDeliveryDoesNotHoldTheLane(t *testing.T) {
	h := newHarness(t, harnessOptions{lanes: map[string]int{LaneMain: 1}})
	hold := make(chan struct{})
	h.rec.mu.Lock()
	h.rec.hold = hold
	h.rec.mu.Unlock()
	h.provider.Push(llmtest.Text("first"), llmtest.Text("second"))
	h.submit(dmIn("agent:main:telegram:direct:1", "a1", "one"))
	eventually(t, "the first turn to reach the model", func() bool { return len(h.provider.Requests()) == 1 })
	in := dmIn("agent:main:telegram:direct:2", "b1", "two")
	in.Route = core.Route{Channel: "telegram", To: "2"}
	h.submit(in)
	eventually(t, "the second session's turn to run while the first reply is held", func() bool { return len(h.provider.Requests()) == 2 })
	close(hold)
	h.rec.waitFor(t, 2)
}
