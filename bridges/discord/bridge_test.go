package discord_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/discord"
	"github.com/switchboardhq/switchboard/bridges/discord/discordtest"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is a bridge running against a fake Discord.
type rig struct {
	srv  *discordtest.Server
	b    *discord.Bridge
	sink *bridgetest.Sink
	done chan error
	stop context.CancelFunc
}

// instant is a Sleep that does not wait, for tests that count attempts
// rather than time.
func instant(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil }

func newRig(t *testing.T, srv *discordtest.Server, edit func(*discord.Options)) *rig {
	t.Helper()
	opts := discord.Options{
		Token: srv.Token, HTTPClient: srv.Client(), MediaDir: filepath.Join(t.TempDir(), "media", "discord"),
		Session: core.SessionConfig{DMScope: core.DMScopePerChannelPeer}, Sleep: instant,
	}
	if edit != nil {
		edit(&opts)
	}
	b, err := discord.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{srv: srv, b: b, sink: &bridgetest.Sink{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() { r.done <- b.Start(ctx, r.sink) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(bridgetest.WaitFor):
			t.Error("the bridge did not stop")
		}
	})
	return r
}

// connected waits until the bridge reports a live session.
func (r *rig) connected(t *testing.T) {
	t.Helper()
	if !bridgetest.Eventually(func() bool { return r.b.Status().State == bridges.StateConnected }) {
		t.Fatalf("bridge not connected: %+v", r.b.Status())
	}
}

// receive pushes m and waits for the sink to hold n messages.
func (r *rig) receive(t *testing.T, m discordtest.Message, n int) bridges.Inbound {
	t.Helper()
	r.srv.PushMessageCreate(m)
	if !r.sink.Eventually(func() bool { return len(r.sink.Inbound()) >= n }) {
		t.Fatalf("message %q not submitted (have %d)", m.Content, len(r.sink.Inbound()))
	}
	return r.sink.Inbound()[n-1]
}

var ada = discordtest.User{ID: "2200000000000000001", Username: "ada", GlobalName: "Ada"}

func TestDirectMessageInAndReplyOut(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	dm := srv.DMChannel(ada)
	got := r.receive(t, srv.DirectMessage(ada, "hello there"), 1)
	in := got.Message
	if in.SessionKey != "agent:main:discord:direct:"+core.SessionKey(ada.ID) || in.ChatType != core.ChatDirect {
		t.Errorf("session %q (%s), want the DM keyed by the author", in.SessionKey, in.ChatType)
	}
	if in.Route.To != core.ChatID(dm.ID) || in.Body != "hello there" || in.Sender.ID != ada.ID || in.Sender.Name != "Ada" || in.Sender.Username != "ada" {
		t.Errorf("inbound = %+v", in)
	}
	if got.GroupID != "" || got.DedupeKey != "discord:"+srv.BotUser.ID+":message:"+string(in.MessageID) {
		t.Errorf("group %q dedupe %q", got.GroupID, got.DedupeKey)
	}

	rc, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: in.Route, Text: "**hi** @everyone", ReplyToMessageID: bridges.MessageID(in.MessageID)})
	if err != nil || len(rc.MessageIDs) != 1 {
		t.Fatalf("Deliver = %+v, %v", rc, err)
	}
	sent := srv.Sent()
	if len(sent) != 1 || sent[0].ChannelID != dm.ID || sent[0].Content != "**hi** @everyone" {
		t.Fatalf("sent = %+v", sent)
	}
	if ref := sent[0].Reference; ref == nil || core.MessageID(ref.MessageID) != in.MessageID {
		t.Errorf("reference = %+v, want a reply to %s", ref, in.MessageID)
	}
	if am := sent[0].AllowedMentions; am == nil || !slices.Equal(am.Parse, []string{"users"}) {
		t.Errorf("allowed_mentions = %+v, want users only (no @everyone)", am)
	}
}

