package llmtest

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
)

// ScriptedAPI is the api a ScriptedProvider writes into its messages.
const ScriptedAPI llm.API = "scripted"

// ScriptedProvider is an llm.Provider without HTTP: each Stream plays the
// next Response of its script through llm.MessageBuilder, so its events
// have exactly the shapes of the real providers'. HTTP errors and error
// events become the *llm.Error a real provider would return (429 rate
// limit with its Retry-After, 5xx and overload retryable, context too
// long). A Response made Gated or HangAfter holds the stream open until
// the test releases it or the context ends, without sleeping. It is safe
// for concurrent use.
type ScriptedProvider struct {
	// Name is written into each message's provider; empty means
	// "scripted". Set it before the first Stream.
	Name string
	// Clock stamps messages; nil means time.Now. Set it before the first
	// Stream.
	Clock func() time.Time

	mu       sync.Mutex
	script   []Response
	requests []llm.Request
}

// Compile-time check that ScriptedProvider is an llm.Provider.
var _ llm.Provider = (*ScriptedProvider)(nil)

// NewScriptedProvider returns a provider that answers with script, one
// Response per Stream call.
func NewScriptedProvider(script ...Response) *ScriptedProvider {
	return &ScriptedProvider{script: slices.Clone(script)}
}

// Push appends responses to the script.
func (p *ScriptedProvider) Push(r ...Response) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.script = append(p.script, r...)
}

// Requests returns the requests received so far, in order; each has its
// own copy of the message list.
func (p *ScriptedProvider) Requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// Remaining returns how many scripted responses have not been used.
func (p *ScriptedProvider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.script)
}

// Stream plays the next scripted Response (see llm.Provider). With the
// script used up it fails with a non-retryable error.
func (p *ScriptedProvider) Stream(ctx context.Context, req *llm.Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error) {
	if req == nil {
		req = &llm.Request{}
	}
	p.mu.Lock()
	rec := *req
	rec.Messages = slices.Clone(req.Messages)
	rec.Tools = slices.Clone(req.Tools)
	p.requests = append(p.requests, rec)
	resp, ok := Response{}, len(p.script) > 0
	if ok {
		resp, p.script = p.script[0], p.script[1:]
	}
	name, clock := p.Name, p.Clock
	p.mu.Unlock()
	if name == "" {
		name = "scripted"
	}
	if clock == nil {
		clock = time.Now
	}

	b := llm.NewMessageBuilder(ScriptedAPI, name, req.Model, clock(), emit)
	b.Start()
	fail := func(e *llm.Error) (*core.AssistantMessage, error) {
		e.Provider, e.Model = name, req.Model.ID
		return b.Fail(e)
	}
	switch {
	case !ok:
		return fail(&llm.Error{Kind: llm.ErrorUnknown, Message: "llmtest: the script has no response left"})
	case resp.status != 0:
		return fail(httpError(resp, clock()))
	case resp.raw != "":
		return fail(&llm.Error{Kind: llm.ErrorUnknown, Message: "llmtest: RawStream needs a fake server"})
	}

	wait := func() bool {
		if resp.gate == nil {
			return ctx.Err() == nil
		}
		select {
		case <-resp.gate:
			return ctx.Err() == nil
		case <-ctx.Done():
			return false
		}
	}
	ids := toolIDs(resp, "call_%d")
	content := map[int]int{}
	deltas := 0
	for _, s := range resp.plan() {
		if !wait() {
			return b.Abort(ctx)
		}
		blk := resp.blocks[s.block]
		i := content[s.block]
		switch s.op {
		case opStart:
			switch blk.kind {
			case kindText:
				content[s.block] = b.StartText()
			case kindThinking:
				content[s.block] = b.StartThinking()
			case kindToolCall:
				content[s.block] = b.StartToolCall(ids[s.block], blk.call.Name)
			}
		case opDelta:
			switch blk.kind {
			case kindText:
				b.AppendText(i, s.text)
			case kindThinking:
				b.AppendThinking(i, s.text)
			case kindToolCall:
				b.AppendToolCall(i, s.text)
			}
			deltas++
			if deltas == resp.hangAfter {
				<-ctx.Done()
				return b.Abort(ctx)
			}
		case opSignature:
			b.SetThinkingSignature(i, s.text)
		case opStop:
			b.End(i)
		}
	}
	if !wait() {
		return b.Abort(ctx)
	}
	if resp.midError != "" {
		return fail(midStreamError(resp.midError))
	}
	u := resp.usage
	b.SetUsage(core.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite})
	switch resp.stopReason() {
	case "length", "max_tokens":
		return b.Done(core.StopReasonLength)
	case "refusal", "content_filter":
		b.EndAll()
		return fail(&llm.Error{Kind: llm.ErrorRefusal, Message: "the model declined to answer"})
	case "toolUse", "tool_use", "tool_calls":
		return b.Done(core.StopReasonToolUse)
	}
	if len(ids) > 0 {
		return b.Done(core.StopReasonToolUse)
	}
	return b.Done(core.StopReasonStop)
}

// httpError is the error a real provider returns for resp's HTTP error.
func httpError(resp Response, now time.Time) *llm.Error {
	e := &llm.Error{Kind: llm.ErrorUnknown, StatusCode: resp.status, Message: "llmtest: HTTP " + strconv.Itoa(resp.status)}
	switch {
	case resp.errKind == errContextLength:
		e.Kind = llm.ErrorContextLength
		e.Message = "prompt is too long (HTTP 400)"
	case resp.status == http.StatusTooManyRequests:
		e.Kind, e.Retryable = llm.ErrorRateLimit, true
	case resp.status == http.StatusRequestTimeout:
		e.Kind, e.Retryable = llm.ErrorTimeout, true
	case resp.status >= 500:
		e.Retryable = true
	}
	if e.Retryable {
		e.RetryAfter = retryAfter(http.Header(resp.header), now)
	}
	return e
}

// retryAfter reads Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if sec, err := strconv.ParseFloat(v, 64); err == nil && sec > 0 {
		return time.Duration(sec * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// midStreamError is the error a real provider returns for an error event.
func midStreamError(errType string) *llm.Error {
	e := &llm.Error{Kind: llm.ErrorUnknown, Message: "llmtest: " + errType}
	switch errType {
	case "overloaded_error", "api_error", "server_error":
		e.Retryable = true
	case "rate_limit_error":
		e.Kind, e.Retryable = llm.ErrorRateLimit, true
	}
	return e
}
