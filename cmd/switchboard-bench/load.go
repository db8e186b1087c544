package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// loadResult is what the load mode measures.
type loadResult struct {
	Date           string  `json:"date"`
	Sessions       int     `json:"sessions"`
	PerSession     int     `json:"messagesPerSession"`
	GroupSessions  int     `json:"groupSessions"`
	ModelLatencyMs float64 `json:"modelFirstTokenLatencyMs"`
	ModelTPS       float64 `json:"modelTokensPerSecond"`
	delivery
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"messagesPerSecond"`
	// InToModel is platform message sent → model request received;
	// ModelToReply is model stream done → reply received by the platform.
	InToModel    percentiles `json:"inboundToModelMs"`
	ModelToReply percentiles `json:"modelDoneToReplyMs"`
	Peak         memory      `json:"afterLoad"`
	Goroutines   int         `json:"goroutinesAfterLoad"`
	MaxGCPauseMs float64     `json:"maxGCPauseMs"`
	// PlatformErrors counts problems the fakes reported: 0 in a valid run.
	PlatformErrors int64 `json:"platformErrors"`

	inToModel, modelToReply []float64
}

// delivery is what became of a run's messages, in every mode's result.
type delivery struct {
	Sent       int `json:"sent"`
	Replied    int `json:"replied"`
	Lost       int `json:"lost"`
	Duplicated int `json:"duplicated"`
	OutOfOrder int `json:"outOfOrder"`
	// LostMarkers name the first lost messages ("#m<session>-<seq>";
	// session i sent on platform i mod the number of platforms), and
	// OrderNotes the first replies that came out of order.
	LostMarkers []string `json:"lostMarkers,omitempty"`
	OrderNotes  []string `json:"outOfOrderReplies,omitempty"`
}

// take fills in the tally's counts (Sent is the driver's).
func (d *delivery) take(t tally) {
	d.Replied, d.Lost, d.Duplicated, d.OutOfOrder = t.replied, t.lost, t.duplicated, t.outOfOrder
	d.LostMarkers, d.OrderNotes = t.lostMarkers, t.orderNotes
}

// writeOrderNotes lists the out-of-order replies under a result's table.
func (d *delivery) writeOrderNotes(w io.Writer) {
	for _, n := range d.OrderNotes {
		fmt.Fprintf(w, "  out of order: %s\n", n)
	}
}

// percentiles of a latency sample, in milliseconds.
type percentiles struct {
	P50, P90, P99, Max float64
	N                  int
}

// String formats p for the tables.
func (p percentiles) String() string {
	return fmt.Sprintf("p50 %.2f  p90 %.2f  p99 %.2f  max %.2f ms (n=%d)", p.P50, p.P90, p.P99, p.Max, p.N)
}

func percentilesOf(v []float64) percentiles {
	if len(v) == 0 {
		return percentiles{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	at := func(q float64) float64 { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return percentiles{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: s[len(s)-1], N: len(s)}
}

// tracker follows every message by its marker.
type tracker struct {
	mu      sync.Mutex
	sent    map[string]time.Time
	modelIn map[string]time.Time
	modelOK map[string]time.Time
	replies map[string]int
	lastSeq map[int]int // per session: the highest seq answered
	order   int         // replies that arrived after a later message's
	// orderNotes describe the first out-of-order replies.
	orderNotes []string
	waiters    map[string]chan struct{}
	inLat      []float64
	outLat     []float64
}

func newTracker() *tracker {
	return &tracker{sent: map[string]time.Time{}, modelIn: map[string]time.Time{}, modelOK: map[string]time.Time{},
		replies: map[string]int{}, lastSeq: map[int]int{}, waiters: map[string]chan struct{}{}}
}

func parseMarker(m string) (session, seq int, ok bool) {
	a, b, ok := strings.Cut(strings.TrimPrefix(m, "#m"), "-")
	if !ok {
		return 0, 0, false
	}
	s, err1 := strconv.Atoi(a)
	q, err2 := strconv.Atoi(b)
	return s, q, err1 == nil && err2 == nil
}

func (t *tracker) pushed(marker string, at time.Time) chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sent[marker] = at
	ch := make(chan struct{}, 1)
	t.waiters[marker] = ch
	return ch
}

func (t *tracker) modelRequest(marker string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, seen := t.modelIn[marker]; seen || marker == "" {
		return // a retry: keep the first
	}
	t.modelIn[marker] = at
	if s, ok := t.sent[marker]; ok {
		t.inLat = append(t.inLat, float64(at.Sub(s).Microseconds())/1000)
	}
}

func (t *tracker) modelDone(marker string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.modelOK[marker] = at
}

// reply sees the text of every message the platforms' fakes receive
// from the bot.
func (t *tracker) reply(text string) {
	marker := markerRE.FindString(text)
	if marker == "" {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.replies[marker]++
	if t.replies[marker] > 1 {
		return
	}
	if d, ok := t.modelOK[marker]; ok {
		t.outLat = append(t.outLat, float64(now.Sub(d).Microseconds())/1000)
	}
	if s, q, ok := parseMarker(marker); ok {
		if last, seen := t.lastSeq[s]; seen && q < last {
			t.order++
			if len(t.orderNotes) < 20 {
				t.orderNotes = append(t.orderNotes, fmt.Sprintf("%s after #m%d-%d", marker, s, last))
			}
		} else {
			t.lastSeq[s] = q
		}
	}
	if ch := t.waiters[marker]; ch != nil {
		ch <- struct{}{}
		delete(t.waiters, marker)
	}
}

// perChatFollowup gives every chat its own session, as a bot with many
// users runs (the default dmScope main would put every DM in one session),
// and answers every message in a turn of its own.
const perChatFollowup = "messages:\n  queue: {mode: followup, debounceMs: 0}\nsession:\n  dmScope: per-channel-peer\n"

// agentDefaults are the agents.defaults keys lo sets.
func (lo loadOptions) agentDefaults() string {
	if lo.maxConcurrent > 0 {
		return fmt.Sprintf("    maxConcurrent: %d\n", lo.maxConcurrent)
	}
	return ""
}

// loadOptions are the load mode's flags.
type loadOptions struct {
	sessions, messages int
	groupEvery         int
	latency            time.Duration
	tps                float64
	tokens             int
	tool               bool
	platforms          []string // session i sends on platforms[i % len]
	maxConcurrent      int      // agents.defaults.maxConcurrent; 0: the default
	replyTimeout       time.Duration
}

// load drives sessions × messages through Telegram: each session sends a
// message, waits for its reply, then sends the next (closed loop; Telegram
// paces a chat to one message a second, so a session cannot go faster).
// Every groupEvery-th session is a supergroup where the message mentions
// the bot.
func load(ctx context.Context, o options, lo loadOptions, log io.Writer) (*loadResult, error) {
	tr := newTracker()
	r, stop, err := startTracked(ctx, o, lo, tr, log)
	if err != nil {
		return nil, err
	}
	defer stop()
	p, c, base := r.p, r.c, r.base
	res := &loadResult{Date: time.Now().UTC().Format(time.RFC3339), Sessions: lo.sessions, PerSession: lo.messages,
		ModelLatencyMs: float64(lo.latency.Microseconds()) / 1000, ModelTPS: lo.tps}
	start := time.Now()
	stopProgress := tr.progress(log, 10*time.Second)
	res.Sent, res.GroupSessions = drive(ctx, p, tr, lo, nil)
	stopProgress()
	res.Seconds = time.Since(start).Seconds()
	// Late duplicates show up here.
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
	}
	t := tr.tally()
	res.take(t)
	res.inToModel, res.modelToReply = t.inLat, t.outLat
	res.InToModel, res.ModelToReply = percentilesOf(res.inToModel), percentilesOf(res.modelToReply)
	res.PerSecond = float64(res.Replied) / res.Seconds
	if res.Peak, err = readMemory(c.cmd.Process.Pid); err != nil {
		return nil, err
	}
	res.Goroutines, res.MaxGCPauseMs = readMetrics(base)
	res.PlatformErrors = p.host.Errors()
	return res, nil
}

// startTracked starts the bench model and a rig whose replies tr follows,
// every chat its own session in followup mode; stop closes both.
func startTracked(ctx context.Context, o options, lo loadOptions, tr *tracker, log io.Writer) (*rig, func(), error) {
	mdl := startModel(lo.latency, lo.tps, lo.tokens, lo.tool, tr.modelRequest, tr.modelDone)
	r, err := startRig(ctx, o, log, rigSpec{modelYAML: mdl.yaml(), agentDefaults: lo.agentDefaults(), extra: perChatFollowup, onReply: tr.reply})
	if err != nil {
		mdl.close()
		return nil, nil, err
	}
	return r, func() { r.close(log, o.keep); mdl.close() }, nil
}

// drive runs lo.sessions sessions at once through the Telegram fake: each
// sends a message, waits for its reply, then sends the next, lo.messages
// in all, or (lo.messages 0) until stop is closed. A session whose reply
// does not come within lo.replyTimeout stops; tally counts the message
// lost. Every groupEvery-th session is a supergroup where the message
// mentions the bot. drive returns the messages sent and the group sessions
// once every session has stopped.
func drive(ctx context.Context, p *platforms, tr *tracker, lo loadOptions, stop <-chan struct{}) (sent, groups int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < lo.sessions; i++ {
		group := lo.groupEvery > 0 && i%lo.groupEvery == lo.groupEvery-1
		if group {
			groups++
		}
		send := p.sender(lo.platforms[i%len(lo.platforms)], i, group)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; lo.messages == 0 || j < lo.messages; j++ {
				select {
				case <-stop:
					return
				default:
				}
				marker := fmt.Sprintf("#m%d-%d", i, j)
				ch := tr.pushed(marker, time.Now())
				send("question " + marker)
				mu.Lock()
				sent++
				mu.Unlock()
				select {
				case <-ch:
				case <-time.After(lo.replyTimeout):
					return // counted as lost; the session stops
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	wg.Wait()
	return sent, groups
}

// progress logs the messages sent and answered every period until the
// returned function is called.
func (t *tracker) progress(log io.Writer, period time.Duration) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		start := time.Now()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				t.mu.Lock()
				sent, answered := len(t.sent), len(t.replies)
				t.mu.Unlock()
				fmt.Fprintf(log, "%4.0f s: %d sent, %d answered\n", time.Since(start).Seconds(), sent, answered)
			}
		}
	}()
	return func() { close(done); <-exited }
}

// tally is the tracker's verdict over every message sent.
type tally struct {
	replied, lost, duplicated, outOfOrder int
	inLat, outLat                         []float64
	lostMarkers                           []string // sorted, at most 20
	orderNotes                            []string // the first out-of-order replies
}

func (t *tracker) tally() tally {
	t.mu.Lock()
	defer t.mu.Unlock()
	var r tally
	for m := range t.sent {
		switch n := t.replies[m]; {
		case n == 0:
			r.lost++
			r.lostMarkers = append(r.lostMarkers, m)
		case n > 1:
			r.duplicated += n - 1
			r.replied++
		default:
			r.replied++
		}
	}
	slices.Sort(r.lostMarkers)
	r.lostMarkers = r.lostMarkers[:min(len(r.lostMarkers), 20)]
	r.outOfOrder, r.orderNotes = t.order, slices.Clone(t.orderNotes)
	r.inLat, r.outLat = slices.Clone(t.inLat), slices.Clone(t.outLat)
	return r
}

// table prints the result for people.
func (r *loadResult) table(w io.Writer) {
	fmt.Fprintf(w, "sessions × messages       %d × %d (%d group sessions), model %.0f ms first token, %.0f tokens/s\n",
		r.Sessions, r.PerSession, r.GroupSessions, r.ModelLatencyMs, r.ModelTPS)
	fmt.Fprintf(w, "sent / replied            %d / %d in %.1f s (%.0f messages/s)\n", r.Sent, r.Replied, r.Seconds, r.PerSecond)
	fmt.Fprintf(w, "lost / duplicated / order %d / %d / %d %s\n", r.Lost, r.Duplicated, r.OutOfOrder, strings.Join(r.LostMarkers, " "))
	r.writeOrderNotes(w)
	fmt.Fprintf(w, "platform → model request  %s\n", r.InToModel)
	fmt.Fprintf(w, "model done → reply        %s\n", r.ModelToReply)
	fmt.Fprintf(w, "RSS after load (peak)     %.1f MB (%.1f MB), %d goroutines, max GC pause %.2f ms\n",
		float64(r.Peak.RSSKB)/1024, float64(r.Peak.PeakRSSKB)/1024, r.Goroutines, r.MaxGCPauseMs)
}

func (r *loadResult) failure() error {
	return fmt.Errorf("FAILED: %d lost, %d duplicated, %d out of order, %d platform errors",
		r.Lost, r.Duplicated, r.OutOfOrder, r.PlatformErrors)
}

// ok reports whether every message got exactly one reply, in order.
func (r *loadResult) ok() bool {
	return r.Lost == 0 && r.Duplicated == 0 && r.OutOfOrder == 0 && r.PlatformErrors == 0 && r.Sent > 0
}
