package whatsapp_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/channels"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
	"github.com/switchboardhq/switchboard/core"
)

// only returns the single submitted message.
func (r *rig) only() bridges.Inbound {
	r.t.Helper()
	got := r.rec.Inbound()
	if len(got) != 1 {
		r.t.Fatalf("%d messages submitted, want 1", len(got))
	}
	return got[0]
}

func TestDirectMessageKeyedByE164(t *testing.T) {
	r := newRig(t, rigOptions{})
	if !r.emit(whatsapptest.Text(ada, ada, "M1", "hello")) {
		t.Fatal("the message was not acked")
	}
	m := r.only()
	in := m.Message
	if in.SessionKey != "agent:main:whatsapp:direct:+15557654321" {
		t.Errorf("session key %q", in.SessionKey)
	}
	if in.ChatType != core.ChatDirect || in.Body != "hello" || in.MessageID != "M1" {
		t.Errorf("inbound %+v", in)
	}
	if in.Sender.E164 != "+15557654321" || in.Sender.ID != "+15557654321" || in.Sender.Name != "Ada" {
		t.Errorf("sender %+v", in.Sender)
	}
	if in.Route != (core.Route{Channel: "whatsapp", AccountID: "default", To: "15557654321@s.whatsapp.net"}) {
		t.Errorf("route %+v", in.Route)
	}
	if m.DedupeKey == "" || m.GroupID != "" || !m.CanDetectMention {
		t.Errorf("gating fields %+v", m)
	}
}

func TestLIDSenderResolvedToPhoneNumber(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	lid := types.NewJID("88887776666", types.HiddenUserServer)
	if err := cli.Device.LIDs.PutLIDMapping(t.Context(), lid, ada); err != nil {
		t.Fatal(err)
	}
	cli.Emit(whatsapptest.Text(lid, lid, "L1", "via lid"))
	// A LID nobody mapped stays a LID.
	stranger := types.NewJID("77776665555", types.HiddenUserServer)
	cli.Emit(whatsapptest.Text(stranger, stranger, "L2", "unknown"))
	got := r.rec.Inbound()
	if len(got) != 2 {
		t.Fatalf("%d messages", len(got))
	}
	if k := got[0].Message.SessionKey; k != "agent:main:whatsapp:direct:+15557654321" {
		t.Errorf("mapped LID keyed %q", k)
	}
	if got[0].Message.Route.To != core.ChatID(lid.String()) {
		t.Errorf("reply goes to %q, want the chat it came from", got[0].Message.Route.To)
	}
	if k := got[1].Message.SessionKey; k != "agent:main:whatsapp:direct:77776665555@lid" {
		t.Errorf("unmapped LID keyed %q", k)
	}
	// The alternate JID WhatsApp sends counts too.
	alt := whatsapptest.Text(stranger, stranger, "L3", "with alt")
	alt.Info.SenderAlt = bob
	cli.Emit(alt)
	if k := r.rec.Inbound()[2].Message.SessionKey; k != "agent:main:whatsapp:direct:+15553334444" {
		t.Errorf("LID with a phone-number alternate keyed %q", k)
	}
}

func TestIgnoredMessages(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	own := whatsapptest.Text(ada, ada, "O1", "mine")
	own.Info.IsFromMe = true
	status := whatsapptest.Text(types.StatusBroadcastJID, ada, "S1", "status")
	reaction := whatsapptest.Message(ada, ada, "R1", "Ada", &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{Text: proto.String("👍")}})
	fromMyOtherDevice := whatsapptest.Text(ada, types.NewADJID(me.User, 0, 2), "O2", "from my phone")
	for _, e := range []*events.Message{own, status, reaction, fromMyOtherDevice} {
		if !cli.Emit(e) {
			t.Errorf("ignored message %s not acked", e.Info.ID)
		}
	}
	if n := len(r.rec.Inbound()); n != 0 {
		t.Fatalf("%d ignored messages submitted", n)
	}
}

func TestJournalFailureWithholdsTheAck(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	r.rec.FailNext(1)
	msg := whatsapptest.Text(ada, ada, "J1", "keep me")
	if cli.Emit(msg) {
		t.Fatal("acked although the journal refused the message")
	}
	// WhatsApp delivers it again since no ack was sent.
	if !cli.Emit(msg) {
		t.Fatal("the redelivery was not acked")
	}
	if r.only().Message.Body != "keep me" {
		t.Error("the redelivered message was lost")
	}
}

