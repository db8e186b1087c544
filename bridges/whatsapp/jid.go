package whatsapp

import (
	"context"
	"fmt"
	"strings"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

// e164 returns "+<digits>" for a phone-number JID, "" for any other.
func e164(jid types.JID) string {
	if jid.Server != types.DefaultUserServer || jid.User == "" {
		return ""
	}
	return "+" + jid.User
}

// phoneOf returns the phone-number JID of a user: jid itself when it is
// one, else alt when that is one, else what the store's LID map knows
// (openclaw-facts §2.4: DMs are keyed by E.164 "taken from the JID if
// needed"). ok is false when no phone number is known.
func phoneOf(ctx context.Context, dev *store.Device, jid, alt types.JID) (types.JID, bool) {
	jid = jid.ToNonAD()
	if jid.Server == types.DefaultUserServer {
		return jid, true
	}
	if alt = alt.ToNonAD(); alt.Server == types.DefaultUserServer {
		return alt, true
	}
	if jid.Server == types.HiddenUserServer && dev != nil && dev.LIDs != nil {
		if pn, err := dev.LIDs.GetPNForLID(ctx, jid); err == nil && !pn.IsEmpty() {
			return pn.ToNonAD(), true
		}
	}
	return jid, false
}

// ParseTarget turns a delivery target into a JID: "+15551234567" (or the
// digits alone) is a phone number; anything with "@" is a JID
// ("120363…@g.us", "…@lid").
func ParseTarget(to string) (types.JID, error) {
	to = strings.TrimSpace(to)
	if strings.Contains(to, "@") {
		jid, err := types.ParseJID(to)
		if err == nil && (jid.User == "" || strings.Count(to, "@") != 1 || strings.Trim(jid.User, "0123456789-") != "") {
			err = fmt.Errorf("want <digits>@<server>")
		}
		if err == nil {
			switch jid.Server {
			case types.DefaultUserServer, types.GroupServer, types.HiddenUserServer, types.NewsletterServer:
			default:
				err = fmt.Errorf("unknown server %q", jid.Server)
			}
		}
		if err != nil {
			return types.EmptyJID, fmt.Errorf("whatsapp: target %q is not a JID (%v); use +<phone number> or a chat JID such as 120363…@g.us", to, err)
		}
		return jid, nil
	}
	digits := strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return r
		case r == '+' || r == ' ' || r == '-' || r == '(' || r == ')' || r == '.':
			return -1
		}
		return 'x'
	}, to)
	if len(digits) < 7 || len(digits) > 15 || strings.ContainsRune(digits, 'x') || strings.HasPrefix(digits, "0") {
		return types.EmptyJID, fmt.Errorf("whatsapp: target %q is neither a phone number in international form (+15551234567) nor a JID", to)
	}
	return types.NewJID(digits, types.DefaultUserServer), nil
}

// NormalizePhone returns an allowlist entry in E.164 form when it is a
// phone number written another way ("15551234567", "+1 555-123-4567"),
// and the entry unchanged otherwise ("*", a JID).
func NormalizePhone(entry string) string {
	e := strings.TrimSpace(entry)
	if e == "" || e == "*" || strings.Contains(e, "@") {
		return e
	}
	if jid, err := ParseTarget(strings.TrimPrefix(e, Channel+":")); err == nil {
		return "+" + jid.User
	}
	return e
}
