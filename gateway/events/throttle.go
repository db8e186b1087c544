package events

import "strings"

// pending is a delta held back by the throttle: what the deltas of one
// block added since its last agent delta was sent.
type pending struct {
	b         *block // nil: nothing is held
	messageID string
	stream    string // StreamAssistant or StreamThinking
	key       string // "delta", or "argsDelta" for a toolCall block
	text      strings.Builder
}

// hold adds text to block b's held delta. What another block holds is
// sent first, so deltas never change places.
func (r *Run) hold(b *block, stream, key, text string) {
	if text == "" {
		return
	}
	if r.pend.b != nil && (r.pend.b != b || r.pend.stream != stream) {
		r.flushHeld()
	}
	if r.pend.b == nil {
		r.pend.b, r.pend.messageID, r.pend.stream, r.pend.key = b, r.msg.id, stream, key
	}
	r.pend.text.WriteString(text)
}

// flushHeld sends the held delta, if any, with the next seq. Every event
// that gets a seq calls it first (see next), so a held delta is sent
// before the event that follows it: a block's deltas before its
// block_stop, a response's before its message_stop, and all of them before
// a tool starts or the run ends.
func (r *Run) flushHeld() {
	p := &r.pend
	if p.b == nil {
		return
	}
	data := map[string]any{"phase": PhaseDelta, "messageId": p.messageID, "contentIndex": p.b.index, "blockType": p.b.typ}
	if p.b.typ == BlockToolCall {
		if p.b.toolName != "" {
			data["toolName"] = p.b.toolName
		}
		if p.b.toolCallID != "" {
			data["toolCallId"] = p.b.toolCallID
		}
	}
	data[p.key] = p.text.String()
	stream, tool := p.stream, p.b.typ == BlockToolCall
	*p = pending{}
	r.seq++
	o := r.agentOut(r.seq, stream, data)
	o.ToolStream = tool
	r.push(o)
	r.lastTick, r.ticked = r.now(), true
}

// tick sends what the throttle holds once it is due: the held agent
// delta, then the chat snapshot with that delta's seq. The first of a
// run's deltas goes at once; after that, at most one of each per
// Options.Throttle (openclaw-facts §1.11: 150 ms). A model that streams
// twenty tokens in a millisecond costs a client one agent delta and one
// chat delta, not twenty of each.
func (r *Run) tick() {
	now := r.now()
	if r.throttle > 0 && r.ticked && now.Sub(r.lastTick) < r.throttle {
		return
	}
	r.flushHeld()
	if r.chatWaiting() {
		r.chatDelta(r.seq, now)
	}
}
