// Package storetest is the state store's conformance suite: each
// behaviour package store promises is asserted once here, and each
// implementation's tests run the suite against it (SQLite in package
// store's terms, PostgreSQL through store/postgres), so both keep the
// same promises.
//
// A suite function takes an opener that returns a fresh, empty store for
// one (sub)test and arranges its closing with t.Cleanup. The suites use
// only the interfaces; they run their subtests one after another.
package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Session keys the suites use.
const (
	sessA core.SessionKey = "agent:main:chan-a:direct:111"
	sessB core.SessionKey = "agent:main:chan-c:channel:c222"
)

// QueueSettings asserts store.QueueSettings: overrides are kept byte for
// byte and replaced per session; nil, empty and JSON null delete; bad
// JSON and an empty key are refused with an error saying so.
func QueueSettings(t *testing.T, open func(t *testing.T) store.QueueSettings) {
	ctx := t.Context()
	s := open(t)
	if got, err := s.AllQueueSettings(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	put := func(key core.SessionKey, v string) {
		t.Helper()
		var raw json.RawMessage
		if v != "<nil>" {
			raw = json.RawMessage(v)
		}
		if err := s.PutQueueSettings(ctx, key, raw); err != nil {
			t.Fatalf("PutQueueSettings(%s, %s): %v", key, v, err)
		}
	}
	put(sessA, `{"mode":"collect","debounceMs":500}`)
	put(sessB, `{"mode":"steer"}`)
	put(sessB, `{"mode":"followup",  "cap":3}`) // replaces, spacing kept
	got, err := s.AllQueueSettings(ctx)
	want := map[core.SessionKey]json.RawMessage{
		sessA: json.RawMessage(`{"mode":"collect","debounceMs":500}`),
		sessB: json.RawMessage(`{"mode":"followup",  "cap":3}`),
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("AllQueueSettings = %s, %v; want %s", got, err, want)
	}
	for _, del := range []string{"<nil>", "", "null", " null\n"} {
		put(sessA, `{"mode":"interrupt"}`)
		put(sessA, del)
		if got, _ := s.AllQueueSettings(ctx); got[sessA] != nil || len(got) != 1 {
			t.Errorf("after putting %q: %s; want sessA deleted", del, got)
		}
	}
	put("agent:main:nothing-stored", "") // deleting nothing is fine
	if err := s.PutQueueSettings(ctx, sessA, json.RawMessage(`{"mode":`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("invalid JSON: %v", err)
	}
	if err := s.PutQueueSettings(ctx, "", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "session key") {
		t.Errorf("empty key: %v", err)
	}
	if got, _ := s.AllQueueSettings(ctx); len(got) != 1 || string(got[sessB]) != string(want[sessB]) {
		t.Errorf("a refused put changed the settings: %s", got)
	}
}

// SchedulerState asserts store.SchedulerState: an absent key reports
// false; a value is kept byte for byte and replaced; bad JSON is refused
// and changes nothing.
func SchedulerState(t *testing.T, open func(t *testing.T) store.SchedulerState) {
	ctx := t.Context()
	s := open(t)
	if v, ok, err := s.SchedulerValue(ctx, "heartbeat:main"); ok || err != nil || v != nil {
		t.Fatalf("absent key: %s, %v, %v", v, ok, err)
	}
	for _, v := range []string{`{"a":1}`, `{"a": 2, "b":[true, null]}`, `"on"`} {
		if err := s.PutSchedulerValue(ctx, "heartbeat:main", json.RawMessage(v)); err != nil {
			t.Fatalf("PutSchedulerValue(%s): %v", v, err)
		}
		if got, ok, err := s.SchedulerValue(ctx, "heartbeat:main"); !ok || err != nil || string(got) != v {
			t.Fatalf("SchedulerValue = %s, %v, %v; want %s", got, ok, err, v)
		}
	}
	if err := s.PutSchedulerValue(ctx, "heartbeat:main", json.RawMessage(`nope`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("invalid JSON: %v", err)
	}
	if got, _, _ := s.SchedulerValue(ctx, "heartbeat:main"); string(got) != `"on"` {
		t.Errorf("a refused put changed the value: %s", got)
	}
	if _, ok, _ := s.SchedulerValue(ctx, "other"); ok {
		t.Error("a key never put is present")
	}
}

// Clock is a settable clock for the suites that check timestamps: Now
// returns the instant last set, in unix milliseconds.
type Clock struct {
	mu sync.Mutex
	ms int64
}

// Now is the clock's current instant.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.UnixMilli(c.ms)
}

// Set moves the clock to ms.
func (c *Clock) Set(ms int64) {
	c.mu.Lock()
	c.ms = ms
	c.mu.Unlock()
}

// ChannelState asserts store.ChannelState: positions per channel and key,
// replaced, matched by literal prefix (wildcards and non-ASCII included);
// the ledger keeps a key's first message id; pruning removes what was
// recorded before the cutoff and keeps the rest. open's store takes its
// time from now.
func ChannelState(t *testing.T, open func(t *testing.T, now func() time.Time) store.ChannelState) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(1000)
	s := open(t, clock.Now)

	if v, err := s.ChannelOffset(ctx, "chan-a", "default"); v != "" || err != nil {
		t.Fatalf("fresh offset = %q, %v", v, err)
	}
	for _, v := range []string{"11", "12"} {
		if err := s.SetChannelOffset(ctx, "chan-a", "default", v); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := s.ChannelOffset(ctx, "chan-a", "default"); v != "12" {
		t.Errorf("offset = %q, want the last set, 12", v)
	}
	if v, _ := s.ChannelOffset(ctx, "chan-a", "other"); v != "" {
		t.Errorf("another key's offset = %q", v)
	}
	if v, _ := s.ChannelOffset(ctx, "chan-b", "default"); v != "" {
		t.Errorf("another channel's offset = %q", v)
	}

	for k, v := range map[string]string{"default/c1": "10", "default/c2": "20", "other/c1": "30", "default": "x", "défaut/c1": "50", "défaut/c2": "60", "dé/c3": "70"} {
		if err := s.SetChannelOffset(ctx, "chan-b", k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetChannelOffset(ctx, "chan-a", "default/c1", "40"); err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string]map[string]string{
		"default/": {"default/c1": "10", "default/c2": "20"},
		"def%":     {}, // LIKE's wildcards match literally
		"default_": {},
		"défaut/":  {"défaut/c1": "50", "défaut/c2": "60"},
		"":         {"default/c1": "10", "default/c2": "20", "other/c1": "30", "default": "x", "défaut/c1": "50", "défaut/c2": "60", "dé/c3": "70"},
	} {
		got, err := s.ChannelOffsets(ctx, "chan-b", prefix)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ChannelOffsets(%q) = %v, %v; want %v", prefix, got, err, want)
		}
	}

	if _, ok, err := s.Sent(ctx, "run-1:0:0"); ok || err != nil {
		t.Fatalf("unknown key: %v %v", ok, err)
	}
	if err := s.Record(ctx, "run-1:0:0", "501"); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, "run-1:0:0", "999"); err != nil {
		t.Fatal(err)
	}
	if id, ok, _ := s.Sent(ctx, "run-1:0:0"); !ok || id != "501" {
		t.Errorf("Sent = %q %v, want the first id", id, ok)
	}
	const old = 1234 // more than one chunk in some implementations
	for i := range old {
		if err := s.Record(ctx, "old:"+strconv.Itoa(i), "m"); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(2000)
	if err := s.Record(ctx, "new:0:0", "m"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneLedger(ctx, 2000); n != old+1 || err != nil {
		t.Fatalf("PruneLedger = %d, %v; want %d", n, err, old+1)
	}
	if _, ok, _ := s.Sent(ctx, "new:0:0"); !ok {
		t.Error("the row recorded at the cutoff was pruned")
	}
	if _, ok, _ := s.Sent(ctx, "old:7"); ok {
		t.Error("an old row survived")
	}
	if n, err := s.PruneLedger(ctx, 2000); n != 0 || err != nil {
		t.Errorf("a second prune = %d, %v", n, err)
	}
}

// ChannelAccess asserts store.ChannelAccess: a code's life (one per
// sender, upper case, approved in any case, once; expiry; reject), the
// cap per channel and account with codes drawn again on collision, and,
// with several callers at once (instances), the cap and a code's single
// approval still holding.
func ChannelAccess(t *testing.T, open func(t *testing.T) store.ChannelAccess) {
	t.Run("lifecycle", func(t *testing.T) { channelPairingLifecycle(t, open(t)) })
	t.Run("cap", func(t *testing.T) { channelPairingCap(t, open(t)) })
	t.Run("concurrent", func(t *testing.T) { channelPairingConcurrent(t, open(t)) })
}

// channelPairingConcurrent: ten senders asking at once get three codes
// between them; five approvals of one code at once, one succeeds.
func channelPairingConcurrent(t *testing.T, s store.ChannelAccess) {
	ctx := t.Context()
	var mu sync.Mutex
	n := 0
	gen := func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("C%07d", n)
	}
	var wg sync.WaitGroup
	var created atomic.Int32
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := s.CreateChannelPairingCode(ctx, store.ChannelPairingCode{Channel: "chan-a", AccountID: "default", SenderID: fmt.Sprint("s", i)}, 0, 3, gen)
			if err != nil {
				errs <- err
			}
			if ok {
				created.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("create: %v", err)
	}
	list, err := s.ListChannelPairingCodes(ctx, "chan-a", 0)
	if created.Load() != 3 || err != nil || len(list) != 3 {
		t.Fatalf("%d created, %d pending (%v); want the cap, 3", created.Load(), len(list), err)
	}
	var approved atomic.Int32
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.ApproveChannelPairingCode(ctx, "chan-a", list[0].Code, 0, 0)
			switch {
			case err == nil:
				approved.Add(1)
			case !errors.Is(err, store.ErrUnknownPairingCode):
				t.Errorf("approve: %v", err)
			}
		}()
	}
	wg.Wait()
	if approved.Load() != 1 {
		t.Fatalf("one code approved %d times", approved.Load())
	}
}

