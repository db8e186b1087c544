package gateway

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the gateway's Prometheus series, on a registry of their own
// (no global state). Components outside the gateway (the dispatcher, the
// bridges) report through Gauges the server reads at scrape time.
type metrics struct {
	reg           *prometheus.Registry
	connections   prometheus.Gauge
	handshakes    *prometheus.CounterVec
	framesIn      prometheus.Counter
	framesOut     prometheus.Counter
	droppedEvents prometheus.Counter
	// coalescedEvents counts snapshots that replaced a queued one.
	coalescedEvents prometheus.Counter
	slowConsumers   prometheus.Counter
	oversize        prometheus.Counter
	limits          *prometheus.CounterVec
	requests        *prometheus.CounterVec
	runs            *prometheus.CounterVec
	runSeconds      prometheus.Histogram
	firstDelta      prometheus.Histogram
}

func newMetrics(gauges func() map[string]float64, extra ...prometheus.Collector) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "switchboard_gateway_connections", Help: "Open WebSocket connections.",
		}),
		handshakes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_gateway_handshakes_total", Help: "Connect attempts by outcome.",
		}, []string{"outcome"}),
		framesIn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_gateway_frames_received_total", Help: "WebSocket frames received.",
		}),
		framesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_gateway_frames_sent_total", Help: "WebSocket frames sent.",
		}),
		droppedEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_gateway_events_dropped_total", Help: "Droppable events skipped for slow clients.",
		}),
		coalescedEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_gateway_events_coalesced_total", Help: "Chat deltas that replaced an older one still queued for a client.",
		}),
		slowConsumers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_gateway_slow_consumers_total", Help: "Clients disconnected as slow consumers.",
		}),
		oversize: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_gateway_oversize_frames_total", Help: "Connections closed for a frame over the size limit.",
		}),
		limits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_gateway_connection_limits_total",
			Help: "Connections the caps acted on: refused, evicted_idle, health_reserve, client_refused, preauth_evicted.",
		}, []string{"action"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_gateway_requests_total", Help: "Requests by method and result.",
		}, []string{"method", "result"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_runs_total", Help: "Agent runs by outcome.",
		}, []string{"outcome"}),
		runSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "switchboard_run_duration_seconds", Help: "Agent run duration.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}),
		firstDelta: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "switchboard_run_first_delta_seconds", Help: "Run start to its first streamed text.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
	}
	m.reg.MustRegister(m.connections, m.handshakes, m.framesIn, m.framesOut, m.droppedEvents, m.coalescedEvents,
		m.slowConsumers, m.oversize, m.limits, m.requests, m.runs, m.runSeconds, m.firstDelta,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if gauges != nil {
		m.reg.MustRegister(gaugeFunc{fn: gauges})
	}
	m.reg.MustRegister(extra...)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// gaugeFunc exposes values computed at scrape time (queue depth, sessions,
// per-bridge state) as gauges named by the map keys.
type gaugeFunc struct{ fn func() map[string]float64 }

var gaugeDesc = prometheus.NewDesc("switchboard_state", "Point-in-time state of Switchboard components, by name.", []string{"name"}, nil)

func (g gaugeFunc) Describe(ch chan<- *prometheus.Desc) { ch <- gaugeDesc }

func (g gaugeFunc) Collect(ch chan<- prometheus.Metric) {
	for name, v := range g.fn() {
		ch <- prometheus.MustNewConstMetric(gaugeDesc, prometheus.GaugeValue, v, name)
	}
}

// gauges are the values computed at scrape time: the dispatcher's state
// and whatever the process adds in Deps.Gauges.
func (s *Server) gauges() map[string]float64 {
	out := map[string]float64{}
	if s.deps.Gauges != nil {
		for k, v := range s.deps.Gauges() {
			out[k] = v
		}
	}
	if b := s.backend.Load(); b != nil && b.Dispatcher != nil {
		st := b.Dispatcher.Stats()
		out["queue_sessions"] = float64(st.Sessions)
		out["queue_active_runs"] = float64(st.Active)
		out["queue_depth"] = float64(st.Queued)
	}
	out["gateway_preauth_sockets"] = float64(s.hub.preauthCount())
	used, _, waiting := s.decode.state()
	out["gateway_decode_bytes"] = float64(used)
	out["gateway_decode_waiting"] = float64(waiting)
	s.mu.Lock()
	conns := s.conns
	s.mu.Unlock()
	if conns != nil {
		out["gateway_open_connections"] = float64(conns.open())
	}
	return out
}
