package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/channels"
	"github.com/switchboardhq/switchboard/cluster"
	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// clusterHost is the daemon's membership of a cluster: with store.driver
// postgres it registers the instance and keeps the leases of the unique
// platform connections; with sqlite (one instance) it is idle.
type clusterHost struct {
	member   *cluster.Member   // nil with sqlite
	sessions *cluster.Sessions // nil with sqlite
	relay    *cluster.Relay    // nil with sqlite
	// disp is the dispatcher sessions are adopted into, once it exists.
	disp atomic.Pointer[queue.Dispatcher]
	// crons is the cron service, refreshed from the store with the sweep.
	crons atomic.Pointer[heartbeat.Cron]
	st    func() store.Full
}

// leases is the dispatcher's Deps.Leases: nil with one instance.
func (h *clusterHost) leases() queue.SessionLeases {
	if h.sessions == nil {
		return nil
	}
	return h.sessions
}

// adopt takes a session's pending messages up into the dispatcher.
func (h *clusterHost) adopt(ctx context.Context, key core.SessionKey) error {
	if d := h.disp.Load(); d != nil {
		return d.Adopt(ctx, key)
	}
	return nil
}

// wireCluster adds the cluster component, right after the store: it
// stops (drains: work stopped, leases released) just before the store
// closes.
//
// The gateway gw sees the runs of the other instances through the relay.
//
// bridgesOf reports this instance's bridges, for the registry: channels.status
// on another instance shows a bridge's state from the instance that holds
// its connection.
func wireCluster(d *daemon, cfg *config.Config, st func() store.Full, gw *gateway.Server, bridgesOf func() []gateway.ChannelStatus, log *slog.Logger) *clusterHost {
	h := &clusterHost{st: st}
	if cfg.Store.EffectiveDriver() != store.DriverPostgres {
		return h
	}
	d.add("cluster",
		func(ctx context.Context) error {
			ttl, err := cfg.Store.LeaseDuration()
			if err != nil {
				return err
			}
			info := func() []byte {
				b, _ := json.Marshal(instanceInfo{Version: version, PID: os.Getpid(), Gateway: gatewayURL(cfg.Gateway), Bridges: bridgesOf()})
				return b
			}
			m := cluster.New(cluster.Options{Store: st(), Name: cfg.Store.Instance, TTL: ttl, Info: info, Log: log})
			if err := m.Register(ctx); err != nil {
				return err
			}
			h.member = m
			var bus cluster.Bus
			if b, ok := st().(cluster.Bus); ok {
				bus = b
			}
			h.sessions = cluster.NewSessions(m, bus, h.adopt)
			h.sessions.OnSweep(func(ctx context.Context) error {
				var errs []error
				if c := h.crons.Load(); c != nil {
					errs = append(errs, c.Refresh(ctx))
				}
				if d := h.disp.Load(); d != nil {
					errs = append(errs, d.Sweep(ctx, 2*ttl))
				}
				return errors.Join(errs...)
			})
			h.sessions.OnSignal(func(key core.SessionKey, kind string) {
				if d := h.disp.Load(); d != nil {
					d.Signal(key, kind)
				}
			})
			if err := h.sessions.Start(ctx); err != nil {
				return err
			}
			if spill, ok := st().(cluster.Spill); ok && bus != nil {
				h.relay = cluster.NewRelay(m, bus, spill, gw.ReceiveRelay)
				if err := h.relay.Start(ctx); err != nil {
					return err
				}
				gw.SetRelay(h.relay)
			}
			go m.Run(context.WithoutCancel(ctx))
			log.Info("joined the cluster", "instance", m.ID(), "leaseTtl", ttl)
			return nil
		},
		func(ctx context.Context) error {
			if h.member == nil {
				return nil
			}
			// The dispatcher has stopped: sessions with work left go to
			// the other instances at once.
			h.sessions.Stop(ctx)
			if h.relay != nil {
				h.relay.Stop()
			}
			return h.member.Drain(ctx)
		},
	)
	return h
}

