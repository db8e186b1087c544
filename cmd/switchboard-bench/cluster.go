package main

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/internal/pgtest"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// clusterOptions are the cluster mode's flags.
type clusterOptions struct {
	instances int
	// kills: SIGKILLs of a random instance, each within killWithin of the
	// last restart; the instance stays down for down before it starts
	// again. 0 kills measures throughput alone.
	kills      int
	killWithin time.Duration
	down       time.Duration
	leaseTTL   time.Duration
	// duration bounds a throughput run (kills 0): sessions send until it
	// passes.
	duration time.Duration
}

// clusterResult is what the cluster mode measures and checks.
type clusterResult struct {
	Date           string  `json:"date"`
	Instances      int     `json:"instances"`
	Kills          int     `json:"kills"`
	Sessions       int     `json:"sessions"`
	Platforms      string  `json:"platforms"`
	MaxConcurrent  int     `json:"maxConcurrentPerInstance"`
	ModelLatencyMs float64 `json:"modelFirstTokenLatencyMs"`
	LeaseTTLMs     int64   `json:"leaseTtlMs"`
	delivery
	// DuplicatesAllowed is one per kill: a reply sent just before a kill
	// and not yet recorded is sent again (Telegram, Slack and Discord
	// have no idempotency key for sending).
	DuplicatesAllowed int     `json:"duplicatesAllowed"`
	Seconds           float64 `json:"seconds"`
	PerSecond         float64 `json:"repliesPerSecond"`
	// Failover is SIGKILL of the instance holding a platform connection →
	// that connection polling or connected again on another instance.
	Failover      percentiles `json:"failoverMs"`
	FailoverCount int         `json:"failovers"`
	// SingletonSamples counts the samples of the platforms' connections
	// (Telegram long polls, Discord gateway connections) and
	// SingletonViolations those where one had more than one holder.
	SingletonSamples    int      `json:"singletonSamples"`
	SingletonViolations []string `json:"singletonViolations"`
	// Transcripts counts the session transcripts in the database after
	// the run; TranscriptErrors those that did not load and SkippedLines
	// the lines that did not decode.
	Transcripts      int      `json:"transcripts"`
	TranscriptErrors []string `json:"transcriptErrors"`
	SkippedLines     int      `json:"skippedLines"`
	PlatformErrors   int64    `json:"platformErrors"`
	SlackGaveUp      int64    `json:"slackDeliveriesGivenUp"`
}

// slackSecret signs the Events API requests of the cluster mode.
const slackSecret = "bench-signing-secret"

// member is one instance of the cluster.
type member struct {
	name      string
	dir       string
	cfgPath   string
	env       []string
	base      string
	slackAddr string
	c         *child // nil while down
}

// clusterRig is a PostgreSQL, the platform fakes, a round-robin proxy in
// front of the instances' Slack Events API listeners, and the instances.
type clusterRig struct {
	pg      *pgtest.Cluster
	dbURL   string
	st      *postgres.Store
	p       *platforms
	bin     string
	dir     string
	members []*member
	proxy   *httptest.Server
	next    atomic.Uint64
	log     syncBuffer
	gaveUp  atomic.Int64
	slackWG sync.WaitGroup
}

// startCluster starts everything and waits until every instance is
// ready.
func startCluster(ctx context.Context, o options, lo loadOptions, co clusterOptions, tr *tracker, mdl *model, log io.Writer) (*clusterRig, error) {
	r := &clusterRig{bin: o.bin}
	var err error
	if r.dir, err = os.MkdirTemp("", "switchboard-cluster-"); err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintf(log, "state and logs kept in %s\n", r.dir)
	}
	if r.bin == "" {
		if r.bin, err = buildBinary(ctx, r.dir, ""); err != nil {
			r.close(o.keep)
			return nil, err
		}
	}
	raiseFileLimit()
	if r.pg, err = pgtest.Start(); err != nil {
		r.close(o.keep)
		return nil, fmt.Errorf("PostgreSQL: %w (scripts/install-postgresql installs it)", err)
	}
	r.dbURL = r.pg.URL("postgres")
	if r.st, err = postgres.Open(ctx, r.dbURL, postgres.Options{}); err != nil {
		r.close(o.keep)
		return nil, err
	}
	r.p = startPlatforms(log, tr.reply)
	r.p.slackPost = r.postSlack
	r.proxy = httptest.NewServer(http.HandlerFunc(r.roundRobin))
	var tok [24]byte
	_, _ = crand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	for i := range co.instances {
		m := &member{name: fmt.Sprintf("node-%d", i), dir: filepath.Join(r.dir, fmt.Sprintf("node-%d", i))}
		port, err1 := freePort()
		slackPort, err2 := freePort()
		if err := errors.Join(err1, err2, os.MkdirAll(m.dir, 0o700)); err != nil {
			r.close(o.keep)
			return nil, err
		}
		m.base = fmt.Sprintf("http://127.0.0.1:%d", port)
		m.slackAddr = fmt.Sprintf("127.0.0.1:%d", slackPort)
		m.cfgPath = filepath.Join(m.dir, "config.yaml")
		m.env = r.p.env(filepath.Join(m.dir, "state"))
		if err := os.WriteFile(m.cfgPath, []byte(r.config(m, port, token, lo, co, mdl)), 0o600); err != nil {
			r.close(o.keep)
			return nil, err
		}
		r.members = append(r.members, m)
	}
	for _, m := range r.members {
		if _, err := r.start(ctx, m); err != nil {
			r.close(o.keep)
			return nil, err
		}
	}
	return r, nil
}

