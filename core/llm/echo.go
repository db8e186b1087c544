package llm

import (
	"context"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/prompt"
)

// Echo is the echo provider: no network, no model. It answers
// "echo: <the words of the last user message>" (see echoReply), streamed one
// word per delta, for
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
	reply := echoReply(req)
	i := b.StartText()
	for word := range strings.SplitAfterSeq(reply, " ") {
		if ctx.Err() != nil {
			return b.Abort(ctx)
		}
		b.AppendText(i, word)
	}
	return b.Done(core.StopReasonStop)
}

// echoReply is the echo model's answer to the last user message of req:
// "echo: " and the words the user typed, without the metadata blocks the
// prompt builder put around them. Prompts the user did not type are not
// echoed as if they had: the one that opens a session after /new or /reset
// gets a greeting, and a heartbeat poll (its last paragraph) is
// acknowledged with HEARTBEAT_OK, while the system events queued before it
// come back, so they reach the heartbeat's target as an alert.
func echoReply(req *Request) string {
	u := lastUser(req)
	if u == nil {
		return "echo: "
	}
	if p := u.Provenance; p != nil && p.Kind == core.ProvenanceInternalSystem {
		switch p.Source {
		case core.ProvenanceSourceReset:
			return "echo: a new session has started. Say something and I will echo it."
		case core.ProvenanceSourceHeartbeat:
			text := strings.TrimSpace(u.Text())
			i := strings.LastIndex(text, "\n\n")
			if i < 0 {
				return "HEARTBEAT_OK"
			}
			return "echo: " + strings.TrimSpace(text[:i])
		}
	}
	return "echo: " + prompt.StripForDisplay(u.Text())
}

// lastUser returns the last user message of req, or nil.
func lastUser(req *Request) *core.UserMessage {
	if req == nil {
		return nil
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if u, ok := req.Messages[i].(*core.UserMessage); ok && u != nil {
			return u
		}
	}
	return nil
}
