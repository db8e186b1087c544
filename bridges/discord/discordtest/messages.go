package discordtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
)

// AddUser registers u, so mentions of it resolve, GET /users/{id} finds it
// and the bot can open a DM with it; an empty ID gets a snowflake. Authors
// of built or pushed messages are registered on their own.
func (s *Server) AddUser(u User) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.ID == "" {
		u.ID = s.newIDLocked()
	}
	return s.rememberUserLocked(u)
}

func (s *Server) rememberUserLocked(u User) User {
	u = normalizeUser(u)
	if u.ID != "" && u.ID != s.BotUser.ID {
		s.users[u.ID] = u
	}
	return u
}

func normalizeUser(u User) User {
	if u.Discriminator == "" {
		u.Discriminator = "0"
	}
	if u.Username == "" && u.ID != "" {
		u.Username = "user" + u.ID
	}
	return u
}

// AddChannel registers ch, so REST calls and the message builders find it,
// and returns it as stored. An empty ID gets a snowflake and an empty Name
// a made-up one. Guild channel types without a GuildID join DefaultGuildID;
// a thread needs a ParentID, whose guild it joins (an unknown parent is
// registered as a text channel); DMs and group DMs have no guild.
// Registering an existing ID replaces it. Sessions that are open hear of a
// new guild channel the way Discord tells them: GUILD_CREATE for the first
// channel of a guild, THREAD_CREATE for a thread, CHANNEL_CREATE otherwise.
func (s *Server) AddChannel(ch Channel) Channel {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.addChannelLocked(ch)
	if err != nil {
		s.t.Errorf("discordtest: AddChannel: %v", err)
	}
	return c
}

func (s *Server) addChannelLocked(ch Channel) (Channel, error) {
	if ch.ID == "" {
		ch.ID = s.newIDLocked()
	}
	switch {
	case ch.Type.isPrivate():
		ch.GuildID = ""
		for i, u := range ch.Recipients {
			ch.Recipients[i] = s.rememberUserLocked(u)
		}
	case ch.Type.IsThread():
		if ch.ParentID == "" {
			return ch, fmt.Errorf("thread %s has no ParentID", ch.ID)
		}
		parent := s.channels[ch.ParentID]
		if parent == nil {
			p, err := s.addChannelLocked(Channel{ID: ch.ParentID, Type: ChannelGuildText, GuildID: ch.GuildID})
			if err != nil {
				return ch, err
			}
			parent = &p
		}
		ch.GuildID = parent.GuildID
	case ch.GuildID == "":
		ch.GuildID = DefaultGuildID
	}
	if ch.Name == "" && !ch.Type.isPrivate() {
		ch.Name = "channel-" + ch.ID
	}
	_, existed := s.channels[ch.ID]
	newGuild := ch.GuildID != "" && !slices.Contains(s.guilds, ch.GuildID)
	if newGuild {
		s.guilds = append(s.guilds, ch.GuildID)
	}
	stored := ch
	stored.Recipients = slices.Clone(ch.Recipients)
	s.channels[ch.ID] = &stored
	switch {
	case existed || ch.GuildID == "":
	case newGuild:
		s.dispatchLocked(event{name: "GUILD_CREATE", intent: IntentGuilds, data: s.guildLocked(ch.GuildID)}, false)
	case ch.Type.IsThread():
		s.dispatchLocked(event{name: "THREAD_CREATE", intent: IntentGuilds, data: threadCreate{Channel: ch, NewlyCreated: true}}, false)
	default:
		s.dispatchLocked(event{name: "CHANNEL_CREATE", intent: IntentGuilds, data: ch}, false)
	}
	s.changes.Changed()
	return ch, nil
}

type threadCreate struct {
	Channel
	NewlyCreated bool `json:"newly_created"`
}

// guildLocked is the guild object of GUILD_CREATE.
func (s *Server) guildLocked(id string) map[string]any {
	channels, threads := []Channel{}, []Channel{}
	for _, ch := range s.channels {
		switch {
		case ch.GuildID != id:
		case ch.Type.IsThread():
			threads = append(threads, *ch)
		default:
			channels = append(channels, *ch)
		}
	}
	byID := func(a, b Channel) int { return compareIDs(a.ID, b.ID) }
	slices.SortFunc(channels, byID)
	slices.SortFunc(threads, byID)
	return map[string]any{
		"id":           id,
		"name":         "Test Guild " + id,
		"owner_id":     s.BotUser.ID,
		"unavailable":  false,
		"large":        false,
		"member_count": 1,
		"joined_at":    s.clock().UTC(),
		"roles":        []map[string]any{{"id": id, "name": "@everyone", "permissions": "0", "position": 0}},
		"emojis":       []any{},
		"members":      s.botMemberLocked(id),
		"channels":     channels,
		"threads":      threads,
	}
}