// codes returns a code generator yielding the given codes in order.
func codes(cs ...string) func() string {
	i := 0
	return func() string {
		c := cs[i%len(cs)]
		i++
		return c
	}
}

func channelPairingLifecycle(t *testing.T, s store.ChannelAccess) {
	ctx := t.Context()
	const hour = 3_600_000
	req := store.ChannelPairingCode{Channel: "chan-a", AccountID: "default", SenderID: "111", SenderName: "Ada", CreatedAt: 1_000}

	c, created, err := s.CreateChannelPairingCode(ctx, req, 0, 3, codes("abcd2345"))
	if err != nil || !created || c.Code != "ABCD2345" {
		t.Fatalf("first code = %+v, %v, %v; want a new upper-case code", c, created, err)
	}
	// The same sender asking again gets the same code, not a new one.
	again, created, err := s.CreateChannelPairingCode(ctx, req, 0, 3, codes("ZZZZ2222"))
	if err != nil || created || again.Code != c.Code {
		t.Fatalf("second ask = %+v, %v, %v; want the pending code back", again, created, err)
	}
	if ok, _ := s.ChannelSenderAllowed(ctx, "chan-a", "default", "111"); ok {
		t.Fatal("sender allowed before approval")
	}
	// Approval is case-insensitive, moves the sender to the allowed list
	// and removes the code.
	sender, err := s.ApproveChannelPairingCode(ctx, "chan-a", " abcd2345 ", 0, 5_000)
	if err != nil || sender.SenderID != "111" || sender.SenderName != "Ada" || sender.ApprovedAt != 5_000 {
		t.Fatalf("approve = %+v, %v", sender, err)
	}
	if ok, err := s.ChannelSenderAllowed(ctx, "chan-a", "default", "111"); !ok || err != nil {
		t.Fatalf("allowed after approval = %v, %v", ok, err)
	}
	if ok, _ := s.ChannelSenderAllowed(ctx, "chan-a", "other-bot", "111"); ok {
		t.Error("approval leaked to another account")
	}
	if _, err := s.ApproveChannelPairingCode(ctx, "chan-a", "ABCD2345", 0, 0); !errors.Is(err, store.ErrUnknownPairingCode) {
		t.Errorf("approving twice: %v, want store.ErrUnknownPairingCode", err)
	}
	senders, err := s.ListChannelSenders(ctx, "")
	if err != nil || len(senders) != 1 {
		t.Fatalf("senders = %+v, %v", senders, err)
	}
	if err := s.RemoveChannelSender(ctx, "chan-a", "default", "111"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ChannelSenderAllowed(ctx, "chan-a", "default", "111"); ok {
		t.Error("sender still allowed after removal")
	}

	// Expired codes cannot be approved and are cleared by the next create.
	old, _, _ := s.CreateChannelPairingCode(ctx, store.ChannelPairingCode{Channel: "chan-a", AccountID: "default", SenderID: "222", CreatedAt: 10_000}, 0, 3, codes("OLDC0DE9"))
	if _, err := s.ApproveChannelPairingCode(ctx, "chan-a", old.Code, 10_000+hour+1, 0); !errors.Is(err, store.ErrUnknownPairingCode) {
		t.Errorf("approving an expired code: %v", err)
	}
	if _, _, err := s.CreateChannelPairingCode(ctx, store.ChannelPairingCode{Channel: "chan-a", AccountID: "default", SenderID: "333", CreatedAt: 10_000 + hour + 2}, 10_000+hour+1, 3, codes("NEWC0DE9")); err != nil {
		t.Fatal(err)
	}
	list, _ := s.ListChannelPairingCodes(ctx, "chan-a", 0)
	if len(list) != 1 || list[0].SenderID != "333" {
		t.Errorf("codes after expiry = %+v, want only the new one", list)
	}
	if err := s.RejectChannelPairingCode(ctx, "chan-a", "newc0de9"); err != nil {
		t.Errorf("reject: %v", err)
	}
	if err := s.RejectChannelPairingCode(ctx, "chan-a", "newc0de9"); !errors.Is(err, store.ErrUnknownPairingCode) {
		t.Errorf("reject twice: %v", err)
	}
}

func channelPairingCap(t *testing.T, s store.ChannelAccess) {
	ctx := t.Context()
	gen := codes("AAAA2222", "BBBB2222", "CCCC2222", "DDDD2222")
	for i := range 3 {
		if _, created, err := s.CreateChannelPairingCode(ctx, store.ChannelPairingCode{Channel: "chan-a", AccountID: "default", SenderID: fmt.Sprint(i)}, 0, 3, gen); err != nil || !created {
			t.Fatalf("code %d: %v, %v", i, created, err)
		}
	}
	c, created, err := s.CreateChannelPairingCode(ctx, store.ChannelPairingCode{Channel: "chan-a", AccountID: "default", SenderID: "9"}, 0, 3, gen)
	if err != nil || created || c.Code != "" {
		t.Fatalf("fourth pending code = %+v, %v, %v; want none (extras are ignored)", c, created, err)
	}
	// Another channel has its own budget; a taken code is drawn again.
	c, created, err = s.CreateChannelPairingCode(ctx, store.ChannelPairingCode{Channel: "chan-c", AccountID: "default", SenderID: "9"}, 0, 3, codes("AAAA2222"))
	if err != nil || !created || c.Code != "AAAA2222" {
		t.Fatalf("chan-c code = %+v, %v, %v", c, created, err)
	}
	c, created, err = s.CreateChannelPairingCode(ctx, store.ChannelPairingCode{Channel: "chan-c", AccountID: "default", SenderID: "10"}, 0, 3, codes("AAAA2222", "EEEE2222"))
	if err != nil || !created || c.Code != "EEEE2222" {
		t.Fatalf("colliding code = %+v, %v, %v; want a second draw", c, created, err)
	}
}

// Sessions asserts core.SessionIndex: an entry round-trips whole, the list
// is most recently updated first and honours its limit, a put replaces the
// key's entry, a delete removes it, and an entry without key or session id
// is refused.
func Sessions(t *testing.T, open func(t *testing.T) core.SessionIndex) {
	ctx := t.Context()
	s := open(t)
	if _, ok, err := s.GetSession(ctx, "agent:main:main"); ok || err != nil {
		t.Fatalf("empty index: ok=%v err=%v", ok, err)
	}
	if list, err := s.ListSessions(ctx, 0); len(list) != 0 || err != nil {
		t.Fatalf("empty index lists %v, %v", list, err)
	}
	a := core.SessionEntry{
		Key: "agent:main:main", AgentID: "main", SessionID: "s1", CreatedAt: 10, UpdatedAt: 100,
		Usage:     core.Usage{Input: 5, Output: 7, TotalTokens: 12, Cost: core.Cost{Total: 0.5}},
		Model:     "echo/echo",
		LastRoute: &core.Route{Channel: "chan-a", To: "123"},
	}
	b := core.SessionEntry{Key: "agent:main:chan-a:group:-1", AgentID: "main", SessionID: "s2", CreatedAt: 20, UpdatedAt: 200}
	for _, e := range []core.SessionEntry{a, b} {
		if err := s.PutSession(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := s.GetSession(ctx, a.Key)
	if err != nil || !ok || !reflect.DeepEqual(got, a) {
		t.Fatalf("GetSession = %+v %v %v, want %+v", got, ok, err, a)
	}
	list, err := s.ListSessions(ctx, 0)
	if err != nil || len(list) != 2 || list[0].Key != b.Key || list[1].Key != a.Key {
		t.Fatalf("ListSessions = %+v %v; want b then a (most recent first)", list, err)
	}
	if list, _ := s.ListSessions(ctx, 1); len(list) != 1 || list[0].Key != b.Key {
		t.Errorf("ListSessions(1) = %+v", list)
	}
	a.SessionID, a.UpdatedAt, a.AbortedLastRun = "s3", 300, true
	if err := s.PutSession(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.GetSession(ctx, a.Key); !reflect.DeepEqual(got, a) {
		t.Errorf("after replacing, GetSession = %+v, want %+v", got, a)
	}
	if list, _ := s.ListSessions(ctx, 0); len(list) != 2 || list[0].Key != a.Key {
		t.Errorf("after update, ListSessions = %+v; want a first", list)
	}
	if err := s.DeleteSession(ctx, a.Key); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.GetSession(ctx, a.Key); ok {
		t.Errorf("entry still present after DeleteSession")
	}
	if err := s.DeleteSession(ctx, a.Key); err != nil {
		t.Errorf("deleting again: %v", err)
	}
	err = s.PutSession(ctx, core.SessionEntry{Key: "agent:main:main"})
	if err == nil || !strings.Contains(err.Error(), "sessionId") {
		t.Errorf("PutSession without a session id: %v", err)
	}
}

// Cron asserts store.Cron: jobs round-trip (CreatedAt kept on replace,
// bad JSON refused), deleting reports whether the job was there; a
// scheduled instant is claimed once, also by claimers racing for it;
// finishing records the run and the job's state or deletes a one-shot
// job, whose runs stay in the history.
func Cron(t *testing.T, open func(t *testing.T) store.Cron) {
	t.Run("jobs", func(t *testing.T) { cronJobs(t, open(t)) })
	t.Run("claim", func(t *testing.T) { cronClaimOnce(t, open(t)) })
	t.Run("race", func(t *testing.T) { cronClaimRace(t, open(t)) })
	t.Run("finish", func(t *testing.T) { cronFinish(t, open(t)) })
}

// cronClaimRace: eight claimers of one instant at once (instances that
// read the same next run time), one wins; then eight for the next.
func cronClaimRace(t *testing.T, s store.Cron) {
	ctx := t.Context()
	if err := s.PutCronJob(ctx, store.CronJob{ID: "j", Spec: json.RawMessage(`{}`), NextRunAt: 60000}); err != nil {
		t.Fatal(err)
	}
	for round, at := range []int64{60000, 120000} {
		var wg sync.WaitGroup
		var won atomic.Int32
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.ClaimCronRun(ctx, store.CronClaim{JobID: "j", ExpectNextRunAt: at, NextRunAt: at + 60000,
					Run: store.CronRun{RunID: fmt.Sprintf("r%d-%d", round, i), ScheduledAt: at, Status: "running"}})
				if err != nil {
					t.Errorf("claim: %v", err)
				}
				if ok {
					won.Add(1)
				}
			}()
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Fatalf("instant %d claimed %d times", at, won.Load())
		}
	}
	if runs, _ := s.UnfinishedCronRuns(ctx); len(runs) != 2 {
		t.Fatalf("%d runs recorded for two instants", len(runs))
	}
}

func cronJobs(t *testing.T, s store.Cron) {
	ctx := t.Context()
	job := store.CronJob{ID: "daily", Spec: json.RawMessage(`{"name":"daily"}`), NextRunAt: 1000, CreatedAt: 5}
	if err := s.PutCronJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	job.Spec = json.RawMessage(`{"name":"daily2"}`)
	job.CreatedAt = 99 // kept from the first put
	if err := s.PutCronJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCronJob(ctx, store.CronJob{ID: "bad", Spec: json.RawMessage(`{`)}); err == nil {
		t.Error("invalid spec JSON accepted")
	}
	got, ok, err := s.CronJob(ctx, "daily")
	if err != nil || !ok {
		t.Fatalf("CronJob = %v %v", ok, err)
	}
	if string(got.Spec) != `{"name":"daily2"}` || got.CreatedAt != 5 || got.NextRunAt != 1000 || got.State != nil {
		t.Errorf("stored job: %+v", got)
	}
	if deleted, _ := s.DeleteCronJob(ctx, "daily"); !deleted {
		t.Error("delete reported no job")
	}
	if jobs, _ := s.CronJobs(ctx); len(jobs) != 0 {
		t.Errorf("jobs after delete: %+v", jobs)
	}
}

func cronClaimOnce(t *testing.T, s store.Cron) {
	ctx := t.Context()
	if err := s.PutCronJob(ctx, store.CronJob{ID: "j", Spec: json.RawMessage(`{}`), NextRunAt: 60000}); err != nil {
		t.Fatal(err)
	}
	claim := store.CronClaim{JobID: "j", ExpectNextRunAt: 60000, NextRunAt: 120000, State: json.RawMessage(`{"n":1}`),
		Run: store.CronRun{RunID: "r1", ScheduledAt: 60000, Status: "running"}}
	if ok, err := s.ClaimCronRun(ctx, claim); !ok || err != nil {
		t.Fatalf("first claim = %v %v", ok, err)
	}
	// The same claim again (a second process, a restart that read the old
	// next run time): refused, nothing changes.
	claim.Run.RunID = "r2"
	if ok, err := s.ClaimCronRun(ctx, claim); ok || err != nil {
		t.Fatalf("second claim = %v %v, want refused", ok, err)
	}
	// Even with the right next run time, an instant already run is refused
	// and the job is left as it was.
	claim.ExpectNextRunAt, claim.NextRunAt = 120000, 180000
	claim.Run.ScheduledAt = 60000
	if ok, _ := s.ClaimCronRun(ctx, claim); ok {
		t.Fatal("a second run for the same instant was claimed")
	}
	j, _, _ := s.CronJob(ctx, "j")
	if j.NextRunAt != 120000 || string(j.State) != `{"n":1}` {
		t.Errorf("job after refused claims: %+v", j)
	}
	runs, _ := s.UnfinishedCronRuns(ctx)
	if len(runs) != 1 || runs[0].RunID != "r1" || runs[0].Status != "running" {
		t.Fatalf("unfinished = %+v", runs)
	}
	// A claim without a run only advances the schedule.
	if ok, _ := s.ClaimCronRun(ctx, store.CronClaim{JobID: "j", ExpectNextRunAt: 120000, NextRunAt: 180000}); !ok {
		t.Error("advance without a run refused")
	}
	if ok, _ := s.ClaimCronRun(ctx, store.CronClaim{JobID: "gone", ExpectNextRunAt: 0, NextRunAt: 1}); ok {
		t.Error("claimed a missing job")
	}
}

func cronFinish(t *testing.T, s store.Cron) {
	ctx := t.Context()
	for _, id := range []string{"keep", "once"} {
		if err := s.PutCronJob(ctx, store.CronJob{ID: id, Spec: json.RawMessage(`{}`), NextRunAt: 10}); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.ClaimCronRun(ctx, store.CronClaim{JobID: id, ExpectNextRunAt: 10, NextRunAt: 20, Run: store.CronRun{RunID: id + "-r", ScheduledAt: 10, StartedAt: 11, Status: "running"}}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if err := s.FinishCronRun(ctx, store.CronFinish{RunID: "keep-r", JobID: "keep", FinishedAt: 15, Status: "error", Detail: json.RawMessage(`{"error":"boom"}`), State: json.RawMessage(`{"consecutiveErrors":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishCronRun(ctx, store.CronFinish{RunID: "once-r", JobID: "once", Status: "ok", DeleteJob: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.CronJob(ctx, "once"); ok {
		t.Error("one-shot job not deleted")
	}
	j, _, _ := s.CronJob(ctx, "keep")
	if string(j.State) != `{"consecutiveErrors":1}` {
		t.Errorf("state = %s", j.State)
	}
	runs, err := s.CronRuns(ctx, "keep", 10)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %+v %v", runs, err)
	}
	if r := runs[0]; r.Status != "error" || r.FinishedAt != 15 || string(r.Detail) != `{"error":"boom"}` || r.StartedAt != 11 {
		t.Errorf("run = %+v", r)
	}
	if all, _ := s.CronRuns(ctx, "", 10); len(all) != 2 {
		t.Errorf("all runs = %d, want 2 (a deleted job's runs stay)", len(all))
	}
	if un, _ := s.UnfinishedCronRuns(ctx); len(un) != 0 {
		t.Errorf("unfinished = %+v", un)
	}
}
