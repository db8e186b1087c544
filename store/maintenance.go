package store

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Pruner is the part of a store that [Maintenance] works through: deleting
// rows that have outlived their purpose. [SQLite] implements it; a
// PostgreSQL store implements the same two methods with its own SQL.
//
// Both methods are called from the maintenance goroutine while the
// dispatcher and the bridges write, so they must be safe for concurrent use,
// honour ctx (Stop cancels it to end a prune in flight), and delete in short
// transactions rather than hold the writer for the whole backlog. A prune
// that fails or is cancelled part way keeps, and counts, what it deleted.
type Pruner interface {
	// PruneJournal deletes done and dropped journal entries, and delivered
	// run outcomes, last updated before the cutoff (unix ms), and returns
	// how many rows went; see [Journal]. A pruned entry's dedupe key can be
	// appended again.
	PruneJournal(ctx context.Context, before int64) (int64, error)
	// PruneLedger deletes outbound ledger rows recorded before the cutoff
	// (unix ms) and returns how many went.
	PruneLedger(ctx context.Context, before int64) (int64, error)
}

var _ Pruner = (*SQLite)(nil)

// The defaults of [MaintenanceOptions].
const (
	defaultJournalRetention = 24 * time.Hour
	defaultLedgerRetention  = 7 * 24 * time.Hour
	defaultMaintenanceEvery = time.Hour
)

// MaintenanceOptions configure a [Maintenance] job. Zero values are the
// documented defaults.
type MaintenanceOptions struct {
	// JournalRetention keeps finished journal entries (and so their dedupe
	// keys) and delivered run outcomes this long after their last update.
	// It must cover how long a platform may redeliver a message, or a
	// redelivery is accepted as new. Zero: 24 h.
	JournalRetention time.Duration
	// LedgerRetention keeps outbound ledger rows this long after they were
	// recorded. A row stops a reply chunk being sent twice only until its
	// delivery is marked done; the rest is for the record. Zero: 7 days.
	LedgerRetention time.Duration
	// Every is the wait between the end of one pass and the start of the
	// next, so a slow pass never makes passes run back to back. Zero: 1 h.
	Every time.Duration
	// Logger receives failed passes (warn) and what a pass deleted
	// (debug); nil discards them.
	Logger *slog.Logger
	// Now is the time the cutoffs are taken from; nil means time.Now.
	Now func() time.Time
	// After returns a channel that receives once d has passed; nil means
	// time.After. Tests pass a fake to run passes without waiting.
	After func(d time.Duration) <-chan time.Time
}

// PruneResult counts the rows one maintenance pass deleted, by kind.
type PruneResult struct {
	// Journal counts journal entries (with their dedupe keys) and run
	// outcomes.
	Journal int64
	// Ledger counts outbound ledger rows.
	Ledger int64
}

// Maintenance is the store's periodic housekeeping: it prunes the inbound
// journal after JournalRetention and the outbound ledger after
// LedgerRetention, once when it starts and then every Every, whatever
// bridges are configured. A pass that fails is logged and the next one
// tries again; nothing it does stops the process.
//
// Its one goroutine is owned by Start and Stop, which fit the daemon's
// component model (start returns at once, stop ends the goroutine and
// waits). A Maintenance runs once: Start after Start or Stop fails. Prune
// may be called at any time, from any goroutine.
type Maintenance struct {
	p    Pruner
	opts MaintenanceOptions
	log  *slog.Logger

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc // ends the goroutine's ctx; nil before Start
	done    chan struct{}      // closed when the goroutine has returned
}

// NewMaintenance builds a maintenance job over p, which must not be nil.
// It does no IO and starts nothing; Start does.
func NewMaintenance(p Pruner, opts MaintenanceOptions) *Maintenance {
	if opts.JournalRetention <= 0 {
		opts.JournalRetention = defaultJournalRetention
	}
	if opts.LedgerRetention <= 0 {
		opts.LedgerRetention = defaultLedgerRetention
	}
	if opts.Every <= 0 {
		opts.Every = defaultMaintenanceEvery
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.After == nil {
		// An unfired time.After timer left behind by Stop is collected
		// (Go 1.23+), so the job needs no timer to stop.
		opts.After = time.After
	}
	return &Maintenance{p: p, opts: opts, log: opts.Logger}
}

// errMaintenanceStarted is returned by a Start after Start or Stop.
var errMaintenanceStarted = errors.New("store: maintenance already started or stopped; make a new one")

// Start begins the job's goroutine, which runs a pass at once and then one
// every Every until Stop. It returns without waiting for the first pass, so
// a large backlog does not delay start-up. ctx bounds only Start: the
// goroutine keeps ctx's values but not its cancellation, and ends at Stop.
func (m *Maintenance) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return errMaintenanceStarted
	}
	m.started = true
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel, m.done = cancel, make(chan struct{})
	go m.loop(runCtx, m.done)
	return nil
}

// Stop ends the goroutine, cancelling a pass in flight (what it deleted
// stays deleted), and waits for it to return or for ctx to end, whichever
// is first; in the second case it returns ctx's cause, and the goroutine
// still returns as soon as the cancelled prune does. Stop before Start, and
// a second Stop, are harmless.
func (m *Maintenance) Stop(ctx context.Context) error {
	m.mu.Lock()
	cancel, done := m.cancel, m.done
	m.started = true // a Start after Stop would run unowned
	m.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// loop runs passes until ctx ends, then closes done.
func (m *Maintenance) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	for {
		m.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-m.opts.After(m.opts.Every):
		}
	}
}

// pass runs one Prune and logs how it went.
func (m *Maintenance) pass(ctx context.Context) {
	res, err := m.Prune(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		// Stop cut the pass short; that is not a failure.
		m.log.Debug("store maintenance stopped during a prune", "journalRows", res.Journal, "ledgerRows", res.Ledger)
	case err != nil:
		m.log.Warn("store maintenance: prune failed; the next pass tries again",
			"err", err, "journalRows", res.Journal, "ledgerRows", res.Ledger, "next", m.opts.Every)
	case res.Journal > 0 || res.Ledger > 0:
		m.log.Debug("store maintenance pruned", "journalRows", res.Journal, "ledgerRows", res.Ledger)
	}
}

// Prune runs one pass in the calling goroutine: it prunes the journal and
// then the ledger, with cutoffs taken from Now, and reports what each
// deleted. The ledger is pruned even when the journal prune fails, so one
// table's trouble does not let the other grow; the error joins both
// failures. It is safe to call concurrently with the job's own passes.
func (m *Maintenance) Prune(ctx context.Context) (PruneResult, error) {
	now := m.opts.Now()
	var (
		res  PruneResult
		errs []error
		err  error
	)
	res.Journal, err = m.p.PruneJournal(ctx, now.Add(-m.opts.JournalRetention).UnixMilli())
	if err != nil {
		errs = append(errs, err)
	}
	res.Ledger, err = m.p.PruneLedger(ctx, now.Add(-m.opts.LedgerRetention).UnixMilli())
	if err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}
