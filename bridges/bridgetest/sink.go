// Package bridgetest holds test helpers shared by the bridges' tests and
// their platform fakes: a recording Sink, deadline-bounded waits, and
// Changes, the change notification the fakes' WaitFor methods are built on.
package bridgetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
)

// WaitFor is how long Wait and Eventually wait before giving up.
const WaitFor = 10 * time.Second

// SystemEvent is one event a Sink took through SystemEvent.
type SystemEvent struct {
	Msg              bridges.Inbound
	Text, ContextKey string
}

// Notice is one notice a Sink took through Notice.
type Notice struct {
	AgentID, Text, ContextKey string
}

// StateChange is one state a bridge reported.
type StateChange struct {
	State bridges.State
	Err   error
}

// Sink records what a bridge hands it: messages, states, system events
// and notices. FailNext makes that many Submits fail first (a journal
// that is down). Safe for concurrent use; the zero value is ready.
type Sink struct {
	mu       sync.Mutex
	got      []bridges.Inbound
	states   []StateChange
	events   []SystemEvent
	notices  []Notice
	failNext int
	changes  Changes
}

var (
	_ bridges.Sink            = (*Sink)(nil)
	_ bridges.SystemEventSink = (*Sink)(nil)
	_ bridges.NoticeSink      = (*Sink)(nil)
)

// FailNext makes the next n Submits fail.
func (s *Sink) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = n
}

// Submit implements bridges.Sink.
func (s *Sink) Submit(_ context.Context, m bridges.Inbound) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.changes.Changed()
	if s.failNext > 0 {
		s.failNext--
		return errors.New("bridgetest: journal unavailable")
	}
	s.got = append(s.got, m)
	return nil
}

// State implements bridges.Sink.
func (s *Sink) State(st bridges.State, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states = append(s.states, StateChange{st, err})
	s.changes.Changed()
}

// SystemEvent implements bridges.SystemEventSink.
func (s *Sink) SystemEvent(_ context.Context, msg bridges.Inbound, text, contextKey string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, SystemEvent{msg, text, contextKey})
	s.changes.Changed()
	return nil
}

// Notice implements bridges.NoticeSink.
func (s *Sink) Notice(_ context.Context, agentID, text, contextKey string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, Notice{agentID, text, contextKey})
	s.changes.Changed()
	return nil
}

// Inbound returns the submitted messages.
func (s *Sink) Inbound() []bridges.Inbound {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// States returns the reported states.
func (s *Sink) States() []StateChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.states)
}

// Events returns the system events.
func (s *Sink) Events() []SystemEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// Notices returns the notices.
func (s *Sink) Notices() []Notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.notices)
}

// Eventually reports whether cond holds within WaitFor, re-checking it
// whenever the sink records something, so cond should look only at the
// sink; for a caller that fails with its own message (see Wait).
func (s *Sink) Eventually(cond func() bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), WaitFor)
	defer cancel()
	return s.changes.WaitFor(ctx, cond) == nil
}

// Wait waits until cond holds, re-checking whenever the sink records
// something, and fails t after WaitFor.
func (s *Sink) Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !s.Eventually(cond) {
		t.Fatalf("waiting for %s: not within %s", what, WaitFor)
	}
}

// Eventually polls cond every few milliseconds until it holds (true) or
// WaitFor passes (false); for state nothing notifies about.
func Eventually(cond func() bool) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(WaitFor)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			return false
		}
	}
	return true
}
