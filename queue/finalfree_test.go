package queue

import (
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// replyOnEnd is an Observer that, when the first run ends (where the
// gateway sends its chat final), sends the next message at once, as a
// client in a closed loop does.
type replyOnEnd struct {
	once sync.Once
	send func()
}

func (*replyOnEnd) RunStarted(RunInfo)                {}
func (*replyOnEnd) RunEvent(RunInfo, core.AgentEvent) {}
func (o *replyOnEnd) RunEnded(RunInfo, *agent.Result, error) {
	o.once.Do(o.send)
}

// TestAMessageAfterTheFinalFindsTheSessionFree: a message sent the moment
// the previous answer's final went out is not a message that arrived
// during a turn: it runs as soon as the turn's bookkeeping is done, not
// after the collect debounce (which the fake clock never reaches here).
func TestAMessageAfterTheFinalFindsTheSessionFree(t *testing.T) {
	key := core.SessionKey("agent:main:telegram:direct:42")
	var h *harness
	got := make(chan Receipt, 1)
	obs := &replyOnEnd{send: func() { got <- h.submit(dmIn(key, "2", "second")) }}
	h = newHarness(t, harnessOptions{observers: []Observer{obs}})
	h.provider.Push(llmtest.Text("one"), llmtest.Text("two"))

	if r := h.submit(dmIn(key, "1", "first")); r.Disposition != Running {
		t.Fatalf("first: %v, want running", r.Disposition)
	}
	select {
	case r := <-got:
		if r.Disposition != Queued {
			t.Errorf("second: %v, want queued behind the finishing turn", r.Disposition)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first run never ended")
	}
	dels := h.rec.waitFor(t, 2)
	if dels[1].Replies[0].Text != "two" {
		t.Errorf("second answer %+v", dels[1].Replies)
	}
	if n := len(h.provider.Requests()); n != 2 || lastUser(h.provider.Requests()[1]) == "" {
		t.Errorf("%d model requests", n)
	}
}
