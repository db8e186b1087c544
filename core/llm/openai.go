package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// OpenAI is the openai-completions provider: OpenAI's Chat Completions API
// with streaming (POST <baseUrl>/chat/completions, server-sent events). It
// also speaks to the OpenAI-compatible servers of Ollama, vLLM and
// llama.cpp (baseUrl "http://host:port/v1"). It is safe for concurrent
// use.
type OpenAI struct {
	name                string
	apiKey              string
	noKey               missingKey // set when the endpoint needs a key and none is set
	url                 string
	header              http.Header
	client              *http.Client
	clock               func() time.Time
	maxCompletionTokens bool
	drainer             drainer
}

// Compile-time check that OpenAI is a Provider.
var _ Provider = (*OpenAI)(nil)

// openaiBaseURL is OpenAI's API when the configuration names no server.
const openaiBaseURL = "https://api.openai.com/v1"

// NewOpenAI returns the chat-completions provider named name. It reads
// only cfg (base URL, API key, extra headers), never OPENAI_* environment
// variables, and leaves retries to the caller (see Router). An empty API
// key sends no Authorization header, as local servers expect.
func NewOpenAI(name string, cfg ProviderConfig, opts ProviderOptions) *OpenAI {
	base := cfg.BaseURL
	if base == "" {
		base = openaiBaseURL
	}
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	extraHeaders(h, cfg.Headers)
	return &OpenAI{
		name:                name,
		apiKey:              cfg.APIKey,
		noKey:               missingKeyOf(cfg),
		url:                 strings.TrimRight(base, "/") + "/chat/completions",
		header:              h,
		client:              httpClient(opts),
		clock:               opts.clock(),
		maxCompletionTokens: isOpenAIEndpoint(cfg.BaseURL),
	}
}

// isOpenAIEndpoint reports whether baseURL is OpenAI's own API.
func isOpenAIEndpoint(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && u.Hostname() == "api.openai.com"
}

// Stream sends req as a streaming chat completion and streams the reply
// (see Provider).
func (p *OpenAI) Stream(ctx context.Context, req *Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error) {
	if req == nil {
		req = &Request{}
	}
	now := p.clock()
	b := NewMessageBuilder(APIOpenAICompletions, p.name, req.Model, now, emit)
	b.Start()
	src := errorSource{provider: p.name, model: req.Model.ID, apiKey: p.apiKey, now: now}
	if p.noKey != (missingKey{}) {
		return b.Fail(src.missingKey(p.noKey))
	}
	params, err := openaiParams(req, p.maxCompletionTokens)
	var body []byte
	if err == nil {
		body, err = json.Marshal(params)
	}
	if err != nil {
		return b.Fail(&Error{Kind: ErrorUnknown, Message: err.Error(), Err: err})
	}
	s := openaiStream{b: b, cur: -1, now: now}
	if err := p.stream(ctx, body, &s); err != nil {
		if ctx.Err() != nil {
			return b.Abort(ctx)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return b.Fail(src.truncated("in the middle of an event"))
		}
		return b.Fail(openaiError(src, err))
	}
	if ctx.Err() != nil && s.finish == "" {
		return b.Abort(ctx)
	}
	if s.chunks == 0 {
		return b.Fail(src.truncated("before any data"))
	}
	switch s.finish {
	case "length":
		return b.Done(core.StopReasonLength)
	case "content_filter":
		b.EndAll()
		return b.Fail(src.refusal("the provider's content filter withheld the answer (content_filter)"))
	case "tool_calls", "function_call":
		return b.Done(core.StopReasonToolUse)
	default:
		// "stop", or nothing at all from a server that just closes the
		// stream. Some servers say "stop" after streaming tool calls;
		// the calls are what the model wants run.
		if len(s.calls) > 0 {
			return b.Done(core.StopReasonToolUse)
		}
		return b.Done(core.StopReasonStop)
	}
}

// doneData is the data of the event that ends a stream.
var doneData = []byte("[DONE]")

// stream sends body and feeds each chunk to s until [DONE] or the end of
// the stream. An error is the HTTP failure, an error chunk, or a broken
// stream; a stream that just ends is not an error (Stream judges what
// arrived).
func (p *OpenAI) stream(ctx context.Context, body []byte, s *openaiStream) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := postStream(ctx, p.client, p.url, p.header, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r := newSSEReader(resp.Body)
	for {
		_, data, err := r.next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		case bytes.HasPrefix(data, doneData):
			p.drainer.drain(resp.Body, cancel)
			return nil
		case len(bytes.TrimSpace(data)) == 0:
			continue
		}
		var c openaiChunk
		if err := c.decodeChunk(data); err != nil {
			return err
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			return &streamError{data: bytes.Clone(data)}
		}
		s.handle(c)
	}
}

// openaiStream maps chat-completion chunks onto a MessageBuilder.
type openaiStream struct {
	b *MessageBuilder
	// cur is the open text or thinking block, -1 for none; curThinking
	// says which. Text and reasoning each stream into one block until the
	// other (or a tool call) interrupts.
	cur         int
	curThinking bool
	calls       []openaiCall
	finish      string
	chunks      int
	now         time.Time
}

