package cluster

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Bus carries small notices between instances; store/postgres implements
// it with LISTEN/NOTIFY.
type Bus interface {
	// Notify sends payload to every instance listening on channel; one
	// round trip bounded by ctx.
	Notify(ctx context.Context, channel, payload string) error
	// Listen calls fn with each payload sent on channel, one at a time on
	// a goroutine of its own, until stop; it returns once listening.
	// Notices sent while a connection is being replaced may be lost.
	Listen(ctx context.Context, channel string, fn func(payload string)) (stop func(), err error)
}

// The bus channels of session handover.
const (
	// forwardChannel carries a session key whose messages were accepted
	// by an instance that does not hold the session: its holder adopts.
	forwardChannel = "switchboard_session_forward"
	// handbackChannel carries a session key released with work left (a
	// draining instance): any instance adopts.
	handbackChannel = "switchboard_session_handback"
	// signalChannel carries "<kind>\n<session key>": the holder stops or
	// aborts the session (a stop command or chat.abort taken elsewhere).
	signalChannel = "switchboard_session_signal"
)

// SessionLeasePrefix begins the name of every session's lease.
const SessionLeasePrefix = "session:"

// Sessions keeps this instance's session leases: the dispatcher's
// SessionLeases (queue.Deps.Leases). A session's lease is taken when a
// turn is about to run, renewed while held, and released when the session
// goes idle here. Forwarded sessions reach their holder over the bus, and
// a session won from another instance is adopted at once, so messages a
// dead instance left pending run again.
//
// Acquire, Release and Forward are safe from any goroutine; Start is
// called once before them and Stop once at the end.
type Sessions struct {
	m     *Member
	bus   Bus
	adopt func(ctx context.Context, key core.SessionKey) error
	log   *slog.Logger

	sweep  func(ctx context.Context) error
	signal func(key core.SessionKey, kind string)

	mu        sync.Mutex
	held      map[core.SessionKey]*heldSession
	releasing map[core.SessionKey]chan struct{}

	work     chan func(context.Context) // adoptions and notices, in order
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopBus  []func()
	stopOnce sync.Once
}

type heldSession struct {
	lease     store.Lease
	renewedAt time.Time
}

// NewSessions returns the session leases of member m; adopt is called when
// a session's pending messages should be taken up here (the dispatcher's
// Adopt). bus may be nil (then nothing is forwarded and instances rely on
// lease expiry alone).
func NewSessions(m *Member, bus Bus, adopt func(ctx context.Context, key core.SessionKey) error) *Sessions {
	ctx, cancel := context.WithCancel(context.Background())
	return &Sessions{m: m, bus: bus, adopt: adopt, log: m.log,
		held: map[core.SessionKey]*heldSession{}, releasing: map[core.SessionKey]chan struct{}{},
		work: make(chan func(context.Context), 1024), ctx: ctx, cancel: cancel}
}

// OnSweep sets what runs every lease length to take up the work dead
// instances left (the dispatcher's Sweep). Call it before Start.
func (s *Sessions) OnSweep(fn func(ctx context.Context) error) { s.sweep = fn }

// OnSignal sets what acts on a stop or abort another instance sent for a
// session this one holds (the dispatcher's Signal). Call it before Start.
func (s *Sessions) OnSignal(fn func(key core.SessionKey, kind string)) { s.signal = fn }

// Signal implements queue.SessionLeases.
func (s *Sessions) Signal(key core.SessionKey, kind string) {
	if s.bus == nil {
		return
	}
	s.enqueue(func(ctx context.Context) {
		if err := s.bus.Notify(ctx, signalChannel, kind+"\n"+string(key)); err != nil && ctx.Err() == nil {
			s.log.Warn("cluster: signalling a session failed", "session", key, "signal", kind, "err", err)
		}
	})
}

// Start listens on the bus and starts renewing the leases held.
func (s *Sessions) Start(ctx context.Context) error {
	if s.bus != nil {
		for _, ch := range []struct {
			name    string
			ifOwner bool
		}{{forwardChannel, true}, {handbackChannel, false}} {
			stop, err := s.bus.Listen(ctx, ch.name, func(payload string) {
				key := core.SessionKey(payload)
				if ch.ifOwner && !s.holds(key) {
					return
				}
				s.enqueue(func(ctx context.Context) { s.runAdopt(ctx, key) })
			})
			if err != nil {
				s.Stop(ctx)
				return err
			}
			s.stopBus = append(s.stopBus, stop)
		}
		stop, err := s.bus.Listen(ctx, signalChannel, func(payload string) {
			kind, key, ok := strings.Cut(payload, "\n")
			if !ok || s.signal == nil || !s.holds(core.SessionKey(key)) {
				return
			}
			s.signal(core.SessionKey(key), kind)
		})
		if err != nil {
			s.Stop(ctx)
			return err
		}
		s.stopBus = append(s.stopBus, stop)
	}
	if s.sweep != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			t := time.NewTicker(s.m.opts.TTL)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					if err := s.sweep(s.ctx); err != nil && s.ctx.Err() == nil {
						s.log.Warn("cluster: sweeping for work left behind failed", "err", err)
					}
				case <-s.ctx.Done():
					return
				}
			}
		}()
	}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case f := <-s.work:
				f(s.ctx)
			case <-s.ctx.Done():
				return
			}
		}
	}()
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.m.opts.Interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.renew()
			case <-s.ctx.Done():
				return
			}
		}
	}()
	return nil
}

