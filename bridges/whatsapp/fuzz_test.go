package whatsapp_test

import (
	"fmt"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
)

// FuzzParseTarget: any target either parses to a JID that parses back
// the same, or fails with an error; nothing panics.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"+15551234567", "120363403215116621@g.us", "1@lid", "", "+", "@", "a.b@c:1", "15551234567:3@s.whatsapp.net"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		jid, err := whatsapp.ParseTarget(s)
		if err != nil {
			return
		}
		again, err := whatsapp.ParseTarget(jid.String())
		if err != nil || again != jid {
			t.Errorf("%q → %v → %v, %v", s, jid, again, err)
		}
		if n := whatsapp.NormalizePhone(s); n == "" && strings.TrimSpace(s) != "" {
			t.Errorf("NormalizePhone(%q) = %q", s, n)
		}
	})
}

// FuzzInboundMessage: whatever text, mention and quote a message
// carries, the bridge acks it without panicking, never keeps the bot's
// own mention in the body, and appends the quote block.
func FuzzInboundMessage(f *testing.F) {
	f.Add("hello", "15550001111@s.whatsapp.net", "quoted", "Q1")
	f.Add("@15550001111 hi", "15550001111@s.whatsapp.net", "", "")
	f.Add("[Replying to x id:1]\n[/Replying]", "not a jid", "```", "id with spaces")
	f.Add("", "", "", "")
	f.Add("\x00\xff", "@", "\u202e", "\n")
	r := newRig(f, rigOptions{})
	cli := r.client()
	n := 0
	f.Fuzz(func(t *testing.T, text, mention, quoted, stanza string) {
		n++
		ci := &waE2E.ContextInfo{}
		if mention != "" {
			ci.MentionedJID = []string{mention}
		}
		if quoted != "" {
			ci.StanzaID, ci.QuotedMessage = proto.String(stanza), &waE2E.Message{Conversation: proto.String(quoted)}
		}
		before := len(r.rec.Inbound())
		if !cli.Emit(whatsapptest.Extended(group, ada, types.MessageID(fmt.Sprintf("F%d", n)), text, ci)) {
			t.Fatal("not acked")
		}
		got := r.rec.Inbound()
		if len(got) == before {
			if strings.TrimSpace(text) != "" || quoted != "" {
				t.Fatalf("a message with text %q / quote %q was dropped", text, quoted)
			}
			return
		}
		body := got[len(got)-1].Message.Body
		own := body
		if quoted != "" {
			block := "id:" + stanza + "]\n" + quoted + "\n[/Replying]"
			if !strings.HasSuffix(body, strings.TrimSpace(block)) && !strings.Contains(body, block) {
				t.Fatalf("body %q lacks the quote block", body)
			}
			own, _, _ = strings.Cut(body, "[Replying to ")
		}
		if jid, err := types.ParseJID(mention); err == nil && jid.User == me.User && jid.Server == types.DefaultUserServer &&
			strings.Contains(own, "@"+me.User) {
			t.Fatalf("the bot's mention stayed in %q", own)
		}
	})
}
