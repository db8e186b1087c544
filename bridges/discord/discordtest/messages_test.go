package discordtest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBuilders(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := New(t, WithClock(func() time.Time { return now }))
	bob := s.AddUser(User{ID: "501", Username: "bob"})

	m := s.GuildMessage("200", ann, "<@501> <@!501> <@999> <@&77> @everyone", WithMentionRoles("78", "77"))
	if len(m.Mentions) != 1 || m.Mentions[0] != bob || !slices.Equal(m.MentionRoles, []string{"77", "78"}) || !m.MentionEveryone {
		t.Errorf("mentions %+v roles %v everyone %v", m.Mentions, m.MentionRoles, m.MentionEveryone)
	}
	if !m.Timestamp.Equal(now) || m.Member == nil || !m.Member.JoinedAt.Equal(now) || m.Author.Discriminator != "0" {
		t.Errorf("message = %+v", m)
	}
	// Builders do not push: replying to an unpushed message leaves
	// referenced_message null.
	r := s.GuildMessage("200", bob, "re", ReplyTo(m.ID))
	if r.Type != MessageReply || r.Reference.MessageID != m.ID || r.Referenced != nil || len(r.Mentions) != 0 {
		t.Errorf("reply to unknown = %+v", r)
	}

	// Bots have no member; DMs reuse their channel.
	if bm := s.GuildMessage("200", User{ID: "600", Bot: true}, "beep"); bm.Member != nil || bm.Author.Username != "user600" {
		t.Errorf("bot message = %+v", bm)
	}
	d1, d2 := s.DirectMessage(ann, "a"), s.DirectMessage(ann, "b")
	if d1.ChannelID != d2.ChannelID || d1.ChannelID != s.DMChannel(ann).ID || d1.ID == d2.ID {
		t.Errorf("DMs in %s and %s", d1.ChannelID, d2.ChannelID)
	}

	// A thread joins its parent's guild.
	s.AddChannel(Channel{ID: "210", GuildID: "900"})
	th := s.ThreadMessage("310", "210", ann, "x")
	if th.GuildID != "900" {
		t.Errorf("thread guild %q", th.GuildID)
	}
	if th2 := s.ThreadMessage("310", "", ann, "y"); th2.ChannelID != "310" || th2.GuildID != "900" {
		t.Errorf("registered thread = %+v", th2)
	}

	rec := &recordingTB{TB: t}
	New(rec).AddChannel(Channel{ID: "1", Type: ChannelPublicThread})
	if errs := rec.errors(); len(errs) != 1 || !strings.Contains(errs[0], "no ParentID") {
		t.Errorf("thread without parent reported %q", errs)
	}
}

func TestPushHandMadeMessage(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(allIntents)

	// A DM from a user the fake has never seen: the channel becomes their
	// DM, and the missing fields are filled in.
	dm := s.PushMessageCreate(Message{ChannelID: "400", Author: User{ID: "502", Username: "cy"}, Content: s.BotMention() + " hi"})
	if dm.ID == "" || dm.Timestamp.IsZero() || dm.GuildID != "" || len(dm.Mentions) != 1 || dm.Member != nil {
		t.Errorf("DM = %+v", dm)
	}
	if ch := s.DMChannel(User{ID: "502"}); ch.ID != "400" {
		t.Errorf("DM channel %s, want 400", ch.ID)
	}
	if got := message(t, c.expect(opDispatch, "MESSAGE_CREATE")); got.ID != dm.ID {
		t.Errorf("dispatched %+v", got)
	}

	// GuildID names the guild of an unknown channel; explicit fields stay.
	g := s.PushMessageCreate(Message{ID: "42", ChannelID: "401", GuildID: "901", Author: ann, Content: "<@500>", Mentions: []User{}})
	c.expect(opDispatch, "GUILD_CREATE")
	if g.ID != "42" || g.GuildID != "901" || len(g.Mentions) != 0 || g.Member == nil {
		t.Errorf("guild message = %+v", g)
	}
	c.expect(opDispatch, "MESSAGE_CREATE")
	// Pushed messages can be reacted to and replied to.
	mustDo(t, s, "PUT", "/channels/401/messages/42/reactions/%E2%9C%85/@me", nil, nil)
	mustDo(t, s, "POST", "/channels/401/messages", map[string]any{"content": "ok", "message_reference": map[string]string{"message_id": "42"}}, nil)

	rec := &recordingTB{TB: t}
	New(rec).PushMessageCreate(Message{Content: "nowhere"})
	New(rec).Push("BAD", []byte("{"))
	New(rec).Push("BAD", func() {})
	if errs := rec.errors(); len(errs) != 3 {
		t.Errorf("misuse reported %q", errs)
	}
}

