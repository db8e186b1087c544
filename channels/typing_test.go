package channels

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/queue"
)

// presenceBridge is a bridge whose typing indicator must be cleared.
type presenceBridge struct {
	mu  sync.Mutex
	log []string
}

func (*presenceBridge) Name() string                              { return "whatsapp" }
func (*presenceBridge) AccountID() string                         { return "default" }
func (*presenceBridge) Start(context.Context, bridges.Sink) error { return nil }
func (*presenceBridge) Deliver(context.Context, bridges.Outbound) (bridges.Receipt, error) {
	return bridges.Receipt{}, nil
}
func (*presenceBridge) Status() bridges.Status { return bridges.Status{} }

func (b *presenceBridge) Typing(_ context.Context, r core.Route) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.log = append(b.log, "typing "+string(r.To))
	return nil
}

func (b *presenceBridge) StopTyping(_ context.Context, r core.Route) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.log = append(b.log, "stop "+string(r.To))
	return nil
}

func (b *presenceBridge) calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.log)
}

func TestTypingStopperClearedWhenTheRunEnds(t *testing.T) {
	b := &presenceBridge{}
	r := &Router{}
	r.Add(b, bridges.ReplyOff, "")
	ty := &Typing{Router: r, Interval: time.Hour}
	info := queue.RunInfo{RunID: "r1", Route: core.Route{Channel: "whatsapp", AccountID: "default", To: "ada"}}
	ty.RunStarted(info)
	ty.RunEnded(info, nil, nil)
	ty.Close() // waits for the indicator's goroutine
	if got := b.calls(); !slices.Equal(got, []string{"typing ada", "stop ada"}) {
		t.Fatalf("calls %q, want typing then stop", got)
	}
}
