package bridges

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/suggest"
)

// Registry is the set of bridges a program knows, one Descriptor per
// channel. It is a plain value the program builds (there is no
// package-level registry); read-only once built, so safe for concurrent
// use. It implements core.Targets from what each bridge declares.
type Registry []Descriptor

var _ core.Targets = Registry(nil)

// Lookup returns the descriptor of channel (any case).
func (r Registry) Lookup(channel string) (Descriptor, bool) {
	channel = strings.ToLower(channel)
	for _, d := range r {
		if d.Channel == channel {
			return d, true
		}
	}
	return Descriptor{}, false
}

// Channels lists the channel names in registry order.
func (r Registry) Channels() []string {
	out := make([]string, len(r))
	for i, d := range r {
		out[i] = d.Channel
	}
	return out
}

// Label is the display name of channel, or channel itself when no bridge
// provides it.
func (r Registry) Label(channel string) string {
	if d, ok := r.Lookup(channel); ok {
		return d.DisplayName()
	}
	return channel
}

// Validate reports descriptors a registry cannot hold: an empty,
// upper-case or repeated channel name, or no constructor.
func (r Registry) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, d := range r {
		switch {
		case d.Channel == "" || d.Channel != strings.ToLower(d.Channel) || strings.ContainsAny(d.Channel, ":# \t"):
			errs = append(errs, fmt.Errorf("bridge %d: channel name %q must be lower case, without ':', '#' or spaces", i, d.Channel))
		case seen[d.Channel]:
			errs = append(errs, fmt.Errorf("bridge %d: channel %q is registered twice", i, d.Channel))
		}
		seen[d.Channel] = true
		if d.New == nil {
			errs = append(errs, fmt.Errorf("bridge %q has no constructor (Descriptor.New)", d.Channel))
		}
	}
	return errors.Join(errs...)
}

// ParseTarget implements core.Targets: "<channel>[#<accountId>]:<chat>",
// the chat part read by the channel's ParseChat.
func (r Registry) ParseTarget(target string) (core.Route, error) {
	return parseTarget(target, r.examples(), r.Resolve)
}

// parseTarget splits "<channel>[#<accountId>]:<chat>" and resolves it.
func parseTarget(target, examples string, resolve func(channel, accountID, chat string) (core.Route, error)) (core.Route, error) {
	channel, chat, ok := strings.Cut(strings.TrimSpace(target), ":")
	if !ok || channel == "" || chat == "" {
		return core.Route{}, fmt.Errorf("target %q is not <channel>:<chat> (%s)", target, examples)
	}
	channel, account, _ := strings.Cut(channel, "#")
	route, err := resolve(channel, account, chat)
	if err != nil {
		return core.Route{}, fmt.Errorf("target %q: %w", target, err)
	}
	return route, nil
}

// Resolve implements core.Targets.
func (r Registry) Resolve(channel, accountID, chat string) (core.Route, error) {
	d, ok := r.Lookup(channel)
	if !ok {
		if s := suggest.Closest(channel, r.Channels()); s != "" {
			return core.Route{}, fmt.Errorf("no bridge provides channel %q (did you mean %q? known: %s)", channel, s, r.known())
		}
		return core.Route{}, fmt.Errorf("no bridge provides channel %q (known: %s)", channel, r.known())
	}
	route := core.Route{Channel: core.ChannelName(d.Channel), AccountID: core.AccountID(accountID), To: core.ChatID(strings.TrimSpace(chat))}
	if d.ParseChat != nil {
		to, thread, err := d.ParseChat(string(route.To))
		if err != nil {
			return core.Route{}, fmt.Errorf("%s chat %q: %w (write %s)", d.DisplayName(), chat, err, d.TargetHelp)
		}
		route.To, route.ThreadID = core.ChatID(to), thread
	}
	// Any Unicode space, not only ASCII's: a no-break space pasted from a
	// chat app is as unusable in a chat id as a plain one.
	if route.To == "" || strings.ContainsFunc(string(route.To), unicode.IsSpace) {
		return core.Route{}, fmt.Errorf("%s chat %q is not a usable chat id", d.DisplayName(), chat)
	}
	return route, nil
}

// IsDirect implements core.Targets; a channel no bridge provides has no
// direct chats it can name.
func (r Registry) IsDirect(route core.Route) bool {
	d, ok := r.Lookup(string(route.Channel))
	return ok && d.IsDirect != nil && d.IsDirect(string(route.To))
}

// TargetHelp lists how targets are written on every channel, in registry
// order, joined by "; ".
func (r Registry) TargetHelp() string {
	var parts []string
	for _, d := range r {
		if d.TargetHelp != "" {
			parts = append(parts, d.TargetHelp)
		}
	}
	return strings.Join(parts, "; ")
}

func (r Registry) known() string {
	if len(r) == 0 {
		return "none"
	}
	return strings.Join(r.Channels(), ", ")
}

func (r Registry) examples() string {
	if h := r.TargetHelp(); h != "" {
		return "for example " + h
	}
	return "no channel is known"
}