func (s *Sessions) enqueue(f func(context.Context)) {
	select {
	case s.work <- f:
	default:
		// Full: the dispatcher's retry after lease expiry still runs it.
	}
}

func (s *Sessions) runAdopt(ctx context.Context, key core.SessionKey) {
	if err := s.adopt(ctx, key); err != nil && ctx.Err() == nil {
		s.log.Warn("cluster: adopting a session's messages failed", "session", key, "err", err)
	}
}

func (s *Sessions) holds(key core.SessionKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[key] != nil
}

// Acquire implements queue.SessionLeases.
func (s *Sessions) Acquire(ctx context.Context, key core.SessionKey) (store.Lease, bool, error) {
	s.mu.Lock()
	wait := s.releasing[key]
	s.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return store.Lease{}, false, context.Cause(ctx)
		}
	}
	start := s.m.opts.Now()
	l, ok, err := s.m.opts.Store.AcquireLease(ctx, SessionLeasePrefix+string(key), s.m.id, s.m.opts.TTL)
	if err != nil || !ok {
		return l, ok, err
	}
	s.mu.Lock()
	prev := s.held[key]
	s.held[key] = &heldSession{lease: l, renewedAt: start}
	s.mu.Unlock()
	if prev == nil && l.Fence > 1 {
		// Held before, maybe by an instance that died with messages
		// pending: take them up.
		s.enqueue(func(ctx context.Context) { s.runAdopt(ctx, key) })
	}
	return l, true, nil
}

// Release implements queue.SessionLeases: the lease is given up in the
// background; an Acquire of the same key waits for it.
func (s *Sessions) Release(key core.SessionKey) {
	s.mu.Lock()
	h := s.held[key]
	if h == nil || s.releasing[key] != nil {
		s.mu.Unlock()
		return
	}
	delete(s.held, key)
	done := make(chan struct{})
	s.releasing[key] = done
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 10*time.Second)
		defer cancel()
		if err := s.m.opts.Store.ReleaseLease(ctx, h.lease); err != nil {
			s.log.Warn("cluster: releasing a session lease failed; it will expire", "session", key, "err", err)
		}
		s.mu.Lock()
		delete(s.releasing, key)
		s.mu.Unlock()
		close(done)
	}()
}

// Forward implements queue.SessionLeases.
func (s *Sessions) Forward(key core.SessionKey) {
	if s.bus == nil {
		return
	}
	s.enqueue(func(ctx context.Context) {
		if err := s.bus.Notify(ctx, forwardChannel, string(key)); err != nil && ctx.Err() == nil {
			s.log.Warn("cluster: forwarding a session failed", "session", key, "err", err)
		}
	})
}

// renew extends the leases due (a third of TTL since the last renewal)
// and forgets those taken over.
func (s *Sessions) renew() {
	ttl := s.m.opts.TTL
	s.mu.Lock()
	var due []core.SessionKey
	for key, h := range s.held {
		if s.m.opts.Now().Sub(h.renewedAt) >= ttl/3 {
			due = append(due, key)
		}
	}
	s.mu.Unlock()
	for _, key := range due {
		s.mu.Lock()
		h := s.held[key]
		s.mu.Unlock()
		if h == nil {
			continue
		}
		start := s.m.opts.Now()
		l, ok, err := s.m.opts.Store.RenewLease(s.ctx, h.lease, ttl)
		s.mu.Lock()
		switch {
		case s.held[key] != h:
			// Released or re-acquired meanwhile.
		case err == nil && ok:
			h.lease, h.renewedAt = l, start
		case err == nil:
			delete(s.held, key)
			s.log.Warn("cluster: session taken over by another instance", "session", key, "by", l.Owner)
		}
		s.mu.Unlock()
	}
}

// Held lists the session leases this instance holds.
func (s *Sessions) Held() []store.Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]store.Lease, 0, len(s.held))
	for _, h := range s.held {
		out = append(out, h.lease)
	}
	return out
}

// Stop releases every session lease still held (a draining instance's
// sessions with work left) and tells the other instances to adopt them,
// then stops listening. Call it after the dispatcher stopped.
func (s *Sessions) Stop(ctx context.Context) {
	s.stopOnce.Do(func() {
		// Deaf first, so its own hand-back does not come back here.
		for _, stop := range s.stopBus {
			stop()
		}
		s.mu.Lock()
		held := s.held
		s.held = map[core.SessionKey]*heldSession{}
		s.mu.Unlock()
		for key, h := range held {
			if err := s.m.opts.Store.ReleaseLease(ctx, h.lease); err != nil {
				s.log.Warn("cluster: releasing a session lease failed; it will expire", "session", key, "err", err)
				continue
			}
			if s.bus != nil {
				if err := s.bus.Notify(ctx, handbackChannel, string(key)); err != nil {
					s.log.Warn("cluster: handing a session back failed; another instance adopts it later", "session", key, "err", err)
				}
			}
		}
		s.cancel()
		s.wg.Wait()
	})
}
