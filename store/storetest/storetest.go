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
	"strings"
	"testing"

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
