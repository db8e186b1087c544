package channels

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// SupervisorOptions configure a Supervisor. Zero values are the documented
// defaults.
type SupervisorOptions struct {
	// Backoff paces restarts of a bridge whose Start returned on a
	// non-terminal failure; the zero value is 1 s doubling to 60 s, with
	// jitter. A run that reached StateConnected starts the backoff over.
	Backoff bridges.Backoff
	// Sleep waits between restarts and reports whether the full wait
	// passed; nil means bridges.Sleep. Tests make time virtual with it.
	Sleep func(ctx context.Context, d time.Duration) bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives state changes (info), failures (warn) and restarts;
	// nil discards them.
	Log *slog.Logger
	// OnState is called after every change of a bridge's state, outside
	// the supervisor's locks (the daemon's readiness map). It must not
	// block.
	OnState func(bridges.Status)
	// Standby picks the bridges that run on one instance of a cluster at
	// a time, under a lease (the daemon passes Descriptor.Exclusive when
	// instances share a store): Start builds them, so their replies can
	// be sent from here where the platform allows, but leaves them in
	// StateStandby until StartBridge; StandbyBridge puts one back. nil
	// means none.
	Standby func(desc bridges.Descriptor, section bridges.Section) bool
}

// SupervisorDeps is what the bridges' gates and replies go through.
type SupervisorDeps struct {
	// Router delivers replies; the supervisor adds each bridge to it when
	// it is built, and expects every added channel until then (see
	// Router.Expect). Required.
	Router *Router
	// Dispatch takes accepted messages. Required.
	Dispatch Dispatcher
	// Pairing keeps DM pairing codes and approvals; nil disables pairing
	// replies (unknown senders are dropped silently).
	Pairing PairingStore
	// AckReaction and AckScope are messages.ackReaction and
	// messages.ackReactionScope.
	AckReaction string
	AckScope    bridges.AckScope
	// Env is the environment every bridge gets (agent, session settings,
	// mention patterns, state directory, channel state). The supervisor
	// fills MediaDir (<StateDir>/media/<channel>, when StateDir is set) and
	// labels Log with the channel.
	Env bridges.Env
}

// Supervisor runs every configured bridge of a daemon. It builds each one
// from its Descriptor and Section, gates it, adds it to the router, and
// runs its Start on a goroutine it owns: a Start that returns on a
// non-terminal failure is started again with capped, jittered backoff; a
// terminal state (bad credentials, logged out, refused) parks the bridge,
// reported once, until StartBridge. StopBridge and StartBridge stop and
// start one bridge on demand. Each bridge has one state, the one Statuses
// and OnState report and /readyz, channels.status, the web page and
// /metrics show.
//
// Add is called before Start; the other methods are safe for concurrent
// use from any goroutine.
type Supervisor struct {
	opts SupervisorOptions
	deps SupervisorDeps
	log  *slog.Logger

	mu      sync.Mutex
	units   []*unit
	started bool
	stopped bool
	base    context.Context // ends at Stop
	cancel  context.CancelFunc
}

// unit is one bridge under supervision.
type unit struct {
	desc    bridges.Descriptor
	section bridges.Section
	bridge  bridges.Bridge
	gate    *Gate
	tracker *bridges.Tracker

	// Guarded by Supervisor.mu.
	run       *runState // the running loop, nil while stopped
	restarts  int
	lastRun   *runState // the loop that ran last, for Close
	reported  bridges.State
	connected bool // the current Start reported StateConnected at some point
	standby   bool // started only through StartBridge (Options.Standby)
}