// config is one instance's configuration: the shared database, its own
// port, state directory and Slack listener, Telegram and Discord as
// connections one instance holds, Slack over HTTP on every instance.
func (r *clusterRig) config(m *member, port int, token string, lo loadOptions, co clusterOptions, mdl *model) string {
	return fmt.Sprintf(`store:
  driver: postgres
  url: %s
  instance: %s
  leaseTtl: %s
gateway:
  port: %d
  auth: {mode: token, token: %q}
models:
  providers:
%sagents:
  defaults:
    model: {primary: fake/bench}
    heartbeat: {every: 0m}
%s%schannels:
%s  slack:
    enabled: true
    mode: http
    signingSecret: %s
    http: {listen: %q, path: /slack/events}
    botToken: ${SLACK_BOT}
    apiUrl: %s
    dmPolicy: open
    allowFrom: ["*"]
    groupPolicy: open
%s`, r.dbURL, m.name, co.leaseTTL, port, token, mdl.yaml(), lo.agentDefaults(), perChatFollowup,
		r.p.telegramYAML(), slackSecret, m.slackAddr, r.p.slack.APIURL, r.p.discordYAML())
}

// start runs m and waits until it is ready.
func (r *clusterRig) start(ctx context.Context, m *member) (time.Duration, error) {
	fmt.Fprintf(&r.log, "\n--- %s starts ---\n\n", m.name)
	c, err := startChild(r.bin, m.cfgPath, m.env, &r.log)
	if err != nil {
		return 0, err
	}
	m.c = c
	return c.waitReady(ctx, m.base, 60*time.Second)
}

// kill SIGKILLs m.
func (r *clusterRig) kill(m *member) {
	m.c.kill()
	m.c = nil
	fmt.Fprintf(&r.log, "\n--- %s: SIGKILL ---\n\n", m.name)
}

// proxyClient forwards the proxy's requests to the loopback listeners.
var proxyClient = &http.Client{Timeout: 10 * time.Second}

