package llmtest

import (
	"net/http"
	"sync"
	"unicode/utf8"
)

// Response is one scripted reply: content blocks streamed as deltas, or an
// HTTP error, or content cut short by an error event. Build one with Text,
// Thinking, ToolCalls, Reply, HTTPError, RateLimited, ContextTooLong or
// MidStreamError, and adjust it with its With... methods, which return a
// modified copy. The same Response drives both fake servers and
// ScriptedProvider; each fake renders it in its vendor's wire format.
type Response struct {
	blocks     []Block
	interleave bool
	stop       string
	usage      Usage

	status  int
	header  http.Header
	body    string
	errKind errKind

	midError string

	hangAfter int
	gate      <-chan struct{}

	reasoningField string
	omitIndex      bool

	raw string

	cache *renderCache
}

// errKind says which vendor error body a fake writes for an HTTP error
// without an explicit body.
type errKind uint8

const (
	errStatus        errKind = iota // the body that goes with the status
	errContextLength                // a prompt-too-long 400
)

// Usage is the token usage a scripted reply reports. A fake writes it in
// its vendor's terms: for OpenAI, prompt_tokens is Input+CacheRead and
// cached_tokens is CacheRead (CacheWrite has no OpenAI field).
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
}

// blockKind is the kind of a scripted content block.
type blockKind uint8

const (
	kindText blockKind = iota
	kindThinking
	kindToolCall
)

// Block is one scripted content block: TextBlock, ThinkingBlock or
// ToolCallBlock.
type Block struct {
	kind      blockKind
	parts     []string
	signature string
	call      ToolCall
}

// ToolCall is a scripted tool call; build it with Call.
type ToolCall struct {
	// ID is the call's id; empty means a vendor-style id from the call's
	// position: "toolu_01", "toolu_02"... (Anthropic) or "call_1",
	// "call_2"... (OpenAI and ScriptedProvider).
	ID string
	// Name is the tool's name.
	Name string
	// Args is the arguments' JSON, streamed in three fragments.
	Args string
}

// Call is a tool call of name with the JSON arguments args.
func Call(name, args string) ToolCall { return ToolCall{Name: name, Args: args} }

// WithID returns the call with its id set.
func (c ToolCall) WithID(id string) ToolCall { c.ID = id; return c }

// TextBlock is a text block streamed as one delta per part.
func TextBlock(parts ...string) Block { return Block{kind: kindText, parts: parts} }

// ThinkingBlock is a thinking block streamed as one delta per part, then
// signed with signature (Anthropic's signature_delta; OpenAI has none).
func ThinkingBlock(signature string, parts ...string) Block {
	return Block{kind: kindThinking, parts: parts, signature: signature}
}

// ToolCallBlock is one tool call, its arguments in three fragments.
func ToolCallBlock(c ToolCall) Block { return Block{kind: kindToolCall, call: c} }

// Reply is a reply of the given blocks, streamed one block after the other.
func Reply(blocks ...Block) Response {
	return Response{blocks: blocks, cache: new(renderCache)}
}

// Text is a text reply streamed as one delta per part: Text("Hel", "lo")
// sends two deltas.
func Text(parts ...string) Response { return Reply(TextBlock(parts...)) }

// Thinking is a reply of a signed thinking block, then, when text is given,
// a text block streamed one delta per part.
func Thinking(thinking, signature string, text ...string) Response {
	if len(text) == 0 {
		return Reply(ThinkingBlock(signature, thinking))
	}
	return Reply(ThinkingBlock(signature, thinking), TextBlock(text...))
}

// ToolCalls is a reply calling each of calls, the calls' argument
// fragments interleaved (first fragment of each call, then the second of
// each...), which exercises assembly by index. Stop reason: tool use.
func ToolCalls(calls ...ToolCall) Response {
	blocks := make([]Block, len(calls))
	for i, c := range calls {
		blocks[i] = ToolCallBlock(c)
	}
	r := Reply(blocks...)
	r.interleave = true
	return r
}

// HTTPError is an HTTP error response: status, extra headers, and body; an
// empty body means the vendor's usual error JSON for status.
func HTTPError(status int, header http.Header, body string) Response {
	return Response{status: status, header: header, body: body, cache: new(renderCache)}
}

// RateLimited is a 429 with a Retry-After header of retryAfter (seconds
// or an HTTP date) and the vendor's rate-limit body.
func RateLimited(retryAfter string) Response {
	return HTTPError(http.StatusTooManyRequests, http.Header{"Retry-After": {retryAfter}}, "")
}

// ContextTooLong is the 400 a vendor sends when the prompt exceeds the
// model's context window.
func ContextTooLong() Response {
	r := HTTPError(http.StatusBadRequest, nil, "")
	r.errKind = errContextLength
	return r
}

// MidStreamError streams partial as text deltas (none: no content at all)
// and then an error event of errType, such as "overloaded_error" or
// "api_error" (Anthropic) or "server_error" (OpenAI), without finishing
// the block.
func MidStreamError(errType string, partial ...string) Response {
	var r Response
	if len(partial) > 0 {
		r = Text(partial...)
	} else {
		r = Reply()
	}
	r.midError = errType
	return r
}

