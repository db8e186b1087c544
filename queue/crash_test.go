package queue

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/store"
)

var crashKills = flag.Int("crash.kills", 20, "SIGKILLs in TestCrashLosesNothingAndAnswersOnce")

const (
	crashChildEnv    = "SWITCHBOARD_QUEUE_CRASH_CHILD"
	crashBatchesEnv  = "SWITCHBOARD_QUEUE_CRASH_BATCHES"
	crashSessions    = 8
	crashPerSession  = 12
	crashDeliveryLog = "deliveries.log"
)

// TestCrashLosesNothingAndAnswersOnce runs the dispatcher in a child
// process (real agent runner, real SQLite journal, a slow model), SIGKILLs
// it at random points while it submits and answers messages, restarts it,
// and finally checks: every message was answered by exactly one completed
// run, every run's reply was delivered, and each session's messages were
// answered in the order they were accepted.
func TestCrashLosesNothingAndAnswersOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	dir := t.TempDir()
	seed := time.Now().UnixNano()
	t.Logf("seed %d, %d kills", seed, *crashKills)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))

	// Each child submits one more batch of messages than the last (earlier
	// batches are resubmitted and recognised as duplicates), so every child
	// has fresh work to be killed in the middle of.
	kills, batches := 0, 0
	for kills < *crashKills {
		batches++
		_, killed := runCrashChild(t, dir, batches, time.Duration(rng.IntN(400))*time.Millisecond)
		if killed {
			kills++
		}
	}
	if done, _ := runCrashChild(t, dir, batches, 0); !done {
		t.Fatal("the final run did not finish")
	}
	verifyCrashRun(t, dir, kills, batches)
}

// runCrashChild runs one child until it reports done, or kills it after
// killAfter (0: never). It reports whether all work finished and whether it
// was killed.
func runCrashChild(t *testing.T, dir string, batches int, killAfter time.Duration) (done, killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashBatchesEnv+"="+strconv.Itoa(batches))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	if killAfter > 0 {
		timer := time.AfterFunc(killAfter, func() {
			mu.Lock()
			defer mu.Unlock()
			if !done {
				killed = cmd.Process.Signal(syscall.SIGKILL) == nil
			}
		})
		defer timer.Stop()
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if sc.Text() == "DONE" {
			mu.Lock()
			done = !killed
			mu.Unlock()
		}
	}
	werr := cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	if !killed && werr != nil {
		t.Fatalf("child failed: %v", werr)
	}
	return done, killed
}

// slowModel answers every call after a short, random delay.
type slowModel struct{}

func (m slowModel) Stream(ctx context.Context, req *llm.Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error) {
	b := llm.NewMessageBuilder("slow", "slow", req.Model, time.Now(), emit)
	b.Start()
	select {
	case <-time.After(time.Duration(5+rand.IntN(20)) * time.Millisecond):
	case <-ctx.Done():
		return b.Abort(ctx)
	}
	i := b.StartText()
	b.AppendText(i, "ok")
	b.End(i)
	return b.Done(core.StopReasonStop)
}

// logDeliverer appends each delivery to a file, synced, before returning:
// the record of what users would have seen.
type logDeliverer struct {
	mu sync.Mutex
	f  *os.File
}

func (l *logDeliverer) Deliver(_ context.Context, d Delivery) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"run": d.RunID, "session": d.SessionKey, "entries": d.EntryIDs, "kind": d.Kind})
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return err
	}
	return l.f.Sync()
}

