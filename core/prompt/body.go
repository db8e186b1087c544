package prompt

import (
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// State is what Body needs besides the message: the session's situation
// and the events queued for it.
type State struct {
	// IsNewSession reports the first turn of a session: a bare /new or
	// /reset becomes BareSessionResetPrompt, and thread context is shown.
	IsNewSession bool
	// AbortedLastRun adds AbortHint; the caller clears the flag when
	// Result.ClearedAbort says the hint was given.
	AbortedLastRun bool
	// SystemEvents are the events drained for this session, oldest first.
	SystemEvents []SystemEvent
	// Now is the clock for events without a timestamp; nil means time.Now.
	Now func() time.Time
	// Location is the zone timestamps are shown in; nil means local time.
	Location *time.Location
}

// Result is the assembled user prompt.
type Result struct {
	// Text is the user message sent to the model.
	Text string
	// ThinkLevel is the thinking level the message's first word asked for
	// ("low", "medium", "high", "xhigh"), or "".
	ThinkLevel string
	// ClearedAbort reports that the abort hint was given, so the session's
	// aborted flag should now be cleared.
	ClearedAbort bool
	// ResetPrompt reports that the body became BareSessionResetPrompt: the
	// message is Switchboard's, not the user's words.
	ResetPrompt bool
}

// Body assembles the user prompt of a turn (seed 004 phase A):
//
//  1. a bare /new or /reset on a new session becomes BareSessionResetPrompt;
//  2. the untrusted metadata blocks (UntrustedPrefix) go before the body;
//  3. AbortHint when the previous run was aborted;
//  4. the system event lines (FormatSystemEvents) come first of all;
//  5. in.UntrustedContext is appended under UntrustedContextHeader;
//  6. on a new session, thread history (or else the thread starter) under
//     ThreadHistoryNote or ThreadStarterNote;
//  7. the media note (MediaNote) and ReplyMediaHint;
//  8. a thinking-level word opening the message is removed and returned.
//
// The parts are laid out as the seed's example shows them, joined by blank
// lines: system events, abort hint, thread context, untrusted blocks, media
// note, the message, untrusted context. Switchboard's own lines (events and
// hints) thus come before any channel text, and the untrusted blocks sit
// right above the message they describe.
//
// For a user message, the body, thread context and untrusted context are
// neutralised (see the package documentation). The body of a heartbeat,
// cron or system turn is Switchboard's (or the operator's) and is kept as
// it is.
func Body(in *core.Inbound, st State) Result {
	if in == nil {
		in = &core.Inbound{}
	}
	var res Result
	body := in.Body
	switch {
	case st.IsNewSession && isBareReset(body):
		body = BareSessionResetPrompt
		res.ResetPrompt = true
	case in.EffectiveKind() == core.InboundUser:
		res.ThinkLevel, body = ExtractThinkLevel(body)
		body = jsTrim(neutralizeRaw(body))
	default:
		body = jsTrim(stripNUL(body))
	}

	threadNote := ""
	blocksFrom := in
	if st.IsNewSession {
		if h := jsTrim(neutralizeRaw(in.ThreadHistory)); h != "" {
			threadNote = ThreadHistoryNote + "\n" + h
			// The history already holds the thread's first message.
			withoutStarter := *in
			withoutStarter.ThreadStarter = ""
			blocksFrom = &withoutStarter
		} else if s := jsTrim(neutralizeRaw(in.ThreadStarter)); s != "" {
			threadNote = ThreadStarterNote + "\n" + s
		}
	}

	b := make([]byte, 0, 1024+len(body))
	sep := func() {
		if len(b) > 0 {
			b = append(b, "\n\n"...)
		}
	}
	if events := FormatSystemEvents(st.SystemEvents, st.Now, st.Location); events != "" {
		b = append(b, events...)
	}
	if st.AbortedLastRun {
		sep()
		b = append(b, AbortHint...)
		res.ClearedAbort = true
	}
	if threadNote != "" {
		sep()
		b = append(b, threadNote...)
	}
	mark := len(b)
	if mark > 0 {
		b = append(b, "\n\n"...)
	}
	b = appendUntrustedPrefix(b, blocksFrom, UntrustedOptions{
		IsNewSession: st.IsNewSession,
		Location:     st.Location,
	})
	if len(b) == mark+2 {
		b = b[:mark] // no blocks
	}
	if note := MediaNote(in.Media); note != "" {
		sep()
		b = append(b, note...)
		b = append(b, '\n')
		b = append(b, ReplyMediaHint...)
	}
	if body != "" {
		sep()
		b = append(b, body...)
	}
	if ctx := untrustedContext(in.UntrustedContext); ctx != "" {
		sep()
		b = append(b, ctx...)
	}
	res.Text = string(b)
	return res
}

// isBareReset reports a message that is only /new or /reset (a Telegram
// "@bot" suffix allowed).
func isBareReset(body string) bool {
	t := strings.ToLower(jsTrim(body))
	cmd, bot, _ := strings.Cut(t, "@")
	if bot != "" && strings.IndexFunc(bot, isJSSpace) >= 0 {
		return false
	}
	return cmd == "/new" || cmd == "/reset"
}

// untrustedContext renders the channel's further context lines under
// UntrustedContextHeader (OpenClaw's appendUntrustedContext), each entry
// neutralised; "" when no entry has text.
func untrustedContext(entries []string) string {
	var b strings.Builder
	for _, e := range entries {
		e = jsTrim(neutralizeRaw(e))
		if e == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(UntrustedContextHeader)
		}
		b.WriteByte('\n')
		b.WriteString(e)
	}
	return b.String()
}
