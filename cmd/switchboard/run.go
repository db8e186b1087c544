package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/channels"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// shutdownTimeout bounds a graceful stop: intake stops, in-flight work is
// finished or journaled, then everything closes.
const shutdownTimeout = 10 * time.Second

func runCommand() *command {
	return &command{
		name:    "run",
		summary: "start the daemon (gateway, bridges, scheduler)",
		help: `Loads the configuration, opens the state store and starts every configured
component. /healthz answers as soon as the gateway listens; /readyz answers 200
once every component has started. SIGINT or SIGTERM stops it gracefully within
10 seconds; a second signal exits at once.`,
		run: runDaemon,
	}
}

func runDaemon(ctx context.Context, c *cli, g *globalFlags, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(c.stderr, "switchboard run: takes no arguments, got %q\n", args)
		return exitUsage
	}
	cfg, path, stateDir, code := c.loadConfigAndState(g.config, config.ForRun)
	if cfg == nil {
		return code
	}
	log := c.logger(g)
	defer startProfile(c.lookup, c.stderr)()
	d := newDaemon(log)
	tokenCmd := c.suggest(c.withConfig(path, "gateway", "token")...)
	gw := wire(d, cfg, wiring{stateDir: stateDir, home: c.home, configPath: path, lookup: c.lookup, registry: c.registry(), clock: c.clock, tokenCommand: tokenCmd}, log)

	sigs, stopSignals := c.signals()
	defer stopSignals()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := d.start(ctx); err != nil {
		fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
		stopCtx, cancelStop := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancelStop()
		if err := d.stop(stopCtx); err != nil {
			fmt.Fprintf(c.stderr, "switchboard: while stopping: %v\n", err)
		}
		return exitFailure
	}
	ready := []any{"version", version, "config", path, "stateDir", stateDir, "url", gatewayURL(cfg.Gateway)}
	if cfg.Gateway.EffectiveAuthMode() == gateway.AuthToken && cfg.Gateway.Auth.Token == "" {
		// The command that prints the token, runnable as shown (issue 26,
		// finding 1: after `make run`, plain `switchboard gateway token`
		// found no configuration).
		ready = append(ready, "tokenCommand", tokenCmd)
	}
	if cfg.Gateway.EffectiveAuthMode() == gateway.AuthToken {
		// A link that signs a browser in once (issue 26): the code rides in
		// the URL fragment, which browsers never send to a server, and is
		// spent by its first use or after gateway.LoginCodeTTL.
		if code, err := gw.LoginCode(); err == nil {
			ready = append(ready, "signInURL", gatewayURL(cfg.Gateway)+"#login="+code,
				"signInURLExpires", gateway.LoginCodeTTL.String())
		}
	}
	log.Info("switchboard ready", ready...)

	select {
	case <-ctx.Done():
		log.Info("shutting down", "reason", context.Cause(ctx))
	case s := <-sigs:
		log.Info("shutting down", "signal", s.String())
	}
	stopCtx, cancelStop := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancelStop()
	done := make(chan error, 1)
	go func() { done <- d.stop(stopCtx) }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintf(c.stderr, "switchboard: shutdown: %v\n", err)
			return exitFailure
		}
		log.Info("stopped")
		return exitOK
	case s := <-sigs:
		fmt.Fprintf(c.stderr, "switchboard: second %s during shutdown; exiting without waiting\n", s)
		return exitFailure
	}
}

// wiring is what wire needs besides the configuration.
type wiring struct {
	stateDir, home, configPath string
	lookup                     config.LookupEnv
	// registry is the bridges the binary carries.
	registry bridges.Registry
	// clock drives the scheduler; nil means the real clock.
	clock queue.Clock
	// tokenCommand prints the gateway token, for the daemon's log.
	tokenCommand string
}

