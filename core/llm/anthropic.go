package llm

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/switchboardhq/switchboard/core"
)

// Anthropic is the anthropic-messages provider: Anthropic's Messages API
// with streaming, through the official SDK. It is safe for concurrent use.
type Anthropic struct {
	name   string
	apiKey string
	client anthropic.Client
	clock  func() time.Time
}

// Compile-time check that Anthropic is a Provider.
var _ Provider = (*Anthropic)(nil)

// NewAnthropic returns the Anthropic provider named name. It reads only
// cfg (base URL, API key, extra headers), never ANTHROPIC_* environment
// variables, and leaves retries to the caller (see Router).
func NewAnthropic(name string, cfg ProviderConfig, opts ProviderOptions) *Anthropic {
	o := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
		option.WithHTTPClient(httpClient(opts)),
	}
	if cfg.BaseURL != "" {
		o = append(o, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		o = append(o, option.WithAPIKey(cfg.APIKey))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
		o = append(o, option.WithHeader(k, cfg.Headers[k]))
	}
	return &Anthropic{name: name, apiKey: cfg.APIKey, client: anthropic.NewClient(o...), clock: opts.clock()}
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
	params, err := anthropicParams(req)
	if err != nil {
		return b.Fail(&Error{Kind: ErrorUnknown, Message: err.Error(), Err: err})
	}
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	s := anthropicStream{b: b}
	for stream.Next() {
		s.handle(stream.Current())
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return b.Abort(ctx)
		}
		return b.Fail(anthropicError(src, err))
	}
	if !s.stopped {
		if ctx.Err() != nil {
			return b.Abort(ctx)
		}
		return b.Fail(src.truncated("before message_stop"))
	}
	switch s.stop {
	case anthropic.StopReasonMaxTokens, "model_context_window_exceeded":
		return b.Done(core.StopReasonLength)
	case anthropic.StopReasonToolUse:
		return b.Done(core.StopReasonToolUse)
	case anthropic.StopReasonRefusal:
		b.EndAll()
		return b.Fail(src.refusal("the model declined to answer (refusal)"))
	default: // end_turn, stop_sequence, pause_turn
		return b.Done(core.StopReasonStop)
	}
}

// maxBlockIndex bounds the content block indexes we track, so a broken
// stream cannot make us allocate without limit.
const maxBlockIndex = 1 << 12

// anthropicStream maps Messages API stream events onto a MessageBuilder.
type anthropicStream struct {
	b *MessageBuilder
	// blocks maps the API's block index to our content index; -1 for
	// blocks we do not keep (server tool use and results).
	blocks  []int
	usage   core.Usage
	stop    anthropic.StopReason
	stopped bool
}

func (s *anthropicStream) handle(ev anthropic.MessageStreamEventUnion) {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		s.usage = core.Usage{
			Input:      u.InputTokens,
			Output:     u.OutputTokens,
			CacheRead:  u.CacheReadInputTokens,
			CacheWrite: u.CacheCreationInputTokens,
		}
		s.b.SetUsage(s.usage)
	case "content_block_start":
		s.start(ev.Index, ev.ContentBlock)
	case "content_block_delta":
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
		if ev.Delta.StopReason != "" {
			s.stop = ev.Delta.StopReason
		}
		// Counts here are cumulative. Output is always present; the
		// others only in newer API versions, and some proxies send them
		// as 0, which must not erase what message_start said.
		u := ev.Usage
		if u.JSON.OutputTokens.Valid() {
			s.usage.Output = u.OutputTokens
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
}

// start opens our block for the API's block idx.
func (s *anthropicStream) start(idx int64, cb anthropic.ContentBlockStartEventContentBlockUnion) {
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

// streamErrorPrefix starts the SDK's error for an error event it could
// not tie to a response.
const streamErrorPrefix = "received error while streaming: "

// anthropicError classifies a failed call: an HTTP error response, an
// error event in the stream, or a transport error.
func anthropicError(src errorSource, err error) *Error {
	var body []byte
	f := failure{}
	var ae *anthropic.Error
	switch {
	case errors.As(err, &ae):
		f.status = ae.StatusCode
		if ae.Response != nil {
			f.header = ae.Response.Header
		}
		f.errType = string(ae.Type())
		body = []byte(ae.RawJSON())
	case strings.HasPrefix(err.Error(), streamErrorPrefix):
		body = []byte(strings.TrimPrefix(err.Error(), streamErrorPrefix))
	default:
		return src.transport(err)
	}
	// An error event arrives inside a 200 response; it has no status.
	if f.status >= 200 && f.status < 300 {
		f.status = 0
	}
	var env struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil {
		if f.errType == "" {
			f.errType = env.Error.Type
		}
		f.message = env.Error.Message
	}
	if f.message == "" && f.status != 0 {
		f.message = http.StatusText(f.status)
	}
	return src.classify(f, err)
}
