package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/transcript"
)

// chaosOptions are the chaos mode's flags.
type chaosOptions struct {
	kills int
	// within: each kill comes at a uniformly random time in [0, within)
	// after the child was ready.
	within time.Duration
}

// chaosResult is what the chaos mode measures and checks (reliability
// matrix row 5).
type chaosResult struct {
	Date     string `json:"date"`
	Kills    int    `json:"kills"`
	Sessions int    `json:"sessions"`
	// ModelLatencyMs is the model's time to first token; with ModelTool
	// every turn calls a tool first (two model requests).
	ModelLatencyMs float64 `json:"modelFirstTokenLatencyMs"`
	ModelTool      bool    `json:"modelCallsTool"`
	delivery
	// DuplicatesAllowed is one per kill: Telegram's sendMessage has no
	// idempotency key, so a reply sent just before a kill, and not yet in
	// the ledger, is sent again.
	DuplicatesAllowed int         `json:"duplicatesAllowed"`
	Seconds           float64     `json:"seconds"`
	RestartReadyMs    percentiles `json:"restartToReadyMs"`
	// Transcripts counts the session transcripts on disk after the run;
	// TranscriptErrors those that did not load; TornTails those whose last
	// line was torn by a kill and cut off on load; SkippedLines the lines
	// that did not decode.
	Transcripts      int      `json:"transcripts"`
	TranscriptErrors []string `json:"transcriptErrors"`
	TornTails        int      `json:"tornTails"`
	SkippedLines     int      `json:"skippedLines"`
	PlatformErrors   int64    `json:"platformErrors"`
}

// chaos runs the load of drive (sessions that never stop on their own)
// while killing the child with SIGKILL co.kills times at random moments
// and starting it again on the same state; then it stops sending, waits for
// every answer, stops the child and loads every transcript.
func chaos(ctx context.Context, o options, lo loadOptions, co chaosOptions, log io.Writer) (*chaosResult, error) {
	tr := newTracker()
	r, closeRig, err := startTracked(ctx, o, lo, tr, log)
	if err != nil {
		return nil, err
	}
	defer closeRig()
	res := &chaosResult{Date: time.Now().UTC().Format(time.RFC3339), Kills: co.kills, Sessions: lo.sessions,
		ModelLatencyMs: float64(lo.latency.Microseconds()) / 1000, ModelTool: lo.tool, DuplicatesAllowed: co.kills}
	start := time.Now()
	stop := make(chan struct{})
	type driven struct{ sent int }
	done := make(chan driven, 1)
	lo.messages = 0 // until stop
	go func() {
		sent, _ := drive(ctx, r.p, tr, lo, stop)
		done <- driven{sent}
	}()
	defer tr.progress(log, 30*time.Second)()
	var readies []float64
	var killErr error
	for k := 0; k < co.kills; k++ {
		select {
		case <-time.After(rand.N(co.within)):
		case <-ctx.Done():
			killErr = ctx.Err()
		}
		if killErr != nil {
			break
		}
		ready, err := r.crash(ctx)
		if err != nil {
			killErr = fmt.Errorf("restart after kill %d: %w", k+1, err)
			break
		}
		readies = append(readies, float64(ready.Microseconds())/1000)
		if (k+1)%20 == 0 {
			fmt.Fprintf(log, "chaos: %d of %d kills\n", k+1, co.kills)
		}
	}
	close(stop)
	d := <-done
	res.Seconds = time.Since(start).Seconds()
	if killErr != nil {
		return nil, killErr
	}
	// Late duplicates show up here.
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
	}
	t := tr.tally()
	res.Sent = d.sent
	res.take(t)
	res.RestartReadyMs = percentilesOf(readies)
	res.PlatformErrors = r.p.host.Errors()
	// The transcripts are loaded as the daemon loads them, after it has
	// stopped.
	if err := r.c.stop(30 * time.Second); err != nil {
		return nil, fmt.Errorf("stopping switchboard after the run: %w", err)
	}
	if err := checkTranscripts(r.stateDir(), res); err != nil {
		return nil, err
	}
	return res, nil
}

// checkTranscripts opens every session transcript under stateDir with
// crash repair, as the daemon does.
func checkTranscripts(stateDir string, res *chaosResult) error {
	return filepath.WalkDir(stateDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".jsonl") || !strings.Contains(path, string(filepath.Separator)+"sessions"+string(filepath.Separator)) {
			return nil
		}
		res.Transcripts++
		f, rep, err := transcript.Open(path, transcript.Options{})
		if err != nil {
			res.TranscriptErrors = append(res.TranscriptErrors, err.Error())
			return nil
		}
		_ = f.Close()
		if rep.TruncatedTail {
			res.TornTails++
		}
		res.SkippedLines += len(rep.SkippedLines)
		return nil
	})
}

// table prints the result for people.
func (r *chaosResult) table(w io.Writer) {
	fmt.Fprintf(w, "kills / sessions          %d / %d, model %.0f ms first token, tool call per turn: %v\n",
		r.Kills, r.Sessions, r.ModelLatencyMs, r.ModelTool)
	fmt.Fprintf(w, "sent / replied            %d / %d in %.1f s\n", r.Sent, r.Replied, r.Seconds)
	fmt.Fprintf(w, "lost / duplicated / order %d / %d (≤ %d allowed) / %d %s\n", r.Lost, r.Duplicated, r.DuplicatesAllowed, r.OutOfOrder, strings.Join(r.LostMarkers, " "))
	r.writeOrderNotes(w)
	fmt.Fprintf(w, "restart → ready           p50 %.1f  p99 %.1f  max %.1f ms\n", r.RestartReadyMs.P50, r.RestartReadyMs.P99, r.RestartReadyMs.Max)
	fmt.Fprintf(w, "transcripts               %d loaded, %d failed, %d torn tails cut, %d lines skipped\n",
		r.Transcripts-len(r.TranscriptErrors), len(r.TranscriptErrors), r.TornTails, r.SkippedLines)
	for _, e := range r.TranscriptErrors {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// ok reports whether the run lost nothing: every message answered, in
// order, at most one duplicate per kill, every transcript loaded.
func (r *chaosResult) ok() bool {
	return r.Sent > 0 && r.Lost == 0 && r.Duplicated <= r.DuplicatesAllowed && r.OutOfOrder == 0 &&
		len(r.TranscriptErrors) == 0 && r.SkippedLines == 0 && r.PlatformErrors == 0
}

func (r *chaosResult) failure() error {
	return fmt.Errorf("FAILED: %d lost, %d duplicated (%d allowed), %d out of order, %d transcripts failed to load, %d lines skipped, %d platform errors",
		r.Lost, r.Duplicated, r.DuplicatesAllowed, r.OutOfOrder, len(r.TranscriptErrors), r.SkippedLines, r.PlatformErrors)
}
