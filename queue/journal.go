package queue

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Journal is the durable record the dispatcher writes through: every
// accepted message, its run, and the run's outcome, plus the per-session
// queue settings. *store.SQLite implements it (see store.Journal and
// store.QueueSettings for each method's contract). Deleting old rows is not
// the dispatcher's job: store.Maintenance prunes the journal.
type Journal interface {
	ApplyJournal(ctx context.Context, b *store.JournalBatch) ([]store.JournalAccept, error)
	PendingJournal(ctx context.Context) ([]store.JournalEntry, error)
	UndeliveredOutcomes(ctx context.Context) ([]store.RunOutcome, error)
	AllQueueSettings(ctx context.Context) (map[core.SessionKey]json.RawMessage, error)
	PutQueueSettings(ctx context.Context, key core.SessionKey, v json.RawMessage) error
}

// maxCommitBatch bounds how many requests one transaction carries.
const maxCommitBatch = 512

// commitReq is one caller's share of a group commit.
type commitReq struct {
	batch store.JournalBatch
	done  chan commitResult // nil: the caller does not wait
}

type commitResult struct {
	accepts []store.JournalAccept
	err     error
}

// committer group-commits journal writes: whatever requests are waiting when
// a transaction starts are applied together, so many concurrent Submits
// cost one transaction instead of one each, while a lone Submit is written
// at once. It runs one goroutine, started by run and ended by close.
type committer struct {
	j    Journal
	reqs chan *commitReq
	done chan struct{}
	// onSend sees each batch as it is queued; nil: nothing does.
	onSend func(*store.JournalBatch)

	closeOnce sync.Once
	mu        sync.Mutex // guards closed against sends after close
	closed    bool
}

// errJournalClosed is returned for writes after the dispatcher stopped.
var errJournalClosed = errors.New("queue: the journal writer is closed")

func newCommitter(j Journal) *committer {
	return &committer{j: j, reqs: make(chan *commitReq, 4*maxCommitBatch), done: make(chan struct{})}
}

// apply writes b and waits until it is durable.
func (c *committer) apply(ctx context.Context, b store.JournalBatch) ([]store.JournalAccept, error) {
	req := &commitReq{batch: b, done: make(chan commitResult, 1)}
	if err := c.send(ctx, req); err != nil {
		return nil, err
	}
	select {
	case r := <-req.done:
		return r.accepts, r.err
	case <-ctx.Done():
		// The write may still happen; the caller treats the message as not
		// accepted, and a retry is caught by its dedupe key.
		return nil, context.Cause(ctx)
	}
}

// applyAsync queues b without waiting. Used for marks whose loss on a crash
// is harmless (a running mark: the entry replays either way; a delivered
// mark: at most one redelivery).
func (c *committer) applyAsync(b store.JournalBatch) {
	_ = c.send(context.Background(), &commitReq{batch: b})
}

func (c *committer) send(ctx context.Context, req *commitReq) error {
	if c.onSend != nil {
		c.onSend(&req.batch)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errJournalClosed
	}
	select {
	case c.reqs <- req:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// run is the writer loop; it returns when close has been called and every
// queued request is written.
func (c *committer) run() {
	defer close(c.done)
	pending := make([]*commitReq, 0, maxCommitBatch)
	for first := range c.reqs {
		pending = append(pending[:0], first)
	gather:
		for len(pending) < maxCommitBatch {
			select {
			case r, ok := <-c.reqs:
				if !ok {
					break gather
				}
				pending = append(pending, r)
			default:
				break gather
			}
		}
		c.write(pending)
	}
}

// write applies requests as one transaction; if that fails it retries them
// one by one, so one bad request cannot fail the others.
func (c *committer) write(reqs []*commitReq) {
	if len(reqs) > 1 {
		var merged store.JournalBatch
		for _, r := range reqs {
			merged.Append = append(merged.Append, r.batch.Append...)
			merged.Running = append(merged.Running, r.batch.Running...)
			merged.Complete = append(merged.Complete, r.batch.Complete...)
			merged.Dropped = append(merged.Dropped, r.batch.Dropped...)
			merged.Delivered = append(merged.Delivered, r.batch.Delivered...)
			merged.Fences = append(merged.Fences, r.batch.Fences...)
		}
		accepts, err := c.j.ApplyJournal(context.Background(), &merged)
		if err == nil {
			off := 0
			for _, r := range reqs {
				n := len(r.batch.Append)
				if r.done != nil {
					r.done <- commitResult{accepts: accepts[off : off+n]}
				}
				off += n
			}
			return
		}
	}
	for _, r := range reqs {
		b := r.batch
		accepts, err := c.j.ApplyJournal(context.Background(), &b)
		if r.done != nil {
			r.done <- commitResult{accepts: accepts, err: err}
		}
	}
}

// close stops intake and waits until everything queued is written.
func (c *committer) close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		close(c.reqs)
		c.mu.Unlock()
	})
	<-c.done
}
