package slack_test

import (
	"context"
	"errors"
	"sync"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
)

// journalSink stands for the gate and the dispatcher's journal: a
// DedupeKey seen before is a duplicate, accepted (nil) but not new, as the
// real dispatcher treats it. fails makes that many Submits fail (a journal
// error); stuck makes Submit wait for its context, as a stuck journal
// would. It takes notices too (bridges.SystemEventSink).
//
// rec records what is taken as new and the notices; journalSink is a
// wrapper, not a bridgetest.Sink, because it has what that lacks: the
// duplicate check, the count of every Submit, and the stuck journal. Its
// failures stay here rather than in rec.FailNext because a journal that is
// down refuses duplicates too.
type journalSink struct {
	rec bridgetest.Sink

	mu       sync.Mutex
	seen     map[string]bool
	dups     int
	attempts int
	fails    int
	stuck    bool
}

var _ bridges.SystemEventSink = (*journalSink)(nil)

func (s *journalSink) Submit(ctx context.Context, m bridges.Inbound) error {
	s.mu.Lock()
	s.attempts++
	if s.stuck {
		s.mu.Unlock()
		<-ctx.Done()
		return ctx.Err()
	}
	defer s.mu.Unlock()
	if s.fails > 0 {
		s.fails--
		return errors.New("journal: disk full")
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if m.DedupeKey != "" && s.seen[m.DedupeKey] {
		s.dups++
		return nil
	}
	s.seen[m.DedupeKey] = true
	return s.rec.Submit(ctx, m)
}

func (s *journalSink) State(bridges.State, error) {}

func (s *journalSink) SystemEvent(ctx context.Context, m bridges.Inbound, text, key string) error {
	return s.rec.SystemEvent(ctx, m, text, key)
}

// set changes the failure mode.
func (s *journalSink) set(fails int, stuck bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails, s.stuck = fails, stuck
}

// counts returns the messages taken as new, the duplicates and all Submit
// calls.
func (s *journalSink) counts() (fresh []bridges.Inbound, dups, attempts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Inbound(), s.dups, s.attempts
}