func TestGuildMentions(t *testing.T) {
	srv := discordtest.New(t)
	srv.SetBotRoles(discordtest.DefaultGuildID, "3300000000000000001")
	srv.AddChannel(discordtest.Channel{ID: "4400000000000000001", Type: discordtest.ChannelGuildText, GuildID: discordtest.DefaultGuildID, Name: "general"})
	r := newRig(t, srv, func(o *discord.Options) { o.MentionPatterns = []string{`\bswitchy\b`} })
	r.connected(t)
	ch := "4400000000000000001"
	bot := srv.BotUser.ID
	for i, tc := range []struct {
		name      string
		msg       discordtest.Message
		mentioned bool
		implicit  bool
		body      string
	}{
		{"plain", srv.GuildMessage(ch, ada, "just chatting"), false, false, "just chatting"},
		{"<@id>", srv.GuildMessage(ch, ada, "<@"+bot+"> what time is it"), true, false, "what time is it"},
		{"<@!id>", srv.GuildMessage(ch, ada, "hey <@!"+bot+">"), true, false, "hey"},
		{"bot role", srv.GuildMessage(ch, ada, "<@&3300000000000000001> status?"), true, false, "<@&3300000000000000001> status?"},
		{"other role", srv.GuildMessage(ch, ada, "<@&3300000000000000009> status?"), false, false, "<@&3300000000000000009> status?"},
		{"pattern", srv.GuildMessage(ch, ada, "Switchy, help"), true, false, "Switchy, help"},
	} {
		got := r.receive(t, tc.msg, i+1)
		in := got.Message
		if in.WasMentioned != tc.mentioned || got.ImplicitMention != tc.implicit || in.Body != tc.body {
			t.Errorf("%s: mentioned %v implicit %v body %q; want %v %v %q", tc.name, in.WasMentioned, got.ImplicitMention, in.Body, tc.mentioned, tc.implicit, tc.body)
		}
		if in.SessionKey != "agent:main:discord:channel:"+core.SessionKey(ch) || got.GroupID != ch || !got.CanDetectMention {
			t.Errorf("%s: session %q group %q", tc.name, in.SessionKey, got.GroupID)
		}
		if !slices.Equal(got.GroupParents, []string{"guild:" + discordtest.DefaultGuildID}) {
			t.Errorf("%s: group parents %q", tc.name, got.GroupParents)
		}
	}

	// A reply to the bot's own message is an implicit mention.
	rc, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: core.Route{Channel: "discord", To: core.ChatID(ch)}, Text: "I said something"})
	if err != nil {
		t.Fatal(err)
	}
	got := r.receive(t, srv.GuildMessage(ch, ada, "and?", discordtest.ReplyTo(string(rc.MessageIDs[0]))), 7)
	if !got.ImplicitMention || got.Message.ReplyTo == nil || !got.Message.ReplyTo.FromBot || got.Message.ReplyTo.Body != "I said something" {
		t.Errorf("reply to bot: implicit %v replyTo %+v", got.ImplicitMention, got.Message.ReplyTo)
	}

	// The bot's own messages and other bots' are ignored.
	srv.PushMessageCreate(srv.GuildMessage(ch, discordtest.User{ID: "2200000000000000099", Username: "otherbot", Bot: true}, "beep"))
	got = r.receive(t, srv.GuildMessage(ch, ada, "after the bot"), 8)
	if got.Message.Body != "after the bot" {
		t.Errorf("a bot's message was submitted: %q", got.Message.Body)
	}
}

func TestThreadKeepsItsOwnSession(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	got := r.receive(t, srv.ThreadMessage("5500000000000000002", "5500000000000000001", ada, "<@"+srv.BotUser.ID+"> in a thread"), 1)
	in := got.Message
	if in.SessionKey != "agent:main:discord:channel:5500000000000000002" || in.ParentSessionKey != "agent:main:discord:channel:5500000000000000001" {
		t.Errorf("thread session %q parent %q", in.SessionKey, in.ParentSessionKey)
	}
	if in.Route.To != "5500000000000000002" || in.Route.ThreadID != "" {
		t.Errorf("thread route %+v, want the thread's own channel", in.Route)
	}
	if !slices.Equal(got.GroupParents, []string{"5500000000000000001", "guild:" + discordtest.DefaultGuildID}) {
		t.Errorf("group parents %q, want the parent channel then the guild", got.GroupParents)
	}
	if _, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: in.Route, Text: "answer"}); err != nil {
		t.Fatal(err)
	}
	if sent := srv.Sent(); len(sent) != 1 || sent[0].ChannelID != "5500000000000000002" {
		t.Errorf("reply went to %+v, want the thread", sent)
	}
}

func TestLongAnswerIsChunked(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	var sb strings.Builder
	sb.WriteString("Intro paragraph.\n\n```go\n")
	for i := range 30 {
		sb.WriteString("fmt.Println(\"line " + strings.Repeat("x", i%7) + "\")\n")
	}
	sb.WriteString("```\n\n")
	for sb.Len() < 5000 {
		sb.WriteString("A sentence that keeps going to make the answer long enough. ")
	}
	text := sb.String()
	srv.AddChannel(discordtest.Channel{ID: "6600000000000000001", Type: discordtest.ChannelGuildText})
	rc, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: core.Route{Channel: "discord", To: "6600000000000000001"}, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.Sent()
	if len(sent) < 3 || len(sent) != len(rc.MessageIDs) {
		t.Fatalf("%d messages for %d characters (receipt %d)", len(sent), len(text), len(rc.MessageIDs))
	}
	for i, m := range sent {
		if n := len([]rune(m.Content)); n > discord.DefaultChunkLimit {
			t.Errorf("chunk %d has %d characters", i, n)
		}
		if strings.Count(m.Content, "```")%2 != 0 {
			t.Errorf("chunk %d leaves a code fence open:\n%s", i, m.Content)
		}
		if lines := strings.Count(strings.TrimRight(m.Content, "\n"), "\n") + 1; lines > 17 {
			t.Errorf("chunk %d has %d lines", i, lines)
		}
	}
	if !strings.HasPrefix(sent[0].Content, "Intro paragraph.") || !strings.Contains(sent[len(sent)-1].Content, "long enough.") {
		t.Errorf("chunks out of order: first %q", sent[0].Content[:40])
	}
}