// SetBotRoles gives the bot roles in a guild: GUILD_CREATE lists the
// bot's member with them, so role mentions (<@&id>, mention_roles) can
// address the bot. Set it before the client identifies.
func (s *Server) SetBotRoles(guildID string, roleIDs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.botRoles == nil {
		s.botRoles = map[string][]string{}
	}
	s.botRoles[guildID] = slices.Clone(roleIDs)
	if !slices.Contains(s.guilds, guildID) {
		s.guilds = append(s.guilds, guildID)
	}
	s.changes.Changed()
}

// botMemberLocked is GUILD_CREATE's members list: the bot, when it has
// roles in the guild.
func (s *Server) botMemberLocked(guildID string) []any {
	roles, ok := s.botRoles[guildID]
	if !ok {
		return []any{}
	}
	return []any{map[string]any{"user": s.BotUser, "roles": roles, "joined_at": s.clock().UTC()}}
}

// compareIDs orders snowflakes numerically, and other IDs after them.
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// DMChannel returns the DM channel between the bot and u, registering both
// on first use. It is the channel DirectMessage writes in and POST
// /users/@me/channels returns.
func (s *Server) DMChannel(u User) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dmChannelLocked(u)
}

func (s *Server) dmChannelLocked(u User) Channel {
	u = s.rememberUserLocked(u)
	if id, ok := s.dms[u.ID]; ok {
		if ch := s.channels[id]; ch != nil {
			return *ch
		}
	}
	ch, _ := s.addChannelLocked(Channel{Type: ChannelDM, Recipients: []User{u}})
	s.dms[u.ID] = ch.ID
	return ch
}

// MessageOption adjusts a message built by GuildMessage, DirectMessage or
// ThreadMessage.
type MessageOption func(*messageBuilder)

type messageBuilder struct {
	s *Server
	m *Message
}

// GuildMessage builds a message from author in channel channelID, as
// Discord would dispatch it: a new snowflake ID, the current time, the
// channel's guild, a guild member for non-bot authors, and the user, role
// and @everyone mentions found in content ("<@id>", "<@&id>"; users the
// fake has not seen are left out). An unknown channel is registered as a
// text channel of DefaultGuildID; a registered one may be of any type. Push
// the message with PushMessageCreate.
func (s *Server) GuildMessage(channelID string, author User, content string, opts ...MessageOption) Message {
	s.t.Helper()
	s.mu.Lock()
	ch := s.channels[channelID]
	if ch == nil {
		c, err := s.addChannelLocked(Channel{ID: channelID, Type: ChannelGuildText})
		if err != nil {
			s.t.Errorf("discordtest: GuildMessage: %v", err)
		}
		ch = &c
	}
	m := s.newMessageLocked(*ch, author, content)
	s.mu.Unlock()
	return s.applyOptions(m, opts)
}

// DirectMessage builds a message from author to the bot in their DM
// channel (see DMChannel); it has no guild and no member. See GuildMessage.
func (s *Server) DirectMessage(author User, content string, opts ...MessageOption) Message {
	s.mu.Lock()
	ch := s.dmChannelLocked(author)
	m := s.newMessageLocked(ch, author, content)
	s.mu.Unlock()
	return s.applyOptions(m, opts)
}

// ThreadMessage builds a message from author in thread threadID, a public
// thread under text channel parentID; both are registered when unknown.
// parentID may be empty for a registered thread. See GuildMessage.
func (s *Server) ThreadMessage(threadID, parentID string, author User, content string, opts ...MessageOption) Message {
	s.t.Helper()
	s.mu.Lock()
	ch := s.channels[threadID]
	if ch == nil {
		c, err := s.addChannelLocked(Channel{ID: threadID, Type: ChannelPublicThread, ParentID: parentID, OwnerID: author.ID})
		if err != nil {
			s.t.Errorf("discordtest: ThreadMessage: %v", err)
		}
		ch = &c
	}
	m := s.newMessageLocked(*ch, author, content)
	s.mu.Unlock()
	return s.applyOptions(m, opts)
}

func (s *Server) newMessageLocked(ch Channel, author User, content string) Message {
	author = s.rememberUserLocked(author)
	m := Message{
		ID:        s.newIDLocked(),
		Type:      MessageDefault,
		ChannelID: ch.ID,
		GuildID:   ch.GuildID,
		Author:    author,
		Content:   content,
		Timestamp: s.clock().UTC(),
	}
	if m.GuildID != "" && !author.Bot {
		m.Member = &Member{Roles: []string{}, JoinedAt: m.Timestamp}
	}
	m.Mentions, m.MentionRoles, m.MentionEveryone = s.mentionsLocked(content)
	return normalizeMessage(m)
}