// runState is one run loop of a unit, from StartBridge (or Start) to its
// stop.
type runState struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// NewSupervisor returns a supervisor with no bridges. It does no IO.
func NewSupervisor(opts SupervisorOptions, deps SupervisorDeps) *Supervisor {
	if opts.Sleep == nil {
		opts.Sleep = bridges.Sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Backoff.Rand == nil {
		opts.Backoff.Rand = bridges.NarrowJitter
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{opts: opts, deps: deps, log: log}
}

// Add registers a bridge to run: its descriptor and its configuration
// section, which it validates when the section has a Validate method (a
// section built in Go gets the checks the configuration loader makes).
// Add runs the bridge whether or not the section says it is enabled: the
// caller picks the bridges to run. Replies for its channel are held by the
// router from now until the bridge is built (Start), so a reply a restart
// interrupted waits for it. Call it before Start.
func (s *Supervisor) Add(desc bridges.Descriptor, section bridges.Section) error {
	if desc.Channel == "" || desc.New == nil {
		return fmt.Errorf("channels: bridge descriptor %q has no channel name or no constructor", desc.Channel)
	}
	if section == nil {
		return fmt.Errorf("channels: the %s bridge has no configuration section", desc.Channel)
	}
	if v, ok := section.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("channels.%s: %w", desc.Channel, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("channels: the %s bridge was added after the supervisor started", desc.Channel)
	}
	for _, u := range s.units {
		if u.desc.Channel == desc.Channel {
			return fmt.Errorf("channels: the %s bridge is added twice", desc.Channel)
		}
	}
	s.units = append(s.units, &unit{desc: desc, section: section})
	s.deps.Router.Expect(desc.Channel)
	return nil
}

// Start builds every added bridge and starts it. It returns once each one
// runs (not once each is connected: that is its state), or with the first
// bridge that cannot be built (a configuration it refuses); the bridges
// built by then are stopped by Stop. ctx bounds nothing after Start
// returns: the bridges run until Stop.
func (s *Supervisor) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("channels: the supervisor is already started")
	}
	s.started = true
	s.base, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	units := s.units
	s.mu.Unlock()
	for i, u := range units {
		if err := s.build(u); err != nil {
			// Its held replies, and those of the bridges after it, which
			// are not built either, go to the fallback: those bridges
			// will not come.
			for _, rest := range units[i:] {
				s.deps.Router.Settle(rest.desc.Channel)
			}
			return err
		}
		if s.opts.Standby != nil && s.opts.Standby(u.desc, u.section) {
			s.mu.Lock()
			u.standby = true
			s.mu.Unlock()
			s.setState(u, bridges.StateStandby, nil)
			continue
		}
		s.mu.Lock()
		err := s.startLocked(u)
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// BridgeRef names one bridge.
type BridgeRef struct {
	Channel, AccountID string
}

// StandbyBridges lists the bridges Options.Standby picked, in the order
// they were added; meaningful after Start.
func (s *Supervisor) StandbyBridges() []BridgeRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []BridgeRef
	for _, u := range s.units {
		if u.standby && u.bridge != nil {
			out = append(out, BridgeRef{Channel: u.desc.Channel, AccountID: core.NormalizeAccountID(u.bridge.AccountID())})
		}
	}
	return out
}

// StandbyBridge stops one bridge as StopBridge does and leaves it in
// StateStandby: another instance now holds its connection.
func (s *Supervisor) StandbyBridge(ctx context.Context, channel, accountID string) error {
	if err := s.StopBridge(ctx, channel, accountID); err != nil {
		return err
	}
	s.mu.Lock()
	u, err := s.findLocked(channel, accountID)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.setState(u, bridges.StateStandby, nil)
	return nil
}

// build makes u's bridge, its gate and its place in the router.
func (s *Supervisor) build(u *unit) error {
	env := s.deps.Env
	if env.StateDir != "" && env.MediaDir == "" {
		env.MediaDir = mediaDir(env.StateDir, u.desc.Channel)
	}
	env.Log = s.log.With("channel", u.desc.Channel)
	b, err := u.desc.New(u.section, env)
	if err != nil {
		return fmt.Errorf("%s: %w", u.desc.Channel, err)
	}
	if b.Name() != u.desc.Channel {
		if c, ok := b.(io.Closer); ok {
			_ = c.Close()
		}
		return fmt.Errorf("channels: the %s descriptor built a bridge named %q", u.desc.Channel, b.Name())
	}
	tracker := bridges.NewTracker(b.Name(), b.AccountID(), s.opts.Now, s.opts.OnState)
	g := &Gate{
		Channel: b.Name(), AccountID: b.AccountID(), Access: u.section.Policy(), Pairing: s.deps.Pairing,
		Dispatch: s.deps.Dispatch, History: &GroupHistory{}, Tracker: tracker, Log: s.log, Now: s.opts.Now,
		AckReaction: s.deps.AckReaction, AckScope: s.deps.AckScope,
		Reply: func(ctx context.Context, out bridges.Outbound) error {
			_, err := b.Deliver(ctx, out)
			return err
		},
	}
	if r, ok := b.(bridges.Reactor); ok {
		g.React = r.React
	}
	s.mu.Lock()
	u.bridge, u.gate, u.tracker = b, g, tracker
	s.mu.Unlock()
	s.deps.Router.AddWith(b, u.section.RouteOptions())
	return nil
}

// mediaDir is where a channel's attachments are kept.
func mediaDir(stateDir, channel string) string {
	return filepath.Join(stateDir, "media", channel)
}

// startLocked begins u's run loop unless it runs. s.mu is held.
func (s *Supervisor) startLocked(u *unit) error {
	if s.stopped {
		return errors.New("channels: the supervisor is stopped")
	}
	if u.run != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(s.base)
	rs := &runState{cancel: cancel, done: make(chan struct{})}
	prev := u.lastRun
	u.run, u.lastRun = rs, rs
	go s.loop(ctx, u, rs, prev)
	return nil
}

// loop runs u's Start until ctx ends or a terminal state parks it. prev is
// the loop that ran before (nil for the first): it may still be setting its
// final state after giving up u.run, so this one waits for it, lest that
// state overwrite this run's.
func (s *Supervisor) loop(ctx context.Context, u *unit, rs *runState, prev *runState) {
	defer close(rs.done)
	if prev != nil {
		<-prev.done
	}
	sink := &unitSink{gate: u.gate, s: s, u: u}
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		u.reported, u.connected = "", false
		s.mu.Unlock()
		s.setState(u, bridges.StateStarting, nil)
		err := u.bridge.Start(ctx, sink)
		if ctx.Err() != nil {
			s.finish(u, rs, bridges.StateStopped, nil)
			return
		}
		s.mu.Lock()
		reported, connected := u.reported, u.connected
		s.mu.Unlock()
		if reported.Terminal() {
			// The bridge said why; it stays down until the owner acts.
			if msg := u.tracker.Status().LastError; err == nil && msg != "" {
				err = errors.New(msg)
			}
			s.log.Warn("bridge stopped and will not be restarted; fix the cause, then restart it",
				"channel", u.desc.Channel, "state", string(reported), "err", err)
			s.finish(u, rs, reported, err)
			return
		}
		if connected {
			// Even if it lost the connection before returning: the
			// failures in a row that the backoff counts start over.
			attempt = 0
		}
		if err == nil {
			err = errors.New("the bridge stopped by itself")
		}
		delay := s.opts.Backoff.Delay(attempt)
		s.mu.Lock()
		u.restarts++
		s.mu.Unlock()
		s.setState(u, bridges.StateTransientDisconnect,
			bridges.RetryIn(fmt.Errorf("%w (restarting in %s)", err, delay.Round(time.Millisecond)), delay))
		s.log.Info("restarting bridge", "channel", u.desc.Channel, "in", delay.Round(time.Millisecond), "err", err)
		if !s.opts.Sleep(ctx, delay) {
			s.finish(u, rs, bridges.StateStopped, nil)
			return
		}
	}
}

