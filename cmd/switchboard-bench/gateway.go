package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// The gateway mode's pass marks (issue 22): N clients each on its own
// session reach minFanoutRatio of the throughput of one client carrying
// the same N sessions; a long reply reaches every client that follows it
// with at most maxReplyFactor times its size sent to each, and none is
// disconnected.
const (
	minFanoutRatio = 0.90
	maxReplyFactor = 30
)

// gatewaySettle is how long the bench waits after opening connections
// before it measures: the gateway merges the presence broadcasts of a
// connect storm over 250 ms, and those are not the load being measured.
const gatewaySettle = time.Second

// longTrigger in a message asks the bench model for the long reply.
const longTrigger = "#long-reply"

// gatewayOptions are the gateway mode's flags beyond the load mode's
// (-sessions, -messages, -latency, -tps, -tokens, -reply-timeout).
type gatewayOptions struct {
	rounds int // A B pairs
	// clients are connected for the long reply; replyBytes is its size,
	// replyChunk the size of each of its deltas, replyTPS the deltas a
	// second (0: as fast as the model's socket takes them).
	clients    int
	replyBytes int
	replyChunk int
	replyTPS   float64
}

// gatewayResult is what the gateway mode measures.
type gatewayResult struct {
	Date           string  `json:"date"`
	Sessions       int     `json:"sessions"`
	PerSession     int     `json:"messagesPerSessionPerRound"`
	Rounds         int     `json:"rounds"`
	ModelLatencyMs float64 `json:"modelFirstTokenLatencyMs"`
	ModelTPS       float64 `json:"modelTokensPerSecond"`
	ModelTokens    int     `json:"modelTokensPerAnswer"`
	// PerClient are the rounds of shape A (a client per session), OneClient
	// those of shape B (one client, every session), in the order run.
	PerClient []fanoutRound `json:"perClientRounds"`
	OneClient []fanoutRound `json:"oneClientRounds"`
	// PerClientRate and OneClientRate are the medians of the rounds'
	// messages/s; Ratio is PerClientRate / OneClientRate.
	PerClientRate float64 `json:"perClientMessagesPerSecond"`
	OneClientRate float64 `json:"oneClientMessagesPerSecond"`
	Ratio         float64 `json:"ratio"`
	MinRatio      float64 `json:"minRatio"`
	Long          longRun `json:"longReply"`
}

// fanoutRound is one closed-loop round of the fan-out test.
type fanoutRound struct {
	Clients int `json:"clients"`
	Sent    int `json:"sent"`
	// Finals are the messages answered with a chat final; Failed those
	// whose send failed or whose run ended aborted or in error; Lost those
	// not answered within -reply-timeout (the session stopped there).
	Finals    int     `json:"finals"`
	Failed    int     `json:"failed"`
	Lost      int     `json:"lost"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"messagesPerSecond"`
	// CPUMsPerMessage is the child's user + system CPU time over the round
	// divided by the finals.
	CPUMsPerMessage float64 `json:"childCpuMsPerMessage"`
	// Frames and bytes the clients read during the round: the median and
	// largest client, and all clients together.
	FramesPerClient int64    `json:"framesPerClientMedian"`
	BytesPerClient  int64    `json:"bytesPerClientMedian"`
	MaxBytes        int64    `json:"bytesPerClientMax"`
	FramesTotal     int64    `json:"framesTotal"`
	BytesTotal      int64    `json:"bytesTotal"`
	Disconnected    int      `json:"disconnected"`
	DroppedEvents   int64    `json:"droppedEvents"`
	Errors          []string `json:"errors,omitempty"` // the first few
	// SendToFinalMs is each answered message's chat.send → chat final, as
	// its client saw it.
	SendToFinalMs percentiles `json:"sendToFinalMs"`
	latencies     []float64
}

// longRun is the long-reply test.
type longRun struct {
	ReplyBytes int     `json:"replyBytes"`
	ChunkBytes int     `json:"chunkBytes"`
	TPS        float64 `json:"deltasPerSecond"`
	MaxFactor  float64 `json:"maxFactor"`
	// Seconds is chat.send → the sender's chat final.
	Seconds float64      `json:"seconds"`
	Clients []longClient `json:"clients"`
	Error   string       `json:"error,omitempty"`
}