func (s *Server) applyOptions(m Message, opts []MessageOption) Message {
	b := &messageBuilder{s: s, m: &m}
	for _, o := range opts {
		o(b)
	}
	return normalizeMessage(m)
}

var (
	userMention = regexp.MustCompile(`<@!?(\d+)>`)
	roleMention = regexp.MustCompile(`<@&(\d+)>`)
	everyone    = regexp.MustCompile(`@(everyone|here)\b`)
)

// mentionsLocked finds the mentions in content the way Discord fills a
// message's mentions, mention_roles and mention_everyone.
func (s *Server) mentionsLocked(content string) ([]User, []string, bool) {
	users, roles := []User{}, []string{}
	for _, m := range userMention.FindAllStringSubmatch(content, -1) {
		u, ok := s.userLocked(m[1])
		if ok && !slices.ContainsFunc(users, func(x User) bool { return x.ID == u.ID }) {
			users = append(users, u)
		}
	}
	for _, m := range roleMention.FindAllStringSubmatch(content, -1) {
		if !slices.Contains(roles, m[1]) {
			roles = append(roles, m[1])
		}
	}
	return users, roles, everyone.MatchString(content)
}

func (s *Server) userLocked(id string) (User, bool) {
	if id == s.BotUser.ID {
		return s.BotUser, true
	}
	u, ok := s.users[id]
	return u, ok
}

// normalizeMessage makes the list fields JSON arrays rather than null, as
// Discord sends them.
func normalizeMessage(m Message) Message {
	if m.Mentions == nil {
		m.Mentions = []User{}
	}
	if m.MentionRoles == nil {
		m.MentionRoles = []string{}
	}
	if m.Attachments == nil {
		m.Attachments = []Attachment{}
	}
	if m.Embeds == nil {
		m.Embeds = []json.RawMessage{}
	}
	return m
}

// ReplyTo makes the message a reply to message messageID of the same
// channel: type 19, message_reference, and referenced_message when the
// fake knows the message (pushed or sent by the bot; otherwise it is null,
// as for a deleted message). The replied-to author joins mentions, as
// when the user leaves the reply ping on.
func ReplyTo(messageID string) MessageOption {
	return func(b *messageBuilder) {
		b.s.mu.Lock()
		defer b.s.mu.Unlock()
		m := b.m
		m.Type = MessageReply
		m.Reference = &MessageReference{MessageID: messageID, ChannelID: m.ChannelID, GuildID: m.GuildID}
		m.Referenced = nil
		if stored := b.s.messages[messageKey(m.ChannelID, messageID)]; stored != nil {
			r := stored.msg
			r.Referenced = nil // Discord nests one level only
			m.Referenced = &r
			if !slices.ContainsFunc(m.Mentions, func(u User) bool { return u.ID == r.Author.ID }) {
				m.Mentions = append(m.Mentions, r.Author)
			}
		}
	}
}

// WithMentions adds users to the message's mentions, registering them,
// without touching the content.
func WithMentions(users ...User) MessageOption {
	return func(b *messageBuilder) {
		b.s.mu.Lock()
		defer b.s.mu.Unlock()
		for _, u := range users {
			u = b.s.rememberUserLocked(u)
			if !slices.ContainsFunc(b.m.Mentions, func(x User) bool { return x.ID == u.ID }) {
				b.m.Mentions = append(b.m.Mentions, u)
			}
		}
	}
}

// WithMentionRoles adds role IDs to the message's mention_roles.
func WithMentionRoles(roleIDs ...string) MessageOption {
	return func(b *messageBuilder) {
		for _, id := range roleIDs {
			if !slices.Contains(b.m.MentionRoles, id) {
				b.m.MentionRoles = append(b.m.MentionRoles, id)
			}
		}
	}
}

// WithMember sets the author's guild member data (nickname, roles); a
// zero JoinedAt becomes the message's time.
func WithMember(m Member) MessageOption {
	return func(b *messageBuilder) {
		if m.JoinedAt.IsZero() {
			m.JoinedAt = b.m.Timestamp
		}
		if m.Roles == nil {
			m.Roles = []string{}
		}
		b.m.Member = &m
	}
}

