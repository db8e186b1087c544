package slack_test

import (
	"context"
	"errors"
	"sync"

	"github.com/switchboardhq/switchboard/bridges"
)

// journalSink stands for the gate and the dispatcher's journal: a
// DedupeKey seen before is a duplicate, accepted (nil) but not new, as the
// real dispatcher treats it. fails makes that many Submits fail (a journal
// error); stuck makes Submit wait for its context, as a stuck journal
// would. It takes notices too (bridges.SystemEventSink).
type journalSink struct {
	mu       sync.Mutex
	seen     map[string]bool
	fresh    []bridges.Inbound
	dups     int
	attempts int
	fails    int
	stuck    bool
	notices  []notice
}

// notice is one SystemEvent call.
type notice struct {
	msg       bridges.Inbound
	text, key string
}

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
	s.fresh = append(s.fresh, m)
	return nil
}

func (s *journalSink) State(bridges.State, error) {}

func (s *journalSink) SystemEvent(_ context.Context, m bridges.Inbound, text, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, notice{m, text, key})
	return nil
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
	return append([]bridges.Inbound(nil), s.fresh...), s.dups, s.attempts
}

func (s *journalSink) allNotices() []notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]notice(nil), s.notices...)
}
