package llm

import (
	"context"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Echo is the echo provider: no network, no model. It answers
// "echo: <text of the last user message>", streamed one word per delta, for
// demos and tests. It never calls tools, reports zero usage and is safe for
// concurrent use.
type Echo struct {
	name  string
	clock func() time.Time
}

// Compile-time check that Echo is a Provider.
var _ Provider = (*Echo)(nil)

// NewEcho returns the echo provider under name.
func NewEcho(name string, opts ProviderOptions) *Echo {
	return &Echo{name: name, clock: opts.clock()}
}

// Stream emits start, text_start, one text_delta per word of the reply
// (each with its trailing space), text_end and done. When ctx ends between
// deltas it stops with StopReason aborted, keeping the words sent so far.
func (p *Echo) Stream(ctx context.Context, req *Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error) {
	var model ModelConfig
	if req != nil {
		model = req.Model
	}
	b := NewMessageBuilder(APIEcho, p.name, model, p.clock(), emit)
	b.Start()
	if ctx.Err() != nil {
		return b.Abort(ctx)
	}
	reply := "echo: " + lastUserText(req)
	i := b.StartText()
	for word := range strings.SplitAfterSeq(reply, " ") {
		if ctx.Err() != nil {
			return b.Abort(ctx)
		}
		b.AppendText(i, word)
	}
	return b.Done(core.StopReasonStop)
}

// lastUserText returns the text of the last user message of req.
func lastUserText(req *Request) string {
	if req == nil {
		return ""
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if u, ok := req.Messages[i].(*core.UserMessage); ok && u != nil {
			return u.Text()
		}
	}
	return ""
}
