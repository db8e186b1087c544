package whatsapp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
	"github.com/switchboardhq/switchboard/core"
)

func route(to types.JID) core.Route {
	return core.Route{Channel: "whatsapp", AccountID: "default", To: core.ChatID(to.String())}
}

func TestDeliverConvertsMarkdownAndChunks(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	var long strings.Builder
	long.WriteString("**Summary** of ~~old~~ `code`\n\n")
	for long.Len() < 9000 {
		long.WriteString("A sentence that goes on for a while to fill the answer. ")
	}
	rec, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: route(ada), Text: long.String()})
	if err != nil {
		t.Fatal(err)
	}
	sent := cli.Sent()
	if len(sent) != 3 || len(rec.MessageIDs) != 3 {
		t.Fatalf("%d messages sent (%d ids), want 3 chunks of ≤ 4000", len(sent), len(rec.MessageIDs))
	}
	var joined strings.Builder
	for i, s := range sent {
		if s.To != ada {
			t.Errorf("chunk %d to %s", i, s.To)
		}
		if n := utf8.RuneCountInString(s.Text()); n > 4000 || n == 0 {
			t.Errorf("chunk %d is %d characters", i, n)
		}
		if rec.MessageIDs[i] != bridges.MessageID(s.ID) {
			t.Errorf("receipt %d = %s, sent %s", i, rec.MessageIDs[i], s.ID)
		}
		joined.WriteString(s.Text())
	}
	if !strings.HasPrefix(sent[0].Text(), "*Summary* of ~old~ `code`") {
		t.Errorf("markup not converted: %q", sent[0].Text()[:40])
	}
	if got := strings.Count(joined.String(), "A sentence"); got != strings.Count(long.String(), "A sentence") {
		t.Errorf("%d sentences arrived, want all %d", got, strings.Count(long.String(), "A sentence"))
	}
}

func TestDeliverQuotesTheMessageRepliedTo(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	cli.Emit(whatsapptest.Text(group, ada, "Q7", "what time is it?"))
	_, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: route(group), Text: strings.Repeat("x ", 2500), ReplyToMessageID: "Q7"})
	if err != nil {
		t.Fatal(err)
	}
	sent := cli.Sent()
	if len(sent) != 2 {
		t.Fatalf("%d sent", len(sent))
	}
	ci := sent[0].Message.GetExtendedTextMessage().GetContextInfo()
	if ci.GetStanzaID() != "Q7" || ci.GetParticipant() != ada.String() || ci.GetQuotedMessage().GetConversation() != "what time is it?" {
		t.Errorf("first chunk's quote %+v", ci)
	}
	if sent[1].Message.GetExtendedTextMessage() != nil || sent[1].Message.GetConversation() == "" {
		t.Errorf("the second chunk quotes too: %+v", sent[1].Message)
	}
}

// memLedger is an in-memory bridges.Ledger.
type memLedger struct {
	mu   sync.Mutex
	sent map[string]string
}

func (l *memLedger) Sent(_ context.Context, key string) (string, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id, ok := l.sent[key]
	return id, ok, nil
}

func (l *memLedger) Record(_ context.Context, key, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent[key] = id
	return nil
}

func TestDeliverTwiceSendsOnce(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	out := bridges.Outbound{Route: route(ada), Text: "once", Ledger: &memLedger{sent: map[string]string{}}, LedgerKey: "run1:0"}
	first, err := r.b.Deliver(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.b.Deliver(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(cli.Sent()) != 1 || again.MessageIDs[0] != first.MessageIDs[0] {
		t.Errorf("sent %d times; receipts %v and %v", len(cli.Sent()), first.MessageIDs, again.MessageIDs)
	}
}

func TestDeliverMedia(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	dir := filepath.Join(filepath.Dir(filepath.Dir(r.path)), "media", "whatsapp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "chart.png")
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\n chart"), 0o600); err != nil {
		t.Fatal(err)
	}
	txt := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(txt, []byte("plain notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: route(ada), Text: "here", MediaURLs: []string{png, txt}})
	if err != nil {
		t.Fatal(err)
	}
	sent := cli.Sent()
	if len(sent) != 3 {
		t.Fatalf("%d sent, want text + 2 files", len(sent))
	}
	img := sent[1].Message.GetImageMessage()
	if img == nil || img.GetMimetype() != "image/png" || img.GetDirectPath() == "" || img.GetFileLength() != 14 {
		t.Errorf("image message %+v", sent[1].Message)
	}
	doc := sent[2].Message.GetDocumentMessage()
	if doc == nil || doc.GetFileName() != "notes.txt" {
		t.Errorf("document message %+v", sent[2].Message)
	}
	if ups := cli.Uploads(); len(ups) != 2 || string(ups[1]) != "plain notes" {
		t.Errorf("uploads %q", ups)
	}
	// Outside the media folder: refused, nothing sent.
	_, err = r.b.Deliver(t.Context(), bridges.Outbound{Route: route(ada), MediaURLs: []string{"/etc/passwd"}})
	if err == nil || len(cli.Sent()) != 3 {
		t.Errorf("a file outside the media folder: err %v, sent %d", err, len(cli.Sent()))
	}
}

func TestTypingPresence(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	if err := r.b.Typing(t.Context(), route(ada)); err != nil {
		t.Fatal(err)
	}
	if err := r.b.StopTyping(t.Context(), route(ada)); err != nil {
		t.Fatal(err)
	}
	p := cli.Presences()
	if len(p) != 2 || p[0] != (whatsapptest.Presence{To: ada, State: types.ChatPresenceComposing}) ||
		p[1] != (whatsapptest.Presence{To: ada, State: types.ChatPresencePaused}) {
		t.Errorf("presences %+v", p)
	}
}

func TestReactToAMessage(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	cli.Emit(whatsapptest.Text(group, bob, "X1", "ping"))
	if err := r.b.React(t.Context(), route(group), "X1", "👀"); err != nil {
		t.Fatal(err)
	}
	sent := cli.Sent()
	if len(sent) != 1 {
		t.Fatalf("%d sent", len(sent))
	}
	re := sent[0].Message.GetReactionMessage()
	if re.GetText() != "👀" || re.GetKey().GetID() != "X1" || re.GetKey().GetParticipant() != bob.String() || re.GetKey().GetRemoteJID() != group.String() {
		t.Errorf("reaction %+v", re)
	}
}

func TestDeliverWhileDisconnected(t *testing.T) {
	r := newRig(t, rigOptions{unlinked: true})
	r.state(bridges.StateLoggedOut)
	_, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: route(ada), Text: "hi"})
	if err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Errorf("deliver without a connection: %v", err)
	}
	_, err = r.b.Deliver(t.Context(), bridges.Outbound{Route: core.Route{Channel: "whatsapp", To: "not a number"}, Text: "hi"})
	if err == nil {
		t.Error("no error for an unparsable target")
	}
}
