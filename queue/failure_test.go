package queue

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/store"
)

func TestRunThatCannotStartIsRetriedThenAnsweredWithAnError(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	// Transcripts cannot be created: "agents" is a file.
	if err := os.WriteFile(filepath.Join(h.dir, "agents"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.submit(dmIn(keyA, "m1", "hi"))
	for attempt := 1; attempt < maxRunFailures; attempt++ {
		h.waitRunsIdle()
		if h.entries(r.EntryID)[0].State == store.JournalDone {
			t.Fatalf("gave up after %d attempts, want %d", attempt, maxRunFailures)
		}
		// Exactly the backoff: a minute would also fire the next retry
		// if the run failed and re-armed its timer while Advance runs.
		h.clock.Advance(retryBackoff(attempt))
	}
	got := h.rec.waitFor(t, 1)
	if got[0].Kind != DeliveryNotice || !got[0].Replies[0].IsError || !strings.Contains(got[0].Replies[0].Text, "could not process your message") {
		t.Errorf("give-up notice = %+v", got[0])
	}
	eventually(t, "the message recorded done", func() bool { return h.entries(r.EntryID)[0].State == store.JournalDone })
	if n := len(h.provider.Requests()); n != 0 {
		t.Errorf("the model was called %d times", n)
	}
}

// stubborn is a tool that ignores cancellation until released, like a
// subprocess that will not die.
type stubborn struct{ release chan struct{} }

func (s stubborn) Spec() tools.Spec {
	return tools.Spec{Name: "stubborn", Description: "never stops early"}
}
func (s stubborn) Execute(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
	<-s.release
	return tools.TextResult("finally"), nil
}

func TestInterruptTellsTheUserWhenTheOldRunIsSlowToStop(t *testing.T) {
	tool := stubborn{release: make(chan struct{})}
	w := newWatcher()
	h := newHarness(t, harnessOptions{config: modeConfig(ModeInterrupt), tools: []tools.Tool{tool}, observers: []Observer{w}})
	h.provider.Push(llmtest.ToolCalls(llmtest.Call("stubborn", `{}`)))
	h.submit(dmIn(keyA, "m1", "start"))
	w.waitTurn(t)
	eventually(t, "the tool running", func() bool { return len(h.provider.Requests()) == 1 })
	if r := h.submit(dmIn(keyA, "m2", "do this instead")); r.Disposition != Interrupting {
		t.Fatalf("interrupt = %+v", r)
	}
	h.clock.Advance(10 * time.Second)
	got := h.rec.waitFor(t, 1)
	if got[0].Kind != DeliveryNotice || !strings.HasPrefix(got[0].Replies[0].Text, "⚠️ Previous run is still shutting down.") || got[0].ReplyToMessageID != "m2" {
		t.Errorf("notice = %+v", got[0])
	}
	h.provider.Push(llmtest.Text("doing it"))
	close(tool.release)
	h.rec.waitFor(t, 2)
	if last := lastUser(h.provider.Requests()[len(h.provider.Requests())-1]); !strings.HasSuffix(last, "do this instead") {
		t.Errorf("the interrupting message did not run next: %q", last)
	}
}
