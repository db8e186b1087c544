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
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Session keys the suites use.
const (
	sessA core.SessionKey = "agent:main:telegram:direct:111"
	sessB core.SessionKey = "agent:main:slack:channel:c222"
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

	if v, err := s.ChannelOffset(ctx, "telegram", "default"); v != "" || err != nil {
		t.Fatalf("fresh offset = %q, %v", v, err)
	}
	for _, v := range []string{"11", "12"} {
		if err := s.SetChannelOffset(ctx, "telegram", "default", v); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := s.ChannelOffset(ctx, "telegram", "default"); v != "12" {
		t.Errorf("offset = %q, want the last set, 12", v)
	}
	if v, _ := s.ChannelOffset(ctx, "telegram", "other"); v != "" {
		t.Errorf("another key's offset = %q", v)
	}
	if v, _ := s.ChannelOffset(ctx, "discord", "default"); v != "" {
		t.Errorf("another channel's offset = %q", v)
	}

	for k, v := range map[string]string{"default/c1": "10", "default/c2": "20", "other/c1": "30", "default": "x", "défaut/c1": "50", "défaut/c2": "60", "dé/c3": "70"} {
		if err := s.SetChannelOffset(ctx, "discord", k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetChannelOffset(ctx, "telegram", "default/c1", "40"); err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string]map[string]string{
		"default/": {"default/c1": "10", "default/c2": "20"},
		"def%":     {}, // LIKE's wildcards match literally
		"default_": {},
		"défaut/":  {"défaut/c1": "50", "défaut/c2": "60"},
		"":         {"default/c1": "10", "default/c2": "20", "other/c1": "30", "default": "x", "défaut/c1": "50", "défaut/c2": "60", "dé/c3": "70"},
	} {
		got, err := s.ChannelOffsets(ctx, "discord", prefix)
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