func TestGuildCreateListsChannels(t *testing.T) {
	s := New(t)
	for _, id := range []string{"1000", "999", "300"} {
		s.AddChannel(Channel{ID: id})
	}
	s.AddChannel(Channel{ID: "999", Name: "renamed"})
	c := dial(t, s, "")
	c.identify(IntentGuilds)
	var guild struct {
		Channels []Channel `json:"channels"`
	}
	if err := json.Unmarshal(c.expect(opDispatch, "GUILD_CREATE").D, &guild); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ch := range guild.Channels {
		ids = append(ids, ch.ID+"="+ch.Name)
	}
	if want := []string{"300=channel-300", "999=renamed", "1000=channel-1000"}; !slices.Equal(ids, want) {
		t.Errorf("channels %v, want %v", ids, want)
	}
}

func TestResumeWindowAndTakeover(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(IntentGuildMessages)

	// A resume on a new connection takes the session over from a
	// connection the fake still thinks alive.
	c2 := dial(t, s, "")
	c2.sessionID = c.sessionID
	c2.resume(1)
	c2.expect(opDispatch, "RESUMED")
	if code, _ := c.closed(); code != -1 {
		t.Errorf("old connection closed with %d", code)
	}
	if got := s.Closes(); len(got) != 1 || got[0].Reason != "discordtest: session resumed elsewhere" {
		t.Errorf("Closes() = %+v", got)
	}

	// Beyond maxReplay missed events the session cannot be resumed.
	s.DropConnection()
	c2.closed()
	for range maxReplay + 1 {
		s.Push("TICK", []byte(`{}`))
	}
	c3 := dial(t, s, "")
	c3.sessionID = c.sessionID
	c3.resume(1)
	c3.expect(opInvalidSession, "")
}

func TestSlowClientIsDropped(t *testing.T) {
	s := New(t)
	c := dial(t, s, "")
	c.identify(IntentGuildMessages)
	big := []byte(`{"pad":"` + strings.Repeat("x", 256<<10) + `"}`)
	// The client reads nothing; once the socket buffers are full the
	// queue grows until the fake gives up on the connection.
	n := 2 * maxOutbound / len(big)
	for range n {
		s.Push("BIG", big)
	}
	if err := s.WaitFor(waitCtx(t), func() bool { return len(s.Closes()) == 1 }); err != nil {
		t.Fatal(err)
	}
	if got := s.Closes()[0]; got.Code != 1006 || !got.ByServer || !strings.Contains(got.Reason, "outbound queue full") {
		t.Errorf("Closes()[0] = %+v", got)
	}
	// The session survives for a resume.
	c2 := dial(t, s, "")
	c2.ws.SetReadLimit(1 << 20)
	c2.sessionID = c.sessionID
	c2.resume(int64(n)) // READY was 1, the last BIG n+1
	if p := c2.expect(opDispatch, "BIG"); p.seq() != int64(n+1) {
		t.Errorf("replayed seq %d, want %d", p.seq(), n+1)
	}
	c2.expect(opDispatch, "RESUMED")
}
