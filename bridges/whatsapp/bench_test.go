package whatsapp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
)

// discard takes every message and keeps nothing.
type discard struct{}

func (discard) Submit(context.Context, bridges.Inbound) error { return nil }
func (discard) State(bridges.State, error)                    {}

// BenchmarkInboundMessage measures one group message with a mention and a
// quote from whatsmeow's event to the sink: normalization, mention
// detection, quote formatting, session key.
func BenchmarkInboundMessage(b *testing.B) {
	r := newRig(b, rigOptions{sink: discard{}})
	cli := r.client()
	ci := &waE2E.ContextInfo{
		MentionedJID: []string{me.ToNonAD().String()}, StanzaID: proto.String("Q1"), Participant: proto.String(bob.String()),
		QuotedMessage: &waE2E.Message{Conversation: proto.String("what did we decide about the launch?")},
	}
	evs := make([]any, 1024)
	for i := range evs {
		evs[i] = whatsapptest.Extended(group, ada, types.MessageID(fmt.Sprintf("B%d", i)), "@15550001111 summarise please", ci)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if !cli.Emit(evs[i%len(evs)]) {
			b.Fatal("not acked")
		}
	}
}

// BenchmarkDeliver9000 measures converting and sending a 9,000-character
// markdown answer (three messages).
func BenchmarkDeliver9000(b *testing.B) {
	r := newRig(b, rigOptions{})
	r.client()
	text := strings.Repeat("Some **bold** words and a [link](https://example.com) in a sentence. ", 130)
	out := bridges.Outbound{Route: route(ada), Text: text}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := r.b.Deliver(context.Background(), out); err != nil {
			b.Fatal(err)
		}
	}
}