// WithAttachment attaches a file whose bytes the fake serves at the
// attachment's URL (<URL>/attachments/<channel>/<id>/<name>), so a bot can
// download it.
func WithAttachment(name, contentType string, data []byte) MessageOption {
	return func(b *messageBuilder) {
		b.s.mu.Lock()
		defer b.s.mu.Unlock()
		b.m.Attachments = append(b.m.Attachments, b.s.storeFileLocked(b.m.ChannelID, name, contentType, data))
	}
}

// storeFileLocked keeps data for GET /attachments/… and describes it.
func (s *Server) storeFileLocked(channelID, name, contentType string, data []byte) Attachment {
	id := s.newIDLocked()
	path := "/attachments/" + channelID + "/" + id + "/" + name
	s.files[path] = storedFile{contentType: contentType, data: slices.Clone(data)}
	return Attachment{
		ID: id, Filename: name, ContentType: contentType, Size: len(data),
		URL: s.URL + path, ProxyURL: s.URL + path,
	}
}

type storedFile struct {
	contentType string
	data        []byte
}

func messageKey(channelID, messageID string) string { return channelID + "/" + messageID }

// PushMessageCreate dispatches m as MESSAGE_CREATE to every session and
// remembers it, so the bot can reply to, edit or react to it, and returns
// it as dispatched. Messages from the builders go out as built; for a
// hand-made one an empty ID gets a snowflake, a zero Timestamp the current
// time, nil Mentions and MentionRoles are derived from the content, and an
// unknown channel is registered (a guild text channel when GuildID is set,
// else a DM with the author). GuildID always follows the channel. Sessions
// without the GUILD_MESSAGES or DIRECT_MESSAGES intent do not get it;
// without MESSAGE_CONTENT they get it blanked. With no session yet, the
// event waits for the next READY.
func (s *Server) PushMessageCreate(m Message) Message {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.ChannelID == "" {
		s.t.Errorf("discordtest: PushMessageCreate: message has no ChannelID")
		return m
	}
	m.Author = s.rememberUserLocked(m.Author)
	ch := s.channels[m.ChannelID]
	if ch == nil {
		c := Channel{ID: m.ChannelID, Type: ChannelGuildText, GuildID: m.GuildID}
		if m.GuildID == "" {
			c.Type, c.Recipients = ChannelDM, []User{m.Author}
		}
		stored, err := s.addChannelLocked(c)
		if err != nil {
			s.t.Errorf("discordtest: PushMessageCreate: %v", err)
			return m
		}
		if c.Type == ChannelDM {
			s.dms[m.Author.ID] = c.ID
		}
		ch = &stored
	}
	m.GuildID = ch.GuildID
	if m.ID == "" {
		m.ID = s.newIDLocked()
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = s.clock().UTC()
	}
	if m.Mentions == nil && m.MentionRoles == nil {
		m.Mentions, m.MentionRoles, m.MentionEveryone = s.mentionsLocked(m.Content)
	}
	if m.GuildID != "" && m.Member == nil && !m.Author.Bot {
		m.Member = &Member{Roles: []string{}, JoinedAt: m.Timestamp}
	}
	m = normalizeMessage(m)
	s.messages[messageKey(m.ChannelID, m.ID)] = &storedMessage{msg: m, fromBot: m.Author.ID == s.BotUser.ID}
	s.dispatchLocked(messageEvent("MESSAGE_CREATE", m), true)
	s.changes.Changed()
	return m
}

// messageEvent is a MESSAGE_CREATE or MESSAGE_UPDATE of m.
func messageEvent(name string, m Message) event {
	intent := IntentGuildMessages
	if m.GuildID == "" {
		intent = IntentDirectMessages
	}
	return event{name: name, intent: intent, msg: &m}
}

// Push dispatches any event to every session: name is the "t" field
// ("MESSAGE_DELETE", "INTERACTION_CREATE", …) and data the "d" field, a
// value that marshals to JSON or raw JSON ([]byte, json.RawMessage). No
// intent filtering applies. With no session yet, the event waits for the
// next READY. Data that does not marshal fails the test.
func (s *Server) Push(name string, data any) {
	s.t.Helper()
	var raw json.RawMessage
	switch d := data.(type) {
	case []byte:
		raw = d
	case json.RawMessage:
		raw = d
	default:
		b, err := json.Marshal(d)
		if err != nil {
			s.t.Errorf("discordtest: Push %s: %v", name, err)
			return
		}
		raw = b
	}
	if !json.Valid(raw) {
		s.t.Errorf("discordtest: Push %s: data is not JSON: %s", name, raw)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dispatchLocked(event{name: name, data: raw}, true)
	s.changes.Changed()
}

// BotMention returns the content that mentions the bot, "<@id>".
func (s *Server) BotMention() string { return "<@" + s.BotUser.ID + ">" }
