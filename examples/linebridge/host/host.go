// Package host embeds Switchboard in a Go program with one bridge, the
// line bridge: the state store, an agent runner, the dispatcher, the reply
// router and a supervisor that runs the bridge. It is what `switchboard
// run` wires for its configured bridges, cut to the essentials, and what
// both cmd/linebridge and the example's end-to-end test run, so the test
// checks the code the example shows.
//
// A message travels: the bridge reads a line (linebridge) → the gate
// applies the access policy (channels.Gate, built by the supervisor) → the
// dispatcher journals it and queues it per session (queue) → the agent runs
// a turn with the model (core/agent, core/llm) → the dispatcher hands the
// reply to the router (channels.Router) → the bridge writes it back
// (linebridge's Deliver).
package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/channels"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/examples/linebridge"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// DefaultModel is the model Options.Model defaults to: the built-in echo
// provider, which answers "echo: <prompt>" without any network.
const DefaultModel = "echo/echo"

// Options configure a Host. Zero values are the documented defaults.
type Options struct {
	// StateDir holds the store (state.db) and the transcripts. Required;
	// one process at a time may use it.
	StateDir string
	// Line is the bridge's configuration section, as channels.line would
	// be in a configuration file.
	Line linebridge.Config
	// Session decides which direct chats share a session; the zero value
	// gives each sender a session of their own on this channel
	// (per-channel-peer), where Switchboard's default (main) would put
	// every sender in one.
	Session core.SessionConfig
	// Model is the primary model, "<provider>/<model>"; empty means
	// DefaultModel. Providers other than echo are configured in Models.
	Model string
	// Models configures model providers (models.providers).
	Models llm.ModelsConfig
	// Queue is messages.queue; zero fields are the queue's defaults.
	Queue queue.Config
	// Observers watch runs besides the typing indicator (a UI, metrics,
	// a test); they must not block.
	Observers []queue.Observer
	// Log receives every component's records; nil discards them.
	Log *slog.Logger
}

// Host is Switchboard running in-process with the line bridge. Its fields
// are for inspection (a status page, a test); Stop releases them.
type Host struct {
	// Store is the state store: journal, pairing, ledger, sessions index.
	Store *store.SQLite
	// Runner runs agent turns and keeps the transcripts.
	Runner *agent.Runner
	// Dispatcher journals and queues messages.
	Dispatcher *queue.Dispatcher
	// Supervisor runs the bridge.
	Supervisor *channels.Supervisor

	typing      *channels.Typing
	maintenance *store.Maintenance
}

// Start opens the store and starts everything, in the order the daemon
// does: the dispatcher before the bridge, so messages a crash left in the
// journal run again and their replies wait for the bridge. It returns once
// the bridge runs (not once it listens: see Addr). ctx bounds starting
// only: everything runs until Stop. On an error everything started is
// stopped again.
func Start(ctx context.Context, o Options) (h *Host, err error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.Session.DMScope == "" {
		o.Session.DMScope = core.DMScopePerChannelPeer
	}
	if !o.Line.IsEnabled() {
		return nil, errors.New("host: the line bridge is not enabled (Options.Line.Enabled)")
	}
	h = &Host{}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.Stop(context.WithoutCancel(ctx)))
			h = nil
		}
	}()

	if h.Store, err = store.Open(ctx, o.StateDir); err != nil {
		return h, err
	}
	// The journal (and its dedupe keys) and the outbound ledger are pruned
	// after a day and a week, hourly.
	h.maintenance = store.NewMaintenance(h.Store, store.MaintenanceOptions{Logger: o.Log.With("component", "store-maintenance")})
	if err := h.maintenance.Start(ctx); err != nil {
		return h, err
	}
	models, err := llm.NewRouter(o.Models, llm.RouterOptions{Logger: o.Log.With("component", "llm")})
	if err != nil {
		return h, err
	}
	h.Runner, err = agent.New(agent.Config{Model: core.ModelSelection{Primary: o.Model}, StateDir: o.StateDir},
		agent.Deps{Models: models, Sessions: h.Store, Logger: o.Log.With("component", "agent")})
	if err != nil {
		return h, err
	}

	// Replies go to the bridge owning their route; the ledger makes a
	// delivery repeated after a crash send only what is missing.
	router := &channels.Router{Ledger: h.Store}
	h.typing = &channels.Typing{Router: router, Log: o.Log}
	h.Dispatcher, err = queue.New(queue.Options{Config: o.Queue, Logger: o.Log.With("component", "queue")}, queue.Deps{
		Runner: h.Runner, Journal: h.Store, Deliverer: router,
		Observers: append([]queue.Observer{h.typing}, o.Observers...),
	})
	if err != nil {
		return h, err
	}
	h.Supervisor = channels.NewSupervisor(channels.SupervisorOptions{Log: o.Log.With("component", "bridges")}, channels.SupervisorDeps{
		Router: router, Dispatch: channels.QueueDispatcher{D: h.Dispatcher}, Pairing: h.Store,
		Env: bridges.Env{AgentID: core.DefaultAgentID, Session: o.Session, StateDir: o.StateDir, State: h.Store},
	})
	// Add makes the router hold replies for "line" until the bridge is
	// built, so journaled replies the dispatcher redelivers at Start wait.
	if err := h.Supervisor.Add(linebridge.Descriptor(), o.Line); err != nil {
		return h, err
	}
	if err := h.Dispatcher.Start(ctx); err != nil {
		return h, err
	}
	return h, h.Supervisor.Start(ctx)
}

// Addr returns the address the line bridge listens on, waiting until it
// does or ctx ends.
func (h *Host) Addr(ctx context.Context) (net.Addr, error) {
	b, err := h.Supervisor.Bridge(linebridge.Channel, "")
	if err != nil {
		return nil, err
	}
	lb, ok := b.(*linebridge.Bridge)
	if !ok {
		return nil, fmt.Errorf("host: the %s bridge is a %T", linebridge.Channel, b)
	}
	return lb.Addr(ctx)
}

// Stop stops everything in the reverse order of Start: the bridge first
// (no new messages), then the dispatcher (running turns finish, or stay
// in the journal for the next start, until ctx ends), then the runner and
// the store. It returns every error it met.
func (h *Host) Stop(ctx context.Context) error {
	var errs []error
	if h.Supervisor != nil {
		errs = append(errs, h.Supervisor.Stop(ctx))
	}
	if h.Dispatcher != nil {
		errs = append(errs, h.Dispatcher.Stop(ctx))
	}
	if h.typing != nil {
		h.typing.Close()
	}
	if h.Runner != nil {
		errs = append(errs, h.Runner.Close())
	}
	if h.maintenance != nil {
		errs = append(errs, h.maintenance.Stop(ctx))
	}
	if h.Store != nil {
		errs = append(errs, h.Store.Close())
	}
	return errors.Join(errs...)
}