// finish ends a run loop in state st.
func (s *Supervisor) finish(u *unit, rs *runState, st bridges.State, err error) {
	s.mu.Lock()
	if u.run == rs {
		u.run = nil
	}
	s.mu.Unlock()
	s.setState(u, st, err)
}

// setState enters st for u: its tracker (which calls OnState) and the log,
// through the gate, which logs changes only.
func (s *Supervisor) setState(u *unit, st bridges.State, err error) {
	u.gate.State(st, err)
}

// unitSink is the Sink a bridge runs with: its gate, with states recorded
// for the supervisor. A bridge reporting "stopped" is not taken at its
// word: whether it is stopped is the supervisor's to say.
type unitSink struct {
	gate *Gate
	s    *Supervisor
	u    *unit
}

var (
	_ bridges.Sink            = (*unitSink)(nil)
	_ bridges.SystemEventSink = (*unitSink)(nil)
	_ bridges.NoticeSink      = (*unitSink)(nil)
)

// Submit implements bridges.Sink.
func (k *unitSink) Submit(ctx context.Context, msg bridges.Inbound) error {
	return k.gate.Submit(ctx, msg)
}

// State implements bridges.Sink.
func (k *unitSink) State(st bridges.State, err error) {
	if st == bridges.StateStopped {
		return
	}
	k.s.mu.Lock()
	k.u.reported = st
	if st == bridges.StateConnected {
		k.u.connected = true
	}
	k.s.mu.Unlock()
	k.gate.State(st, err)
}

// SystemEvent implements bridges.SystemEventSink.
func (k *unitSink) SystemEvent(ctx context.Context, msg bridges.Inbound, text, contextKey string) error {
	return k.gate.SystemEvent(ctx, msg, text, contextKey)
}

// Notice implements bridges.NoticeSink.
func (k *unitSink) Notice(ctx context.Context, agentID, text, contextKey string) error {
	return k.gate.Notice(ctx, agentID, text, contextKey)
}