// crashChild is the child process: it starts a dispatcher on the state
// dir, submits every message (the journal's dedupe keys make resubmission
// after a restart harmless), waits until the journal has nothing pending,
// and prints DONE.
func crashChild() int {
	dir := os.Getenv(crashChildEnv)
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	router, _ := llm.NewRouter(llm.ModelsConfig{}, llm.RouterOptions{Providers: map[string]llm.Provider{
		"slow": slowModel{},
	}})
	runner, err := agent.New(agent.Config{Model: core.ModelSelection{Primary: "slow/m"}, StateDir: dir}, agent.Deps{
		Models: router, Sessions: st, Transcript: transcript.Options{},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer runner.Close()
	f, err := os.OpenFile(filepath.Join(dir, crashDeliveryLog), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	cfg := DefaultConfig()
	cfg.Mode = ModeFollowup
	zero := 0
	cfg.DebounceMs = &zero
	d, err := New(Options{Config: cfg, Lanes: map[string]int{LaneMain: 4}}, Deps{Runner: runner, Journal: st, Deliverer: &logDeliverer{f: f}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := d.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	batches, _ := strconv.Atoi(os.Getenv(crashBatchesEnv))
	for b := range batches {
		for i := range crashPerSession {
			for s := range crashSessions {
				in := core.Inbound{
					SessionKey: core.SessionKey(fmt.Sprintf("agent:main:test:direct:s%d", s)),
					Route:      core.Route{Channel: "test", To: core.ChatID(fmt.Sprintf("s%d", s))},
					ChatType:   core.ChatDirect,
					Body:       fmt.Sprintf("s%d batch %d message %d", s, b, i),
					MessageID:  core.MessageID(fmt.Sprintf("s%d-%d-%d", s, b, i)),
				}
				if _, err := d.Submit(ctx, in); err != nil {
					fmt.Fprintln(os.Stderr, "submit:", err)
					return 1
				}
			}
		}
	}
	for {
		pending, err := st.PendingJournal(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		out, _ := st.UndeliveredOutcomes(ctx)
		if len(pending) == 0 && len(out) == 0 && d.Stats().Active == 0 {
			break
		}
		<-time.After(5 * time.Millisecond)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d.Stop(stopCtx)
	fmt.Println("DONE")
	return 0
}

func verifyCrashRun(t *testing.T, dir string, kills, batches int) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if p, _ := st.PendingJournal(ctx); len(p) != 0 {
		t.Errorf("%d entries still pending", len(p))
	}
	// Every message has exactly one journal entry, done.
	var ids []int64
	total := batches * crashSessions * crashPerSession
	for id := int64(1); id < int64(10*total); id++ {
		ids = append(ids, id)
	}
	entries, err := st.JournalEntries(ctx, ids...)
	if err != nil {
		t.Fatal(err)
	}
	byMsg := map[string]store.JournalEntry{}
	for _, e := range entries {
		var rec record
		if err := json.Unmarshal(e.Inbound, &rec); err != nil {
			t.Fatal(err)
		}
		if _, dup := byMsg[string(rec.Inbound.MessageID)]; dup {
			t.Errorf("message %s was accepted twice", rec.Inbound.MessageID)
		}
		byMsg[string(rec.Inbound.MessageID)] = e
		if e.State != store.JournalDone {
			t.Errorf("message %s ended %s (%s)", rec.Inbound.MessageID, e.State, e.Note)
		}
	}
	if len(byMsg) != total {
		t.Errorf("lost messages: %d of %d accepted", len(byMsg), total)
	}

	// Deliveries: each entry delivered by exactly one run (redelivering
	// the same run after a kill is allowed); per session, runs delivered in
	// entry order.
	data, err := os.ReadFile(filepath.Join(dir, crashDeliveryLog))
	if err != nil {
		t.Fatal(err)
	}
	runsOf := map[int64]map[string]bool{}
	seenRun := map[string]bool{}
	lastBySession := map[string]int64{}
	duplicates := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Run     string  `json:"run"`
			Session string  `json:"session"`
			Entries []int64 `json:"entries"`
			Kind    string  `json:"kind"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("delivery log line %q: %v", line, err)
		}
		if rec.Kind != string(DeliveryReply) {
			t.Errorf("unexpected %s delivery: %s", rec.Kind, line)
			continue
		}
		if seenRun[rec.Run] {
			duplicates++
			continue
		}
		seenRun[rec.Run] = true
		for _, id := range rec.Entries {
			if runsOf[id] == nil {
				runsOf[id] = map[string]bool{}
			}
			runsOf[id][rec.Run] = true
		}
		if first := slices.Min(rec.Entries); first < lastBySession[rec.Session] {
			t.Errorf("session %s: run %s (entries %v) delivered after entry %d", rec.Session, rec.Run, rec.Entries, lastBySession[rec.Session])
		}
		lastBySession[rec.Session] = slices.Max(rec.Entries)
	}
	for msg, e := range byMsg {
		switch n := len(runsOf[e.ID]); {
		case n == 0:
			t.Errorf("message %s (entry %d) was never delivered", msg, e.ID)
		case n > 1:
			t.Errorf("message %s (entry %d) was answered by %d runs", msg, e.ID, n)
		}
		if !runsOf[e.ID][e.RunID] {
			t.Errorf("message %s: the journal says run %s, deliveries say %v", msg, e.RunID, runsOf[e.ID])
		}
	}
	if duplicates > kills {
		t.Errorf("%d redeliveries for %d kills; at most one per kill", duplicates, kills)
	}
	t.Logf("%d messages, %d kills, %d redeliveries of an already delivered run", len(byMsg), kills, duplicates)
}
