package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// Store is what a Member keeps in the shared database: its leases and its
// entry in the instance registry.
type Store interface {
	store.Leases
	store.Instances
}

// Holder is the work a wanted lease guards (a platform connection).
type Holder interface {
	// Acquired is called on the member's goroutine once the lease is
	// held; it starts the work and returns without waiting for it.
	Acquired(l store.Lease)
	// Lost is called on the member's goroutine when the lease was taken
	// over, could not be renewed in time, or is being released (drain);
	// it stops the work and returns once it has stopped, or when ctx
	// ends. A lease is released only after Lost returned.
	Lost(ctx context.Context)
}

// DefaultTTL is the lease length when Options.TTL is zero.
const DefaultTTL = 10 * time.Second

// Options configure a Member. Zero values are the documented defaults.
type Options struct {
	// Store holds the leases and the registry. Required.
	Store Store
	// Name is the operator's name for this instance; "" means the host
	// name.
	Name string
	// TTL is how long a lease lasts unless renewed; a dead instance's
	// work moves within TTL plus one Interval. Zero: DefaultTTL.
	TTL time.Duration
	// Interval is how often the member renews the leases it holds and
	// tries for those it wants; zero: min(TTL/4, 1s). The registry
	// heartbeat is written every TTL/3.
	Interval time.Duration
	// Info is what the registry shows about this instance (JSON), read
	// at each heartbeat; nil means {}. It is called on the member's
	// goroutine and must not block.
	Info func() []byte
	// Now is the local clock for the self-fencing deadline; nil means
	// time.Now.
	Now func() time.Time
	// Log receives lease changes (info) and store failures (warn); nil
	// discards them.
	Log *slog.Logger
}

// Member is this instance's membership of the cluster: it records the
// instance in the registry and heartbeats it, and keeps the leases it was
// asked to want, starting a Holder's work when the lease is won and
// stopping it when it is lost. It stops the work by itself, before the
// lease can expire, when it cannot renew (the database is unreachable):
// so two instances never run the same work, as long as their clocks tick
// at the same rate.
//
// Want is called before Run; Leases and ID are safe from any goroutine.
type Member struct {
	opts Options
	id   string
	log  *slog.Logger

	mu      sync.Mutex
	wanted  []*wanted
	started bool
	stop    chan struct{}
	done    chan struct{}
}

// wanted is one lease the member keeps trying to hold. Its fields are
// owned by Run's goroutine, except held, which Leases reads under mu.
type wanted struct {
	name   string
	holder Holder

	// op serializes the keeper's work on this lease with Unwant; the
	// fields below are guarded by it (held also by Member.mu, for Leases).
	op      sync.Mutex
	removed bool
	held    store.Lease // Owner "" when not held
	// renewedAt is the local time the last successful acquire or renew
	// started: the lease is surely ours until renewedAt+TTL.
	renewedAt time.Time
}

