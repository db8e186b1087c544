package events

import (
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/reply"
)

// paragraph separates the text of two model responses in the chat
// snapshot, and two replies in a final.
const paragraph = "\n\n"

// appendVisible adds text of message m that may be shown to the chat
// snapshot. The first text of a response starts a new paragraph.
func (r *Run) appendVisible(m *message, s string) {
	if s == "" {
		return
	}
	if !m.inChat {
		m.inChat = true
		m.chatStart = len(r.buf)
		if len(r.buf) > 0 {
			r.buf = append(r.buf, paragraph...)
		}
	}
	r.buf = append(r.buf, s...)
	r.dirty = true
}

// withdraw removes message m's text from the chat snapshot: it turned out
// to be a silent reply after all.
func (r *Run) withdraw(m *message) {
	if !m.inChat {
		return
	}
	r.buf = r.buf[:m.chatStart]
	m.inChat = false
	r.dirty = true
}

// display is the chat snapshot as clients see it: inline directive tags
// such as [[reply_to_current]] are not shown (openclaw-facts §1.11).
func (r *Run) display() string {
	s, _ := reply.ParseTags(string(r.buf))
	return s
}

// The byte budget of a run's chat deltas. Each delta repeats the whole
// text so far, so at a fixed rate a reply of N bytes would cost every
// client O(N²) bytes. A throttled delta goes out only while the snapshots
// sent, this one included, stay within chatBudgetFactor times the text's
// length plus chatBudgetSlack: short replies stream at the throttle's
// pace, a long one ever more sparsely (each delta once the text has grown
// by about 1/chatBudgetFactor of what was sent), and the total stays
// O(N). The flushes before a tool start and before the final are not
// counted against it.
const (
	chatBudgetFactor = 12
	chatBudgetSlack  = 32 << 10
)

// withinBudget reports whether a delta of the current text fits the chat
// byte budget. The raw buffer's length stands for the display text's,
// which is never longer.
func (r *Run) withinBudget() bool {
	n := len(r.buf)
	return r.sentBytes+n <= chatBudgetFactor*n+chatBudgetSlack
}

// chatWaiting reports a chat delta the throttle holds: the snapshot
// changed, the run shows chat, and the byte budget allows a delta.
func (r *Run) chatWaiting() bool {
	return r.dirty && !r.hideChat && r.withinBudget()
}

// chatDelta sends the snapshot as a delta with seq if it changed since the
// last delta, whatever the throttle says: a due delta (see tick), or the
// flush before a tool start and before the final.
func (r *Run) chatDelta(seq int64, now time.Time) {
	if !r.dirty || r.hideChat {
		return
	}
	r.dirty = false
	text := r.display()
	if text == r.sent {
		return
	}
	c := &ChatEvent{
		RunID: r.runID, SessionKey: r.sessionKey, Seq: seq, State: StateDelta,
		Message: newChatMessage(text, now.UnixMilli()),
	}
	if rest, ok := strings.CutPrefix(text, r.sent); ok {
		c.DeltaText = rest
	} else {
		c.DeltaText, c.Replace = text, true
	}
	r.sent, r.lastTick, r.ticked = text, now, true
	r.sentBytes += len(text)
	r.push(Out{Event: EventChat, Chat: c, DropIfSlow: true})
}

// chatMessage is the message of a terminal chat event: nil when there is
// no text to show.
func (r *Run) chatMessage(text string, ts int64) *ChatMessage {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return newChatMessage(text, ts)
}

func newChatMessage(text string, ts int64) *ChatMessage {
	return &ChatMessage{Role: "assistant", Content: []ChatContent{{Type: "text", Text: text}}, Timestamp: ts}
}
