package queue

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Config is the messages.queue section of the configuration: what happens to
// a message that arrives while its session is already running a turn.
//
// The zero value means the defaults, field by field, so a program that
// embeds Switchboard may leave any field unset; DefaultConfig spells them
// out for the configuration file and its JSON Schema.
type Config struct {
	// Mode decides what a message does when it arrives while its session is
	// busy with a turn. collect (default): queue it, and when the turn ends
	// answer everything queued in one turn. followup: queue it, and answer
	// each queued message in a turn of its own. steer: hand it to the running
	// turn, which reads it after its current tool call; when the turn cannot
	// take it (not streaming yet, or compacting) queue it as followup does.
	// steer-backlog: steer it and also queue it, which can look like a
	// duplicate reply. interrupt: abort the running turn and answer this
	// message now. Aliases: steering, queue and queued mean steer; follow-ups
	// and followups mean followup; coalesce means collect; steer+backlog and
	// steer_backlog mean steer-backlog; interrupts and abort mean interrupt.
	// A user can change it for their session by sending "/queue <mode>".
	Mode Mode `json:"mode,omitempty"`
	// ByChannel sets Mode per channel, keyed by the channel name in lower
	// case (telegram, slack, discord, whatsapp, webchat); it wins over Mode.
	ByChannel map[string]Mode `json:"byChannel,omitempty"`
	// DebounceMs is how long, in milliseconds, a session's queue must be
	// quiet before it is answered: each newly queued message restarts the
	// wait, so a burst of messages is answered together. Default 1000; 0
	// answers as soon as the running turn ends.
	DebounceMs *int `json:"debounceMs,omitempty" min:"0"`
	// DebounceMsByChannel sets DebounceMs per channel, keyed by the channel
	// name in lower case; it wins over DebounceMs. Values are milliseconds,
	// at least 0.
	DebounceMsByChannel map[string]int `json:"debounceMsByChannel,omitempty"`
	// Cap is the most messages one session's queue holds; Drop decides what
	// happens to the next one. Default 20.
	Cap int `json:"cap,omitempty" min:"1"`
	// Drop decides what happens when a message arrives at a full queue.
	// summarize (default): drop the oldest queued message, but keep a
	// one-line summary of it that the next turn sees. old: drop the oldest
	// queued message; the next turn is told how many were dropped. new:
	// refuse the arriving message and tell its sender. Nothing is dropped
	// without someone being told. Aliases: summary means summarize, oldest
	// means old, newest means new.
	Drop DropPolicy `json:"drop,omitempty"`
	// Ack reacts to a message that had to wait behind a busy turn with an
	// acknowledgement (a 👀 reaction on channels that support reactions),
	// so the sender knows it arrived and will be answered. Default false.
	Ack bool `json:"ack,omitempty"`
}

// DefaultConfig returns the queue settings used when the configuration file
// does not say otherwise: mode collect, debounce 1000 ms, cap 20, drop
// summarize, no acknowledgement.
func DefaultConfig() Config {
	debounce := int(DefaultDebounce.Milliseconds())
	return Config{
		Mode:       DefaultMode,
		DebounceMs: &debounce,
		Cap:        DefaultCap,
		Drop:       DefaultDrop,
	}
}

// Validate checks what the struct tags cannot: DebounceMs (a pointer, so
// that 0 differs from unset) and the per-channel debounces are at least 0,
// and the per-channel maps are keyed by lower-case channel names with set
// values, since Resolve looks channels up in lower case.
func (c Config) Validate() error {
	var errs []error
	if c.DebounceMs != nil && *c.DebounceMs < 0 {
		errs = append(errs, core.FieldErrorf("debounceMs", fmt.Sprintf("must be at least 0 (got %d)", *c.DebounceMs)))
	}
	for _, ch := range sortedKeys(c.ByChannel) {
		path := "byChannel." + ch
		if err := checkChannelKey(path, ch); err != nil {
			errs = append(errs, err)
		}
		if c.ByChannel[ch].canonical() == "" {
			errs = append(errs, core.FieldErrorf(path, "must be one of ", strings.Join(modeSpellings[:len(modes)], ", ")))
		}
	}
	for _, ch := range sortedKeys(c.DebounceMsByChannel) {
		path := "debounceMsByChannel." + ch
		if err := checkChannelKey(path, ch); err != nil {
			errs = append(errs, err)
		}
		if v := c.DebounceMsByChannel[ch]; v < 0 {
			errs = append(errs, core.FieldErrorf(path, fmt.Sprintf("must be at least 0 (got %d)", v)))
		}
	}
	return errors.Join(errs...)
}

// checkChannelKey rejects a channel key Resolve would never match.
func checkChannelKey(path, ch string) error {
	if want := strings.ToLower(strings.TrimSpace(ch)); want != ch || ch == "" {
		if want == "" {
			return core.FieldErrorf(path, "a channel name is required")
		}
		return core.FieldErrorf(path, fmt.Sprintf("write the channel name in lower case: %q", want))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
