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
func (r *Run) openMessage(out []Out, am *core.AssistantMessage) []Out {
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
	return append(out, r.agentOut(r.next(), StreamAssistant, data))
}

// streamEvent translates one stream event of the current response.
func (r *Run) streamEvent(out []Out, ev *core.AssistantMessageEvent) []Out {
	m := r.msg
	idx := ev.ContentIndex
	switch ev.Type {
	case core.AssistantEventTextStart:
		m.lastText = m.block(idx, BlockText, true)
	case core.AssistantEventTextDelta:
		b := m.block(idx, BlockText, true)
		m.lastText = b
		m.raw.WriteString(ev.Delta)
		out = r.showText(out, b, m.filter.Push(ev.Delta))
	case core.AssistantEventTextEnd:
		b := m.block(idx, BlockText, false)
		b.ended = true
		if reply.IsSilent(m.raw.String()) {
			out = r.withdrawText(out, b)
		}
		out = r.stopBlock(out, b)

	case core.AssistantEventThinkingStart:
		out = r.announce(out, m.block(idx, BlockThinking, true))
	case core.AssistantEventThinkingDelta:
		b := m.block(idx, BlockThinking, true)
		out = r.announce(out, b)
		// Reasoning goes on the thinking stream, as OpenClaw sends it, so a
		// client that appends every assistant delta never shows it as reply.
		// Like text, it carries only what it adds.
		out = append(out, r.agentOut(r.next(), StreamThinking, map[string]any{
			"phase": PhaseDelta, "messageId": m.id, "contentIndex": idx, "blockType": BlockThinking,
			"delta": ev.Delta,
		}))
	case core.AssistantEventThinkingEnd:
		b := m.block(idx, BlockThinking, false)
		out = r.announce(out, b)
		b.ended = true
		out = r.stopBlock(out, b)

	case core.AssistantEventToolCallStart:
		b := m.block(idx, BlockToolCall, true)
		r.identify(b, ev.Partial, nil)
		out = r.announce(out, b)
	case core.AssistantEventToolCallDelta:
		b := m.block(idx, BlockToolCall, true)
		r.identify(b, ev.Partial, nil)
		out = r.announce(out, b)
		data := r.blockData(PhaseDelta, b)
		data["argsDelta"] = ev.Delta
		out = append(out, r.toolOut(r.next(), StreamAssistant, data))
	case core.AssistantEventToolCallEnd:
		b := m.block(idx, BlockToolCall, false)
		r.identify(b, ev.Partial, ev.ToolCall)
		out = r.announce(out, b)
		b.ended = true
		out = r.stopBlock(out, b)
	}
	return out
}

// showText sends text of block b that the filter released: the block's
// start if needed, then a delta carrying only the addition. (OpenClaw's
// classic assistant event also repeats the response's text so far, which
// made a reply of N bytes cost every client O(N²) bytes; the cumulative
// text is the chat event's, which is throttled.)
func (r *Run) showText(out []Out, b *block, visible string) []Out {
	if visible == "" {
		return out
	}
	m := r.msg
	out = r.announce(out, b)
	data := r.blockData(PhaseDelta, b)
	data["delta"] = visible
	out = append(out, r.agentOut(r.next(), StreamAssistant, data))
	r.appendVisible(m, visible)
	if b.ended {
		// Released after the model closed the block.
		out = r.stopBlock(out, b)
	}
	return out
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
func (r *Run) announce(out []Out, b *block) []Out {
	if b.announced {
		return out
	}
	b.announced = true
	return append(out, r.blockOut(PhaseBlockStart, b))
}

// stopBlock sends block_stop once, for an announced block.
func (r *Run) stopBlock(out []Out, b *block) []Out {
	if !b.announced || b.stopped {
		return out
	}
	b.stopped = true
	return append(out, r.blockOut(PhaseBlockStop, b))
}

func (r *Run) blockOut(phase string, b *block) Out {
	data := r.blockData(phase, b)
	if b.typ == BlockToolCall {
		return r.toolOut(r.next(), StreamAssistant, data)
	}
	return r.agentOut(r.next(), StreamAssistant, data)
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
func (r *Run) withdrawText(out []Out, b *block) []Out {
	m := r.msg
	if len(m.filter.Visible()) == m.shownFrom {
		return out
	}
	m.shownFrom = len(m.filter.Visible())
	if b.announced && !b.stopped {
		data := r.blockData(PhaseDelta, b)
		data["text"], data["delta"], data["replace"] = "", "", true
		out = append(out, r.agentOut(r.next(), StreamAssistant, data))
	}
	r.withdraw(m)
	return out
}

// closeMessage ends the current response, if any: text the filter still
// holds is shown or, for a silent reply, withdrawn; open blocks are
// stopped; message_stop carries the stop reason of am when known.
func (r *Run) closeMessage(out []Out, am *core.AssistantMessage) []Out {
	m := r.msg
	if m == nil {
		return out
	}
	rest, silent := m.filter.Finish()
	switch {
	case rest != "" && m.lastText != nil:
		out = r.showText(out, m.lastText, rest)
	case silent && m.lastText != nil:
		out = r.withdrawText(out, m.lastText)
	}
	for _, b := range m.blocks {
		out = r.stopBlock(out, b)
	}
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
	out = append(out, r.agentOut(r.next(), StreamAssistant, data))
	r.msg = nil
	return out
}

// toolEvent translates a tool execution event into a tool-stream event
// {phase, name, toolCallId, args | partialResult | isError+result}, plus
// the messageId and contentIndex of the call's block. Before a tool
// starts, buffered chat text is flushed so a client renders it above the
// tool card (openclaw-facts §1.11); the flush carries the tool event's
// seq.
func (r *Run) toolEvent(out []Out, phase string, ev core.AgentEvent) []Out {
	seq := r.next()
	if phase == "start" {
		out = r.chatDelta(out, seq, r.now())
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
	return append(out, r.toolOut(seq, StreamTool, data))
}