// find returns the unit of channel and account ("" is the default one).
// s.mu is held.
func (s *Supervisor) findLocked(channel, accountID string) (*unit, error) {
	accountID = core.NormalizeAccountID(accountID)
	for _, u := range s.units {
		if u.desc.Channel == strings.ToLower(channel) && u.bridge != nil && core.NormalizeAccountID(u.bridge.AccountID()) == accountID {
			return u, nil
		}
	}
	return nil, fmt.Errorf("%w: no %s bridge for account %q runs in this daemon; set channels.%s.enabled: true and restart it",
		ErrNoBridge, channel, accountID, strings.ToLower(channel))
}

// ErrNoBridge is wrapped by the errors of the methods that name a bridge
// the supervisor does not run, and is Router.DeliverOwned's error for a
// delivery no bridge takes.
var ErrNoBridge = errors.New("no such bridge")

// Bridge returns the bridge of channel and account ("" for the default
// one), running or not.
func (s *Supervisor) Bridge(channel, accountID string) (bridges.Bridge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := s.findLocked(channel, accountID)
	if err != nil {
		return nil, err
	}
	return u.bridge, nil
}

// StopBridge stops one bridge and waits until its Start has returned (or
// ctx ends). Its replies fail until StartBridge; its state is stopped.
func (s *Supervisor) StopBridge(ctx context.Context, channel, accountID string) error {
	s.mu.Lock()
	u, err := s.findLocked(channel, accountID)
	var rs *runState
	if err == nil {
		rs = u.run
	}
	s.mu.Unlock()
	if err != nil || rs == nil {
		return err
	}
	rs.cancel()
	select {
	case <-rs.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the %s bridge did not stop: %w", channel, context.Cause(ctx))
	}
}

// StartBridge starts one bridge that is stopped or parked in a terminal
// state (after the owner relinked it, say), with its backoff started
// over. A bridge that runs is left alone.
func (s *Supervisor) StartBridge(channel, accountID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := s.findLocked(channel, accountID)
	if err != nil {
		return err
	}
	if u.run != nil {
		return nil
	}
	s.log.Info("starting bridge on demand", "channel", u.desc.Channel)
	return s.startLocked(u)
}

// Stop stops every bridge, waits for their Starts to return (or ctx to
// end), then closes the bridges that hold resources (io.Closer). A
// bridge still running when ctx ends is not closed. A second Stop does
// nothing.
func (s *Supervisor) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	if s.cancel != nil {
		s.cancel()
	}
	units := s.units
	s.mu.Unlock()
	var errs []error
	for _, u := range units {
		s.mu.Lock()
		rs := u.lastRun
		s.mu.Unlock()
		if rs != nil {
			select {
			case <-rs.done:
			case <-ctx.Done():
				errs = append(errs, fmt.Errorf("the %s bridge did not stop: %w", u.desc.Channel, context.Cause(ctx)))
				continue
			}
		}
		if c, ok := u.bridge.(io.Closer); ok && u.bridge != nil {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("%s: close: %w", u.desc.Channel, err))
			}
		}
	}
	return errors.Join(errs...)
}

// BridgeStatus is one bridge as the supervisor reports it. Its RetryAt
// is when the bridge next tries to connect: the supervisor's next restart,
// or the bridge's own next attempt (see bridges.RetryIn).
type BridgeStatus struct {
	bridges.Status
	// Label is the platform's display name.
	Label string
	// Running reports that the bridge's Start runs or is due to run again
	// (false when stopped or parked in a terminal state).
	Running bool
	// Restarts counts the Starts the supervisor made after a failure.
	Restarts int
}

// Statuses reports every bridge, in the order they were added: the state
// the supervisor keeps, with the bridge's own record of what it last
// received and sent.
func (s *Supervisor) Statuses() []BridgeStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]BridgeStatus, 0, len(s.units))
	for _, u := range s.units {
		if u.bridge == nil {
			continue
		}
		st := u.tracker.Status()
		own := u.bridge.Status()
		if own.LastInboundAt.After(st.LastInboundAt) {
			st.LastInboundAt = own.LastInboundAt
		}
		if own.LastOutboundAt.After(st.LastOutboundAt) {
			st.LastOutboundAt = own.LastOutboundAt
		}
		out = append(out, BridgeStatus{Status: st, Label: u.desc.DisplayName(), Running: u.run != nil,
			Restarts: u.restarts})
	}
	return out
}
