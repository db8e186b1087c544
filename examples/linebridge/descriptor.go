package linebridge

import (
	"errors"
	"strings"

	"github.com/switchboardhq/switchboard/bridges"
)

// Channel is the bridge's channel name: its section under channels:, and
// the Route.Channel of everything it receives and sends.
const Channel = "line"

// Descriptor registers the line bridge: channels.line, targets
// "line:<chat>" where chat is the id a connection was welcomed with, and
// every chat direct. Its functions do no IO and are safe for concurrent
// use.
func Descriptor() bridges.Descriptor {
	return bridges.Descriptor{
		Channel:    Channel,
		Label:      "Line chat",
		New:        newFromSection,
		ParseChat:  parseChat,
		IsDirect:   isDirect,
		TargetHelp: "line:<chat> (the id the bridge sends in WELCOME, e.g. line:5f2c91aa-1)",
		// Exclusive stays nil: the operating system already lets one
		// process listen on an address, and a second one does not steal
		// messages, it retries listening (transient-disconnect).
	}
}

// newFromSection builds the bridge from channels.line and what the host
// provides. It validates and does no network IO: Start listens.
func newFromSection(section bridges.Section, env bridges.Env) (bridges.Bridge, error) {
	c, err := bridges.SectionAs[Config](Channel, section)
	if err != nil {
		return nil, err
	}
	// The configuration loader validates too; a program that builds its
	// Config in Go gets the same checks here.
	if err := c.Validate(); err != nil {
		return nil, err
	}
	opts := c.Options()
	opts.AgentID, opts.Session = env.AgentID, env.Session
	opts.Now, opts.Log = env.Now, env.Logger()
	return New(opts)
}

// parseChat reads a chat id as WELCOME names it: "<prefix>-<n>", the
// prefix in hex. No thread exists on this platform.
func parseChat(chat string) (to, threadID string, err error) {
	if !validChatID(chat) {
		return "", "", errors.New("not a connection id such as 5f2c91aa-1")
	}
	return chat, "", nil
}

// isDirect reports a direct chat: every connection is one person.
func isDirect(to string) bool { return validChatID(to) }

// validChatID reports whether s has the form of a connection id.
func validChatID(s string) bool {
	prefix, n, ok := strings.Cut(s, "-")
	return ok && prefix != "" && n != "" &&
		strings.Trim(prefix, "0123456789abcdef") == "" && strings.Trim(n, "0123456789") == ""
}
