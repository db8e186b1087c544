package events

import (
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/reply"
)

// message is the state of one streaming model response.
type message struct {
	id string
	// filter holds back a leading NO_REPLY (openclaw-facts §5.2). It spans
	// the response's text blocks, because the reply is judged on their
	// concatenation (core.Content.Text).
	filter reply.StreamFilter
	// raw is the response's text as the model wrote it; shownFrom is where
	// the visible text starts after a withdrawal.
	raw       strings.Builder
	shownFrom int
	blocks    []*block
	// lastText is the text block text was last pushed for; text the filter
	// releases late is shown there.
	lastText *block
	// inChat reports that the response's text is in the chat snapshot,
	// from byte chatStart on.
	inChat    bool
	chatStart int
}

// block is the state of one content block of a response.
type block struct {
	index int
	typ   string
	// announced: block_start was sent. A text block is announced with its
	// first visible text, so a silent reply has no block at all.
	announced bool
	// ended: the model closed the block; stopped: block_stop was sent.
	ended, stopped bool
	toolName       string
	toolCallID     string
}

// block returns the block of m at index with type typ, creating it. fresh
// reports a start or delta event, which opens a new block if the old one
// ended: a provider that reuses an index gets a second block_start rather
// than a delta after block_stop.
func (m *message) block(index int, typ string, fresh bool) *block {
	for i, b := range m.blocks {
		if b.index == index && b.typ == typ {
			if fresh && b.ended {
				nb := &block{index: index, typ: typ}
				m.blocks[i] = nb
				return nb
			}
			return b
		}
	}
	b := &block{index: index, typ: typ}
	m.blocks = append(m.blocks, b)
	return b
}

// openMessage starts a new response: a new messageId.
func (r *Run) openMessage(am *core.AssistantMessage) {
	r.msgCount++
	r.msg = &message{id: r.runID + ":" + strconv.Itoa(r.msgCount)}
	data := map[string]any{"phase": PhaseMessageStart, "messageId": r.msg.id}
	if am != nil && am.Model != "" {
		model := am.Model
		if am.Provider != "" {
			model = am.Provider + "/" + am.Model
		}
		data["model"] = model
	}
	r.push(r.agentOut(r.next(), StreamAssistant, data))
}

// streamEvent translates one stream event of the current response.
func (r *Run) streamEvent(ev *core.AssistantMessageEvent) {
	m := r.msg
	idx := ev.ContentIndex
	switch ev.Type {
	case core.AssistantEventTextStart:
		m.lastText = m.block(idx, BlockText, true)
	case core.AssistantEventTextDelta:
		b := m.block(idx, BlockText, true)
		m.lastText = b
		m.raw.WriteString(ev.Delta)
		r.showText(b, m.filter.Push(ev.Delta))
	case core.AssistantEventTextEnd:
		b := m.block(idx, BlockText, false)
		b.ended = true
		if reply.IsSilent(m.raw.String()) {
			r.withdrawText(b)
		}
		r.stopBlock(b)

	case core.AssistantEventThinkingStart:
		r.announce(m.block(idx, BlockThinking, true))
	case core.AssistantEventThinkingDelta:
		b := m.block(idx, BlockThinking, true)
		r.announce(b)
		// Reasoning goes on the thinking stream, as OpenClaw sends it, so a
		// client that appends every assistant delta never shows it as reply.
		// Like text, it carries only what it adds.
		r.hold(b, StreamThinking, "delta", ev.Delta)
	case core.AssistantEventThinkingEnd:
		b := m.block(idx, BlockThinking, false)
		r.announce(b)
		b.ended = true
		r.stopBlock(b)

	case core.AssistantEventToolCallStart:
		b := m.block(idx, BlockToolCall, true)
		r.identify(b, ev.Partial, nil)
		r.announce(b)
	case core.AssistantEventToolCallDelta:
		b := m.block(idx, BlockToolCall, true)
		r.identify(b, ev.Partial, nil)
		r.announce(b)
		r.hold(b, StreamAssistant, "argsDelta", ev.Delta)
	case core.AssistantEventToolCallEnd:
		b := m.block(idx, BlockToolCall, false)
		r.identify(b, ev.Partial, ev.ToolCall)
		r.announce(b)
		b.ended = true
		r.stopBlock(b)
	}
}

// showText sends text of block b that the filter released: the block's
// start if needed, then the addition, held for the throttle with the
// block's other additions. (OpenClaw's classic assistant event also
// repeats the response's text so far, which made a reply of N bytes cost
// every client O(N²) bytes; the cumulative text is the chat event's.)
func (r *Run) showText(b *block, visible string) {
	if visible == "" {
		return
	}
	m := r.msg
	r.announce(b)
	r.hold(b, StreamAssistant, "delta", visible)
	r.appendVisible(m, visible)
	if b.ended {
		// Released after the model closed the block.
		r.stopBlock(b)
	}
}