// RawStream is a 200 event stream whose body is raw, written as is, for
// wire shapes the other builders do not make (a stream cut off before its
// end, a vendor quirk). Only the fake servers play it; ScriptedProvider
// fails it.
func RawStream(raw string) Response {
	return Response{raw: raw, cache: new(renderCache)}
}

// WithUsage returns r reporting usage u.
func (r Response) WithUsage(u Usage) Response { r.usage = u; return r.fresh() }

// WithStopReason returns r ending with the vendor stop reason stop, such as
// "max_tokens" or "refusal" (Anthropic), "length", "content_filter" or a
// "stop" after tool calls (OpenAI). ScriptedProvider maps either vendor's
// names.
func (r Response) WithStopReason(stop string) Response { r.stop = stop; return r.fresh() }

// HangAfter returns r with the stream held open after its n-th delta
// (n ≥ 1) until the client goes away (the request's context ends), for
// cancellation tests.
func (r Response) HangAfter(n int) Response { r.hangAfter = n; return r.fresh() }

// Gated returns r waiting for a value from gate before each event it
// streams, so a test can step through the stream or hold it open: a fake
// server waits before every SSE event it writes (message_start and ping
// included), ScriptedProvider before every event after start. A closed
// gate lets everything through.
func (r Response) Gated(gate <-chan struct{}) Response { r.gate = gate; return r.fresh() }

// WithReasoningField returns r streaming thinking in the OpenAI delta
// member field, "reasoning_content" (the default) or "reasoning".
func (r Response) WithReasoningField(field string) Response {
	r.reasoningField = field
	return r.fresh()
}

// WithoutToolIndex returns r sending OpenAI tool-call deltas without their
// "index", as some servers do; such servers stream one call after the
// other, so the calls are no longer interleaved.
func (r Response) WithoutToolIndex() Response {
	r.omitIndex, r.interleave = true, false
	return r.fresh()
}

// fresh gives a modified copy its own render cache.
func (r Response) fresh() Response { r.cache = new(renderCache); return r }

// renderCache keeps a Response's rendered events per vendor and model, so
// a benchmark replaying one Response measures the client, not the fake.
type renderCache struct {
	mu     sync.Mutex
	events map[string][]sseEvent
}

// sseEvent is one rendered event; delta marks content deltas, which
// HangAfter counts.
type sseEvent struct {
	data  []byte
	delta bool
}

func (c *renderCache) get(key string, render func() []sseEvent) []sseEvent {
	if c == nil {
		return render()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev, ok := c.events[key]; ok {
		return ev
	}
	if c.events == nil {
		c.events = map[string][]sseEvent{}
	}
	ev := render()
	c.events[key] = ev
	return ev
}

// stepOp is an operation of a vendor-neutral stream plan.
type stepOp uint8

const (
	opStart stepOp = iota
	opDelta
	opSignature
	opStop
)

// step is one operation on block (its index in Response.blocks).
type step struct {
	op    stepOp
	block int
	text  string
}

// plan flattens r's blocks into the order their events stream.
func (r Response) plan() []step {
	var steps []step
	for i := 0; i < len(r.blocks); {
		if r.interleave && r.blocks[i].kind == kindToolCall {
			j := i
			for j < len(r.blocks) && r.blocks[j].kind == kindToolCall {
				j++
			}
			steps = appendInterleaved(steps, r.blocks, i, j)
			i = j
			continue
		}
		b := r.blocks[i]
		steps = append(steps, step{op: opStart, block: i})
		if b.kind == kindToolCall {
			for _, f := range fragments(b.call.Args, 3) {
				steps = append(steps, step{op: opDelta, block: i, text: f})
			}
		} else {
			for _, p := range b.parts {
				steps = append(steps, step{op: opDelta, block: i, text: p})
			}
		}
		if b.signature != "" {
			steps = append(steps, step{op: opSignature, block: i, text: b.signature})
		}
		steps = append(steps, step{op: opStop, block: i})
		i++
	}
	if r.midError != "" && len(steps) > 0 && steps[len(steps)-1].op == opStop {
		// The error cuts the last block short.
		steps = steps[:len(steps)-1]
	}
	return steps
}

// appendInterleaved starts tool-call blocks [from, to), streams their
// argument fragments round-robin, then stops them.
func appendInterleaved(steps []step, blocks []Block, from, to int) []step {
	frags := make([][]string, to-from)
	for k := range frags {
		steps = append(steps, step{op: opStart, block: from + k})
		frags[k] = fragments(blocks[from+k].call.Args, 3)
	}
	for round := 0; ; round++ {
		more := false
		for k, f := range frags {
			if round < len(f) {
				steps = append(steps, step{op: opDelta, block: from + k, text: f[round]})
				more = true
			}
		}
		if !more {
			break
		}
	}
	for k := range frags {
		steps = append(steps, step{op: opStop, block: from + k})
	}
	return steps
}

// fragments splits s into up to n pieces of similar length, at rune
// boundaries.
func fragments(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > 0 {
		end := min(size, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// stopReason is r's stop reason in the vendor-neutral words "stop",
// "toolUse", or r.stop verbatim when set.
func (r Response) stopReason() string {
	if r.stop != "" {
		return r.stop
	}
	for _, b := range r.blocks {
		if b.kind == kindToolCall {
			return "toolUse"
		}
	}
	return "stop"
}