// roundRobin is the load balancer in front of the instances' Slack
// listeners: each request goes to the next instance, and to the one after
// when that one refuses the connection (nginx's proxy_next_upstream).
func (r *clusterRig) roundRobin(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	start := r.next.Add(1)
	for k := range uint64(len(r.members)) {
		m := r.members[(start+k)%uint64(len(r.members))]
		out, err := http.NewRequestWithContext(req.Context(), req.Method, "http://"+m.slackAddr+req.URL.Path, bytes.NewReader(body))
		if err != nil {
			continue
		}
		out.Header = req.Header.Clone()
		resp, err := proxyClient.Do(out)
		if err != nil {
			continue // down: the next one
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		resp.Body.Close()
		return
	}
	http.Error(w, "no instance is up", http.StatusBadGateway)
}

// slackRetries is Slack's retry schedule for an event not acknowledged
// with a 2xx, compressed from its 0 s, 1 min, 5 min so that a run ends.
var slackRetries = []time.Duration{500 * time.Millisecond, 2 * time.Second, 5 * time.Second}

// postSlack delivers an event through the proxy as Slack does, retrying
// with X-Slack-Retry-Num on failure; it returns at once.
func (r *clusterRig) postSlack(payload any) {
	r.slackWG.Add(1)
	go func() {
		defer r.slackWG.Done()
		for attempt := 0; ; attempt++ {
			var opts []slacktest.DeliveryOption
			if attempt > 0 {
				opts = append(opts, slacktest.WithRetry(attempt, "http_error"))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			status, err := r.p.slack.PostEvent(ctx, r.proxy.URL+"/slack/events", slackSecret, payload, opts...)
			cancel()
			if err == nil && status/100 == 2 {
				return
			}
			if attempt == len(slackRetries) {
				r.gaveUp.Add(1)
				return
			}
			<-time.After(slackRetries[attempt])
		}
	}()
}

// connectionHolder returns the instance named in the lease of a platform
// connection ("conn:telegram/default"), or nil.
func (r *clusterRig) connectionHolder(ctx context.Context, lease string) *member {
	list, err := r.st.ListLeases(ctx, lease)
	if err != nil || len(list) != 1 || !list[0].Held(time.Now().UnixMilli()) {
		return nil
	}
	for _, m := range r.members {
		if strings.HasPrefix(list[0].Owner, m.name+"-") {
			return m
		}
	}
	return nil
}

func (r *clusterRig) close(keep bool) {
	for _, m := range r.members {
		if m.c != nil {
			_ = m.c.stop(30 * time.Second)
		}
	}
	if r.proxy != nil {
		r.proxy.Close()
	}
	if r.p != nil {
		r.p.close()
	}
	r.slackWG.Wait()
	if r.st != nil {
		r.st.Close()
	}
	if r.pg != nil {
		r.pg.Stop()
	}
	if keep {
		_ = os.WriteFile(filepath.Join(r.dir, "switchboard.log"), r.log.Bytes(), 0o600)
	} else {
		os.RemoveAll(r.dir)
	}
}

// clusterRun runs the load across the instances, killing a random one
// co.kills times (each down for co.down), then stops sending, waits for
// every answer, stops the instances and loads every transcript. With
// co.kills 0 it runs for co.duration and measures throughput.
func clusterRun(ctx context.Context, o options, lo loadOptions, co clusterOptions, log io.Writer) (*clusterResult, error) {
	tr := newTracker()
	mdl := startModel(lo.latency, lo.tps, lo.tokens, lo.tool, tr.modelRequest, tr.modelDone)
	defer mdl.close()
	r, err := startCluster(ctx, o, lo, co, tr, mdl, log)
	if err != nil {
		return nil, err
	}
	defer r.close(o.keep)
	res := &clusterResult{Date: time.Now().UTC().Format(time.RFC3339), Instances: co.instances, Kills: co.kills, Sessions: lo.sessions,
		Platforms: strings.Join(lo.platforms, ","), MaxConcurrent: max(lo.maxConcurrent, 4), ModelLatencyMs: float64(lo.latency.Microseconds()) / 1000,
		LeaseTTLMs: co.leaseTTL.Milliseconds(), DuplicatesAllowed: co.kills}

	sampleStop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		r.sampleSingletons(res, sampleStop)
	}()

	start := time.Now()
	stop := make(chan struct{})
	done := make(chan int, 1)
	lo.messages = 0 // until stop
	go func() {
		sent, _ := drive(ctx, r.p, tr, lo, stop)
		done <- sent
	}()
	defer tr.progress(log, 30*time.Second)()
	var failovers []float64
	var runErr error
	if co.kills == 0 {
		select {
		case <-time.After(co.duration):
		case <-ctx.Done():
			runErr = ctx.Err()
		}
	}
	for k := 0; k < co.kills && runErr == nil; k++ {
		select {
		case <-time.After(rand.N(co.killWithin)):
		case <-ctx.Done():
			runErr = ctx.Err()
			continue
		}
		victim := r.members[rand.N(len(r.members))]
		held := map[string]bool{}
		for _, lease := range []string{"conn:telegram/default", "conn:discord/default"} {
			held[lease] = r.connectionHolder(ctx, lease) == victim
		}
		killed := time.Now()
		r.kill(victim)
		// Failover: each connection the victim held, served again
		// elsewhere.
		for lease, was := range held {
			if !was {
				continue
			}
			if d, ok := r.waitServed(ctx, lease, victim, killed, co.leaseTTL+30*time.Second); ok {
				failovers = append(failovers, float64(d.Microseconds())/1000)
			} else {
				runErr = fmt.Errorf("kill %d: %s was not taken over within %s", k+1, lease, co.leaseTTL+30*time.Second)
			}
		}
		select {
		case <-time.After(co.down - min(co.down, time.Since(killed))):
		case <-ctx.Done():
		}
		if _, err := r.start(ctx, victim); err != nil && runErr == nil {
			runErr = fmt.Errorf("restart after kill %d: %w", k+1, err)
		}
		if (k+1)%10 == 0 {
			fmt.Fprintf(log, "cluster: %d of %d kills\n", k+1, co.kills)
		}
	}
	close(stop)
	sent := <-done
	res.Seconds = time.Since(start).Seconds()
	close(sampleStop)
	<-sampled
	if runErr != nil {
		return nil, fmt.Errorf("%w\n%s", runErr, r.log.String())
	}
	// Late duplicates show up here.
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
	}
	t := tr.tally()
	res.Sent = sent
	res.take(t)
	res.PerSecond = float64(res.Replied) / res.Seconds
	res.Failover, res.FailoverCount = percentilesOf(failovers), len(failovers)
	res.PlatformErrors = r.p.host.Errors()
	res.SlackGaveUp = r.gaveUp.Load()
	if err := r.checkTranscripts(ctx, res); err != nil {
		return nil, err
	}
	return res, nil
}

