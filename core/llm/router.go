package llm

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// RouterOptions are a Router's dependencies. The zero value is usable.
type RouterOptions struct {
	// HTTPClient sends every provider's requests. Nil means one default
	// client shared by the providers (see ProviderOptions.HTTPClient).
	HTTPClient *http.Client
	// Clock stamps messages. Nil means time.Now.
	Clock func() time.Time
	// Sleep waits d before a retry, returning early with an error when ctx
	// ends. Nil means a timer; tests pass a func that records d and
	// returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives a warning for each retry and fallback. Nil discards.
	Logger *slog.Logger
	// Providers adds or replaces providers by name, ahead of the
	// configuration: a test's fake, or an embedding program's own.
	Providers map[string]Provider
}

// Router streams a model call by "<provider>/<model>" reference, retrying
// transient failures and falling back to other models, but only while
// nothing has reached the caller: once a reply starts streaming, its
// outcome is final. A Router is safe for concurrent use.
type Router struct {
	providers map[string]Provider
	models    map[string]map[string]ModelConfig
	sleep     func(context.Context, time.Duration) error
	logger    *slog.Logger
	clock     func() time.Time
}

// The retry policy.
const (
	// maxRetries is how many times one model is retried after a retryable
	// failure, so a model gets at most maxRetries+1 attempts.
	maxRetries = 3
	// firstBackoff doubles after each retry, up to maxBackoff.
	firstBackoff = time.Second
	maxBackoff   = 30 * time.Second
	// maxRetryAfter caps the wait a provider may ask for.
	maxRetryAfter = 60 * time.Second
	// jitter spreads each backoff by ±20%, so clients failed by the same
	// overload do not come back in step.
	jitter = 0.2
)

// EchoProvider is the provider name that resolves to the echo provider
// when the configuration does not define it.
const EchoProvider = "echo"

// NewRouter builds one provider per entry of cfg.Providers, plus those of
// opts.Providers, plus echo (as "echo") unless either defines that name.
func NewRouter(cfg ModelsConfig, opts RouterOptions) (*Router, error) {
	r := &Router{
		providers: map[string]Provider{},
		models:    map[string]map[string]ModelConfig{},
		sleep:     opts.Sleep,
		logger:    opts.Logger,
		clock:     ProviderOptions{Clock: opts.Clock}.clock(),
	}
	if r.sleep == nil {
		r.sleep = sleep
	}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	popts := ProviderOptions{HTTPClient: opts.HTTPClient, Clock: opts.Clock}
	if len(cfg.Providers) > 0 {
		// One client, so providers share its connection pool.
		popts.HTTPClient = httpClient(popts)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Providers)) {
		pc := cfg.Providers[name]
		if err := pc.Validate(); err != nil {
			return nil, fmt.Errorf("llm: models.providers.%s: %w", name, err)
		}
		models := make(map[string]ModelConfig, len(pc.Models))
		for _, m := range pc.Models {
			models[m.ID] = m
		}
		r.models[name] = models
		if _, injected := opts.Providers[name]; injected {
			continue
		}
		p, err := NewProvider(name, pc, popts)
		if err != nil {
			return nil, err
		}
		r.providers[name] = p
	}
	maps.Copy(r.providers, opts.Providers)
	if _, ok := r.providers[EchoProvider]; !ok {
		r.providers[EchoProvider] = NewEcho(EchoProvider, popts)
	}
	return r, nil
}

// Resolve finds the provider and model of a "<provider>/<model>"
// reference. A model the provider's configuration does not list resolves
// to a ModelConfig with just its ID (unknown limits, zero cost).
func (r *Router) Resolve(ref string) (Provider, ModelConfig, error) {
	mr, err := core.ParseModelRef(ref)
	if err != nil {
		return nil, ModelConfig{}, fmt.Errorf("llm: %w", err)
	}
	p, ok := r.providers[mr.Provider]
	if !ok {
		return nil, ModelConfig{}, fmt.Errorf("llm: model %q: no provider %q; add it under models.providers", ref, mr.Provider)
	}
	m, ok := r.models[mr.Provider][mr.Model]
	if !ok {
		m = ModelConfig{ID: mr.Model}
	}
	return p, m, nil
}