// identify fills in a tool call block's name and id from the assembled
// call or the partial message, and remembers where the call is.
func (r *Run) identify(b *block, partial *core.AssistantMessage, call *core.ToolCall) {
	if call == nil && partial != nil && b.index >= 0 && b.index < len(partial.Content) {
		call, _ = partial.Content[b.index].(*core.ToolCall)
	}
	if call == nil {
		return
	}
	if call.Name != "" {
		b.toolName = call.Name
	}
	if call.ID != "" {
		b.toolCallID = call.ID
		r.remember(call.ID, blkRef{messageID: r.msg.id, index: b.index})
	}
}

func (r *Run) remember(callID string, ref blkRef) {
	if r.calls == nil {
		r.calls = map[string]blkRef{}
	}
	if _, ok := r.calls[callID]; !ok {
		r.calls[callID] = ref
	}
}

// blockData is the common data of a block event.
func (r *Run) blockData(phase string, b *block) map[string]any {
	data := map[string]any{"phase": phase, "messageId": r.msg.id, "contentIndex": b.index, "blockType": b.typ}
	if b.typ == BlockToolCall {
		if b.toolName != "" {
			data["toolName"] = b.toolName
		}
		if b.toolCallID != "" {
			data["toolCallId"] = b.toolCallID
		}
	}
	return data
}

// announce sends block_start once.
func (r *Run) announce(b *block) {
	if b.announced {
		return
	}
	b.announced = true
	r.push(r.blockOut(PhaseBlockStart, b))
}

// stopBlock sends block_stop once, for an announced block.
func (r *Run) stopBlock(b *block) {
	if !b.announced || b.stopped {
		return
	}
	b.stopped = true
	r.push(r.blockOut(PhaseBlockStop, b))
}

func (r *Run) blockOut(phase string, b *block) Out {
	seq := r.next() // before blockData: a held delta goes first
	data := r.blockData(phase, b)
	if b.typ == BlockToolCall {
		return r.toolOut(seq, StreamAssistant, data)
	}
	return r.agentOut(seq, StreamAssistant, data)
}

// toolOut is an agent event only tool-events clients get.
func (r *Run) toolOut(seq int64, stream string, data map[string]any) Out {
	o := r.agentOut(seq, stream, data)
	o.ToolStream = true
	return o
}

// withdrawText takes back the current response's text when the model
// turned out to be silent after the filter had let some of it through
// ("no_reply" streamed in lower case): a text delta with replace:true says
// the response's text is now "". It is sent on block b while b is open.
func (r *Run) withdrawText(b *block) {
	m := r.msg
	if len(m.filter.Visible()) == m.shownFrom {
		return
	}
	m.shownFrom = len(m.filter.Visible())
	if b.announced && !b.stopped {
		seq := r.next()
		data := r.blockData(PhaseDelta, b)
		data["text"], data["delta"], data["replace"] = "", "", true
		r.push(r.agentOut(seq, StreamAssistant, data))
	}
	r.withdraw(m)
}

// closeMessage ends the current response, if any: text the filter still
// holds is shown or, for a silent reply, withdrawn; open blocks are
// stopped; message_stop carries the stop reason of am when known.
func (r *Run) closeMessage(am *core.AssistantMessage) {
	m := r.msg
	if m == nil {
		return
	}
	rest, silent := m.filter.Finish()
	switch {
	case rest != "" && m.lastText != nil:
		r.showText(m.lastText, rest)
	case silent && m.lastText != nil:
		r.withdrawText(m.lastText)
	}
	for _, b := range m.blocks {
		r.stopBlock(b)
	}
	seq := r.next()
	data := map[string]any{"phase": PhaseMessageStop, "messageId": m.id}
	if am != nil {
		if am.StopReason != "" {
			data["stopReason"] = string(am.StopReason)
		}
		if am.ErrorMessage != "" {
			data["errorMessage"] = am.ErrorMessage
		}
		// Calls that streamed no events are located here, before they run.
		for i, blk := range am.Content {
			if c, ok := blk.(*core.ToolCall); ok && c != nil && c.ID != "" {
				r.remember(c.ID, blkRef{messageID: m.id, index: i})
			}
		}
	}
	r.push(r.agentOut(seq, StreamAssistant, data))
	r.msg = nil
}

// toolEvent translates a tool execution event into a tool-stream event
// {phase, name, toolCallId, args | partialResult | isError+result}, plus
// the messageId and contentIndex of the call's block. Before a tool
// starts, buffered chat text is flushed so a client renders it above the
// tool card (openclaw-facts §1.11); the flush carries the tool event's
// seq.
func (r *Run) toolEvent(phase string, ev core.AgentEvent) {
	seq := r.next()
	if phase == "start" {
		r.chatDelta(seq, r.now())
	}
	data := map[string]any{"phase": phase, "name": ev.ToolName, "toolCallId": ev.ToolCallID}
	switch phase {
	case "start":
		data["args"] = ev.Args
	case "update":
		data["partialResult"] = ev.PartialResult
	case "result":
		data["isError"], data["result"] = ev.IsError, ev.Result
	}
	if ref, ok := r.calls[ev.ToolCallID]; ok {
		data["messageId"], data["contentIndex"] = ref.messageID, ref.index
	}
	r.push(r.toolOut(seq, StreamTool, data))
}