// wire adds every component of the daemon in start order. Adding a
// component to `run` is one d.add call here; stop order is the reverse, so
// intake (gateway, bridges) stops before the dispatcher finishes or
// journals its work, and the store closes last.
//
// The gateway is built first because it observes the dispatcher's runs;
// it gets its backend (store, dispatcher, runner) once they exist, before
// it starts listening.
func wire(d *daemon, cfg *config.Config, w wiring, log *slog.Logger) *gateway.Server {
	var ch *clusterHost // set below, before anything can scrape
	gw := gateway.New(cfg.Gateway, gateway.Deps{
		Gauges:       func() map[string]float64 { return ch.gauges() },
		Logger:       log.With("component", "gateway"),
		Readiness:    d.readiness,
		Version:      version,
		StateDir:     w.stateDir,
		ConfigPath:   w.configPath,
		TokenCommand: w.tokenCommand,
	})
	reg := w.registry
	bh := newBridgeHost(reg, router{gateway: gw, fallback: logDeliverer{log: log.With("component", "delivery")}}, log.With("component", "bridges"))
	deliver := bh.router
	active := bh.active(cfg)

	var st store.Full
	d.add("store",
		func(ctx context.Context) (err error) {
			st, err = openStore(ctx, cfg, w.stateDir)
			return err
		},
		func(context.Context) error { return st.Close() },
	)
	ch = wireCluster(d, cfg, func() store.Full { return st }, gw, bh.statuses, log.With("component", "cluster"))
	// Journal, dedupe and ledger pruning, whatever bridges run; it stops
	// before the store closes.
	var maint *store.Maintenance
	d.add("store-maintenance",
		func(ctx context.Context) error {
			maint = store.NewMaintenance(st, store.MaintenanceOptions{Logger: log.With("component", "store-maintenance")})
			return maint.Start(ctx)
		},
		func(ctx context.Context) error { return maint.Stop(ctx) },
	)

	var runner *agent.Runner
	var disp *queue.Dispatcher
	var hb *heartbeat.Runner
	var crons *heartbeat.Cron
	cronTool := &heartbeat.CronTool{}
	var approvals *exectool.Approvals
	closeTools := func() error { return nil }
	d.add("dispatcher",
		func(ctx context.Context) (err error) {
			// Set before the dispatcher can deliver anything: the router is
			// read concurrently from then on.
			bh.router.Ledger = st
			if cfg.Tools.Exec.Enabled {
				approvals = &exectool.Approvals{
					Timeout: time.Duration(cfg.Tools.Exec.ApprovalTimeoutSec) * time.Second,
					OnEvent: gw.PublishApproval,
					// A waiting command is said in the log, with where to
					// answer it (issue 26, finding 4).
					Logger:   log.With("component", "exec"),
					AnswerAt: "in the web chat at " + gatewayURL(cfg.Gateway) + " (on the command's card, or under Command approvals)",
				}
			}
			runner, closeTools, err = newRunner(cfg, st, log, runnerOptions{
				stateDir: w.stateDir, home: w.home, configPath: w.configPath, approvals: approvals,
				extra: []tools.Tool{cronTool, &channels.MessageTool{Deliverer: deliver, Targets: active, TargetHelp: active.TargetHelp()}},
			})
			if err != nil {
				return err
			}
			owners, err := tools.NewOwners(cfg.Commands.OwnerAllowFrom)
			if err != nil {
				return fmt.Errorf("commands.ownerAllowFrom%w", err)
			}
			if len(cfg.Commands.OwnerAllowFrom) == 0 {
				log.Info("no owner configured (commands.ownerAllowFrom): write, edit, cron, sessions_list, sessions_history and exec " +
					"run only in heartbeats, cron jobs and gateway turns")
			}
			disp, err = queue.New(queue.Options{
				Config: cfg.Messages.Queue,
				Lanes:  map[string]int{queue.LaneMain: cfg.Agents.Defaults.MaxConcurrent, queue.LaneCron: max(cfg.Cron.MaxConcurrentRuns, 1)},
				Logger: log.With("component", "queue"),
			}, queue.Deps{
				IsOwner:   owners.IsOwner,
				Runner:    runner,
				Journal:   st,
				Deliverer: deliver,
				Observers: []queue.Observer{gw, bh.typing},
				Leases:    ch.leases(),
			})
			if err != nil {
				return err
			}
			ch.disp.Store(disp)
			hb, err = newHeartbeat(cfg, w, heartbeat.Deps{
				Dispatcher: disp, Deliverer: deliver, Sessions: st, State: st, OnEvent: gw.PublishHeartbeat, Targets: bridges.Enabled{All: reg, On: active},
			}, ch.heartbeatClaim(cfg), log)
			if err != nil {
				return err
			}
			if err := disp.Observe(hb); err != nil {
				return err
			}
			crons, err = heartbeat.NewCron(heartbeat.CronOptions{Config: cfg.Cron, Clock: w.clock, Logger: log.With("component", "cron")},
				heartbeat.CronDeps{Store: st, Journal: st, Dispatcher: disp, Heartbeat: hb, Sessions: st, OnEvent: gw.PublishCron,
					// An announcement that no bridge takes, or to a
					// channel that is off, fails the run (issue 26,
					// finding 6) rather than going to the log.
					Deliverer: channels.Owned{Router: deliver}, Targets: bridges.Enabled{All: reg, On: active}})
			if err != nil {
				return err
			}
			if err := disp.Observe(crons); err != nil {
				return err
			}
			cronTool.Cron = crons // before any turn can call it
			ch.crons.Store(crons)
			// Before the dispatcher replays its journal: cron runs a crash
			// interrupted are recognised when their turns end.
			if err := crons.Load(ctx); err != nil {
				return fmt.Errorf("cron: %w", err)
			}
			backend := gatewayBackend(cfg, w, st, disp, runner, deliver, gw)
			backend.Heartbeat, backend.Cron = hb, crons
			backend.Approvals = approvals
			backend.Channels = func() []gateway.ChannelStatus {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				return ch.channelStatuses(ctx, bh.statuses())
			}
			backend.Logout = bh.logout
			backend.LoginStart, backend.LoginWait = bh.loginStart, bh.loginWait
			backend.Targets = active
			gw.Attach(backend)
			if err := disp.Start(ctx); err != nil {
				return err
			}
			if err := hb.Start(ctx); err != nil {
				return err
			}
			return crons.Start(ctx)
		},
		func(ctx context.Context) error {
			if crons != nil {
				crons.Stop(ctx)
			}
			if hb != nil {
				hb.Stop(ctx)
			}
			err := disp.Stop(ctx)
			bh.typing.Close()
			runner.Close()
			closeTools()
			return err
		},
	)

	d.add("gateway", gw.Start, gw.Stop)
	wireBridges(d, cfg, w, bh, ch, func() store.Full { return st }, func() *queue.Dispatcher { return disp }, log.With("component", "bridges"))
	return gw
}

