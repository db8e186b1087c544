package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testKey is the API key of every test provider; no error may show it.
const testKey = "sk-test-SECRET-0123456789"

// fixedTime is the clock of every test provider.
var fixedTime = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

func fixedClock() time.Time { return fixedTime }

// event is what a test keeps of an emitted event: emit may not retain the
// message pointers, so the interesting parts are copied.
type event struct {
	Type     core.AssistantEventType
	Index    int
	Delta    string
	Content  string
	ToolCall *core.ToolCall
	Reason   core.StopReason
	// Partial is a JSON snapshot of the message the event carried.
	Partial string
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []event
	// onEvent, if set, runs after each event is recorded.
	onEvent func(event)
}

func (r *recorder) emit(ev core.AssistantMessageEvent) {
	e := event{Type: ev.Type, Index: ev.ContentIndex, Delta: ev.Delta, Content: ev.Content, Reason: ev.Reason}
	if ev.ToolCall != nil {
		tc := *ev.ToolCall
		e.ToolCall = &tc
	}
	m := ev.Partial
	if m == nil {
		m = ev.Message
	}
	if m == nil {
		m = ev.Error
	}
	if m != nil {
		b, err := m.MarshalJSON()
		if err != nil {
			panic(err)
		}
		e.Partial = string(b)
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	f := r.onEvent
	r.mu.Unlock()
	if f != nil {
		f(e)
	}
}

// types lists the events as "type" or "type:contentIndex", with the reason
// of done and error: "done(stop)".
func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.events))
	for i, e := range r.events {
		switch {
		case e.Type == core.AssistantEventDone || e.Type == core.AssistantEventError:
			out[i] = fmt.Sprintf("%s(%s)", e.Type, e.Reason)
		case e.Type == core.AssistantEventStart:
			out[i] = string(e.Type)
		default:
			out[i] = fmt.Sprintf("%s:%d", e.Type, e.Index)
		}
	}
	return out
}

func (r *recorder) count(t core.AssistantEventType) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.Type == t {
			n++
		}
	}
	return n
}

func (r *recorder) ofType(t core.AssistantEventType) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, e := range r.events {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

func wantTypes(t *testing.T, rec *recorder, want ...string) {
	t.Helper()
	if got := rec.types(); !slices.Equal(got, want) {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// sleeper is a RouterOptions.Sleep that records the delays and returns at
// once.
type sleeper struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.delays)
}

// vendorCase runs a test against one API's fake.
type vendorCase struct {
	name      string
	api       llm.API
	newServer func(testing.TB, ...llmtest.Response) *llmtest.Server
}

var vendors = []vendorCase{
	{"anthropic", llm.APIAnthropicMessages, llmtest.NewAnthropicServer},
	{"openai", llm.APIOpenAICompletions, llmtest.NewOpenAIServer},
}

// newProvider returns the provider of srv's API, named name.
func newProvider(name string, srv *llmtest.Server) llm.Provider {
	p, err := llm.NewProvider(name, srv.Config(testKey), llm.ProviderOptions{HTTPClient: srv.Client(), Clock: fixedClock})
	if err != nil {
		panic(err)
	}
	return p
}

// testModel is the model of direct provider calls.
var testModel = llm.ModelConfig{
	ID:   "test-model",
	Cost: llm.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
}

func userRequest(text string) *llm.Request {
	return &llm.Request{
		Model:    testModel,
		Messages: []core.Message{core.NewUserText(text, 1)},
	}
}

// asError asserts err is an *llm.Error.
func asError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return e
}

// noKey fails t if the API key appears in any of texts.
func noKey(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, testKey) {
			t.Errorf("API key leaked into %q", s)
		}
	}
}

// errorTexts is every string an error shows: its message, its chain's
// messages, and its formatted forms.
func errorTexts(err error) []string {
	var out []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		out = append(out, e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e))
	}
	return out
}

// jsonEqual compares two JSON documents structurally.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		gi, _ := json.MarshalIndent(g, "", "  ")
		wi, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("JSON mismatch:\n got %s\nwant %s", gi, wi)
	}
}
