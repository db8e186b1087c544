package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/cluster"
	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/store"
)

func clusterStatusCommand() *command {
	var asJSON bool
	return &command{
		name:    "cluster status",
		summary: "show the instances sharing the database and what each holds",
		help: `Reads the shared PostgreSQL database (store.driver: postgres) and shows:
  - every instance that registered: its name, whether it is up (a heartbeat
    within the lease length), stopped cleanly, or lost (no heartbeat: it died);
  - which instance holds each unique platform connection (Telegram long
    polling, a Discord gateway session, a WhatsApp device, Slack Socket Mode);
  - which instance runs each busy session, and who claimed the heartbeat.
With --json the same as one JSON document. With the sqlite store there is one
instance, and the command says so.`,
		flags: func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print one JSON document") },
		run: func(_ context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard cluster status: takes no arguments\n")
				return exitUsage
			}
			cfg, path, code := c.loadConfig(g.config, config.ForManagement)
			if cfg == nil {
				return code
			}
			if cfg.Store.EffectiveDriver() != store.DriverPostgres {
				fmt.Fprintf(c.stdout, "One instance: store.driver is sqlite in %s, which one process uses at a time. Set store.driver: postgres to run several (see README, \"Running several instances\").\n", path)
				return exitOK
			}
			ttl, _ := cfg.Store.LeaseDuration()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			st, err := openStore(ctx, cfg, "")
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard cluster status: %v\n", err)
				return exitFailure
			}
			defer st.Close()
			rep, err := readClusterStatus(ctx, st, ttl, time.Now())
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard cluster status: %v\n", err)
				return exitFailure
			}
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				_ = enc.Encode(rep)
				return exitOK
			}
			rep.print(c.stdout)
			return exitOK
		},
	}
}

// clusterStatus is what `cluster status` reports.
type clusterStatus struct {
	Instances   []instanceStatus `json:"instances"`
	Connections []leaseStatus    `json:"connections"`
	Sessions    []leaseStatus    `json:"sessions"`
	Other       []leaseStatus    `json:"other"`
}

type instanceStatus struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	State       string          `json:"state"` // up, stopped or lost
	StartedAt   time.Time       `json:"startedAt"`
	HeartbeatAt time.Time       `json:"heartbeatAt"`
	Info        json.RawMessage `json:"info,omitempty"`
}

type leaseStatus struct {
	Name      string    `json:"name"`
	Owner     string    `json:"owner"`
	Fence     int64     `json:"fence"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// readClusterStatus reads the registry and the held leases. An instance
// is up while its last heartbeat is younger than ttl (it writes one every
// ttl/3).
func readClusterStatus(ctx context.Context, st store.Full, ttl time.Duration, now time.Time) (clusterStatus, error) {
	var rep clusterStatus
	ins, err := st.ListInstances(ctx)
	if err != nil {
		return rep, err
	}
	for _, in := range ins {
		s := instanceStatus{ID: in.ID, Name: in.Name, StartedAt: time.UnixMilli(in.StartedAt).UTC(), HeartbeatAt: time.UnixMilli(in.HeartbeatAt).UTC()}
		if json.Valid(in.Info) {
			s.Info = in.Info
		}
		switch {
		case in.StoppedAt != 0:
			s.State = "stopped"
		case now.Sub(s.HeartbeatAt) < ttl:
			s.State = "up"
		default:
			s.State = "lost"
		}
		rep.Instances = append(rep.Instances, s)
	}
	leases, err := st.ListLeases(ctx, "")
	if err != nil {
		return rep, err
	}
	for _, l := range leases {
		if !l.Held(now.UnixMilli()) {
			continue
		}
		ls := leaseStatus{Name: l.Name, Owner: l.Owner, Fence: l.Fence, ExpiresAt: time.UnixMilli(l.ExpiresAt).UTC()}
		switch {
		case strings.HasPrefix(l.Name, "conn:"):
			ls.Name = strings.TrimPrefix(l.Name, "conn:")
			rep.Connections = append(rep.Connections, ls)
		case strings.HasPrefix(l.Name, cluster.SessionLeasePrefix):
			ls.Name = strings.TrimPrefix(l.Name, cluster.SessionLeasePrefix)
			rep.Sessions = append(rep.Sessions, ls)
		default:
			rep.Other = append(rep.Other, ls)
		}
	}
	sort.Slice(rep.Instances, func(i, j int) bool { return rep.Instances[i].StartedAt.Before(rep.Instances[j].StartedAt) })
	return rep, nil
}

func (r clusterStatus) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "INSTANCE\tNAME\tSTATE\tSTARTED\tLAST HEARTBEAT\n")
	for _, in := range r.Instances {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", in.ID, in.Name, in.State, in.StartedAt.Format(time.RFC3339), in.HeartbeatAt.Format(time.RFC3339))
	}
	if len(r.Instances) == 0 {
		fmt.Fprintf(tw, "(none has registered yet)\n")
	}
	section := func(title string, ls []leaseStatus) {
		fmt.Fprintf(tw, "\n%s\tHELD BY\tFENCE\tEXPIRES\n", title)
		if len(ls) == 0 {
			fmt.Fprintf(tw, "(none)\n")
		}
		for _, l := range ls {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", l.Name, l.Owner, l.Fence, l.ExpiresAt.Format(time.RFC3339))
		}
	}
	section("CONNECTION", r.Connections)
	section("SESSION", r.Sessions)
	if len(r.Other) > 0 {
		section("OTHER", r.Other)
	}
	tw.Flush()
}