func TestQuotedReplyContext(t *testing.T) {
	r := newRig(t, rigOptions{})
	ci := &waE2E.ContextInfo{
		StanzaID: proto.String("Q1"), Participant: proto.String(bob.String()),
		QuotedMessage: &waE2E.Message{Conversation: proto.String("the original")},
	}
	r.emit(whatsapptest.Extended(ada, ada, "M2", "I agree", ci))
	in := r.only().Message
	want := "I agree\n\n[Replying to +15553334444 id:Q1]\nthe original\n[/Replying]"
	if in.Body != want {
		t.Errorf("body %q\nwant %q", in.Body, want)
	}
	if in.ReplyTo == nil || *in.ReplyTo != (core.QuotedMessage{ID: "Q1", Sender: "+15553334444", Body: "the original"}) {
		t.Errorf("reply context %+v", in.ReplyTo)
	}
}

// gatedRig runs the bridge behind the real gate with the given access.
func gatedRig(t *testing.T, access bridges.Access, edit func(*whatsapp.Options)) (*rig, *dispatch) {
	t.Helper()
	d := &dispatch{}
	var b *whatsapp.Bridge
	gate := &channels.Gate{
		Channel: whatsapp.Channel, AccountID: "default", Access: access, Dispatch: d, History: &channels.GroupHistory{},
		Pairing: pairingStore(t),
		Reply: func(ctx context.Context, out bridges.Outbound) error {
			_, err := b.Deliver(ctx, out)
			return err
		},
	}
	r := newRig(t, rigOptions{sink: gate, edit: edit})
	b = r.b
	return r, d
}

func TestGroupMentionGating(t *testing.T) {
	r, d := gatedRig(t, whatsapp.Config{Common: bridges.Common{Access: bridges.Access{Groups: map[string]bridges.GroupRule{"*": {}}}}}.Policy(),
		func(o *whatsapp.Options) { o.MentionPatterns = []string{`\bjarvis\b`} })
	cli := r.client()
	cli.Emit(whatsapptest.Text(group, ada, "G1", "lunch at noon?"))
	if n := len(d.all()); n != 0 {
		t.Fatalf("an unmentioned group message was dispatched (%d)", n)
	}
	mention := &waE2E.ContextInfo{MentionedJID: []string{me.ToNonAD().String()}}
	cli.Emit(whatsapptest.Extended(group, bob, "G2", "@15550001111 what do you think?", mention))
	got := d.all()
	if len(got) != 1 {
		t.Fatalf("a mention was not dispatched (%d)", len(got))
	}
	in := got[0]
	if !in.WasMentioned || in.Body != "what do you think?" || in.SessionKey != "agent:main:whatsapp:group:120363403215116621@g.us" {
		t.Errorf("mentioned message %+v", in)
	}
	if len(in.History) != 1 || in.History[0].Body != "lunch at noon?" {
		t.Errorf("history %+v, want the skipped message", in.History)
	}
	// A mention by LID, a reply to the bot and a mention pattern count too.
	byLID := &waE2E.ContextInfo{MentionedJID: []string{myLID.String()}}
	cli.Emit(whatsapptest.Extended(group, ada, "G3", "@99990001111 hi", byLID))
	replyToBot := &waE2E.ContextInfo{StanzaID: proto.String("B1"), Participant: proto.String(me.ToNonAD().String()),
		QuotedMessage: &waE2E.Message{Conversation: proto.String("my earlier answer")}}
	cli.Emit(whatsapptest.Extended(group, ada, "G4", "and then?", replyToBot))
	cli.Emit(whatsapptest.Text(group, ada, "G5", "Jarvis, status"))
	// Someone else mentioned: not for the bot.
	other := &waE2E.ContextInfo{MentionedJID: []string{bob.String()}}
	cli.Emit(whatsapptest.Extended(group, ada, "G6", "@15553334444 ping", other))
	var ids []string
	for _, in := range d.all() {
		ids = append(ids, string(in.MessageID))
	}
	if strings.Join(ids, ",") != "G2,G3,G4,G5" {
		t.Errorf("dispatched %v, want G2,G3,G4,G5", ids)
	}
	if rt := d.all()[2].ReplyTo; rt == nil || !rt.FromBot {
		t.Errorf("reply to the bot: %+v", rt)
	}
}

