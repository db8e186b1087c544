package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Anthropic is the anthropic-messages provider: Anthropic's Messages API
// with streaming (POST /v1/messages, server-sent events). It is safe for
// concurrent use.
type Anthropic struct {
	name    string
	apiKey  string
	noKey   missingKey // set when the endpoint needs a key and none is set
	url     string
	header  http.Header
	client  *http.Client
	clock   func() time.Time
	drainer drainer
}

// Compile-time check that Anthropic is a Provider.
var _ Provider = (*Anthropic)(nil)

// anthropicBaseURL is the API's address when the configuration names none.
const anthropicBaseURL = "https://api.anthropic.com"

// anthropicVersion is the API version we speak (the anthropic-version
// header).
const anthropicVersion = "2023-06-01"

// NewAnthropic returns the Anthropic provider named name. It reads only
// cfg (base URL, API key, extra headers), never ANTHROPIC_* environment
// variables, and leaves retries to the caller (see Router).
func NewAnthropic(name string, cfg ProviderConfig, opts ProviderOptions) *Anthropic {
	base := cfg.BaseURL
	if base == "" {
		base = anthropicBaseURL
	}
	h := http.Header{}
	h.Set("Anthropic-Version", anthropicVersion)
	if cfg.APIKey != "" {
		h.Set("X-Api-Key", cfg.APIKey)
	}
	extraHeaders(h, cfg.Headers)
	return &Anthropic{
		name:   name,
		apiKey: cfg.APIKey,
		noKey:  missingKeyOf(cfg),
		url:    strings.TrimRight(base, "/") + "/v1/messages",
		header: h,
		client: httpClient(opts),
		clock:  opts.clock(),
	}
}

// Stream sends req to the Messages API and streams the reply (see
// Provider).
func (p *Anthropic) Stream(ctx context.Context, req *Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error) {
	if req == nil {
		req = &Request{}
	}
	now := p.clock()
	b := NewMessageBuilder(APIAnthropicMessages, p.name, req.Model, now, emit)
	b.Start()
	src := errorSource{provider: p.name, model: req.Model.ID, apiKey: p.apiKey, now: now}
	if p.noKey != (missingKey{}) {
		return b.Fail(src.missingKey(p.noKey))
	}
	params, err := anthropicParams(req)
	if err == nil {
		var body []byte
		if body, err = json.Marshal(params); err == nil {
			return p.stream(ctx, body, b, src)
		}
	}
	return b.Fail(&Error{Kind: ErrorUnknown, Message: err.Error(), Err: err})
}

func (p *Anthropic) stream(ctx context.Context, body []byte, b *MessageBuilder, src errorSource) (*core.AssistantMessage, error) {
	// The request's own context: drain may end it without ending ctx.
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := postStream(reqCtx, p.client, p.url, p.header, body)
	if err != nil {
		if ctx.Err() != nil {
			return b.Abort(ctx)
		}
		return b.Fail(anthropicError(src, err))
	}
	defer resp.Body.Close()
	s := anthropicStream{b: b}
	r := newSSEReader(resp.Body)
	for !s.stopped {
		name, data, err := r.next()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break // a stream cut short: see !s.stopped below
		}
		if err != nil {
			if ctx.Err() != nil {
				return b.Abort(ctx)
			}
			return b.Fail(src.transport(err))
		}
		switch string(name) {
		case "", "ping":
		case "error":
			return b.Fail(anthropicError(src, &streamError{data: data}))
		default:
			if len(bytes.TrimSpace(data)) == 0 {
				continue
			}
			if err := s.handle(data); err != nil {
				return b.Fail(src.transport(err))
			}
		}
	}
	if !s.stopped {
		if ctx.Err() != nil {
			return b.Abort(ctx)
		}
		return b.Fail(src.truncated("before message_stop"))
	}
	// message_stop is the last event; what follows is framing, read so
	// the connection serves the next turn.
	p.drainer.drain(resp.Body, cancel)
	switch s.stop {
	case "max_tokens", "model_context_window_exceeded":
		return b.Done(core.StopReasonLength)
	case "tool_use":
		return b.Done(core.StopReasonToolUse)
	case "refusal":
		b.EndAll()
		return b.Fail(src.refusal("the model declined to answer (refusal)"))
	default: // end_turn, stop_sequence, pause_turn
		return b.Done(core.StopReasonStop)
	}
}

// streamError is an error event inside a 200 response; data is its JSON.
type streamError struct{ data []byte }

func (e *streamError) Error() string { return "error event in the stream: " + string(e.data) }

// maxBlockIndex bounds the content block indexes we track, so a broken
// stream cannot make us allocate without limit.
const maxBlockIndex = 1 << 12

// anthropicEvent is one stream event: the members of every event type we
// read, decoded from its data.
type anthropicEvent struct {
	Type         string               `json:"type"`
	Index        int64                `json:"index"`
	Message      *anthropicEventMsg   `json:"message"`
	ContentBlock *anthropicBlockStart `json:"content_block"`
	Delta        *anthropicDelta      `json:"delta"`
	Usage        *anthropicUsage      `json:"usage"`
}

