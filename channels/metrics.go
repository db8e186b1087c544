package channels

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboardhq/switchboard/bridges"
)

// states lists every bridge state, so the state gauge has a series per
// state (1 for the current one, 0 for the others) and a dashboard can
// count bridges in each.
var states = []bridges.State{
	bridges.StateStarting, bridges.StateConnected, bridges.StateTransientDisconnect, bridges.StateConflict,
	bridges.StateBadCredentials, bridges.StateLoggedOut, bridges.StateFailed, bridges.StateStopped, bridges.StateStandby,
}

var (
	stateDesc = prometheus.NewDesc("switchboard_bridge_state",
		"A bridge's connection state: 1 for the state it is in, 0 for the others.",
		[]string{"channel", "account", "state"}, nil)
	restartsDesc = prometheus.NewDesc("switchboard_bridge_restarts_total",
		"Starts the supervisor made after a bridge's Start returned on a non-terminal failure.",
		[]string{"channel", "account"}, nil)
	sinceDesc = prometheus.NewDesc("switchboard_bridge_state_seconds",
		"Seconds a bridge has been in its current state.",
		[]string{"channel", "account"}, nil)
)

// Collector returns a Prometheus collector of the bridges' states,
// restarts and seconds in state, read from Statuses at scrape time.
func (s *Supervisor) Collector() prometheus.Collector { return collector{s} }

type collector struct{ s *Supervisor }

// Describe implements prometheus.Collector.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- restartsDesc
	ch <- sinceDesc
}

// Collect implements prometheus.Collector.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	now := c.s.opts.Now()
	for _, st := range c.s.Statuses() {
		for _, state := range states {
			v := 0.0
			if st.State == state {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, st.Channel, st.AccountID, string(state))
		}
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(st.Restarts), st.Channel, st.AccountID)
		ch <- prometheus.MustNewConstMetric(sinceDesc, prometheus.GaugeValue, now.Sub(st.Since).Seconds(), st.Channel, st.AccountID)
	}
}
