package queue

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/prompt"
)

// The fixed text of the prompts below (openclaw-facts §3.4; OpenClaw's
// drain.ts and utils/queue-helpers.ts).
const (
	collectTitle = "[Queued messages while agent was busy]"
	// summaryLimit is the longest summary line, in UTF-16 code units (what
	// JavaScript's length counts), the ellipsis included.
	summaryLimit = 160
)

// Overflow is what a full queue dropped under the summarize policy: how
// many messages, and a summary line for each of the most recent (at most
// the cap; see Add).
type Overflow struct {
	// Dropped counts the dropped messages.
	Dropped int `json:"dropped,omitempty"`
	// Lines are their summary lines, oldest first.
	Lines []string `json:"lines,omitempty"`
}

// CollectPrompt builds the prompt of a collect-mode turn that answers
// several queued messages at once. Its blocks, joined by a blank line, are
// the title "[Queued messages while agent was busy]", the overflow block of
// OverflowPrompt when overflow.Dropped > 0, and one block per item,
// "---\nQueued #<i>\n<item>" with i counting from 1, trimmed:
//
//	[Queued messages while agent was busy]
//
//	[Queue overflow] Dropped 3 messages due to cap.
//	Summary:
//	- first dropped text…
//
//	---
//	Queued #1
//	<item 1>
//
//	---
//	Queued #2
//	<item 2>
//
// The items are prompts as prompt assembly built them: their channel text
// is already neutralised (a line of a message that starts "Queued #" or
// "[Queued" is escaped there), so CollectPrompt adds structure only and
// leaves them as they are. OpenClaw's newer source adds a "Queued message
// metadata" block to each item; openclaw-facts §3.4 has none, and neither
// does this.
func CollectPrompt(items []string, overflow Overflow) string {
	size := len(collectTitle)
	if overflow.Dropped > 0 {
		size += 64
		for _, line := range overflow.Lines {
			size += len(line) + 3
		}
	}
	for _, item := range items {
		size += len(item) + 24
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(collectTitle)
	if overflow.Dropped > 0 {
		b.WriteString("\n\n")
		writeOverflow(&b, overflow)
	}
	var num [20]byte
	for i, item := range items {
		// The block "---\nQueued #<i>\n<item>" trimmed: it starts with
		// "---", so only the item's trailing white space goes, and the
		// line break before an empty item.
		b.WriteString("\n\n---\nQueued #")
		b.Write(strconv.AppendInt(num[:0], int64(i+1), 10))
		if item = strings.TrimRightFunc(item, isJSSpace); item != "" {
			b.WriteByte('\n')
			b.WriteString(item)
		}
	}
	return b.String()
}

// OverflowPrompt is the prompt of the synthetic turn that reports an
// overflow in the modes other than collect, or "" when nothing was
// dropped:
//
//	[Queue overflow] Dropped 1 message due to cap.
//	Summary:
//	- the dropped text
//
// The "Summary:" list appears only when there are summary lines. Each line
// goes through SummaryLine, so a hand-built Overflow cannot break the
// prompt's structure either.
func OverflowPrompt(overflow Overflow) string {
	if overflow.Dropped <= 0 {
		return ""
	}
	var b strings.Builder
	writeOverflow(&b, overflow)
	return b.String()
}

func writeOverflow(b *strings.Builder, o Overflow) {
	b.WriteString("[Queue overflow] Dropped ")
	b.WriteString(strconv.Itoa(o.Dropped))
	if o.Dropped == 1 {
		b.WriteString(" message due to cap.")
	} else {
		b.WriteString(" messages due to cap.")
	}
	if len(o.Lines) == 0 {
		return
	}
	b.WriteString("\nSummary:")
	for _, line := range o.Lines {
		b.WriteString("\n- ")
		b.WriteString(SummaryLine(line))
	}
}

// SummaryLine turns a dropped message's text into its summary line: white
// space collapsed to single spaces and trimmed, then, when longer than 160
// UTF-16 code units, cut to 159 (never inside a character), trimmed at the
// end and followed by "…", so the line is at most 160 units long, as
// OpenClaw's buildQueueSummaryLine does.
//
// The text comes from a channel, so it is also neutralised with
// prompt.NeutralizeLine: no line break survives (every control character
// becomes a space), role tags are parenthesised, and a start that reads as a
// marker ("System:", "Queued #", a heading) is escaped with a backslash.
// The line is only ever written after "- " in the overflow block, so it
// cannot start a line of the prompt: without line breaks it cannot forge a
// "System:" line, a "---" / "Queued #<i>" item or a code fence; the escape
// is defence in depth. SummaryLine is idempotent.
func SummaryLine(text string) string {
	s := prompt.NeutralizeLine(text)
	if len(s) <= summaryLimit { // bytes ≥ UTF-16 units
		return s
	}
	units, cut := 0, -1
	for i, r := range s {
		n := utf16Units(r)
		if cut < 0 && units+n > summaryLimit-1 {
			cut = i
		}
		units += n
		if units > summaryLimit {
			break
		}
	}
	if units <= summaryLimit {
		return s
	}
	return strings.TrimRightFunc(s[:cut], isJSSpace) + "…"
}

// utf16Units is how many UTF-16 code units r takes.
func utf16Units(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}

// CrossChannel reports whether queued messages with these routes must be
// answered one by one rather than collected into one turn (OpenClaw's
// hasCrossChannelItems with resolveCrossChannelKey, openclaw-facts §3.3).
// A route with no field set is unkeyed; a route without a Channel or a To
// cannot be routed, which makes the set cross-channel at once; other routes
// are keyed by channel, to, account id and thread id. The set is
// cross-channel when it holds two different keys, or keyed and unkeyed
// routes together.
func CrossChannel(routes []core.Route) bool {
	var first core.Route
	keyed, unkeyed, differ := false, false, false
	for _, r := range routes {
		switch {
		case r == core.Route{}:
			unkeyed = true
		case r.Channel == "" || r.To == "":
			return true
		case !keyed:
			keyed, first = true, r
		case r != first:
			differ = true
		}
	}
	return keyed && (unkeyed || differ)
}