type anthropicEventMsg struct {
	Usage anthropicUsage `json:"usage"`
}

type anthropicBlockStart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
	ID        string `json:"id"`
	Name      string `json:"name"`
}

type anthropicDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

type anthropicUsage struct {
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens is nil when absent.
	OutputTokens             *int64 `json:"output_tokens"`
	CacheReadInputTokens     int64  `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64  `json:"cache_creation_input_tokens"`
}

// UnmarshalJSON decodes what it can and ignores members of an unexpected
// type: a proxy that sends "index": "0" loses that member, not its
// stream.
func (e *anthropicEvent) UnmarshalJSON(b []byte) error {
	type plain anthropicEvent
	return decodeLenient(b, (*plain)(e))
}

// anthropicStream maps Messages API stream events onto a MessageBuilder.
type anthropicStream struct {
	b *MessageBuilder
	// blocks maps the API's block index to our content index; -1 for
	// blocks we do not keep (server tool use and results).
	blocks  []int
	usage   core.Usage
	stop    string
	stopped bool
}

// handle applies the event whose JSON is data.
func (s *anthropicStream) handle(data []byte) error {
	var ev anthropicEvent
	if err := ev.UnmarshalJSON(data); err != nil { // not json.Unmarshal: one syntax check, not two
		return err
	}
	switch ev.Type {
	case "message_start":
		if ev.Message == nil {
			break
		}
		u := ev.Message.Usage
		s.usage = core.Usage{
			Input:      u.InputTokens,
			Output:     deref(u.OutputTokens),
			CacheRead:  u.CacheReadInputTokens,
			CacheWrite: u.CacheCreationInputTokens,
		}
		s.b.SetUsage(s.usage)
	case "content_block_start":
		if ev.ContentBlock != nil {
			s.start(ev.Index, ev.ContentBlock)
		}
	case "content_block_delta":
		if ev.Delta == nil {
			break
		}
		i := s.block(ev.Index)
		switch d := ev.Delta; d.Type {
		case "text_delta":
			s.b.AppendText(i, d.Text)
		case "thinking_delta":
			s.b.AppendThinking(i, d.Thinking)
		case "signature_delta":
			s.b.SetThinkingSignature(i, d.Signature)
		case "input_json_delta":
			s.b.AppendToolCall(i, d.PartialJSON)
		}
	case "content_block_stop":
		s.b.End(s.block(ev.Index))
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			s.stop = ev.Delta.StopReason
		}
		// Counts here are cumulative. Output is always present; the
		// others only in newer API versions, and some proxies send them
		// as 0, which must not erase what message_start said.
		if ev.Usage == nil {
			break
		}
		u := ev.Usage
		if u.OutputTokens != nil {
			s.usage.Output = *u.OutputTokens
		}
		if u.InputTokens > 0 {
			s.usage.Input = u.InputTokens
		}
		if u.CacheReadInputTokens > 0 {
			s.usage.CacheRead = u.CacheReadInputTokens
		}
		if u.CacheCreationInputTokens > 0 {
			s.usage.CacheWrite = u.CacheCreationInputTokens
		}
		s.b.SetUsage(s.usage)
	case "message_stop":
		s.stopped = true
	}
	return nil
}

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// start opens our block for the API's block idx.
func (s *anthropicStream) start(idx int64, cb *anthropicBlockStart) {
	if idx < 0 || idx >= maxBlockIndex {
		return
	}
	for int64(len(s.blocks)) <= idx {
		s.blocks = append(s.blocks, -1)
	}
	i := -1
	switch cb.Type {
	case "text":
		i = s.b.StartText()
		s.b.AppendText(i, cb.Text)
	case "thinking":
		i = s.b.StartThinking()
		s.b.AppendThinking(i, cb.Thinking)
		s.b.SetThinkingSignature(i, cb.Signature)
	case "redacted_thinking":
		i = s.b.StartRedactedThinking(cb.Data)
	case "tool_use":
		// The input arrives as input_json_delta; the {} here is a
		// placeholder.
		i = s.b.StartToolCall(cb.ID, cb.Name)
	}
	s.blocks[idx] = i
}

// block returns our content index for the API's block idx, or -1.
func (s *anthropicStream) block(idx int64) int {
	if idx < 0 || idx >= int64(len(s.blocks)) {
		return -1
	}
	return s.blocks[idx]
}

// anthropicError classifies a failed call: an HTTP error response, an
// error event in the stream, or a transport error.
func anthropicError(src errorSource, err error) *Error {
	var body []byte
	f := failure{}
	var se *httpStatusError
	var ee *streamError
	switch {
	case errors.As(err, &se):
		f.status, f.header, body = se.status, se.header, se.body
	case errors.As(err, &ee):
		body = ee.data
	default:
		return src.transport(err)
	}
	var env struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil {
		f.errType = env.Error.Type
		f.message = env.Error.Message
	}
	if f.message == "" && f.status != 0 {
		f.message = http.StatusText(f.status)
	}
	return src.classify(f, err)
}