// New returns a member with a fresh instance ID (Name plus random
// hex). It does no IO.
func New(opts Options) *Member {
	if opts.Name == "" {
		opts.Name = hostName()
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Interval <= 0 {
		opts.Interval = min(opts.TTL/4, time.Second)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Info == nil {
		opts.Info = func() []byte { return []byte("{}") }
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var b [6]byte
	rand.Read(b[:])
	return &Member{opts: opts, id: opts.Name + "-" + hex.EncodeToString(b[:]), log: log,
		stop: make(chan struct{}), done: make(chan struct{})}
}

// ID is this instance's owner name in leases and the registry.
func (m *Member) ID() string { return m.id }

// Store is the store the member keeps its leases in.
func (m *Member) Store() Store { return m.opts.Store }

// TTL is the lease length.
func (m *Member) TTL() time.Duration { return m.opts.TTL }

// Want asks the member to hold lease name whenever it can, running
// holder's work while it does. It may be called before or during Run.
func (m *Member) Want(name string, holder Holder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wanted = append(m.wanted, &wanted{name: name, holder: holder})
}

// Unwant stops wanting lease name: if it is held, its holder's work is
// stopped (Lost) and the lease released at once, so another instance can
// take it without waiting for expiry. It returns when done.
func (m *Member) Unwant(ctx context.Context, name string) {
	m.mu.Lock()
	var w *wanted
	if i := slices.IndexFunc(m.wanted, func(w *wanted) bool { return w.name == name }); i >= 0 {
		w = m.wanted[i]
		m.wanted = slices.Delete(m.wanted, i, i+1)
	}
	m.mu.Unlock()
	if w == nil {
		return
	}
	w.op.Lock()
	defer w.op.Unlock()
	w.removed = true
	if w.held.Owner != "" {
		m.lose(ctx, w, true)
	}
}

// Register records the instance in the registry; Run does it too, but a
// daemon calls it first so a bad database fails its start.
func (m *Member) Register(ctx context.Context) error {
	_, err := m.opts.Store.PutInstance(ctx, store.Instance{ID: m.id, Name: m.opts.Name, Info: m.opts.Info()})
	if err != nil {
		return fmt.Errorf("cluster: register instance %s: %w", m.id, err)
	}
	return nil
}

// Run heartbeats and keeps the wanted leases until Drain, which it then
// serves: it stops every holder's work, releases the leases and records
// the instance as stopped. ctx ending stops it the same way. It returns
// when drained.
func (m *Member) Run(ctx context.Context) {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return
	}
	m.started = true
	m.mu.Unlock()
	defer close(m.done)
	t := time.NewTicker(m.opts.Interval)
	defer t.Stop()
	lastBeat := time.Time{}
	for {
		now := m.opts.Now()
		if now.Sub(lastBeat) >= m.opts.TTL/3 {
			if _, err := m.opts.Store.PutInstance(ctx, store.Instance{ID: m.id, Name: m.opts.Name, Info: m.opts.Info()}); err != nil {
				m.log.Warn("cluster: heartbeat failed", "instance", m.id, "err", err)
			} else {
				lastBeat = now
			}
		}
		m.keep(ctx)
		select {
		case <-t.C:
		case <-ctx.Done():
			m.drain(context.WithoutCancel(ctx))
			return
		case <-m.stop:
			m.drain(ctx)
			return
		}
	}
}

// keep renews the held leases that are due, gives up those it cannot keep,
// and tries for the others.
func (m *Member) keep(ctx context.Context) {
	m.mu.Lock()
	list := append([]*wanted(nil), m.wanted...)
	m.mu.Unlock()
	ttl := m.opts.TTL
	for _, w := range list {
		m.keepOne(ctx, w, ttl)
	}
}

// keepOne renews w or tries for it.
func (m *Member) keepOne(ctx context.Context, w *wanted, ttl time.Duration) {
	w.op.Lock()
	defer w.op.Unlock()
	if w.removed {
		return
	}
	start := m.opts.Now()
	if w.held.Owner != "" {
		// Renewed every tick, not only when due: a take-over (an
		// expiry a paused process slept through) is noticed within
		// one Interval. Connection leases are few.
		l, ok, err := m.opts.Store.RenewLease(ctx, w.held, ttl)
		switch {
		case err == nil && ok:
			m.setHeld(w, l, start)
		case err == nil:
			m.log.Info("cluster: lease taken over", "lease", w.name, "by", l.Owner)
			m.lose(ctx, w, false)
		case m.opts.Now().After(w.renewedAt.Add(ttl * 2 / 3)):
			// Another instance may take it a third of TTL from now:
			// stop first.
			m.log.Warn("cluster: cannot renew a lease in time; giving it up", "lease", w.name, "err", err)
			m.lose(ctx, w, false)
		default:
			m.log.Warn("cluster: lease renewal failed; retrying", "lease", w.name, "err", err)
		}
		return
	}
	l, ok, err := m.opts.Store.AcquireLease(ctx, w.name, m.id, ttl)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("cluster: lease acquisition failed", "lease", w.name, "err", err)
		}
		return
	}
	if ok {
		m.setHeld(w, l, start)
		m.log.Info("cluster: lease acquired", "lease", w.name, "fence", l.Fence)
		w.holder.Acquired(l)
	}
}

func (m *Member) setHeld(w *wanted, l store.Lease, at time.Time) {
	m.mu.Lock()
	w.held, w.renewedAt = l, at
	m.mu.Unlock()
}

// lose stops w's work and, when release, gives its lease up. w.op is
// held.
func (m *Member) lose(ctx context.Context, w *wanted, release bool) {
	m.mu.Lock()
	l := w.held
	w.held = store.Lease{}
	m.mu.Unlock()
	w.holder.Lost(ctx)
	if release {
		if err := m.opts.Store.ReleaseLease(ctx, l); err != nil {
			m.log.Warn("cluster: lease release failed; it will expire", "lease", w.name, "err", err)
		} else {
			m.log.Info("cluster: lease released", "lease", w.name)
		}
	}
}

// drain stops every holder's work, releases its lease and marks the
// instance stopped.
func (m *Member) drain(ctx context.Context) {
	m.mu.Lock()
	list := append([]*wanted(nil), m.wanted...)
	m.mu.Unlock()
	for _, w := range list {
		w.op.Lock()
		if w.held.Owner != "" {
			m.lose(ctx, w, true)
		}
		w.op.Unlock()
	}
	in := store.Instance{ID: m.id, Name: m.opts.Name, Info: m.opts.Info(), StoppedAt: m.opts.Now().UnixMilli()}
	if _, err := m.opts.Store.PutInstance(ctx, in); err != nil {
		m.log.Warn("cluster: could not record the instance as stopped", "instance", m.id, "err", err)
	}
}

// Drain ends Run: the work of every held lease is stopped and the leases
// released at once, so other instances take them over without waiting
// for expiry. It returns when done or when ctx ends (then Run still
// finishes in the background).
func (m *Member) Drain(ctx context.Context) error {
	m.mu.Lock()
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	started := m.started
	m.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case <-m.done:
		return nil
	case <-ctx.Done():
		return errors.New("cluster: drain did not finish: " + context.Cause(ctx).Error())
	}
}

// Leases reports the wanted leases this member holds now, by name.
func (m *Member) Leases() []store.Lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Lease
	for _, w := range m.wanted {
		if w.held.Owner != "" {
			out = append(out, w.held)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