func TestAttachmentsInAndOut(t *testing.T) {
	srv := discordtest.New(t)
	dir := filepath.Join(t.TempDir(), "media", "discord")
	r := newRig(t, srv, func(o *discord.Options) { o.MediaDir, o.MaxMediaBytes = dir, 1000 })
	r.connected(t)
	got := r.receive(t, srv.DirectMessage(ada, "look", discordtest.WithAttachment("note.txt", "text/plain", []byte("file body"))), 1)
	if media := got.Message.Media; len(media) != 1 || media[0].MimeType != "text/plain" {
		t.Fatalf("media = %+v", media)
	} else if b, err := os.ReadFile(media[0].Path); err != nil || string(b) != "file body" {
		t.Fatalf("saved %q, %v", b, err)
	}
	got = r.receive(t, srv.DirectMessage(ada, "too big", discordtest.WithAttachment("big.bin", "application/octet-stream", make([]byte, 2000))), 2)
	if len(got.Message.Media) != 0 || len(got.Message.UntrustedContext) != 1 || !strings.Contains(got.Message.UntrustedContext[0], "limit") {
		t.Errorf("oversized attachment: media %+v context %q", got.Message.Media, got.Message.UntrustedContext)
	}

	out := filepath.Join(dir, "report.txt")
	if err := os.WriteFile(out, []byte("report"), 0o600); err != nil {
		t.Fatal(err)
	}
	route := got.Message.Route
	if _, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: route, Text: "here", MediaURLs: []string{out}}); err != nil {
		t.Fatal(err)
	}
	sent := srv.Sent()
	if len(sent) != 2 || sent[0].Content != "here" || len(sent[1].Files) != 1 || sent[1].Files[0].Name != "report.txt" || string(sent[1].Files[0].Data) != "report" {
		t.Fatalf("sent = %+v", sent)
	}
	if _, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: route, MediaURLs: []string{"/etc/passwd"}}); err == nil || !strings.Contains(err.Error(), "outside the media directory") {
		t.Errorf("a file outside the media folder: %v", err)
	}
}

func TestTypingAndReaction(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	in := r.receive(t, srv.DirectMessage(ada, "hi"), 1).Message
	if err := r.b.Typing(t.Context(), in.Route); err != nil {
		t.Fatal(err)
	}
	if err := r.b.React(t.Context(), in.Route, bridges.MessageID(in.MessageID), "👀"); err != nil {
		t.Fatal(err)
	}
	if typing := srv.Typing(); !slices.Equal(typing, []string{string(in.Route.To)}) {
		t.Errorf("typing = %q", typing)
	}
	if re := srv.Reactions(); len(re) != 1 || re[0].Emoji != "👀" || core.MessageID(re[0].MessageID) != in.MessageID {
		t.Errorf("reactions = %+v", re)
	}
}

func TestRateLimitedReplyIsNotDropped(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	srv.RateLimitNext(discordtest.RouteCreateMessage, 200*time.Millisecond, false)
	srv.RateLimitNext(discordtest.RouteCreateMessage, 200*time.Millisecond, true)
	srv.AddChannel(discordtest.Channel{ID: "6600000000000000002", Type: discordtest.ChannelGuildText})
	route := core.Route{Channel: "discord", To: "6600000000000000002"}
	if _, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: route, Text: "eventually"}); err != nil {
		t.Fatal(err)
	}
	if sent := srv.Sent(); len(sent) != 1 || sent[0].Content != "eventually" {
		t.Fatalf("sent = %+v", sent)
	}
	var statuses []int
	for _, q := range srv.Requests() {
		if q.Route == discordtest.RouteCreateMessage {
			statuses = append(statuses, q.Status)
		}
	}
	if !slices.Equal(statuses, []int{429, 429, 200}) {
		t.Errorf("create message statuses = %v, want 429, 429, 200", statuses)
	}
}

func TestJournalFailureIsRetried(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	r.sink.FailNext(2)
	if got := r.receive(t, srv.DirectMessage(ada, "keep me"), 1); got.Message.Body != "keep me" {
		t.Errorf("got %q", got.Message.Body)
	}
}