// gatewayBackend is what the gateway's methods act on.
func gatewayBackend(cfg *config.Config, w wiring, st store.Full, disp *queue.Dispatcher, runner *agent.Runner, deliver queue.Deliverer, gw *gateway.Server) gateway.Backend {
	b := gateway.Backend{
		Store: st, Dispatcher: disp, Runner: runner, Deliverer: deliver,
		DefaultModel: cfg.Agents.Defaults.Model.Primary,
		Agents:       []gateway.AgentInfo{{ID: core.DefaultAgentID}},

		CommandOwnerConfigured: len(cfg.Commands.OwnerAllowFrom) > 0,
	}
	for name, p := range cfg.Models.Providers {
		for _, m := range p.Models {
			id := name + "/" + m.ID
			b.Models = append(b.Models, gateway.ModelInfo{ID: id, Name: m.ID, Provider: name, ContextWindow: m.ContextWindow})
			if id == b.DefaultModel {
				b.ContextTokens = m.ContextWindow
			}
		}
	}
	slices.SortFunc(b.Models, func(a, c gateway.ModelInfo) int { return strings.Compare(a.ID, c.ID) })
	if w.configPath != "" {
		b.Config = newConfigService(w.configPath, w.lookup, applyConfig(gw))
	}
	return b
}