// Roles of the long reply's clients: how each follows the session. Every
// one must get the whole reply.
const (
	roleSender     = "sender"     // sent the message
	roleViewer     = "viewer"     // loaded the session's history (chat.history), as a chat page does
	roleSubscriber = "subscriber" // called sessions.messages.subscribe, as OpenClaw's Control UI does
)

// longClient is what one client read while the long reply streamed.
type longClient struct {
	Role string `json:"role"`
	// Bytes and Frames are everything the client read from chat.send
	// until the end (its own final, or the sender's for a client that
	// followed nothing); Factor is Bytes / the reply's size.
	Bytes  int64   `json:"bytes"`
	Frames int64   `json:"frames"`
	Factor float64 `json:"factor"`
	// ChatEvents and AgentEvents are the run's events it received.
	ChatEvents  int  `json:"chatEvents"`
	AgentEvents int  `json:"agentEvents"`
	Final       bool `json:"final"`
	// FinalText is the length of the final's text.
	FinalText   int    `json:"finalTextBytes"`
	EndState    string `json:"endState,omitempty"`
	Connected   bool   `json:"connected"`
	CloseCode   int    `json:"closeCode,omitempty"`
	CloseReason string `json:"closeReason,omitempty"`
	Dropped     int64  `json:"droppedEvents,omitempty"`
}

// gateway runs the fan-out rounds, A B A B …, then the long reply, against
// one child.
func gateway(ctx context.Context, o options, lo loadOptions, gw gatewayOptions, log io.Writer) (*gatewayResult, error) {
	mdl := startModel(lo.latency, lo.tps, lo.tokens, false, nil, nil)
	mdl.long = &longReply{trigger: longTrigger, bytes: gw.replyBytes, chunk: gw.replyChunk, tps: gw.replyTPS}
	defer mdl.close()
	r, err := startRig(ctx, o, log, rigSpec{modelYAML: mdl.yaml(), agentDefaults: lo.agentDefaults(), extra: perChatFollowup})
	if err != nil {
		return nil, err
	}
	defer r.close(log, o.keep)
	res := &gatewayResult{
		Date: time.Now().UTC().Format(time.RFC3339), Sessions: lo.sessions, PerSession: lo.messages, Rounds: gw.rounds,
		ModelLatencyMs: float64(lo.latency.Microseconds()) / 1000, ModelTPS: lo.tps, ModelTokens: lo.tokens, MinRatio: minFanoutRatio,
	}
	url := fmt.Sprintf("ws://127.0.0.1:%d/", r.port)
	pid := r.c.cmd.Process.Pid
	for i := 0; i < gw.rounds; i++ {
		for k, clients := range []int{lo.sessions, 1} {
			// The shapes differ in their run ids even when one session
			// makes them the same shape: a repeated idempotency key would
			// be answered from chat.send's dedupe, with no new run.
			fr, err := fanout(ctx, url, r.token, pid, fmt.Sprintf("%d%c", i, 'a'+k), clients, lo)
			if err != nil {
				return nil, err
			}
			shape := "A (a client per session)"
			if k == 1 {
				shape = "B (one client)"
				res.OneClient = append(res.OneClient, fr)
			} else {
				res.PerClient = append(res.PerClient, fr)
			}
			fmt.Fprintf(log, "gateway: round %d %s: %d/%d answered, %.0f messages/s\n", i+1, shape, fr.Finals, fr.Sent, fr.PerSecond)
		}
	}
	res.PerClientRate, res.OneClientRate = medianRate(res.PerClient), medianRate(res.OneClient)
	if res.OneClientRate > 0 {
		res.Ratio = res.PerClientRate / res.OneClientRate
	}
	res.Long = longReplyRun(ctx, url, r.token, gw, lo.replyTimeout)
	fmt.Fprintf(log, "gateway: long reply done after %.1f s\n", res.Long.Seconds)
	return res, nil
}