func TestBadTokenIsTerminal(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, func(o *discord.Options) { o.Token = "MTE.wrong.token" })
	var err error
	select {
	case err = <-r.done:
	case <-time.After(bridgetest.WaitFor):
		t.Fatal("Start kept running with a refused token")
	}
	r.done <- err // for the cleanup
	st := r.b.Status()
	if err == nil || st.State != bridges.StateBadCredentials || !strings.Contains(st.LastError, "channels.discord.token") {
		t.Fatalf("Start = %v, status %+v", err, st)
	}
	if strings.Contains(st.LastError, "wrong.token") || srv.Connections() != 0 {
		t.Errorf("status leaks the token or the gateway was dialled: %q, %d connections", st.LastError, srv.Connections())
	}
}

func TestAPIURLSendsRESTElsewhere(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, func(o *discord.Options) { o.HTTPClient, o.APIURL = nil, srv.APIURL })
	r.connected(t)
	in := r.receive(t, srv.DirectMessage(ada, "via a proxy"), 1).Message
	if _, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: in.Route, Text: "ok"}); err != nil {
		t.Fatal(err)
	}
	if sent := srv.Sent(); len(sent) != 1 {
		t.Fatalf("sent = %+v", sent)
	}
	if _, err := discord.New(discord.Options{Token: "x", APIURL: "ftp://nope"}); err == nil || !strings.Contains(err.Error(), "apiUrl") {
		t.Errorf("bad apiUrl accepted: %v", err)
	}
}

func TestDeliverToUserOpensTheDM(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	srv.AddUser(ada)
	route, err := bridges.Registry{discord.Descriptor()}.ParseTarget("discord:user:" + ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.b.Deliver(t.Context(), bridges.Outbound{Route: route, Text: "a note"}); err != nil {
		t.Fatal(err)
	}
	if sent := srv.Sent(); len(sent) != 1 || sent[0].ChannelID != srv.DMChannel(ada).ID {
		t.Errorf("sent = %+v, want the DM channel with %s", sent, ada.ID)
	}
}

// A restarted bridge fetches what was written in its channels while it was
// down: Discord gives a new session no replay, so without the stored
// channel positions the message would be lost (the chaos run found it).
func TestRestartFetchesMessagesWrittenWhileDown(t *testing.T) {
	srv := discordtest.New(t)
	st := openStore(t)
	second := downAndUp(t, srv, st, st, srv.DirectMessage(ada, "before the restart"))
	if !second.sink.Eventually(func() bool { return len(second.sink.Inbound()) >= 1 }) {
		t.Fatalf("the message written while down was not fetched; got %d", len(second.sink.Inbound()))
	}
	if got := second.sink.Inbound(); len(got) != 1 || got[0].Message.Body != "while down" {
		t.Fatalf("after the restart got %+v, want only the message written while down", got)
	}
}

// openStore opens a state store in a temp dir for the test.
func openStore(t *testing.T) *store.SQLite {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// downAndUp runs a bridge whose positions go to positions until it has
// taken first, then kills it: its connection is cut without a close
// frame, so its session lives on at Discord and collects what follows,
// which no new session is sent. "while down" is written meanwhile, and a
// second bridge is started on st.
func downAndUp(t *testing.T, srv *discordtest.Server, st *store.SQLite, positions discord.PositionStore, first discordtest.Message) *rig {
	t.Helper()
	r := newRig(t, srv, func(o *discord.Options) { o.Positions = positions })
	r.connected(t)
	r.receive(t, first, 1)
	srv.SetOutage(true)
	r.stop()
	<-r.done
	r.done <- nil // for the rig's cleanup
	srv.PushMessageCreate(srv.DirectMessage(ada, "while down"))
	srv.SetOutage(false)
	return newRig(t, srv, func(o *discord.Options) { o.Positions = st })
}

// failingPositions is the state store, except that storing one value
// fails: the position a kill would have kept from being written.
type failingPositions struct {
	*store.SQLite
	fail string
}

func (p failingPositions) SetChannelOffset(ctx context.Context, channel, key, value string) error {
	if value == p.fail {
		return errors.New("killed before the position was stored")
	}
	return p.SQLite.SetChannelOffset(ctx, channel, key, value)
}

// TestCrashBeforeFirstPositionKeepsTheChannel: the process dies after a
// channel's first message is journaled and before its position is stored.
// The next run still knows the channel and fetches what was written there
// while it was down (and the first message again, which the journal's
// dedupe key stops).
func TestCrashBeforeFirstPositionKeepsTheChannel(t *testing.T) {
	srv := discordtest.New(t)
	st := openStore(t)
	first := srv.DirectMessage(ada, "the channel's first message")
	second := downAndUp(t, srv, st, failingPositions{st, first.ID}, first)
	if !second.sink.Eventually(func() bool {
		for _, in := range second.sink.Inbound() {
			if in.Message.Body == "while down" {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the message written while down was not fetched; got %d messages", len(second.sink.Inbound()))
	}
}