// gauges are the lease gauges of /metrics (switchboard_state{name=…}):
// cluster_session_leases and cluster_connection_leases, the leases this
// instance holds now, and cluster_lease:<name> 1 for each connection it
// holds. None with one instance.
func (h *clusterHost) gauges() map[string]float64 {
	if h == nil || h.member == nil {
		return nil
	}
	held := h.member.Leases()
	out := map[string]float64{
		"cluster_session_leases":    float64(len(h.sessions.Held())),
		"cluster_connection_leases": float64(len(held)),
	}
	for _, l := range held {
		out["cluster_lease:"+l.Name] = 1
	}
	return out
}

// heartbeatClaim gives each scheduled heartbeat to one instance: the
// first to take the lease "heartbeat:<agent>" for half an interval. nil
// with one instance.
func (h *clusterHost) heartbeatClaim(cfg *config.Config) func(context.Context, time.Time) bool {
	if h.member == nil {
		return nil
	}
	every, err := agentHeartbeat(cfg).Interval()
	if err != nil || every <= 0 {
		return nil
	}
	name := "heartbeat:" + core.DefaultAgentID
	return func(ctx context.Context, _ time.Time) bool {
		_, ok, err := h.member.Store().AcquireLease(ctx, name, h.member.ID(), every/2)
		return err == nil && ok
	}
}

// connLease names the lease of a bridge's connection.
func connLease(ref channels.BridgeRef) string {
	return "conn:" + ref.Channel + "/" + ref.AccountID
}

// bridgeLease runs a standby bridge while its instance holds the lease.
type bridgeLease struct {
	sup *channels.Supervisor
	ref channels.BridgeRef
	log *slog.Logger
}

// Acquired implements cluster.Holder: the bridge starts.
func (b bridgeLease) Acquired(store.Lease) {
	if err := b.sup.StartBridge(b.ref.Channel, b.ref.AccountID); err != nil {
		b.log.Warn("cannot start a bridge whose lease this instance won", "channel", b.ref.Channel, "err", err)
	}
}

// Lost implements cluster.Holder: the bridge goes back to standby.
func (b bridgeLease) Lost(ctx context.Context) {
	if err := b.sup.StandbyBridge(ctx, b.ref.Channel, b.ref.AccountID); err != nil {
		b.log.Warn("a bridge whose lease was lost did not stop", "channel", b.ref.Channel, "err", err)
	}
}

// instanceInfo is what an instance says about itself in the registry.
type instanceInfo struct {
	Version string                  `json:"version"`
	PID     int                     `json:"pid"`
	Gateway string                  `json:"gateway"`
	Bridges []gateway.ChannelStatus `json:"bridges,omitempty"`
}

// channelStatuses is channels.status for the whole cluster: a bridge in
// standby here is shown as the instance holding its connection last
// reported it (at most a third of a lease length ago). With one instance
// it is local as it is.
func (h *clusterHost) channelStatuses(ctx context.Context, local []gateway.ChannelStatus) []gateway.ChannelStatus {
	if h.member == nil {
		return local
	}
	var instances []store.Instance
	for i, cs := range local {
		if cs.State != string(bridges.StateStandby) {
			continue
		}
		leases, err := h.st().ListLeases(ctx, connLease(channels.BridgeRef{Channel: cs.Channel, AccountID: cs.AccountID}))
		if err != nil || len(leases) != 1 || !leases[0].Held(time.Now().UnixMilli()) {
			continue
		}
		if instances == nil {
			if instances, err = h.st().ListInstances(ctx); err != nil {
				return local
			}
		}
		for _, in := range instances {
			if in.ID != leases[0].Owner {
				continue
			}
			var info instanceInfo
			if json.Unmarshal(in.Info, &info) != nil {
				break
			}
			for _, remote := range info.Bridges {
				if remote.Channel == cs.Channel && remote.AccountID == cs.AccountID {
					remote.Label = cs.Label
					local[i] = remote
				}
			}
		}
	}
	return local
}