// fanout runs one round: lo.sessions sessions, each sending lo.messages
// messages through chat.send, the next once the last's chat final came
// (closed loop), spread over clients connections (session i on client
// i mod clients).
func fanout(ctx context.Context, url, token string, pid int, round string, clients int, lo loadOptions) (fanoutRound, error) {
	cs, err := dialGateways(ctx, url, token, clients)
	if err != nil {
		return fanoutRound{}, err
	}
	defer closeGateways(cs)
	select {
	case <-time.After(gatewaySettle):
	case <-ctx.Done():
		return fanoutRound{}, ctx.Err()
	}
	fr := fanoutRound{Clients: clients}
	type counts struct{ wire, frames int64 }
	before := make([]counts, len(cs))
	for i, c := range cs {
		before[i].wire, before[i].frames = c.counts()
	}
	cpu0, err := readCPU(pid)
	if err != nil {
		return fr, err
	}
	start := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	// outcome records one message's fate.
	outcome := func(sent, final, failed, lost int, err error) {
		mu.Lock()
		defer mu.Unlock()
		fr.Sent += sent
		fr.Finals += final
		fr.Failed += failed
		fr.Lost += lost
		if err != nil && len(fr.Errors) < 5 {
			fr.Errors = append(fr.Errors, err.Error())
		}
	}
	for s := 0; s < lo.sessions; s++ {
		c := cs[s%len(cs)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each round and shape has its own sessions: sharing them, a
			// later round would carry every earlier round's history into
			// each model request and lose to the first for that alone.
			key := fmt.Sprintf("bench-%s-%d", round, s)
			for m := 0; m < lo.messages; m++ {
				runID := fmt.Sprintf("bench-r%s-c%d-s%d-m%d", round, clients, s, m)
				end := c.expect(runID)
				sent := time.Now()
				_, err := c.call(ctx, "chat.send", map[string]any{
					"sessionKey": key, "message": fmt.Sprintf("question #m%d-%d", s, m), "idempotencyKey": runID,
				})
				if err != nil {
					c.forget(runID)
					outcome(1, 0, 1, 0, err)
					return
				}
				select {
				case state := <-end:
					if state != "final" {
						outcome(1, 0, 1, 0, fmt.Errorf("run %s ended %s", runID, state))
						continue
					}
					ms := float64(time.Since(sent).Microseconds()) / 1000
					mu.Lock()
					fr.latencies = append(fr.latencies, ms)
					mu.Unlock()
					outcome(1, 1, 0, 0, nil)
				case <-time.After(lo.replyTimeout):
					c.forget(runID)
					outcome(1, 0, 0, 1, fmt.Errorf("run %s: no chat final within %v", runID, lo.replyTimeout))
					return
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, err := readCPU(pid)
	if err != nil {
		return fr, err
	}
	if ctx.Err() != nil {
		return fr, ctx.Err()
	}
	fr.Seconds = elapsed.Seconds()
	fr.SendToFinalMs = percentilesOf(fr.latencies)
	fr.PerSecond = float64(fr.Finals) / fr.Seconds
	fr.CPUMsPerMessage = float64((cpu1 - cpu0).Microseconds()) / 1000 / float64(max(fr.Finals, 1))
	wires, frames := make([]int64, len(cs)), make([]int64, len(cs))
	for i, c := range cs {
		w, f := c.counts()
		wires[i], frames[i] = w-before[i].wire, f-before[i].frames
		fr.BytesTotal += wires[i]
		fr.FramesTotal += frames[i]
		fr.DroppedEvents += c.c.DroppedEvents()
		if !c.connected() {
			fr.Disconnected++
		}
	}
	fr.BytesPerClient, fr.FramesPerClient, fr.MaxBytes = median(wires), median(frames), slices.Max(wires)
	return fr, nil
}

// longReplyRun connects gw.clients clients; the first sends the message
// that asks for the long reply, the others follow its session, by turns
// as a viewer and a subscriber. Every client reads as fast as it can
// until the run's final. Failures are in the result's Error.
func longReplyRun(ctx context.Context, url, token string, gw gatewayOptions, timeout time.Duration) longRun {
	lr := longRun{ReplyBytes: gw.replyBytes, ChunkBytes: gw.replyChunk, TPS: gw.replyTPS, MaxFactor: maxReplyFactor}
	cs, err := dialGateways(ctx, url, token, gw.clients)
	if err != nil {
		lr.Error = err.Error()
		return lr
	}
	defer closeGateways(cs)
	const session = "bench-long"
	roles := make([]string, len(cs))
	roles[0] = roleSender
	for i := 1; i < len(cs); i++ {
		method, params := "chat.history", map[string]any{"sessionKey": session}
		roles[i] = roleViewer
		if i%2 == 1 {
			method, params = "sessions.messages.subscribe", map[string]any{"key": session}
			roles[i] = roleSubscriber
		}
		if _, err := cs[i].call(ctx, method, params); err != nil {
			lr.Error = err.Error()
			return lr
		}
	}
	select {
	case <-time.After(gatewaySettle):
	case <-ctx.Done():
		lr.Error = ctx.Err().Error()
		return lr
	}
	runID := fmt.Sprintf("bench-long-%d", time.Now().UnixNano())
	before := make([][2]int64, len(cs))
	for i, c := range cs {
		c.follow(runID)
		before[i][0], before[i][1] = c.counts()
	}
	after := make([][2]int64, len(cs))
	mark := func(i int) { after[i][0], after[i][1] = cs[i].counts() }

	start := time.Now()
	end := cs[0].expect(runID)
	_, err = cs[0].call(ctx, "chat.send", map[string]any{
		"sessionKey": session, "message": "write the long answer " + longTrigger, "idempotencyKey": runID,
	})
	if err != nil {
		cs[0].forget(runID)
		lr.Error = err.Error()
	} else {
		select {
		case <-end:
			lr.Seconds = time.Since(start).Seconds()
		case <-cs[0].c.Closed():
			lr.Error = "the sender was disconnected before the final"
		case <-time.After(timeout):
			cs[0].forget(runID)
			lr.Error = fmt.Sprintf("no chat final at the sender within %v", timeout)
		case <-ctx.Done():
			lr.Error = ctx.Err().Error()
		}
	}
	mark(0)
	// The others read on to their own final.
	deadline := time.Now().Add(10 * time.Second)
	for i := 1; i < len(cs); i++ {
		c := cs[i]
		pollUntil(ctx, deadline, func() bool { return c.followed().endState != "" || !c.connected() })
		mark(i)
	}
	for i, c := range cs {
		s := c.followed()
		lc := longClient{
			Role: roles[i], Bytes: after[i][0] - before[i][0], Frames: after[i][1] - before[i][1],
			ChatEvents: s.chat, AgentEvents: s.agent, Final: s.final, FinalText: s.finalText, EndState: s.endState,
			Connected: c.connected(), Dropped: c.c.DroppedEvents(),
		}
		lc.Factor = float64(lc.Bytes) / float64(max(gw.replyBytes, 1))
		if !lc.Connected {
			lc.CloseCode, lc.CloseReason = c.c.CloseErr()
		}
		lr.Clients = append(lr.Clients, lc)
	}
	return lr
}

// pollUntil returns once cond holds, deadline has passed or ctx ended.
func pollUntil(ctx context.Context, deadline time.Time, cond func() bool) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() && time.Now().Before(deadline) {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// median of v (the upper middle of an even count); 0 for none.
func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// medianRate is the median messages/s of rounds.
func medianRate(rounds []fanoutRound) float64 {
	if len(rounds) == 0 {
		return 0
	}
	v := make([]float64, len(rounds))
	for i, r := range rounds {
		v[i] = r.PerSecond
	}
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

// fanoutMisses lists what fails the fan-out test: a message not answered,
// a client disconnected, or the ratio under the mark.
func (r *gatewayResult) fanoutMisses() []string {
	var out []string
	for _, rounds := range [][]fanoutRound{r.PerClient, r.OneClient} {
		for _, fr := range rounds {
			if fr.Sent == 0 || fr.Failed > 0 || fr.Lost > 0 || fr.Disconnected > 0 {
				out = append(out, fmt.Sprintf("a round with %d client(s): %d sent, %d failed, %d lost, %d disconnected",
					fr.Clients, fr.Sent, fr.Failed, fr.Lost, fr.Disconnected))
			}
		}
	}
	if len(r.PerClient) == 0 || len(r.OneClient) == 0 {
		out = append(out, "no fan-out rounds")
	} else if r.Ratio < r.MinRatio {
		out = append(out, fmt.Sprintf("%d clients reach %.0f%% of one client's throughput (at least %.0f%%)", r.Sessions, 100*r.Ratio, 100*r.MinRatio))
	}
	return out
}

// misses lists what fails the long-reply test: an error, a client
// disconnected, more than MaxFactor times the reply sent to one, or one
// without the final or with a short one.
func (l longRun) misses() []string {
	var out []string
	if l.Error != "" {
		out = append(out, "long reply: "+l.Error)
	}
	for i, c := range l.Clients {
		who := fmt.Sprintf("long reply, client %d (%s)", i, c.Role)
		if !c.Connected {
			out = append(out, fmt.Sprintf("%s: disconnected (%d %s)", who, c.CloseCode, c.CloseReason))
		}
		if c.Factor > l.MaxFactor {
			out = append(out, fmt.Sprintf("%s: %.1f× the reply's bytes (at most %.0f×)", who, c.Factor, l.MaxFactor))
		}
		if !c.Final {
			out = append(out, who+": no chat final")
		}
		if c.Final && c.FinalText < l.ReplyBytes {
			out = append(out, fmt.Sprintf("%s: the final's text is %d bytes, the reply %d", who, c.FinalText, l.ReplyBytes))
		}
	}
	if len(l.Clients) == 0 && l.Error == "" {
		out = append(out, "long reply: no clients")
	}
	return out
}

func (r *gatewayResult) ok() bool { return len(r.fanoutMisses()) == 0 && len(r.Long.misses()) == 0 }

func (r *gatewayResult) failure() error {
	return errors.New("FAILED: " + strings.Join(append(r.fanoutMisses(), r.Long.misses()...), "; "))
}

// table prints the result for people.
func (r *gatewayResult) table(w io.Writer) {
	kb := func(b int64) string { return fmt.Sprintf("%.1f KB", float64(b)/1024) }
	verdict := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "MISS"
	}
	fmt.Fprintf(w, "fan-out                    %d sessions × %d messages per round, %d rounds of A and B alternating; model %.0f ms first token, %.0f tokens/s, %d tokens\n",
		r.Sessions, r.PerSession, r.Rounds, r.ModelLatencyMs, r.ModelTPS, r.ModelTokens)
	for _, shape := range []struct {
		name   string
		rounds []fanoutRound
	}{{fmt.Sprintf("A: %d clients, 1 session each", r.Sessions), r.PerClient}, {fmt.Sprintf("B: 1 client, %d sessions", r.Sessions), r.OneClient}} {
		fmt.Fprintln(w, shape.name)
		for i, fr := range shape.rounds {
			fmt.Fprintf(w, "  round %d  %4d/%d answered in %.1f s: %6.1f messages/s, child CPU %.2f ms/message; per client %d frames, %s (max %s); %.1f KB read per message\n",
				i+1, fr.Finals, fr.Sent, fr.Seconds, fr.PerSecond, fr.CPUMsPerMessage, fr.FramesPerClient, kb(fr.BytesPerClient), kb(fr.MaxBytes),
				float64(fr.BytesTotal)/1024/float64(max(fr.Sent, 1)))
			fmt.Fprintf(w, "           send → final %s\n", fr.SendToFinalMs)
			if fr.Failed+fr.Lost+fr.Disconnected > 0 || fr.DroppedEvents > 0 {
				fmt.Fprintf(w, "           %d failed, %d lost, %d disconnected, %d events dropped by the client %s\n",
					fr.Failed, fr.Lost, fr.Disconnected, fr.DroppedEvents, strings.Join(fr.Errors, "; "))
			}
		}
	}
	fmt.Fprintf(w, "A / B (medians)            %.1f / %.1f messages/s = %.0f%% (at least %.0f%%): %s\n",
		r.PerClientRate, r.OneClientRate, 100*r.Ratio, 100*r.MinRatio, verdict(len(r.fanoutMisses()) == 0))
	l := r.Long
	fmt.Fprintf(w, "long reply                 %s in %d-byte deltas at %.0f/s to %d clients; final at the sender after %.1f s\n",
		kb(int64(l.ReplyBytes)), l.ChunkBytes, l.TPS, len(l.Clients), l.Seconds)
	fmt.Fprintf(w, "  client  role        read        × reply  frames  run's chat/agent events  final         connected\n")
	for i, c := range l.Clients {
		final := "no"
		if c.Final {
			final = fmt.Sprintf("%d B", c.FinalText)
		} else if c.EndState != "" {
			final = c.EndState
		}
		conn := "yes"
		if !c.Connected {
			conn = fmt.Sprintf("no (%d %s)", c.CloseCode, c.CloseReason)
		}
		fmt.Fprintf(w, "  %-6d  %-10s  %-10s  %7.1f  %6d  %10d / %-10d  %-12s  %s\n",
			i, c.Role, kb(c.Bytes), c.Factor, c.Frames, c.ChatEvents, c.AgentEvents, final, conn)
	}
	fmt.Fprintf(w, "long reply verdict         every client connected, ≤ %.0f× the reply each, every one got the whole final: %s\n",
		l.MaxFactor, verdict(len(l.misses()) == 0))
	if l.Error != "" {
		fmt.Fprintf(w, "  %s\n", l.Error)
	}
}