// waitServed waits until the platform connection of lease is held by an
// instance other than victim and that connection is up on the platform
// (Telegram polling, a Discord session READY), and returns the time since
// killed.
func (r *clusterRig) waitServed(ctx context.Context, lease string, victim *member, killed time.Time, limit time.Duration) (time.Duration, bool) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for {
		if h := r.connectionHolder(ctx, lease); h != nil && h != victim {
			up := false
			switch lease {
			case "conn:telegram/default":
				up = r.p.telegram.LongPolls() == 1
			case "conn:discord/default":
				up = r.p.discord.Sessions() == 1
			}
			if up {
				return time.Since(killed), true
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			return 0, false
		case <-ctx.Done():
			return 0, false
		}
	}
}

// sampleSingletons checks every 50 ms that no platform connection that
// must be unique is held twice: at most one Telegram long poll and one
// Discord gateway connection at a time.
func (r *clusterRig) sampleSingletons(res *clusterResult, stop <-chan struct{}) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		res.SingletonSamples++
		polls, conns := r.p.telegram.LongPolls(), r.p.discord.Sessions()
		if (polls > 1 || conns > 1) && len(res.SingletonViolations) < 20 {
			res.SingletonViolations = append(res.SingletonViolations,
				fmt.Sprintf("%s: %d Telegram long polls, %d Discord sessions", time.Now().UTC().Format("15:04:05.000"), polls, conns))
		}
	}
}

// checkTranscripts loads every transcript in the database as the
// instances do.
func (r *clusterRig) checkTranscripts(ctx context.Context, res *clusterResult) error {
	tr := r.st.Transcripts()
	refs, err := tr.List(ctx)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		res.Transcripts++
		l, rep, err := tr.Open(ctx, ref.AgentID, ref.SessionID)
		if err != nil {
			res.TranscriptErrors = append(res.TranscriptErrors, err.Error())
			continue
		}
		_ = l.Close()
		res.SkippedLines += len(rep.SkippedLines)
	}
	return nil
}

// table prints the result for people.
func (r *clusterResult) table(w io.Writer) {
	fmt.Fprintf(w, "instances / kills         %d / %d, lease %d ms, %d sessions on %s, %d turns at once per instance, model %.0f ms first token\n",
		r.Instances, r.Kills, r.LeaseTTLMs, r.Sessions, r.Platforms, r.MaxConcurrent, r.ModelLatencyMs)
	fmt.Fprintf(w, "sent / replied            %d / %d in %.1f s (%.1f replies/s)\n", r.Sent, r.Replied, r.Seconds, r.PerSecond)
	fmt.Fprintf(w, "lost / duplicated / order %d / %d (≤ %d allowed) / %d %s\n", r.Lost, r.Duplicated, r.DuplicatesAllowed, r.OutOfOrder, strings.Join(r.LostMarkers, " "))
	r.writeOrderNotes(w)
	if r.FailoverCount > 0 {
		fmt.Fprintf(w, "failover (kill → served) %d: p50 %.0f  p99 %.0f  max %.0f ms\n", r.FailoverCount, r.Failover.P50, r.Failover.P99, r.Failover.Max)
	}
	fmt.Fprintf(w, "singletons                %d samples, %d with a connection held twice\n", r.SingletonSamples, len(r.SingletonViolations))
	for _, v := range r.SingletonViolations {
		fmt.Fprintf(w, "  %s\n", v)
	}
	fmt.Fprintf(w, "transcripts               %d loaded, %d failed, %d lines skipped\n", r.Transcripts-len(r.TranscriptErrors), len(r.TranscriptErrors), r.SkippedLines)
	for _, e := range r.TranscriptErrors {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if r.SlackGaveUp > 0 {
		fmt.Fprintf(w, "slack deliveries given up %d\n", r.SlackGaveUp)
	}
}

// ok reports whether the run lost nothing: every message answered, in
// order, at most one duplicate per kill, no connection held twice, every
// transcript loaded.
func (r *clusterResult) ok() bool {
	return r.Sent > 0 && r.Lost == 0 && r.Duplicated <= r.DuplicatesAllowed && r.OutOfOrder == 0 &&
		len(r.SingletonViolations) == 0 && len(r.TranscriptErrors) == 0 && r.SkippedLines == 0 && r.PlatformErrors == 0 && r.SlackGaveUp == 0
}

func (r *clusterResult) failure() error {
	return fmt.Errorf("FAILED: %d lost, %d duplicated (%d allowed), %d out of order, %d singleton violations, %d transcripts failed to load, %d lines skipped, %d platform errors, %d Slack deliveries given up",
		r.Lost, r.Duplicated, r.DuplicatesAllowed, r.OutOfOrder, len(r.SingletonViolations), len(r.TranscriptErrors), r.SkippedLines, r.PlatformErrors, r.SlackGaveUp)
}