// openaiCall is one streamed tool call.
type openaiCall struct {
	index    int64
	hasIndex bool
	id       string
	content  int
}

func (s *openaiStream) handle(c openaiChunk) {
	s.chunks++
	if u := c.Usage; u != nil {
		cached := u.PromptTokensDetails.CachedTokens
		s.b.SetUsage(core.Usage{
			Input:     max(u.PromptTokens-cached, 0),
			Output:    u.CompletionTokens,
			CacheRead: cached,
		})
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		for _, r := range [...]json.RawMessage{d.ReasoningContent, d.Reasoning} {
			if r := jsonString(string(r)); r != "" {
				s.appendCurrent(true, r)
				break
			}
		}
		s.appendCurrent(false, d.Content)
		s.appendCurrent(false, d.Refusal)
		for _, tc := range d.ToolCalls {
			s.toolCall(tc)
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
	}
}

// jsonString decodes raw when it is a JSON string; anything else is "".
func jsonString(raw string) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return s
}

// appendCurrent appends text or thinking, opening a block of that kind if
// the current one is of the other kind.
func (s *openaiStream) appendCurrent(thinking bool, delta string) {
	if delta == "" {
		return
	}
	if s.cur < 0 || s.curThinking != thinking {
		s.closeCurrent()
		if thinking {
			s.cur = s.b.StartThinking()
		} else {
			s.cur = s.b.StartText()
		}
		s.curThinking = thinking
	}
	if thinking {
		s.b.AppendThinking(s.cur, delta)
	} else {
		s.b.AppendText(s.cur, delta)
	}
}

func (s *openaiStream) closeCurrent() {
	if s.cur >= 0 {
		s.b.End(s.cur)
		s.cur = -1
	}
}

// toolCall applies one tool-call delta. Calls are told apart by index;
// a server that omits it continues the most recent call, unless it names
// a new call id.
func (s *openaiStream) toolCall(tc openaiToolCallDelta) {
	c := s.findCall(tc)
	if c == nil {
		s.closeCurrent()
		id := tc.ID
		if id == "" {
			// Some local servers send no id; the tool result must
			// still name the call.
			id = "call_" + strconv.FormatInt(s.now.UnixMilli(), 36) + "_" + strconv.Itoa(len(s.calls))
		}
		s.calls = append(s.calls, openaiCall{
			index:    tc.index(),
			hasIndex: tc.Index != nil,
			id:       id,
			content:  s.b.StartToolCall(id, tc.Function.Name),
		})
		c = &s.calls[len(s.calls)-1]
	} else if call := s.b.ToolCall(c.content); call != nil && call.Name == "" {
		call.Name = tc.Function.Name
	}
	s.b.AppendToolCall(c.content, tc.Function.Arguments)
}

func (s *openaiStream) findCall(tc openaiToolCallDelta) *openaiCall {
	if tc.Index != nil {
		for i := range s.calls {
			if c := &s.calls[i]; c.hasIndex && c.index == *tc.Index {
				return c
			}
		}
		return nil
	}
	if tc.ID != "" {
		for i := range s.calls {
			if c := &s.calls[i]; c.id == tc.ID {
				return c
			}
		}
		return nil
	}
	if n := len(s.calls); n > 0 {
		return &s.calls[n-1]
	}
	return nil
}

// openaiError classifies a failed call: an HTTP error response, an error
// chunk in the stream, or a transport error.
func openaiError(src errorSource, err error) *Error {
	var se *httpStatusError
	var ee *streamError
	switch {
	case errors.As(err, &se):
		f := openaiFailure(se.body)
		f.status, f.header = se.status, se.header
		if f.message == "" {
			f.message = http.StatusText(f.status)
		}
		return src.classify(f, err)
	case errors.As(err, &ee):
		f := openaiFailure(ee.data)
		if f.message == "" {
			f.message = "the provider reported an error mid-stream"
		}
		return src.classify(f, err)
	}
	return src.transport(err)
}

// openaiFailure reads an error body: {"error": {...}} as OpenAI, vLLM and
// llama.cpp send it, {"error": "text"} as Ollama does, or the error
// object's members at the top level (vLLM's older form).
func openaiFailure(body []byte) failure {
	var env struct {
		Error json.RawMessage `json:"error"`
		openaiErrorBody
	}
	if json.Unmarshal(body, &env) != nil {
		return failure{}
	}
	e := env.openaiErrorBody
	if msg := jsonString(string(env.Error)); msg != "" {
		e = openaiErrorBody{Message: msg}
	} else if len(env.Error) > 0 && env.Error[0] == '{' {
		var inner openaiErrorBody
		if json.Unmarshal(env.Error, &inner) == nil {
			e = inner
		}
	}
	return failure{errType: e.typ(), code: e.code(), message: e.Message}
}

// openaiErrorBody is an error object; servers send its code as a string
// (OpenAI) or a number (llama.cpp).
type openaiErrorBody struct {
	Message string          `json:"message"`
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (e openaiErrorBody) typ() string { return jsonString(string(e.Type)) }

func (e openaiErrorBody) code() string {
	if s := jsonString(string(e.Code)); s != "" {
		return s
	}
	return ""
}