func TestDirectMessagePairing(t *testing.T) {
	r, d := gatedRig(t, whatsapp.Config{}.Policy(), nil)
	cli := r.client()
	cli.Emit(whatsapptest.Text(ada, ada, "P1", "hi bot"))
	if n := len(d.all()); n != 0 {
		t.Fatalf("an unknown sender's DM was dispatched (%d)", n)
	}
	sent := cli.Sent()
	if len(sent) != 1 || sent[0].To != ada || !strings.Contains(sent[0].Text(), "Pairing code:") {
		t.Fatalf("pairing reply %+v", sent)
	}
	// The second message does not send a second code.
	cli.Emit(whatsapptest.Text(ada, ada, "P2", "hello?"))
	if n := len(cli.Sent()); n != 1 {
		t.Errorf("%d pairing replies, want 1", n)
	}
	// An allowlisted number passes, whatever way it was written.
	r2, d2 := gatedRig(t, whatsapp.Config{Common: bridges.Common{Access: bridges.Access{DMPolicy: bridges.DMAllowlist, AllowFrom: []string{"1 (555) 765-4321"}}}}.Policy(), nil)
	r2.client().Emit(whatsapptest.Text(ada, ada, "P3", "hi"))
	if len(d2.all()) != 1 {
		t.Error("an allowlisted sender was not dispatched")
	}
}

func TestMediaDownloadedUpToTheCap(t *testing.T) {
	r := newRig(t, rigOptions{edit: func(o *whatsapp.Options) { o.MaxMediaBytes = 1 << 10 }})
	r.phone.AddMedia("/v/img1", []byte("\x89PNG fake image"))
	img := &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		DirectPath: proto.String("/v/img1"), Mimetype: proto.String("image/png"), FileLength: proto.Uint64(15),
		Caption: proto.String("look"), MediaKey: []byte("k"),
	}}
	big := &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{
		DirectPath: proto.String("/v/doc1"), Mimetype: proto.String("application/pdf"), FileLength: proto.Uint64(5 << 20),
		FileName: proto.String("report.pdf"),
	}}
	r.emit(whatsapptest.Message(ada, ada, "I1", "Ada", img))
	r.emit(whatsapptest.Message(ada, ada, "I2", "Ada", big))
	got := r.rec.Inbound()
	if len(got) != 2 {
		t.Fatalf("%d messages", len(got))
	}
	in := got[0].Message
	if in.Body != "look" || len(in.Media) != 1 || in.Media[0].MimeType != "image/png" || !strings.HasSuffix(in.Media[0].Path, ".png") {
		t.Fatalf("image message %+v", in)
	}
	if data, err := os.ReadFile(in.Media[0].Path); err != nil || string(data) != "\x89PNG fake image" {
		t.Errorf("saved image %q, %v", data, err)
	}
	doc := got[1].Message
	if len(doc.Media) != 0 || len(doc.UntrustedContext) != 1 || !strings.Contains(doc.UntrustedContext[0], "over the 1024-byte limit") {
		t.Errorf("oversized document %+v", doc)
	}
}

func TestEditsBecomeSystemEvents(t *testing.T) {
	r := newRig(t, rigOptions{})
	e := whatsapptest.Text(ada, ada, "E1", "new text")
	e.IsEdit = true
	r.emit(e)
	if n := len(r.rec.Inbound()); n != 0 {
		t.Fatalf("an edit was submitted as a message (%d)", n)
	}
	evs := r.rec.Events()
	if len(evs) != 1 || !strings.Contains(evs[0].Text, "edited a message") || strings.Contains(evs[0].Text, "new text") {
		t.Fatalf("edit events %+v", evs)
	}
}

func TestReadReceipts(t *testing.T) {
	for _, on := range []bool{false, true} {
		r := newRig(t, rigOptions{edit: func(o *whatsapp.Options) { o.SendReadReceipts = on }})
		cli := r.client()
		cli.Emit(whatsapptest.Text(ada, ada, "R1", "read me"))
		reads := cli.Reads()
		if on && (len(reads) != 1 || reads[0].IDs[0] != "R1" || reads[0].Chat != ada) {
			t.Errorf("sendReadReceipts on: %+v", reads)
		}
		if !on && len(reads) != 0 {
			t.Errorf("sendReadReceipts off sent %+v", reads)
		}
	}
}