// applyConfig applies what can change without a restart: the gateway's
// shared secret (clients that used the old one are disconnected with 4001).
// Every other changed section needs a restart.
func applyConfig(gw *gateway.Server) applyFunc {
	return func(old, new *config.Config) (applied, restart []string) {
		if old == nil {
			return nil, changedSections(nil, new)
		}
		oa, na := old.Gateway, new.Gateway
		if oa.Auth != na.Auth {
			mode := string(na.EffectiveAuthMode())
			secret := na.Auth.Token
			if mode == string(gateway.AuthPassword) {
				secret = na.Auth.Password
			}
			if (mode == string(gateway.AuthToken) && secret == "") || gw.RotateSecret(mode, secret) != nil {
				restart = append(restart, "gateway.auth")
			} else {
				applied = append(applied, "gateway.auth")
			}
			oa.Auth, na.Auth = gateway.AuthConfig{}, gateway.AuthConfig{}
		}
		if !reflect.DeepEqual(oa, na) {
			restart = append(restart, "gateway")
		}
		for _, sec := range changedSections(old, new) {
			if sec != "gateway" {
				restart = append(restart, sec)
			}
		}
		return applied, restart
	}
}

// router sends each delivery to the component that owns its channel: web
// chat replies to the gateway, everything else to the bridges (until they
// exist, to the log).
type router struct {
	gateway  queue.Deliverer
	fallback queue.Deliverer
}

// Deliver implements queue.Deliverer.
func (r router) Deliver(ctx context.Context, d queue.Delivery) error {
	if d.Route.Channel == core.WebchatChannel {
		return r.gateway.Deliver(ctx, d)
	}
	return r.fallback.Deliver(ctx, d)
}

// logDeliverer stands in for the bridge router until bridges exist: it
// records that a reply had nowhere to go.
type logDeliverer struct{ log *slog.Logger }

func (l logDeliverer) Deliver(_ context.Context, del queue.Delivery) error {
	l.log.Warn("no bridge for this reply; it is recorded in the transcript only",
		"channel", del.Route.Channel, "session", del.SessionKey, "run", del.RunID, "payloads", len(del.Replies))
	return nil
}

// component is one long-running part of the daemon. start returns when the
// component is ready or has failed; background work it begins is owned by
// the component and ended by stop.
type component struct {
	name  string
	start func(ctx context.Context) error
	stop  func(ctx context.Context) error
}

// daemon starts components in order, tracks their state for /readyz, and
// stops the started ones in reverse order.
type daemon struct {
	log        *slog.Logger
	components []*component

	mu      sync.Mutex
	state   map[string]string
	started []*component
}

func newDaemon(log *slog.Logger) *daemon {
	return &daemon{log: log, state: map[string]string{}}
}

func (d *daemon) add(name string, start, stop func(context.Context) error) {
	d.components = append(d.components, &component{name: name, start: start, stop: stop})
	d.setState(name, "pending")
}

func (d *daemon) setState(name, state string) {
	d.mu.Lock()
	d.state[name] = state
	d.mu.Unlock()
}

// start starts each component in order and stops at the first failure,
// returning it; the caller then stops what did start.
func (d *daemon) start(ctx context.Context) error {
	for _, comp := range d.components {
		d.setState(comp.name, "starting")
		began := time.Now()
		if err := comp.start(ctx); err != nil {
			d.setState(comp.name, "failed")
			return err
		}
		d.mu.Lock()
		d.state[comp.name] = "ready"
		d.started = append(d.started, comp)
		d.mu.Unlock()
		d.log.Debug("component started", "component", comp.name, "took", time.Since(began))
	}
	return nil
}

// stop stops the started components in reverse order. Every component is
// given the chance to stop even if an earlier one failed.
func (d *daemon) stop(ctx context.Context) error {
	d.mu.Lock()
	started := d.started
	d.started = nil
	d.mu.Unlock()
	var errs []error
	for i := len(started) - 1; i >= 0; i-- {
		comp := started[i]
		d.setState(comp.name, "stopping")
		if err := comp.stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", comp.name, err))
		}
		d.setState(comp.name, "stopped")
	}
	return errors.Join(errs...)
}

// readiness backs /readyz: ready when every component is ready.
func (d *daemon) readiness() (bool, map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]string, len(d.state))
	ready := true
	for name, s := range d.state {
		out[name] = s
		if s != "ready" && !strings.HasPrefix(name, channelStatePrefix) {
			ready = false
		}
	}
	return ready, out
}