// Stream calls refs[0] with req (its Model set from the reference), then
// each fallback in turn, delivering events through emit as
// Provider.Stream does; emit sees exactly one start, and done or error at
// the end.
//
// A retryable failure (rate limit, overload, server error, dropped
// connection) is retried up to 3 times, after 1s, 2s, 4s (±20%, at most
// 30s), or the Retry-After the provider asked for (at most 60s). When the
// model's retries run out, or it fails in a way a retry cannot fix, the
// next model is tried, except after a context-length or refusal error,
// which another model would not cure. All of this happens only before the
// first content event: once text, thinking or a tool call has been
// emitted, the attempt's outcome is final. Stream returns the final
// message of the attempt that ended the call, and its error.
func (r *Router) Stream(ctx context.Context, refs []string, req *Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error) {
	if emit == nil {
		emit = func(core.AssistantMessageEvent) {}
	}
	if req == nil {
		req = &Request{}
	}
	if len(refs) == 0 {
		b := NewMessageBuilder("", "", ModelConfig{}, r.clock(), emit)
		b.Start()
		return b.Fail(&Error{Kind: ErrorUnknown, Message: "no model configured; set agents.defaults.model.primary"})
	}
	var (
		msg *core.AssistantMessage
		err error
	)
	for i, ref := range refs {
		last := i == len(refs)-1
		p, model, rerr := r.Resolve(ref)
		if rerr != nil {
			a := &attempt{emit: emit}
			mr, _ := core.ParseModelRef(ref)
			b := NewMessageBuilder("", mr.Provider, ModelConfig{ID: mr.Model}, r.clock(), a.handle)
			b.Start()
			msg, err = b.Fail(&Error{Kind: ErrorUnknown, Message: rerr.Error(), Err: rerr})
			if last {
				a.finish()
				return msg, err
			}
			r.logger.Warn("llm: falling back to the next model", "model", ref, "next", refs[i+1], "error", rerr.Error())
			continue
		}
		call := *req
		call.Model = model
		for n := 0; ; n++ {
			a := &attempt{emit: emit}
			msg, err = p.Stream(ctx, &call, a.handle)
			if err == nil || a.flushed || ctx.Err() != nil {
				a.finish()
				return msg, err
			}
			e := AsError(err)
			if e.Retryable && n < maxRetries {
				d := backoff(n, e.RetryAfter)
				r.logger.Warn("llm: retrying model call", "model", ref, "retry", n+1, "delay", d, "error", e.Error())
				if serr := r.sleep(ctx, d); serr != nil {
					return a.abort(ctx, msg)
				}
				continue
			}
			if last || e.Kind == ErrorContextLength || e.Kind == ErrorRefusal {
				a.finish()
				return msg, err
			}
			r.logger.Warn("llm: falling back to the next model", "model", ref, "next", refs[i+1], "error", e.Error())
			break
		}
	}
	return msg, err // not reached: the last ref always returns
}

// Bind returns a Provider that streams through r with refs (primary, then
// fallbacks), ignoring the Model of each request, for code written against
// Provider. Resolve refs[0] for the model's limits.
func (r *Router) Bind(refs ...string) Provider {
	return boundRouter{r: r, refs: slices.Clone(refs)}
}

// boundRouter is a Router with its references fixed.
type boundRouter struct {
	r    *Router
	refs []string
}

func (b boundRouter) Stream(ctx context.Context, req *Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error) {
	return b.r.Stream(ctx, b.refs, req, emit)
}

// backoff is the wait before retry n+1 (n from 0).
func backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, maxRetryAfter)
	}
	d := min(firstBackoff<<n, maxBackoff)
	return time.Duration(float64(d) * (1 - jitter + 2*jitter*rand.Float64()))
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// attempt relays one provider call's events to the caller, holding back
// start, and an error that arrives before any content, until the Router
// knows the attempt is final; a retried attempt's events are dropped, so
// the caller sees one start however many attempts it took.
type attempt struct {
	emit func(core.AssistantMessageEvent)
	// start is a copy of the start event's message as it was then:
	// empty, which it no longer is by the time start is delivered.
	start    core.AssistantMessage
	hasStart bool
	// flushed is set once start has been delivered: content (or done)
	// arrived and the attempt can no longer be retried.
	flushed  bool
	terminal core.AssistantMessageEvent
	held     bool
}

func (a *attempt) handle(ev core.AssistantMessageEvent) {
	switch ev.Type {
	case core.AssistantEventStart:
		if ev.Partial != nil {
			a.start = *ev.Partial
		}
		a.hasStart = true
	case core.AssistantEventError:
		if !a.flushed {
			a.terminal, a.held = ev, true
			return
		}
		a.emit(ev)
	default:
		a.flushStart()
		a.emit(ev)
	}
}

func (a *attempt) flushStart() {
	if a.flushed {
		return
	}
	a.flushed = true
	if a.hasStart {
		a.emit(core.AssistantMessageEvent{Type: core.AssistantEventStart, Partial: &a.start})
	}
}

// finish delivers what was held back: the attempt is final.
func (a *attempt) finish() {
	a.flushStart()
	if a.held {
		a.held = false
		a.emit(a.terminal)
	}
}

// abort ends the call because ctx ended while waiting to retry: the last
// failed attempt becomes the result, marked aborted.
func (a *attempt) abort(ctx context.Context, msg *core.AssistantMessage) (*core.AssistantMessage, error) {
	e := abortError(ctx)
	if msg != nil {
		e.Provider, e.Model = msg.Provider, msg.Model
		msg.StopReason = core.StopReasonAborted
		msg.ErrorMessage = e.Message
	}
	if a.held {
		a.terminal.Reason = core.StopReasonAborted
	}
	a.finish()
	return msg, e
}
