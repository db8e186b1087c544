package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"
)

// soakOptions are the soak mode's flags.
type soakOptions struct {
	duration time.Duration
	rate     float64 // messages per second, over all sessions
	warmup   time.Duration
	sample   time.Duration
}

// soakResult is what the soak mode measures (reliability matrix row 24).
type soakResult struct {
	Date     string  `json:"date"`
	Seconds  float64 `json:"seconds"`
	Rate     float64 `json:"messagesPerSecond"`
	Sessions int     `json:"sessions"`
	delivery
	// InToModel is platform message sent → model request received;
	// ModelToReply is model stream done → reply received by the platform.
	InToModel      percentiles `json:"inboundToModelMs"`
	ModelToReply   percentiles `json:"modelDoneToReplyMs"`
	HeartbeatTurns int64       `json:"heartbeatTurns"`
	CronTurns      int64       `json:"cronTurns"`
	// Samples are (seconds since start, VmRSS KiB, goroutines).
	Samples [][3]float64 `json:"samples"`
	// SlopeMBPerHour is the least-squares slope of VmRSS over the samples
	// after WarmupSeconds.
	WarmupSeconds  float64 `json:"warmupSeconds"`
	SlopeMBPerHour float64 `json:"rssSlopeMBPerHour"`
	FirstRSSKB     int64   `json:"rssAfterWarmupKiB"`
	LastRSSKB      int64   `json:"rssAtEndKiB"`
	PeakRSSKB      int64   `json:"vmHWMKiB"`
	PlatformErrors int64   `json:"platformErrors"`
}

// soakCronMessage is the cron job's message, which the model counts.
const soakCronMessage = "soak cron tick"

