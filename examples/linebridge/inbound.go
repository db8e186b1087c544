package linebridge

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// maxNameLen is the longest name HELLO accepts.
const maxNameLen = 32

// errHello is what a client that does not start with a valid HELLO is
// told, before the bridge hangs up.
var errHello = errors.New("say HELLO <name> first: 1 to 32 letters, digits, '.', '_' or '-'")

// parseHello reads the first line of a connection, "HELLO <name>" (the
// keyword in any case), and returns the name as written.
func parseHello(line string) (string, error) {
	word, name, _ := strings.Cut(strings.TrimSpace(line), " ")
	name = strings.TrimSpace(name)
	if !strings.EqualFold(word, "HELLO") || name == "" || len(name) > maxNameLen ||
		strings.TrimFunc(name, nameRune) != "" {
		return "", errHello
	}
	return name, nil
}

// nameRune reports the runes a name may have. ':' is not one of them: an
// allowFrom entry "line:ada" means ada, so a name with a colon could not
// be listed.
func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

// cleanLine is the text of a received line: valid UTF-8, without the line
// end and surrounding blanks. Empty means nothing to submit.
func cleanLine(line string) string {
	return strings.TrimSpace(strings.ToValidUTF8(line, "\uFFFD"))
}

// normalizer turns lines into what the sink takes. It holds the settings
// session keys follow; its methods are pure.
type normalizer struct {
	accountID, agentID string
	session            core.SessionConfig
}

// line is one message as the connection read it.
type line struct {
	chat string    // the connection's chat id (Route.To)
	name string    // the name from HELLO, as written
	seq  int       // the message's number on the connection, from 1
	text string    // cleaned, not empty
	at   time.Time // when the bridge read it: the protocol carries no time
}

// inbound normalizes one line. The sender id is the name in lower case,
// so "Ada" and "ada" are one person to allowFrom and to session keys.
// There are no groups, mentions or replies on this platform.
func (n normalizer) inbound(l line) bridges.Inbound {
	sender := strings.ToLower(l.name)
	in := &core.Inbound{
		Kind:     core.InboundUser,
		AgentID:  n.agentID,
		ChatType: core.ChatDirect,
		SessionKey: core.BuildPeerSessionKey(core.PeerKeyParams{
			AgentID: n.agentID, Channel: Channel, AccountID: n.accountID, Kind: core.ChatDirect,
			PeerID: sender, DMScope: n.session.DMScope, IdentityLinks: n.session.IdentityLinks,
		}),
		Route:     core.Route{Channel: Channel, AccountID: core.AccountID(n.accountID), To: core.ChatID(l.chat)},
		Sender:    core.Sender{ID: sender, Name: l.name},
		MessageID: core.MessageID(strconv.Itoa(l.seq)),
		Timestamp: l.at.UnixMilli(),
		Body:      l.text,
	}
	// A connection id is never reused, so chat and number name this
	// delivery for good.
	return bridges.Inbound{Message: in, DedupeKey: Channel + ":" + n.accountID + ":" + l.chat + ":" + string(in.MessageID)}
}
