package whatsapp

import (
	"context"
	"errors"
	"strings"

	"github.com/switchboardhq/switchboard/bridges"
)

// maxMediaMB caps mediaMaxMb.
const maxMediaMB = 500

// Descriptor registers the WhatsApp bridge: channels.whatsapp, targets
// "whatsapp:+<number>" or "whatsapp:<chat JID>", every chat but a group
// (…@g.us) direct. Its account is linked from the phone (Linkable), and a
// linked device is exclusive. newClient builds the WhatsApp clients; nil
// means whatsmeow's (tests pass a fake).
func Descriptor(newClient NewClientFunc) bridges.Descriptor {
	return bridges.Descriptor{
		Channel: Channel,
		Label:   "WhatsApp",
		New: func(section bridges.Section, env bridges.Env) (bridges.Bridge, error) {
			return newFromSection(section, env, newClient)
		},
		ParseChat:  parseChat,
		IsDirect:   isDirectChat,
		TargetHelp: "whatsapp:+<number>, whatsapp:<group JID>",
		Linkable:   true,
		Exclusive:  func(bridges.Section) bool { return true },
	}
}

// newFromSection builds the bridge from channels.whatsapp: it opens the
// device store under the state directory, which the bridge then owns and
// closes in Close.
func newFromSection(section bridges.Section, env bridges.Env, newClient NewClientFunc) (bridges.Bridge, error) {
	c, err := bridges.SectionAs[Config](Channel, section)
	if err != nil {
		return nil, err
	}
	if env.StateDir == "" {
		return nil, errors.New("whatsapp: the bridge needs a state directory for its device store")
	}
	devices, err := OpenStore(context.Background(), StorePath(env.StateDir))
	if err != nil {
		return nil, err
	}
	opts := c.Options(env.AgentID, env.Session)
	opts.Store = devices
	opts.NewClient = newClient
	opts.MentionPatterns = env.MentionPatterns
	opts.MediaDir = env.MediaDir
	opts.Log = env.Logger()
	if env.Now != nil {
		opts.Now = env.Now
	}
	b, err := New(opts)
	if err != nil {
		_ = devices.Close()
		return nil, err
	}
	b.ownsStore = true
	return b, nil
}

// parseChat checks a phone number or chat JID and keeps it as written:
// the bridge resolves it when it sends.
func parseChat(chat string) (to, thread string, err error) {
	if _, err := ParseTarget(chat); err != nil {
		return "", "", errors.New(strings.TrimPrefix(err.Error(), "whatsapp: "))
	}
	return chat, "", nil
}

// isDirectChat reports every chat but a group.
func isDirectChat(to string) bool { return !strings.HasSuffix(to, "@g.us") }