// soak sends so.rate messages a second, round robin over lo.sessions
// chats, for so.duration, with a heartbeat every 30 s and a cron job every
// minute, and samples the child's RSS every so.sample.
func soak(ctx context.Context, o options, lo loadOptions, so soakOptions, log io.Writer) (*soakResult, error) {
	tr := newTracker()
	var heartbeats, crons atomic.Int64
	mdl := startModel(lo.latency, lo.tps, lo.tokens, lo.tool, tr.modelRequest, tr.modelDone)
	mdl.onOther = func(body []byte) {
		switch s := string(body); {
		case strings.Contains(s, soakCronMessage):
			crons.Add(1)
		case strings.Contains(s, "HEARTBEAT"):
			heartbeats.Add(1)
		}
	}
	defer mdl.close()
	spec := rigSpec{
		modelYAML:     mdl.yaml(),
		agentDefaults: "    heartbeat: {every: 30s, target: none}\n" + lo.agentDefaults(),
		extra: perChatFollowup + `cron:
  enabled: true
  jobs:
    - id: soak
      schedule: {kind: every, everyMs: 60000}
      sessionTarget: isolated
      payload: {kind: agentTurn, message: "` + soakCronMessage + `"}
      delivery: {mode: none}
`,
		workspace: map[string]string{"HEARTBEAT.md": "# Heartbeat\n\n- Check that the soak is still running.\n"},
		onReply:   tr.reply,
	}
	r, err := startRig(ctx, o, log, spec)
	if err != nil {
		return nil, err
	}
	defer r.close(log, o.keep)
	res := &soakResult{Date: time.Now().UTC().Format(time.RFC3339), Rate: so.rate, Sessions: lo.sessions,
		WarmupSeconds: so.warmup.Seconds()}
	pid := r.c.cmd.Process.Pid
	start := time.Now()
	sampleTick := time.NewTicker(so.sample)
	defer sampleTick.Stop()
	// Every tick sends what is due by then, so a late tick does not lower
	// the rate.
	sendTick := time.NewTicker(max(time.Millisecond, time.Duration(float64(time.Second)/so.rate)))
	defer sendTick.Stop()
	end := time.After(so.duration)
	seq := make([]int, lo.sessions)
	senders := make([]func(string), lo.sessions)
	for i := range senders {
		senders[i] = r.p.sender(lo.platforms[i%len(lo.platforms)], i, false)
	}
	next := 0
	sample := func() error {
		m, err := readMemory(pid)
		if err != nil {
			return err
		}
		g, _ := readMetrics(r.base)
		res.Samples = append(res.Samples, [3]float64{time.Since(start).Seconds(), float64(m.RSSKB), float64(g)})
		return nil
	}
	if err := sample(); err != nil {
		return nil, err
	}
loop:
	for {
		select {
		case <-sendTick.C:
			for due := int(time.Since(start).Seconds() * so.rate); res.Sent < due; res.Sent++ {
				i := next
				next = (next + 1) % lo.sessions
				marker := fmt.Sprintf("#m%d-%d", i, seq[i])
				seq[i]++
				tr.pushed(marker, time.Now())
				senders[i]("question " + marker)
			}
		case <-sampleTick.C:
			if err := sample(); err != nil {
				return nil, err
			}
			if n := len(res.Samples); n%30 == 0 {
				fmt.Fprintf(log, "soak: %s of %s, RSS %.1f MB\n", time.Since(start).Round(time.Second), so.duration, res.Samples[n-1][1]/1024)
			}
		case <-end:
			break loop
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	res.Seconds = time.Since(start).Seconds()
	// Wait for the last answers.
	deadline := time.Now().Add(lo.replyTimeout)
	for tr.tally().lost > 0 && time.Now().Before(deadline) {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	t := tr.tally()
	res.take(t)
	res.InToModel, res.ModelToReply = percentilesOf(t.inLat), percentilesOf(t.outLat)
	res.HeartbeatTurns, res.CronTurns = heartbeats.Load(), crons.Load()
	m, err := readMemory(pid)
	if err != nil {
		return nil, err
	}
	res.PeakRSSKB = m.PeakRSSKB
	res.SlopeMBPerHour, res.FirstRSSKB, res.LastRSSKB = rssSlope(res.Samples, so.warmup.Seconds())
	res.PlatformErrors = r.p.host.Errors()
	return res, nil
}

// rssSlope fits a line through the (seconds, RSS KiB) samples taken after
// warmup seconds and returns its slope in MB an hour, with the first and
// last RSS of that window.
func rssSlope(samples [][3]float64, warmup float64) (mbPerHour float64, first, last int64) {
	var n, sx, sy, sxx, sxy float64
	for _, s := range samples {
		if s[0] < warmup {
			continue
		}
		if n == 0 {
			first = int64(s[1])
		}
		last = int64(s[1])
		x, y := s[0]/3600, s[1]/1024 // hours, MB
		n++
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	if n < 2 || n*sxx-sx*sx == 0 {
		return 0, first, last
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx), first, last
}

// table prints the result for people.
func (r *soakResult) table(w io.Writer) {
	fmt.Fprintf(w, "duration / rate           %.0f s at %.1f messages/s over %d sessions\n", r.Seconds, r.Rate, r.Sessions)
	fmt.Fprintf(w, "sent / replied            %d / %d\n", r.Sent, r.Replied)
	fmt.Fprintf(w, "lost / duplicated / order %d / %d / %d %s\n", r.Lost, r.Duplicated, r.OutOfOrder, strings.Join(r.LostMarkers, " "))
	r.writeOrderNotes(w)
	fmt.Fprintf(w, "platform → model request  %s\n", r.InToModel)
	fmt.Fprintf(w, "model done → reply        %s\n", r.ModelToReply)
	fmt.Fprintf(w, "heartbeat / cron turns    %d / %d\n", r.HeartbeatTurns, r.CronTurns)
	fmt.Fprintf(w, "RSS after warmup → end    %.1f → %.1f MB (peak %.1f MB), slope %.2f MB/h after %.0f s\n",
		float64(r.FirstRSSKB)/1024, float64(r.LastRSSKB)/1024, float64(r.PeakRSSKB)/1024, r.SlopeMBPerHour, r.WarmupSeconds)
}

// ok reports whether every message got exactly one reply, in order, and
// the heartbeats and cron jobs ran.
func (r *soakResult) ok() bool {
	return r.Sent > 0 && r.Lost == 0 && r.Duplicated == 0 && r.OutOfOrder == 0 && r.PlatformErrors == 0
}

func (r *soakResult) failure() error {
	return fmt.Errorf("FAILED: %d lost, %d duplicated, %d out of order, %d platform errors", r.Lost, r.Duplicated, r.OutOfOrder, r.PlatformErrors)
}
